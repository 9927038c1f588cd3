"""play_match with real bot processes over real ZeroMQ sockets (tests/bots/match_bot.py)."""

from __future__ import annotations

import os
import sys
import time

import attrs
import pytest
from ohseven.core.rules import Rules, competition_ranks
from ohseven.referee.play.match import MatchSpecError, play_match
from ohseven.referee.records import BotSpec, FaultStatus, MatchSpec, TimeControl
from ohseven.referee.replay import load_replay, validate_replay
from ohseven.referee.sandbox.settings import SandboxConfig

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')

BOT = os.path.join(os.path.dirname(__file__), "bots", "match_bot.py")
UNSANDBOXED = SandboxConfig(mode="unsandboxed")
FAST = TimeControl(move_seconds=0.3, bank_seconds=0.2, start_seconds=5.0)


def spec_for(
    modes: list[str],
    game: str = "oh-seven",
    games: int = 1,
    options: dict | None = None,
    time_control: TimeControl = FAST,
) -> MatchSpec:
    n = len(modes)
    return MatchSpec(
        match_id="t",
        rules=Rules.make(game, options),
        bots=tuple(
            BotSpec(f"{mode}{i}", (sys.executable, BOT, mode)) for i, mode in enumerate(modes)
        ),
        seatings=tuple(tuple((s + g) % n for s in range(n)) for g in range(games)),
        seeds=tuple(100 + g for g in range(games)),
        time_control=time_control,
        fallback_seed=3,
    )


def faults_of(result, name: str) -> list:
    return [
        fault.status
        for record in result.games
        for fault in record.faults
        if record.seats[fault.seat] == name
    ]


class TestFullGames:
    @pytest.mark.parametrize("players", range(2, 10))
    def test_oh_seven(self, players):
        """Oh-Seven for 2..9 players completes with no fault and consistent ranks."""
        result = play_match(spec_for(["random"] * players), sandbox=UNSANDBOXED)
        (record,) = result.games
        assert record.faults == ()
        assert record.seats == tuple(f"random{i}" for i in range(players))
        assert record.ranks == competition_ranks(record.totals)
        assert record.stats["table"]["rounds"] == 7

    @pytest.mark.parametrize("players", range(3, 8))
    def test_oh_hell(self, players):
        """Oh Hell for 3..7 players (shortest hand order) completes with no fault."""
        result = play_match(
            spec_for(["random"] * players, "oh-hell", options={"hand_order": "down"}),
            sandbox=UNSANDBOXED,
        )
        assert result.games[0].faults == ()

    @pytest.mark.parametrize(
        ("game", "options"),
        [("oh-seven", {"passing": True}), ("oh-hell", {"simultaneous_bids": True})],
    )
    def test_simultaneous_decisions(self, game, options):
        """Passes and simultaneous bids are asked of all seats at once and collected."""
        result = play_match(spec_for(["random"] * 5, game, options=options), sandbox=UNSANDBOXED)
        assert result.games[0].faults == ()

    def test_seats_rotate_and_games_are_recorded(self, tmp_path):
        """Each game follows its seating; on_game sees each record; replays validate."""
        seen = []
        spec = spec_for(["random"] * 3, games=3)
        result = play_match(
            spec, sandbox=UNSANDBOXED, replay_dir=str(tmp_path), on_game=seen.append
        )
        assert list(result.games) == seen
        for g, record in enumerate(result.games):
            assert record.game_index == g and record.seed == spec.seeds[g]
            assert record.seats == tuple(f"random{b}" for b in spec.seatings[g])
            replay = load_replay(record.replay_path)
            validate_replay(replay)
            assert replay["seats"] == list(record.seats)
            assert replay["result"]["totals"] == list(record.totals)

    def test_deterministic(self):
        """The same spec with deterministic bots gives the same records."""
        spec = spec_for(["random", "random", "silent"], games=2)
        spec = attrs.evolve(spec, time_control=TimeControl(0.3, 0.2, 1.0))
        first = play_match(spec, sandbox=UNSANDBOXED)
        second = play_match(spec, sandbox=UNSANDBOXED)
        assert [r.totals for r in first.games] == [r.totals for r in second.games]

    def test_per_bot_limits_apply_to_that_bot_only(self):
        """A bot's own limits override the match's: too little memory to start, for it alone."""
        spec = spec_for(["random", "random", "random"], games=1)
        starved = attrs.evolve(spec.bots[1], limits=(("memory_mb", 8),))
        spec = attrs.evolve(spec, bots=(spec.bots[0], starved, spec.bots[2]))
        result = play_match(spec, sandbox=UNSANDBOXED)
        assert faults_of(result, "random1") == [FaultStatus.NO_START]
        assert faults_of(result, "random0") == faults_of(result, "random2") == []

    def test_bwrap(self):
        """A match in the bubblewrap sandbox plays through, crash and restart included."""
        result = play_match(
            spec_for(["random", "crash", "random"], "oh-hell", games=2),
            sandbox=SandboxConfig(mode="bwrap"),
        )
        assert faults_of(result, "crash1") == [FaultStatus.CRASH, FaultStatus.CRASH]
        assert faults_of(result, "random0") == faults_of(result, "random2") == []


