"""Descriptors, floods and disk: hostile bots in the real sandbox (and a real ``tourney``) that
try to fill the disk outside their scratch, to exhaust the referee's descriptors with
connections, and to slow the table with messages nobody asked for."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from ohseven.core.names import PROTOCOL_VERSION
from ohseven.core.rules import Rules
from ohseven.core.table import Request
from ohseven.referee.plan.loader import load_config
from ohseven.referee.play.connection import (
    EXTRA_BUDGET,
    Connection,
    Hello,
    Invalid,
    Late,
    MoveCodec,
    MoveReply,
)
from ohseven.referee.play.descriptors import FD_PER_BOT, bot_capacity, raise_fd_limit
from ohseven.referee.play.match import play_match
from ohseven.referee.play.referee import MAX_CONNECTIONS
from ohseven.referee.records import BotSpec, MatchSpec, TimeControl
from ohseven.referee.results.store import Store
from ohseven.referee.sandbox.settings import SandboxConfig
from ohseven.referee.tournament.run import run_tournament
from test_hostile import (
    DROP_AFTER,
    DROPPED,
    HONEST,
    HOSTILE,
    NO_START,
    PROTOCOL,
    dropped,
    limited,
    play,
)
from tourney_files import write_tournament

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')

UNSANDBOXED = SandboxConfig(mode="unsandboxed")

#: Connects to the listener at argv[1] again and again, passing each connection through a
#: socketpair to itself (SCM_RIGHTS) and closing its own descriptor; prints how many connections
#: it held open when the kernel refused.
_HOARDER = """
import array, socket, sys, time
left, right = socket.socketpair()
held = 0
while True:
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(sys.argv[1])
        fds = array.array("i", [conn.fileno()])
        left.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
    except OSError:
        break
    conn.close()
    held += 1
print(held, flush=True)
"""


def _system_python() -> str:
    """An interpreter any uid may run (a root-owned virtualenv's may not be)."""
    return "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable


@pytest.fixture
def shared_dir():
    """A folder every uid can read (bots run as other uids when the referee is root)."""
    folder = Path(tempfile.mkdtemp(prefix="ohseven-floods-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


class TestDisk:
    def test_nothing_writable_outside_the_scratch(self, tmp_path):
        """In the sandbox, no directory but the scratch takes a file, the socket one included."""
        outcome = play(tmp_path, "writeall")
        assert outcome.statuses() == []
        assert outcome.reports("socket_dir_tried") == ["True"], outcome.hostile_log
        assert outcome.reports("scratch") == ["True"], "the probe can write its own scratch"
        assert json.loads(outcome.reports("wrote")[0]) == [], outcome.hostile_log
        assert outcome.reports("filled_mb") == ["0"]

    @pytest.mark.skipif(os.geteuid() != 0, reason="unsandboxed bots have another uid as root")
    def test_unsandboxed_socket_directory_is_not_writable(self, tmp_path, shared_dir):
        """Unsandboxed, the bot's uid can connect to its socket but write nothing beside it."""
        bots = shared_dir / "bots"
        shutil.copytree(os.path.dirname(HOSTILE), bots)
        spec = MatchSpec(
            match_id="unsandboxed-writes",
            rules=Rules.make("oh-seven"),
            bots=(
                BotSpec("honest0", (sys.executable, str(bots / "match_bot.py"), "random")),
                BotSpec(
                    "hostile",
                    (sys.executable, str(bots / "hostile_bot.py"), "writeall", "socketdir"),
                ),
                BotSpec("honest2", (sys.executable, str(bots / "match_bot.py"), "random")),
            ),
            seatings=((0, 1, 2),),
            seeds=(7,),
            time_control=TimeControl(move_seconds=2, bank_seconds=2, start_seconds=10),
        )
        result = play_match(spec, sandbox=UNSANDBOXED)
        log = result.logs["hostile"]
        assert "RESULT socket_dir_tried True" in log, log
        assert "RESULT wrote []" in log, log
        assert not result.games[0].faults


class TestConnections:
    def test_flood_before_the_hello_is_faulted_and_killed(self, tmp_path):
        """Many processes x many connections before the hello: a protocol fault, the bot is
        killed (so its connections close) and the game goes on."""
        outcome = play(
            tmp_path, "connflood", "6", "40", "early", sandbox=limited(processes=16, open_files=64)
        )
        statuses = outcome.statuses()
        assert statuses[0] == PROTOCOL, outcome.result.games[0].faults
        assert set(statuses) <= {PROTOCOL, NO_START, DROPPED}
        detail = next(f.detail for f in outcome.result.games[0].faults if f.seat == 1)
        assert "connections to its endpoint" in detail
        assert int(detail.split()[1]) > MAX_CONNECTIONS

    def test_no_connection_after_the_hello(self, tmp_path):
        """After its hello the bot's endpoint is gone: no further connection can be made."""
        outcome = play(
            tmp_path, "connflood", "4", "50", "late", sandbox=limited(processes=16, open_files=64)
        )
        assert outcome.reports("connected") == ["0 ENOENT"], outcome.hostile_log
        assert outcome.statuses() == []

    def test_frames_of_a_connection_without_hello_are_bounded(self, tmp_path):
        """A second connection flooding frames with no hello: past the budget, each frame is a
        protocol fault of the bot that opened it, until it is dropped."""
        outcome = play(tmp_path, "strangers")
        statuses = outcome.statuses()
        assert statuses[:DROP_AFTER] == [PROTOCOL] * DROP_AFTER, outcome.result.games[0].faults
        assert DROPPED in statuses

    def test_descriptor_limit_raised_to_the_hard_one(self):
        """The helper lifts the soft RLIMIT_NOFILE to the hard limit."""
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, hard), hard))
            assert raise_fd_limit() == hard
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _flood_config(folder: Path) -> Path:
    """Two honest bots and a connection flooder with room for 8 x 200 descriptors."""
    folder.chmod(0o755)
    bots = folder / "bots"
    shutil.copytree(os.path.dirname(HOSTILE), bots)
    (folder / "t.yaml").write_text(
        f"""
name: floods
game: oh-seven
table_size: 3
bots:
  - {{name: honest1, command: [{sys.executable}, {bots / "match_bot.py"}, random]}}
  - {{name: honest2, command: [{sys.executable}, {bots / "match_bot.py"}, random]}}
  - name: flooder
    command: [{sys.executable}, {bots / "hostile_bot.py"}, connflood, "8", "200", late]
    limits: {{processes: 16, open_files: 220}}
schedule: {{type: round-robin, games_per_table: 2}}
time_control: {{move_seconds: 1, bank_seconds: 2, start_seconds: 10}}
seed: 5
replays: false
output: {folder / "out"}
"""
    )
    return folder / "t.yaml"


