"""``ohseven-referee replay``: one decision of a saved game asked again of a real bot process.

The replays are real: a match played by the referee with a bot that prints a digest of what it
saw at every decision (``tests/bots/view_recorder.py``), ``check-bot`` and a tournament. The
bot asked again runs as ``match`` runs it (bwrap unless a test says otherwise), and the test
compares the view it prints with the one it printed in the real game.
"""

from __future__ import annotations

import json
import random
import re
import shlex
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from conftest import play_random
from ohseven.core.rules import OH_HELL, OH_SEVEN, Rules, new_game
from ohseven.referee.cli.match import bot_specs, game_seeds, rotating_seatings
from ohseven.referee.cli.replay import decisions, game_index
from ohseven.referee.play.match import play_match
from ohseven.referee.records import MatchSpec, TimeControl
from ohseven.referee.replay import load_replay, save_replay, to_replay
from ohseven.referee.sandbox.settings import SandboxConfig
from ohseven.referee.sandbox.staging import staged_bots

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')

ROOT = Path(__file__).resolve().parent.parent
RECORDER = str(ROOT / "tests" / "bots" / "view_recorder.py")
RANDOM = str(ROOT / "example_bots" / "random_bot.py")
HEURISTIC = str(ROOT / "example_bots" / "heuristic_bot.py")
VIEW = re.compile(r"^VIEW (\d+) ([0-9a-f]{64})$", re.M)