class TestFaults:
    @pytest.mark.parametrize(
        ("mode", "status"),
        [
            ("timeout", FaultStatus.TIMEOUT),
            ("crash", FaultStatus.CRASH),
            ("garbage", FaultStatus.MALFORMED),
            ("badtype", FaultStatus.MALFORMED),
            ("wrong_id", FaultStatus.PROTOCOL),
            ("illegal", FaultStatus.ILLEGAL),
        ],
    )
    def test_one_fault(self, mode, status):
        """One misbehaviour: the match completes, that fault is recorded, the others are clean."""
        result = play_match(spec_for(["random", mode, "random"]), sandbox=UNSANDBOXED)
        assert faults_of(result, f"{mode}1") == [status]
        assert faults_of(result, "random0") == faults_of(result, "random2") == []
        assert result.games[0].ranks == competition_ranks(result.games[0].totals)

    def test_old_id_is_discarded(self):
        """A reply repeating an old id is discarded without a fault."""
        result = play_match(spec_for(["random", "old_id"]), sandbox=UNSANDBOXED)
        assert result.games[0].faults == ()

    @pytest.mark.parametrize("mode", ["silent", "badsecret"])
    def test_no_start(self, mode):
        """A bot that never says a good hello is no_start in every game, once per game."""
        # 3 s to start: under load a Python bot can take more than 1 s to reach its hello
        spec = spec_for(["random", mode, "random"], games=2, time_control=TimeControl(0.3, 0.2, 3))
        result = play_match(spec, sandbox=UNSANDBOXED)
        assert faults_of(result, f"{mode}1") == [FaultStatus.NO_START] * 2
        assert faults_of(result, "random0") == []
        if mode == "badsecret":
            assert "'type': 'error'" in result.logs[f"{mode}1"]

    @pytest.mark.parametrize(
        ("mode", "problem"),
        [("longlabel", "at most 64 characters (65 characters)"), ("boolprotocol", "True")],
    )
    def test_a_bad_hello_is_answered_and_faulted_with_the_problem(self, mode, problem):
        """A hello with the right secret but a 65-character label or `protocol: true` gets an
        error naming the problem and a protocol fault saying it (then no_start)."""
        spec = spec_for(["random", mode, "random"], time_control=TimeControl(0.3, 0.2, 1))
        result = play_match(spec, sandbox=UNSANDBOXED)
        faults = [f for g in result.games for f in g.faults]
        assert [f.status for f in faults] == [FaultStatus.PROTOCOL, FaultStatus.NO_START]
        assert faults[0].detail.startswith("hello refused: hello ") and problem in faults[0].detail
        assert "'type': 'error'" in result.logs[f"{mode}1"] and problem in result.logs[f"{mode}1"]

    def test_crash_restart_budget(self):
        """A crashing bot is restarted while its budget lasts, then dropped."""
        result = play_match(
            spec_for(["crash", "random"], games=3), sandbox=UNSANDBOXED, max_restarts=1
        )
        statuses = [[f.status for f in r.faults] for r in result.games]
        assert statuses == [[FaultStatus.CRASH], [FaultStatus.CRASH], [FaultStatus.DROPPED]]

    def test_hanging_bot_is_dropped_and_killed(self):
        """A bot that stops answering times out, is dropped after N faults, and is killed."""
        started = time.monotonic()
        result = play_match(
            spec_for(["hang", "random"], games=2), sandbox=UNSANDBOXED, drop_after_faults=3
        )
        assert faults_of(result, "hang0") == [FaultStatus.TIMEOUT] * 3 + [FaultStatus.DROPPED] * 2
        assert time.monotonic() - started < 10

    def test_bank_is_drawn(self):
        """A bot that always runs out of time faults on each decision, bounded by the bank."""
        result = play_match(
            spec_for(["always_timeout", "random"], time_control=TimeControl(0.1, 0.1, 5)),
            sandbox=UNSANDBOXED,
            drop_after_faults=2,
        )
        assert faults_of(result, "always_timeout0") == [FaultStatus.TIMEOUT] * 2 + [
            FaultStatus.DROPPED
        ]


BUGGY = os.path.join(os.path.dirname(__file__), "bots", "buggy_bot.py")