class TestTournament:
    def test_connection_flood_under_a_low_descriptor_limit(self, shared_dir):
        """Under a hard limit of 1024 descriptors, a bot holding 8 x 200 connections neither
        stops the tournament nor a resume of it: every game is played."""
        if shutil.which("prlimit") is None:
            pytest.skip("prlimit (util-linux) is needed to lower the limit")
        path = _flood_config(shared_dir)
        command = [
            "prlimit",
            "--nofile=1024:1024",
            sys.executable,
            "-m",
            "ohseven.referee.cli",
        ]
        command += ["tourney", str(path), "--quiet"]
        for _ in range(2):  # the run, then the same command again
            done = subprocess.run(command, capture_output=True, text=True, timeout=240)
            assert done.returncode == 0, done.stderr[-3000:]
        with Store.open(shared_dir / "out", create=False) as store:
            assert len(store.games()) == 6
            assert set(store.match_status().values()) == {"done"}


def _aborting_runner(spec, **kwargs):
    """Plays the match, except that the first attempt at match 0 kills its process (as a libzmq
    abort would)."""
    marker = Path(os.environ["OHSEVEN_TEST_MARKER"])
    if spec.match_id == "m00000" and not marker.exists():
        marker.write_text("aborted")
        os.abort()
    return play_match(spec, **kwargs)


class TestWorkerDeath:
    def test_dead_worker_fails_its_match_and_the_rerun_completes(self, shared_dir, monkeypatch):
        """A worker killed by a signal mid-match: that match is recorded failed, the others are
        played, and running the same tournament again plays it."""
        path = write_tournament(shared_dir, size=3, games=1, output=str(shared_dir / "out"))
        config = load_config(path)
        monkeypatch.setenv("OHSEVEN_TEST_MARKER", str(shared_dir / "aborted"))
        first = run_tournament(config, workers=2, runner=_aborting_runner, sandbox=UNSANDBOXED)
        matches = first.matches
        assert [reason for _, reason in first.failed] == [
            "the worker process playing it died (signal SIGABRT)"
        ]
        assert first.played_games == first.games - 3 and not first.complete  # 3 games a match
        second = run_tournament(config, workers=2, runner=_aborting_runner, sandbox=UNSANDBOXED)
        assert second.failed == () and second.complete
        assert second.played_games == 3 and second.matches == matches


