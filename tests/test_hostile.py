"""Hostile bots end to end: real processes in the real bubblewrap sandbox, a real ``play_match``.

Each test seats one hostile bot (``tests/bots/hostile_bot.py MODE``) between two honest ones
(``tests/bots/match_bot.py random``, which also checks that the events it gets track its hand)
and proves the same four things: the match completes in bounded time, the fault is recorded
with its status, the honest bots get no fault and a legal game (the replay re-validates), and
what the hostile bot tried failed (its own report, on its log, says so).
"""

from __future__ import annotations

import ast
import os
import shutil
import socket
import sqlite3
import sys
import time
import uuid

import attrs
import pytest
from ohseven.core.rules import Rules
from ohseven.referee.play.match import play_match
from ohseven.referee.records import BotSpec, FaultStatus, MatchResult, MatchSpec, TimeControl
from ohseven.referee.replay import load_replay, validate_replay
from ohseven.referee.sandbox.settings import SandboxConfig

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')

BOTS = os.path.join(os.path.dirname(__file__), "bots")
HOSTILE = os.path.join(BOTS, "hostile_bot.py")
HONEST = os.path.join(BOTS, "match_bot.py")
CLOCK = TimeControl(move_seconds=0.3, bank_seconds=0.5, start_seconds=3)
SANDBOX = SandboxConfig(mode="bwrap")
DROP_AFTER = 3
#: wall-clock bound of one match of these tests (one game, three bots)
BOUND_SECONDS = 20

TIMEOUT, MALFORMED, ILLEGAL = FaultStatus.TIMEOUT, FaultStatus.MALFORMED, FaultStatus.ILLEGAL
PROTOCOL, DROPPED, CRASH, NO_START = (
    FaultStatus.PROTOCOL,
    FaultStatus.DROPPED,
    FaultStatus.CRASH,
    FaultStatus.NO_START,
)


def limited(**limits: int) -> SandboxConfig:
    return attrs.evolve(SANDBOX, limits=attrs.evolve(SANDBOX.limits, **limits))


@attrs.frozen
class Outcome:
    result: MatchResult
    seconds: float
    replays: list[dict]

    @property
    def hostile_log(self) -> str:
        return self.result.logs["hostile"]

    def statuses(self, name: str = "hostile") -> list[FaultStatus]:
        return [
            fault.status
            for record in self.result.games
            for fault in record.faults
            if record.seats[fault.seat] == name
        ]

    def reports(self, word: str) -> list[str]:
        """The details of the hostile bot's ``RESULT word ...`` lines."""
        prefix = f"RESULT {word}"
        return [
            line[len(prefix) :].strip()
            for line in self.hostile_log.splitlines()
            if line.startswith(prefix + " ") or line == prefix
        ]


def play(
    tmp_path,
    mode: str,
    *args: str,
    game: str = "oh-seven",
    sandbox: SandboxConfig = SANDBOX,
    honest_dir: str | None = None,
    clock: TimeControl = CLOCK,
) -> Outcome:
    """One game: honest seat 0, the hostile bot in seat 1, honest seat 2; checks the invariants
    every hostile test shares (bounded time, honest bots clean, legal replays)."""
    honest = HONEST
    if honest_dir is not None:
        honest = os.path.join(honest_dir, "match_bot.py")
        shutil.copy(HONEST, honest)
    spec = MatchSpec(
        match_id=f"hostile-{mode}",
        rules=Rules.make(game),
        bots=(
            BotSpec("honest0", (sys.executable, honest, "random"), honest_dir),
            BotSpec("hostile", (sys.executable, HOSTILE, mode, *args)),
            BotSpec("honest2", (sys.executable, honest, "random"), honest_dir),
        ),
        seatings=((0, 1, 2),),
        seeds=(20240601,),
        time_control=clock,
        fallback_seed=5,
    )
    replay_dir = tmp_path / "replays"
    replay_dir.mkdir()
    started = time.monotonic()
    result = play_match(
        spec, sandbox=sandbox, replay_dir=str(replay_dir), drop_after_faults=DROP_AFTER
    )
    outcome = Outcome(
        result,
        time.monotonic() - started,
        [load_replay(record.replay_path) for record in result.games],
    )
    assert outcome.seconds < BOUND_SECONDS
    assert len(result.games) == 1 and result.games[0].ranks
    assert outcome.statuses("honest0") == outcome.statuses("honest2") == [], result.games
    for replay in outcome.replays:
        validate_replay(replay)
        assert replay["result"] is not None
    return outcome