class TestBotErrors:
    def test_sdk_substitutes_are_bot_errors_with_the_traceback(self):
        """A bot whose code raises and answers illegally gets a bot_error per substitute move,
        with its traceback; the moves stand, and many of them do not drop the bot."""
        spec = attrs.evolve(
            spec_for(["random", "random"]),
            bots=(*spec_for(["random", "random"]).bots, BotSpec("buggy", (sys.executable, BUGGY))),
            seatings=((0, 1, 2), (2, 0, 1)),
            seeds=(100, 101),
        )
        result = play_match(spec, sandbox=SandboxConfig())
        statuses = faults_of(result, "buggy")
        assert statuses and set(statuses) == {FaultStatus.BOT_ERROR}
        assert len(statuses) > 10  # more than drop_after_faults: still not dropped
        details = [f.detail for g in result.games for f in g.faults]
        assert any("ZeroDivisionError" in d and "Traceback" in d for d in details)
        assert any("returned 'XX', which is not legal" in d for d in details)
        assert faults_of(result, "random0") == faults_of(result, "random1") == []


class TestSpec:
    def test_bad_seating(self):
        """Seatings naming unknown or repeated bots are rejected before any process starts."""
        spec = spec_for(["random", "random"])
        bad = attrs.evolve(spec, seatings=((0, 0),))
        with pytest.raises(MatchSpecError, match="distinct"):
            play_match(bad, sandbox=UNSANDBOXED)

    def test_seeds_must_match(self):
        """One seed per game is required."""
        spec = spec_for(["random", "random"])
        bad = attrs.evolve(spec, seeds=())
        with pytest.raises(MatchSpecError, match="seeds"):
            play_match(bad, sandbox=UNSANDBOXED)


CGROUP_BOT = os.path.join(os.path.dirname(__file__), "bots", "cgroup_bot.py")


class TestLimitFault:
    def test_oom_kill_is_a_limit_fault(self):
        """A bot the kernel kills at its memory limit mid-game gets ``limit`` (the limit named),
        not ``crash``; the others play on."""
        from ohseven.referee.sandbox import cgroups

        if cgroups.support().message() is not None:
            pytest.skip(cgroups.support().message())
        hog = BotSpec(
            "hog", (sys.executable, CGROUP_BOT, "oom", "3", "175"), None, (("memory_mb", 300),)
        )
        other = BotSpec("other", (sys.executable, CGROUP_BOT, "quick"))
        clock = TimeControl(move_seconds=10.0, bank_seconds=0.0, start_seconds=10.0)
        spec = MatchSpec("oom", Rules.make("oh-seven"), (hog, other), ((0, 1),), (5,), clock)
        result = play_match(spec)
        statuses = faults_of(result, "hog")
        assert FaultStatus.LIMIT in statuses and FaultStatus.CRASH not in statuses, statuses
        (detail,) = [f.detail for f in result.games[0].faults if f.status is FaultStatus.LIMIT]
        assert detail.startswith("memory limit 300 MB reached (OOM kill)")
        assert faults_of(result, "other") == []


MEMO_BOT = os.path.join(os.path.dirname(__file__), "bots", "memo_bot.py")


class TestFreshProcesses:
    """A process given in place of another (a duplicate rotation, a restart) inherits nothing."""

    def _replayed_deal(self) -> dict[str, str]:
        """Three memo bots play one deal twice (two rotations): each bot's log."""
        spec = MatchSpec(
            match_id="fresh",
            rules=Rules.make("oh-seven"),
            bots=tuple(BotSpec(f"memo{i}", (sys.executable, MEMO_BOT)) for i in range(3)),
            seatings=((0, 1, 2), (1, 2, 0)),
            seeds=(7, 7),
            time_control=TimeControl(move_seconds=5, bank_seconds=5, start_seconds=10),
            fallback_seed=3,
        )
        return dict(play_match(spec, sandbox=SandboxConfig(mode="bwrap")).logs)

    def test_the_socket_directory_is_new_for_each_process(self) -> None:
        """The second process of each bot (the deal's second rotation) finds no note the first
        one left beside its endpoint, in a file or in the endpoint's times."""
        for name, log in self._replayed_deal().items():
            processes = {line.split()[1] for line in log.splitlines() if line.startswith("ID ")}
            assert len(processes) == 2, (name, log)  # two processes, both played
            assert "NOTE" not in log, (name, log)

    def test_request_ids_do_not_count_the_earlier_requests(self) -> None:
        """The ids a new process is sent start 2**24 or more past the last ones its predecessor
        saw: the number of requests of the earlier games is lost in an unknown offset."""
        for name, log in self._replayed_deal().items():
            ids: dict[str, list[int]] = {}
            for line in log.splitlines():
                if line.startswith("ID "):
                    ids.setdefault(line.split()[1], []).append(int(line.split()[2]))
            assert len(ids) == 2, (name, log)  # two processes, both played
            earlier, later = sorted(ids.values())
            last, first = max(earlier), min(later)
            assert first - last >= 2**24, (name, last, first)