def referee(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ohseven.referee.cli", *args],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def ask(path: Path, *args: str) -> tuple[int, dict]:
    out = referee("replay", str(path), "--json", *args)
    assert out.stdout, out.stderr
    return out.returncode, json.loads(out.stdout)


@attrs.frozen
class Recorded:
    game: str
    folder: Path
    views: list[list[str]]  # per game, the recorder's digests of its decisions in order


_PLAYED: dict[str, Recorded] = {}


@pytest.fixture(scope="module", params=[OH_SEVEN, OH_HELL])
def recorded(request: pytest.FixtureRequest, tmp_path_factory) -> Recorded:
    """Two games of a real match in bwrap: the recorder and two random bots, seats rotating
    (Oh-Seven with the card pass)."""
    return _played(request.param, tmp_path_factory)


@pytest.fixture(scope="module")
def seven(tmp_path_factory) -> Recorded:
    """The Oh-Seven match of :func:`recorded` (played once for both)."""
    return _played(OH_SEVEN, tmp_path_factory)


def _played(game: str, tmp_path_factory) -> Recorded:
    if game in _PLAYED:
        return _PLAYED[game]
    folder = tmp_path_factory.mktemp(f"replays-{game}")
    rules = Rules.make(game, ["passing=true"] if game == OH_SEVEN else ["hook=true"])
    bots = bot_specs([RECORDER, RANDOM, RANDOM])
    spec = MatchSpec(
        match_id="match",
        rules=rules,
        bots=bots,
        seatings=rotating_seatings(3, 2),
        seeds=game_seeds(2**90 + 17, 2),
        time_control=TimeControl(move_seconds=5.0),
        fallback_seed=3,
    )
    with staged_bots(bots) as staged:
        result = play_match(
            attrs.evolve(spec, bots=staged),
            sandbox=SandboxConfig(mode="bwrap"),
            replay_dir=str(folder),
        )
    assert all(record.faults == () for record in result.games)
    views: list[list[str]] = []
    for number, digest in VIEW.findall(result.logs["view_recorder"]):
        if number == "0":
            views.append([])
        views[-1].append(digest)
    assert len(views) == 2
    _PLAYED[game] = Recorded(game, folder, views)
    return _PLAYED[game]


def _replay(recorded: Recorded, g: int) -> Path:
    return recorded.folder / f"match-game{g:03d}.json"


def _chosen(path: Path) -> list[tuple[int, int]]:
    """(move, its position among the recorder's decisions) of some decisions worth checking:
    the first, every kind's first, one mid-game, the last."""
    replay = load_replay(path)
    seat = replay["seats"].index("view_recorder")
    mine = [d for d in decisions(replay) if d.seat == seat]
    picks = {0, len(mine) // 2, len(mine) - 1}
    for kind in ("pass", "bid", "play"):
        picks.update(i for i, d in enumerate(mine) if d.kind == kind and i == min(
            j for j, e in enumerate(mine) if e.kind == kind))  # fmt: skip
    if replay["game"] == OH_SEVEN:
        assert any(d.kind == "pass" for d in mine), "the fixture should have a card pass"
    return [(mine[i].move, i) for i in sorted(picks)]


class TestTheRebuiltView:
    @pytest.mark.parametrize("g", [0, 1])
    def test_the_bot_sees_what_it_saw_in_the_real_game(self, recorded: Recorded, g: int):
        """Asked decision N again, the recorder prints the very digest of events, legal moves
        and count it printed at that decision of the real match (both games of the match, so
        the game index of the file name counts too)."""
        path = _replay(recorded, g)
        for move, position in _chosen(path):
            code, data = ask(path, "--bot", RECORDER, "--at", str(move))
            assert code == 0, data
            (view,) = VIEW.findall(data["output_tail"])
            assert view == ("0", recorded.views[g][position]), f"move {move}"
            assert data["accepted"] is True and data["fault"] is None
            assert data["answer"] in data["legal"] or data["kind"] == "pass"

    def test_the_legal_moves_are_those_of_the_real_game(self, recorded: Recorded):
        """The legal list holds what the real game played, and the seat defaults to the seat of
        the bot named."""
        path = _replay(recorded, 0)
        replay = load_replay(path)
        seat = replay["seats"].index("view_recorder")
        move = next(d.move for d in decisions(replay) if d.seat == seat and d.kind == "play")
        code, data = ask(path, "--bot", RECORDER, "--at", str(move), "--sandbox", "unsandboxed")
        assert code == 0
        assert (data["seat"], data["player"], data["played"]) == (
            seat, "view_recorder", replay["moves"][move - 1][2]
        )  # fmt: skip
        assert data["played"] in data["legal"]
        assert data["seconds"] is not None and 0 <= data["seconds"] < 5


class TestListing:
    def test_the_decisions_of_the_seat_of_the_bot_named(self, recorded: Recorded):
        """Without --at: that seat's decisions, each with its move number, kind, round, trick
        and what was played; the move numbers count the replay's moves from 1."""
        path = _replay(recorded, 1)
        replay = load_replay(path)
        seat = replay["seats"].index("view_recorder")
        code, data = ask(path, "--bot", RECORDER)
        assert code == 0
        assert data["seat"] == seat and data["moves"] == len(replay["moves"])
        listed = data["decisions"]
        assert [d["move"] for d in listed] == [
            i for i, (s, _, _) in enumerate(replay["moves"], start=1) if s == seat
        ]
        for d in listed:
            assert replay["moves"][d["move"] - 1] == [seat, d["kind"], d["played"]]
            assert (d["trick"] is None) == (d["kind"] != "play")
        assert len(listed) == len(recorded.views[1])

    def test_every_seat_without_a_choice_and_a_table_in_text(self, recorded: Recorded):
        """No bot and no seat: every move is listed; the text form has one line per decision."""
        path = _replay(recorded, 0)
        code, data = ask(path)
        assert code == 0 and data["seat"] is None
        assert len(data["decisions"]) == data["moves"]
        out = referee("replay", str(path), "--player", "random")
        assert out.returncode == 0, out.stderr
        lines = [line for line in out.stdout.splitlines() if re.match(r"\s*\d+\s", line)]
        seat = load_replay(path)["seats"].index("random")
        assert len(lines) == sum(1 for s, _, _ in load_replay(path)["moves"] if s == seat)

    @pytest.mark.parametrize(
        ("game", "options"), [(OH_SEVEN, {"passing": True}), (OH_HELL, {"simultaneous_bids": True})]
    )
    def test_a_simultaneous_decision_is_asked_when_its_phase_opens(self, game, options):
        """As the referee sends its requests: in a simultaneous phase (passes, Oh-Seven bids and
        re-bids, Oh Hell simultaneous bids) every seat is asked when the phase opens, before
        any of its moves; a card is asked when the card before it is down."""
        players = 4
        played = play_random(new_game(game, players, 3, options), random.Random(3))
        found = decisions(to_replay(played), steps=())
        start = 0
        for d in found:
            index = d.move - 1  # moves are numbered from 1
            if d.kind == "play":
                assert d.asked_after == index
                continue
            previous = found[index - 1] if index else None
            if previous is None or previous.kind != d.kind or index - start == players:
                start = index  # a phase opens: the first of its moves
            assert d.asked_after == start, d

    def test_viewer_steps_never_go_back_and_stay_in_the_page(self, recorded: Recorded):
        """Each decision's viewer step is a step of the page (1 to its frames), in game order."""
        from ohseven.referee.site.replay_view import replay_view

        replay = load_replay(_replay(recorded, 0))
        frames = len(replay_view(replay)["frames"])
        steps = [d.step for d in decisions(replay)]
        assert steps == sorted(steps) and steps[0] >= 1 and steps[-1] <= frames


class TestTextOutput:
    def test_an_example_bot_answers(self, seven: Recorded):
        """The text report names the decision, the bot's answer and whether it is legal, its time
        and the real game's move."""
        path = _replay(seven, 0)
        out = referee("replay", str(path), "--bot", RANDOM, "--at", "5")
        assert out.returncode == 0, out.stderr
        assert re.search(r"^move 5: seat \d \(\S+\) (pass|bid|play), round 1", out.stdout, re.M)
        assert re.search(r"^random answered \S.* \(legal\) in [\d.]+ ms$", out.stdout, re.M)
        assert "the real game played" in out.stdout

    def test_a_decision_of_another_seat_is_asked_with_a_note(self, seven: Recorded):
        """A bot asked a move of another seat than its own plays it in that seat, and is told."""
        path = _replay(seven, 0)
        replay = load_replay(path)
        seat = replay["seats"].index("view_recorder")
        move = next(d.move for d in decisions(replay, steps=()) if d.seat == seat)
        out = referee("replay", str(path), "--bot", RANDOM, "--at", str(move))
        assert out.returncode == 0, out.stderr
        assert f"note: move {move} is a decision of seat {seat} (view_recorder)" in out.stderr
        assert out.stdout.startswith(f"move {move}: seat {seat} (view_recorder)")

    def test_a_bot_named_in_no_seat_is_told_whose_move_it_gets(self, recorded: Recorded):
        """A tournament's replay names its bots otherwise: the note says so and names the seat
        asked, and how to choose one."""
        path = _replay(recorded, 0)
        out = referee(
            "replay", str(path), "--bot", HEURISTIC, "--at", "3", "--sandbox", "unsandboxed"
        )
        seat = load_replay(path)["moves"][2][0]
        assert "note: no seat of this replay is named heuristic" in out.stderr, out.stderr
        assert f"a decision of seat {seat}" in out.stderr and "--player or --seat" in out.stderr


class TestSources:
    def test_check_bot_replays(self, tmp_path: Path):
        """Replays of check-bot: a pass, a forced re-bid, the bid after a redeal and an Oh Hell
        simultaneous bid are asked again and answered legally."""
        out = referee(
            "check-bot", "--replays", str(tmp_path), "--seed", "2", "--sandbox", "unsandboxed",
            RANDOM,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        wanted = {
            "passing--4-players": "pass",
            "re-bids--sum-7---3-players": "bid",
            "then-a-redeal": "bid",
            "simultaneous-bids": "bid",
        }
        for part, kind in wanted.items():
            (path,) = tmp_path.glob(f"check-*{part}*.json")
            replay = load_replay(path)
            if part == "then-a-redeal":
                redeal = next(i for i, e in enumerate(replay["events"]) if e["type"] == "redeal")
                late = [d for d in decisions(replay) if d.kind == kind and d.step > 1]
                assert redeal and late
                move = late[0].move
            elif part.startswith("re-bids"):
                seats = [d.seat for d in decisions(replay) if d.kind == "bid"]
                move = [d.move for d in decisions(replay) if d.kind == "bid"][len(set(seats))]
            else:
                move = next(d.move for d in decisions(replay) if d.kind == kind)
            code, data = ask(path, "--bot", RANDOM, "--at", str(move), "--sandbox", "unsandboxed")
            assert code == 0 and data["accepted"], (part, data)
            assert data["kind"] == kind
            if kind == "pass":
                assert data["count"] > 0 and len(data["answer"]) == data["count"]

    def test_tournament_replays(self, tmp_path: Path):
        """A replay of a tournament (its own bot names) is asked again with --player and --at."""
        config = tmp_path / "cup.yaml"
        config.write_text(
            "name: cup\ngame: oh-hell\ntable_size: 3\nreplays: true\n"
            f"bots:\n  - name: rnd\n    file: {RANDOM}\n  - name: heur\n    file: {HEURISTIC}\n"
            f"  - name: rnd2\n    file: {RANDOM}\n"
            "schedule:\n  type: round-robin\n  games_per_table: 2\n"
        )  # fmt: skip
        out = referee("tourney", str(config), "--quiet")
        assert out.returncode == 0, out.stderr
        path = tmp_path / "out" / "cup" / "replays" / "m00000-game001.json"
        assert game_index(str(path)) == 1
        code, listing = ask(path, "--player", "heur")
        assert code == 0 and listing["decisions"]
        move = listing["decisions"][-1]["move"]
        code, data = ask(path, "--bot", HEURISTIC, "--player", "heur", "--at", str(move))
        assert code == 0 and data["accepted"] and data["player"] == "heur"


class TestFaults:
    @pytest.mark.parametrize(
        ("mode", "status", "words"),
        [
            ("illegal", "illegal", "'ZZ' is not one of"),
            ("crash", "crash", "RuntimeError: the recorder gives up"),
            ("hang", "timeout", "VIEW 0"),
            ("nostart", "no_start", "giving up before the hello"),
        ],
    )
    def test_a_bot_that_fails(self, seven: Recorded, mode: str, status: str, words: str):
        """A fault is exit status 1 with its closed status and detail, and the bot's output."""
        path = _replay(seven, 0)
        bot = f"{RECORDER} {mode}"
        code, data = ask(path, "--bot", bot, "--at", "3", "--move-timeout", "0.5", "--bank", "0")
        assert code == 1
        assert data["fault"]["status"] == status and data["accepted"] is False
        assert words in data["fault"]["detail"] + data["output_tail"]
        if mode != "illegal":
            return
        assert data["answer"] == "ZZ"
        out = referee("replay", str(path), "--bot", bot, "--at", "3", "--move-timeout", "0.5",
                      "--bank", "0")  # fmt: skip
        assert out.returncode == 1 and f"{status}:" in out.stdout
        assert "Traceback" not in out.stderr


class TestSecrecy:
    def test_the_replay_is_not_in_the_bots_copy_of_its_folder(self, seven: Recorded, tmp_path):
        """A replay saved in the bot's own folder (it holds every hand) is left out of the copy
        the bot runs from, in the bwrap sandbox; the bot's other files are there."""
        folder = tmp_path / "mybot"
        folder.mkdir()
        bot = folder / "view_recorder.py"
        bot.write_text(Path(RECORDER).read_text())
        (folder / "notes.txt").write_text("mine")
        path = folder / "game.json"
        path.write_text(_replay(seven, 0).read_text())
        code, data = ask(path, "--bot", f"{bot} peek", "--at", "4")
        assert code == 0, data
        (files,) = re.findall(r"^FILES (.*)$", data["output_tail"], re.M)
        assert "notes.txt" in files.split() and "view_recorder.py" in files.split()
        assert "game.json" not in files.split()


class TestErrors:
    @pytest.fixture
    def path(self, seven: Recorded) -> Path:
        return _replay(seven, 0)

    def _error(self, *args: str) -> str:
        out = referee("replay", *args)
        assert out.returncode == 2, out.stdout
        assert "Traceback" not in out.stderr and out.stderr.count("\n") == 1, out.stderr
        assert out.stderr.startswith("ohseven-referee replay: ")
        return out.stderr

    def test_bad_files(self, tmp_path: Path):
        """A missing file, a file that is not JSON and one of another format are named."""
        assert "No such file" in self._error(str(tmp_path / "none.json"))
        (tmp_path / "bad.json").write_text("{not json")
        assert "not JSON" in self._error(str(tmp_path / "bad.json"))
        (tmp_path / "other.json").write_text('{"format": "chess"}')
        assert "format 'chess'" in self._error(str(tmp_path / "other.json"))

    def test_a_version_mismatch(self, path: Path, tmp_path: Path):
        """A replay of another version says which."""
        replay = load_replay(path)
        replay["version"] = 2
        save_replay(tmp_path / "v2.json", replay)
        assert "version 2 is not 1" in self._error(str(tmp_path / "v2.json"))

    def test_a_corrupt_replay(self, path: Path, tmp_path: Path):
        """A move the game does not allow is named by its number."""
        replay = load_replay(path)
        replay["moves"][2][2] = replay["moves"][0][2] if replay["moves"][2][1] == "play" else "AS"
        replay["moves"][2][1] = "play"
        save_replay(tmp_path / "bad.json", replay)
        assert "move 3" in self._error(str(tmp_path / "bad.json"))  # moves[2]: from 1

    def test_n_out_of_range_says_the_range(self, path: Path):
        """--at past the end, 0 or negative, gives the range of moves (from 1)."""
        moves = len(load_replay(path)["moves"])
        for at in (str(moves + 1), "0", "-1"):
            message = self._error(str(path), "--bot", RANDOM, "--at", at)
            assert f"this replay has moves 1 to {moves}" in message

    def test_choices_that_do_not_fit(self, path: Path):
        """--at without a bot, a seat that is not in the game, a player in no seat, a decision
        of another seat than the one asked for, a bot that does not exist."""
        assert "--at needs --bot" in self._error(str(path), "--at", "3")
        assert "seats 0 to 2" in self._error(str(path), "--seat", "7")
        assert "is in no seat" in self._error(str(path), "--player", "nobody")
        seat = load_replay(path)["moves"][2][0]  # move 3
        other = str((seat + 1) % 3)
        message = self._error(str(path), "--bot", RANDOM, "--seat", other, "--at", "3")
        assert f"is a decision of seat {seat}" in message
        assert "no such" in self._error(str(path), "--bot", "no_such_bot.py", "--at", "3")


def test_a_deep_file_is_refused_clearly(tmp_path):
    """A 200,000-deep JSON file: one clear line, no traceback."""
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    done = referee("replay", str(path))
    assert done.returncode == 2, done.stderr
    assert "nested deeper than a replay can be" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


BUGGY = str(ROOT / "tests" / "bots" / "buggy_bot.py")


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str, Path]:
    """A match of the buggy bot with replays: its ``--json`` and its text report."""
    folder = tmp_path_factory.mktemp("faults")
    args = ["match", "--seed", "12345678901234567890123", "--games", "1", "--replays"]
    out = referee(*args, str(folder), "--json", BUGGY, RANDOM)
    assert out.returncode == 0, out.stderr
    text = referee(*args, str(folder / "text"), BUGGY, RANDOM).stdout
    return json.loads(out.stdout), text, folder


class TestFromAFaultToItsReplay:
    """A fault of ``match`` names its replay file and move; ``replay --at`` that move asks the
    bot the very decision it failed, says what it did and exits 1."""

    def test_every_fault_names_a_move_of_its_seat(self, played: tuple[dict, str, Path]):
        data, _, _ = played
        (game,) = data["games"]
        replay = load_replay(game["replay"])
        faults = game["faults"]
        assert faults and all(f["status"] == "bot_error" for f in faults)
        by_move = {d.move: d for d in decisions(replay, steps=())}
        for fault in faults:
            decision = by_move[fault["move"]]  # from 1, as replay counts
            assert decision.seat == fault["seat"]
            assert (decision.round, decision.trick) == (fault["round"], fault["trick"])
        # the replay file records the same faults, with their moves
        assert [f["move"] for f in replay["faults"]] == [f["move"] for f in faults]

    def test_the_command_printed_asks_the_fault_again(self, played: tuple[dict, str, Path]):
        """The text report prints ``replay FILE --bot BOT --at N``; run as printed, the bot
        raises again, the answer is its SDK's substitute and the exit status is 1."""
        _, text, _ = played
        commands = re.findall(r"ask it again: ohseven-referee (replay .*)$", text, re.M)
        assert len(commands) == 2  # two bugs: the bid raises, the play answers "XX"
        said = ""
        for command in commands:
            out = referee("replay", *shlex.split(command)[1:], "--sandbox", "unsandboxed")
            assert out.returncode == 1, out.stdout + out.stderr
            assert "its SDK answered the substitute" in out.stdout
            assert "(legal)" not in out.stdout
            said += out.stdout
        assert "raised; its SDK" in said and "ZeroDivisionError" in said
        assert "'XX', which is not legal" in said
        assert "buggy_bot.py" in said
        assert "ohseven-stage-" not in said  # the author's own path, not the staged copy

    def test_the_listing_marks_the_faults(self, played: tuple[dict, str, Path]):
        data, _, _ = played
        (game,) = data["games"]
        code, listing = ask(Path(game["replay"]), "--player", "buggy")
        assert code == 0
        marked = {d["move"] for d in listing["decisions"] if d["recorded_fault"]}
        assert marked == {f["move"] for f in game["faults"]}
        out = referee("replay", game["replay"], "--player", "buggy")
        rows = [line for line in out.stdout.splitlines() if "<- bot_error" in line]
        assert len(rows) == len(marked)