def dropped(status: FaultStatus) -> list[FaultStatus]:
    """The faults of a bot that repeats one misbehaviour until it is dropped."""
    return [status] * DROP_AFTER + [DROPPED]


class TestStart:
    @pytest.mark.parametrize("mode", ["exit", "noconnect", "mute", "guess"])
    def test_never_ready(self, tmp_path, mode):
        """A bot that exits, never connects, stays mute or only guesses secrets is no_start."""
        outcome = play(tmp_path, mode)
        assert outcome.statuses() == [NO_START]
        if mode == "guess":
            assert set(outcome.reports("guess_answer")) == {"error"}, outcome.hostile_log


class TestDecisions:
    @pytest.mark.parametrize(
        ("mode", "status", "game"),
        [
            ("hang", TIMEOUT, "oh-seven"),
            ("late", TIMEOUT, "oh-seven"),
            ("spin", TIMEOUT, "oh-seven"),
            ("replay", TIMEOUT, "oh-seven"),
            ("garbage", MALFORMED, "oh-seven"),
            ("huge", MALFORMED, "oh-seven"),
            ("deep", MALFORMED, "oh-seven"),
            ("notmap", MALFORMED, "oh-seven"),
            ("badid", MALFORMED, "oh-seven"),
            ("nomove", MALFORMED, "oh-seven"),
            ("badmove", MALFORMED, "oh-hell"),
            ("binary", MALFORMED, "oh-seven"),
            ("notheld", ILLEGAL, "oh-seven"),
            ("bidrange", ILLEGAL, "oh-hell"),
            ("unsolicited", PROTOCOL, "oh-seven"),
            ("neighbours", PROTOCOL, "oh-seven"),
        ],
    )
    def test_repeated_fault_until_dropped(self, tmp_path, mode, status, game):
        """Each misbehaviour on every request is faulted with its status until the drop."""
        outcome = play(tmp_path, mode, game=game)
        assert outcome.statuses() == dropped(status), outcome.result.games[0].faults

    def test_enormous_message_is_cut_off(self, tmp_path):
        """A message over the transport limit never reaches the referee: the bot times out."""
        outcome = play(tmp_path, "enormous")
        assert outcome.statuses() == dropped(TIMEOUT)


class TestResources:
    def test_memory_without_end(self, tmp_path):
        """Allocating without end is refused at the address-space limit; the bot crashes."""
        outcome = play(tmp_path, "memory", sandbox=limited(memory_mb=256))
        assert outcome.statuses() == [CRASH]
        (refused,) = outcome.reports("memory_refused")
        assert int(refused) <= 256

    def test_fork_bomb(self, tmp_path):
        """A fork bomb is stopped at the process limit and no process survives the match."""
        marker = uuid.uuid4().hex
        outcome = play(tmp_path, "forkbomb", marker, sandbox=limited(processes=16))
        (refused,) = outcome.reports("fork_refused")
        assert int(refused.split()[0]) < 16 and refused.split()[1] == "EAGAIN"
        assert outcome.statuses() in ([], [TIMEOUT]), "the bot answers once forking is refused"
        assert not survivors(marker)

    def test_huge_file(self, tmp_path):
        """Writing a huge file stops at the file-size limit; the bot crashes."""
        outcome = play(tmp_path, "bigfile")
        assert outcome.statuses() == [CRASH]
        (refused,) = outcome.reports("write_refused")
        assert refused == f"{SANDBOX.limits.file_size_mb} EFBIG"

    def test_output_flood(self, tmp_path):
        """Megabytes on stdout and stderr are cut to the log bound; the game is not disturbed."""
        outcome = play(tmp_path, "flood")
        assert outcome.statuses() == []
        log = outcome.hostile_log
        assert "bytes of output discarded" in log
        assert len(log.encode()) < SANDBOX.limits.log_bytes + 200