class TestFloods:
    def test_late_reply_flood_is_a_protocol_fault(self, tmp_path):
        """Repeating its reply without end is faulted protocol until the bot is dropped."""
        outcome = play(tmp_path, "lateflood")
        assert outcome.statuses() == dropped(PROTOCOL), outcome.result.games[0].faults

    def test_flood_does_not_slow_the_honest_bots(self, tmp_path):
        """A match of several games with a late-reply flooder takes about as long as one with
        the same bot playing fair (a generous factor: the CPU is shared)."""

        def seconds(mode: str) -> float:
            spec = MatchSpec(
                match_id=f"flood-{mode}",
                rules=Rules.make("oh-seven"),
                bots=(
                    BotSpec("honest0", (sys.executable, HONEST, "random")),
                    BotSpec("hostile", (sys.executable, HOSTILE, mode)),
                    BotSpec("honest2", (sys.executable, HONEST, "random")),
                ),
                seatings=((0, 1, 2),) * 4,
                seeds=(1, 2, 3, 4),
                time_control=TimeControl(move_seconds=1, bank_seconds=2, start_seconds=10),
            )
            started = time.monotonic()
            result = play_match(spec)
            for record in result.games:
                assert not [f for f in record.faults if record.seats[f.seat] != "hostile"]
            return time.monotonic() - started

        fair = seconds("fair")
        flooded = seconds("lateflood")
        assert flooded < 3 * fair + 3, (fair, flooded)


class TestBudgets:
    def test_late_replies_beyond_the_budget_are_faults(self):
        """Within one request, late replies up to the budget are discarded, the next is a fault;
        a new request starts a new budget."""
        from ohseven.core.rules import new_game

        game = new_game(Rules.make("oh-seven"), 3, 1)
        codec = MoveCodec(game)
        connection = Connection("bot", "s")
        connection.hello(Hello(PROTOCOL_VERSION, "s", ""))
        for ident in (1, 2):
            request = Request(ident, 0, "pass", [], 0, 0.0, 1.0)
            connection.request(request, [])
            connection.expire()
            for _ in range(EXTRA_BUDGET):
                assert connection.receive(MoveReply(ident, []), codec) == Late(ident)
            fault = connection.receive(MoveReply(ident, []), codec)
            assert type(fault) is Invalid and fault.status is PROTOCOL

    def test_capacity_counts_processes_times_open_files(self):
        """A bot can cost the referee one descriptor per descriptor of each of its processes,
        and as many again in flight."""
        config = limited(processes=3, open_files=100)
        assert bot_capacity(config) == 300 + 100 + FD_PER_BOT

    def test_connections_in_flight_are_a_second_descriptor_limit(self, tmp_path):
        """An unprivileged process can keep open about its RLIMIT_NOFILE of connections more by
        sending them through a Unix socket to itself and closing its own descriptors (why the
        capacity counts descriptors in flight); the kernel stops it there."""
        if shutil.which("prlimit") is None:
            pytest.skip("prlimit (util-linux) is needed to lower the limit")
        folder = Path(tempfile.mkdtemp(prefix="ohseven-inflight-"))
        folder.chmod(0o777)
        path = str(folder / "listener")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        os.chmod(path, 0o777)
        listener.listen(1024)
        command = ["prlimit", "--nofile=32:32", _system_python(), "-c", _HOARDER, path]
        if os.geteuid() == 0:  # root's descriptors in flight are not bounded; a bot is not root
            command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
        accepted = []
        child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        listener.settimeout(0.5)
        try:
            while child.poll() is None:
                with contextlib.suppress(TimeoutError):
                    accepted.append(listener.accept()[0])
            held = int(child.communicate(timeout=30)[0].split()[-1])
        finally:
            child.kill()
            for conn in accepted:
                conn.close()
            listener.close()
            shutil.rmtree(folder, ignore_errors=True)
        assert child.returncode == 0
        assert 32 <= held <= 33, held
