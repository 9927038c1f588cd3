"""``ohseven-referee check-bot``: real bots in the real sandbox, through the real command line."""

from __future__ import annotations

import json
import os
import sys
import time

import pytest
from ohseven.core.rules import GAMES, OH_HELL, OH_SEVEN, new_game
from ohseven.referee.cli import check_bot as checkbot
from ohseven.referee.cli.main import main
from ohseven.referee.replay import load_replay, validate_replay

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')

HERE = os.path.dirname(__file__)
RANDOM_BOT = os.path.join(HERE, "..", "example_bots", "random_bot.py")
MATCH_BOT = os.path.join(HERE, "bots", "match_bot.py")
HOSTILE_BOT = os.path.join(HERE, "bots", "hostile_bot.py")
ONE_BUG_BOT = os.path.join(HERE, "bots", "one_bug_bot.py")
ABORT_BOT = os.path.join(HERE, "bots", "abort_bot.py")
FAST = ["--move-timeout", "0.3", "--bank", "0.5"]


def check(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["check-bot", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def check_json(capsys, *argv: str) -> tuple[int, dict]:
    code, out, _ = check(capsys, "--json", *argv)
    return code, json.loads(out)


class TestGoodBots:
    def test_random_example_bot_passes(self, capsys, tmp_path):
        """The random example bot passes every check of both games; replays validate."""
        code, data = check_json(capsys, "--replays", str(tmp_path), RANDOM_BOT)
        assert code == 0 and data["passed"] is True
        assert [c["status"] for c in data["checks"]] == ["pass"] * len(checkbot.checks_for(GAMES))
        assert all(c["faults"] == [] for c in data["checks"])
        timing = data["timing"]
        assert timing["all"]["n"] == timing["pass"]["n"] + timing["bid"]["n"] + timing["play"]["n"]
        assert min(timing[k]["n"] for k in ("pass", "bid", "play")) > 0
        # (the mean may pass the p95: one slow outlier on a loaded machine is enough)
        assert 0 < timing["all"]["mean_ms"] <= timing["all"]["max_ms"]
        assert timing["all"]["p95_ms"] <= timing["all"]["max_ms"]
        assert sum(c["redeals"] for c in data["checks"]) >= 1
        assert sum(c["rebids"] for c in data["checks"]) >= 7
        # the SDK seeds the random bot's rng from OHSEVEN_SEED, as a tournament does
        assert data["deterministic"] is True
        replays = sorted(os.listdir(tmp_path))
        assert len(replays) == len(data["checks"])
        for name in replays:
            validate_replay(load_replay(tmp_path / name))

    def test_a_bot_drawing_from_the_os_is_not_deterministic(self, capsys):
        """Choices from the OS's randomness: the report names the first decision that differs."""
        bot = os.path.join(os.path.dirname(__file__), "bots", "os_random_bot.py")
        code, data = check_json(capsys, "--game", "oh-hell", bot)
        assert code == 0 and data["passed"] is True  # determinism is information, not a check
        assert data["deterministic"] is False and "decision" in data["determinism"]

    def test_text_report(self, capsys):
        """The text report names each check, the timings and the verdict."""
        code, out, _ = check(capsys, "--game", "oh-hell", f"python {MATCH_BOT} random")
        assert code == 0
        assert out.count("  PASS  oh-hell") == len(checkbot.checks_for((OH_HELL,)))
        assert "time per decision:" in out and " bid: mean " in out and "p95" in out
        assert "deterministic under a fixed seed: yes" in out
        assert out.rstrip().endswith("OK: 7 of 7 checks passed")


class TestBrokenBots:
    def test_illegal_move_fails_clearly(self, capsys):
        """A bot that plays a card it does not hold fails that check with the detail."""
        code, out, _ = check(capsys, "--game", "oh-seven", f"python {MATCH_BOT} illegal")
        assert code == 1
        failed = [line for line in out.splitlines() if line.startswith("  FAIL")]
        assert len(failed) == 1, out
        # its third request is a play or a bid, by the check's (random, printed) seed
        assert "illegal: " in out and " 'ZZ' is not one of [" in out, out
        total = len(checkbot.checks_for((OH_SEVEN,)))
        assert out.rstrip().endswith(f"FAILED: {total - 1} of {total} checks passed")
        assert "deterministic under a fixed seed: unknown" in out

    @pytest.mark.parametrize(
        ("mode", "status"), [("garbage", "malformed"), ("notheld", "illegal"), ("exit", "no_start")]
    )
    def test_fault_statuses(self, capsys, mode, status):
        """Each kind of misbehaviour is reported with its fault status."""
        code, data = check_json(capsys, *FAST, "--game", "oh-seven", f"python {HOSTILE_BOT} {mode}")
        assert code == 1 and data["passed"] is False
        first = data["checks"][0]
        assert first["status"] == "fail"
        assert {fault["status"] for fault in first["faults"]} == {status}

    def test_hanging_bot_is_bounded(self, capsys):
        """A bot that hangs fails with timeouts; after --max-failures the rest is skipped."""
        started = time.monotonic()
        code, data = check_json(capsys, *FAST, "--max-failures", "2", f"python {HOSTILE_BOT} hang")
        assert time.monotonic() - started < 15
        assert code == 1
        statuses = [c["status"] for c in data["checks"]]
        assert statuses[:2] == ["fail", "fail"] and set(statuses[2:]) == {"skipped"}
        assert {f["status"] for f in data["checks"][0]["faults"]} == {"timeout"}
        assert len(data["checks"][0]["faults"]) == checkbot.MAX_FAULTS_PER_CHECK


class TestUsage:
    def test_missing_bot(self, capsys):
        """A bot that does not exist is a clear usage error, not a traceback."""
        code, out, err = check(capsys, "no_such_bot_file.py")
        assert code == 2 and out == ""
        assert err.startswith("ohseven-referee check-bot: ") and "Traceback" not in err

    def test_bad_timeout(self, capsys):
        """A non-positive decision time is refused."""
        code, _, err = check(capsys, "--move-timeout", "0", RANDOM_BOT)
        assert code == 2 and "--move-timeout" in err


class TestChecks:
    def test_every_request_kind_and_table(self):
        """The checks cover every player count, passing, the Oh Hell variants, forced bids."""
        checks = checkbot.checks_for(GAMES, seed=3)
        seven = {c.players for c in checks if c.game == OH_SEVEN and not c.options}
        passing = {c.players for c in checks if dict(c.options).get("passing")}
        hell = {c.players for c in checks if c.game == OH_HELL}
        assert seven == passing == set(range(2, 10)) and hell == set(range(3, 8))
        options = {key for c in checks if c.game == OH_HELL for key, _ in c.options}
        assert {"hook", "must_trump", "simultaneous_bids"} <= options
        assert {c.force for c in checks} == {None, "sum7", "redeal"}
        assert all(0 <= c.seat < c.players for c in checks)

    @pytest.mark.parametrize("seed", range(4))
    def test_redeal_is_forced_whatever_the_bot_bids(self, seed):
        """The stacked deal and the completing opponent force 7 attempts, then a redeal."""
        (redeal,) = [c for c in checkbot.checks_for((OH_SEVEN,), seed) if c.force == "redeal"]
        result, game = checkbot.play_check(None, redeal, checkbot.TimeControl())
        first = [e for e in game.events if e["type"] in ("bids", "redeal")][:8]
        assert [e.get("forced") is not None for e in first[:7]] == [True] * 7
        assert first[7] == {"type": "redeal", "round": 0}
        assert result.redeals >= 1 and result.rebids >= 6 and game.is_over

    def test_redeal_deck_is_a_deck(self):
        """The stacked order holds every card once and deals as intended."""
        for seat in (0, 1):
            order = checkbot._redeal_deck(seat)
            assert sorted(order) == list(range(32))
            game = new_game(OH_SEVEN, 2, 0, stacked_decks=[order])
            assert game.hands[seat] == list(range(7))


def test_cli_registration():
    """check-bot is a subcommand of ohseven-referee."""
    with pytest.raises(SystemExit) as exit_info:
        main(["check-bot", "--help"])
    assert exit_info.value.code == 0
    assert sys.modules["ohseven.referee.cli.check_bot"] is checkbot


LAST_WORDS = os.path.join(HERE, "bots", "last_words_bot.py")


class TestFaultOutput:
    @pytest.mark.parametrize(
        ("mode", "status", "words"),
        [("start", "no_start", "no module named 'mylib'"), ("play", "crash", "the card I")],
    )
    def test_failed_checks_show_the_bots_last_output(self, capsys, mode, status, words):
        """A failed check shows the end of the bot's own output, in --json and in text."""
        argv = [*FAST, "--max-failures", "1", "--game", OH_SEVEN, f"{LAST_WORDS} {mode}"]
        code, data = check_json(capsys, *argv)
        failed = [c for c in data["checks"] if c["status"] == "fail"]
        assert code == 1 and failed
        assert failed[0]["faults"][0]["status"] == status
        assert words in failed[0]["output_tail"]
        code, out, _ = check(capsys, *argv)
        assert code == 1 and words in out and "its last output" in out


BUGGY = os.path.join(HERE, "bots", "buggy_bot.py")


class TestBadHello:
    def test_a_long_label_fails_with_the_problem(self, capsys):
        """A hello with a 65-character label fails the check as `protocol`, saying why."""
        code, data = check_json(capsys, *FAST, "--max-failures", "1", f"{MATCH_BOT} longlabel")
        assert code == 1
        fault = data["checks"][0]["faults"][0]
        assert fault["status"] == "protocol" and "at most 64 characters" in fault["detail"]


class TestBotErrors:
    def test_covered_up_errors_fail_the_check(self, capsys):
        """An SDK bot that raises or answers illegally fails with bot_error and its traceback."""
        argv = [*FAST, "--max-failures", "1", "--game", OH_SEVEN, BUGGY]
        code, data = check_json(capsys, *argv)
        assert code == 1 and data["passed"] is False
        faults = data["checks"][0]["faults"]
        assert {f["status"] for f in faults} == {"bot_error"}
        assert any("ZeroDivisionError" in f["detail"] for f in faults)

    def test_strict_makes_the_sdk_fail_hard(self, capsys):
        """--strict passes OHSEVEN_STRICT=1: the SDK bot crashes, its traceback in the report."""
        argv = [*FAST, "--strict", "--max-failures", "1", "--game", OH_SEVEN, BUGGY]
        code, data = check_json(capsys, *argv)
        assert code == 1
        check = data["checks"][0]
        assert check["faults"][0]["status"] == "crash"
        assert "ZeroDivisionError" in check["output_tail"]


class TestTheMatchLoop:
    def test_a_connection_flood_before_hello_is_faulted_as_in_a_match(self, capsys):
        """check-bot starts the bot on the match's machinery: frames of a connection that
        never says hello, past STRANGER_FRAMES, fail the first check as ``protocol``."""
        argv = [*FAST, "--max-failures", "1", "--game", OH_HELL, f"{HOSTILE_BOT} strangers"]
        code, data = check_json(capsys, *argv)
        assert code == 1
        first = data["checks"][0]
        assert first["status"] == "fail"
        assert first["faults"][0]["status"] == "protocol"
        assert "no accepted hello" in first["faults"][0]["detail"]


class TestOneBug:
    def test_one_bug_is_one_group_with_its_traceback_once(self, capsys, tmp_path):
        """One bug met in every failed check: one group (status, the bot's own line, a count),
        its traceback once with the author's path, where it first happened and the command
        that asks it again; the whole report in at most 60 lines."""
        code, out, _ = check(capsys, "--replays", str(tmp_path), ONE_BUG_BOT)
        assert code == 1
        lines = out.splitlines()
        assert len(lines) <= 60, out
        assert out.count("Traceback (most recent call last)") == 1
        (group,) = [line for line in lines if line.startswith("  bot_error x")]
        assert group.endswith("one_bug_bot.py:13 in choose_play"), group
        assert "ohseven-stage-" not in out and ".bots/" not in out
        assert 'File "bots/one_bug_bot.py", line 13, in choose_play' in out
        assert "ask it again: ohseven-referee replay " in out and " --at " in out

    def test_a_crash_names_its_signal_and_the_decision(self, capsys):
        """``os.abort()``: the crash says SIGABRT, and the move, round and trick it was asked."""
        code, data = check_json(capsys, "--max-failures", "1", ABORT_BOT)
        assert code == 1
        (fault,) = data["checks"][0]["faults"]
        assert fault["status"] == "crash" and "SIGABRT" in fault["detail"], fault
        assert (fault["round"], fault["trick"]) == (2, 3) and fault["move"] > 0
        (group,) = data["fault_groups"]
        assert group["count"] == 1 and group["status"] == "crash"


SLOW_BOT = os.path.join(HERE, "bots", "slow_bot.py")


class TestTiming:
    def test_decisions_slower_than_the_move_limit_warn_and_fail_with_strict(self, capsys):
        """Bids slower than --move-timeout but within the bank pass every check (no timeout)
        and are named in a warning against the time control; --strict fails the bot."""
        args = ["--game", "oh-hell", "--move-timeout", "0.03", "--bank", "60", "--seed", "7"]
        code, out, _ = check(capsys, *args, SLOW_BOT)
        assert code == 0 and "OK: 7 of 7 checks passed" in out
        (warning,) = [line for line in out.splitlines() if line.startswith("WARNING: bid")]
        assert "passes the move limit of 30 ms" in warning and "--strict" in warning
        code, data = check_json(capsys, *args, "--strict", SLOW_BOT)
        assert code == 1 and data["passed"] is False
        assert all(check["status"] == "pass" for check in data["checks"])
        assert any(text.startswith("bid decisions are slow") for text in data["slow"])
        assert data["time_control"] == {"move_seconds": 0.03, "bank_seconds": 60.0}