class TestEscape:
    def test_impostor(self, tmp_path):
        """A second connection after the hello cannot even be opened: the endpoint is gone."""
        outcome = play(tmp_path, "impostor")
        assert outcome.statuses() == []
        assert outcome.reports("impostor_refused") == ["ENOENT"], outcome.hostile_log
        assert outcome.reports("impostor") == []
        listed = outcome.reports("listed")
        assert (
            listed == [] or len(ast.literal_eval(listed[0])) == 1
        )  # at most its own socket directory

    def test_network(self, tmp_path):
        """A TCP connection to a listener on the host's 127.0.0.1 fails; nothing arrives."""
        with socket.create_server(("127.0.0.1", 0)) as server:
            server.settimeout(0.2)
            port = server.getsockname()[1]
            outcome = play(tmp_path, "network", "127.0.0.1", str(port))
            with pytest.raises(TimeoutError):
                server.accept()
        assert outcome.statuses() == []
        assert outcome.reports("net_refused"), outcome.hostile_log
        assert not outcome.reports("net_connected")

    def test_steal_files(self, tmp_path):
        """Another bot's file and the results database cannot be read."""
        other = tmp_path / "other_bot"
        other.mkdir()
        (other / "secret.txt").write_text("SECRET-OF-THE-OTHER-BOT")
        database = tmp_path / "results.sqlite"
        with sqlite3.connect(database) as db:
            db.execute("create table secrets (value text)")
            db.execute("insert into secrets values ('SECRET-OF-THE-REFEREE')")
        db.close()
        targets = [str(other / "secret.txt"), str(other / "match_bot.py"), str(database)]
        outcome = play(tmp_path, "steal", *targets, honest_dir=str(other))
        assert outcome.statuses() == []
        refused = outcome.reports("steal_refused")
        assert [line.split()[0] for line in refused] == targets, outcome.hostile_log
        assert not outcome.reports("stolen")
        assert "SECRET-OF" not in outcome.hostile_log

    def test_signal_the_referee(self, tmp_path):
        """Killing the referee, pid 1 or every process (-1) reaches nobody outside."""
        outcome = play(tmp_path, "signal", str(os.getpid()))
        refused = dict(line.split() for line in outcome.reports("kill_refused"))
        sent = outcome.reports("kill_sent")
        assert refused.get(str(os.getpid())) == "ESRCH", outcome.hostile_log
        assert refused.get("1") in ("EPERM", "ESRCH") and "1" not in sent
        # kill(-1) reaches every process the bot may signal but itself: none in its namespace
        assert refused.get("-1") == "ESRCH" and "-1" not in sent
        assert outcome.statuses() == []


def survivors(marker: str) -> list[int]:
    """Pids of live processes whose command line contains ``marker``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                cmdline = handle.read()
            with open(f"/proc/{name}/stat") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state not in "ZX":
            found.append(int(name))
    return found


class TestStallOnKill:
    """A bot whose kill takes the referee seconds, killed while another seat owes a move."""

    CLOCK = attrs.evolve(CLOCK, start_seconds=10)  # the bot prepares before its hello

    def test_dropped_while_the_next_seat_is_asked(self, tmp_path):
        """The next seat's prompt reply is not turned into a timeout by the referee's stall."""
        # 60 children sharing 400 MB: a kill that takes longer than the move and the bank
        outcome = play(tmp_path, "stall", "drop", "60", "400", clock=self.CLOCK)
        assert outcome.reports("stall"), outcome.hostile_log
        assert outcome.statuses()[-1] is DROPPED

    def test_crashed_while_the_next_seat_is_asked(self, tmp_path):
        """A crash of that bot (its kernel teardown) does not cost the next seat its time."""
        outcome = play(tmp_path, "stall", "crash", clock=self.CLOCK)
        assert outcome.reports("stall"), outcome.hostile_log
        assert outcome.statuses()[-1] is CRASH


def peak_rss_mb() -> int:
    """This process's peak resident memory (since it was last reset), in MB."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024
    raise AssertionError("no VmHWM in /proc/self/status")


class TestFrameFlood:
    def test_megabyte_frames_do_not_pile_up(self, tmp_path):
        """2000 frames of 1 MB cost the referee little memory: the bot is dropped first."""
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")  # resets the peak
        before = peak_rss_mb()
        outcome = play(tmp_path, "bigflood", "2000")
        assert outcome.statuses() == dropped(MALFORMED)
        assert peak_rss_mb() - before < 200


class TestSpareConnection:
    def test_a_connection_opened_before_the_hello(self, tmp_path):
        """A second connection opened before the hello cannot say hello or move mid-game."""
        outcome = play(tmp_path, "spare")
        assert set(outcome.reports("spare_hello")) == {"error"}, outcome.hostile_log
        assert set(outcome.statuses()) <= {PROTOCOL, DROPPED}
