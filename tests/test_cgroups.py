"""A cgroup per bot, tested with real hostile bots (``tests/bots/cgroup_bot.py``) in the real
sandbox: real bubblewrap, real cgroups, real ZeroMQ, the real match loop."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import zmq
from ohseven.core.rules import Rules
from ohseven.referee.play import referee
from ohseven.referee.play.match import play_match
from ohseven.referee.records import BotSpec, FaultStatus, MatchSpec, TimeControl
from ohseven.referee.sandbox import cgroups
from ohseven.referee.sandbox.process import BotProcess
from ohseven.referee.sandbox.settings import Limits, SandboxConfig

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')

BOT = os.path.join(os.path.dirname(__file__), "bots", "cgroup_bot.py")
SUPPORT = cgroups.support()
needs_cgroups = pytest.mark.skipif(
    SUPPORT.message() is not None, reason=f"needs every cgroup controller: {SUPPORT.message()}"
)
CLOCK = TimeControl(move_seconds=1.0, bank_seconds=5.0, start_seconds=10.0)


def spec(bots: list[tuple[str, ...]], games: int = 1, **bot_fields) -> MatchSpec:
    """A match of ``cgroup_bot.py`` bots (each given by its mode and arguments)."""
    n = len(bots)
    return MatchSpec(
        match_id="cg",
        rules=Rules.make("oh-seven"),
        bots=tuple(
            BotSpec(f"{args[0]}{i}", (sys.executable, BOT, *args), **bot_fields.get(args[0], {}))
            for i, args in enumerate(bots)
        ),
        seatings=tuple(tuple((s + g) % n for s in range(n)) for g in range(games)),
        seeds=tuple(11 + g for g in range(games)),
        time_control=CLOCK,
    )


def reported(log: str, word: str) -> list[list[str]]:
    prefix = f"RESULT {word} "
    return [line[len(prefix) :].split() for line in log.splitlines() if line.startswith(prefix)]


def faults(result, name: str) -> list[tuple[FaultStatus, str]]:
    return [
        (fault.status, fault.detail)
        for record in result.games
        for fault in record.faults
        if record.seats[fault.seat] == name
    ]


def referee_dirs() -> list[str]:
    """Every directory of this process's bots' cgroups that still exists."""
    name = cgroups._referee_name()
    found = []
    for _, top in SUPPORT.dirs:
        mine = os.path.join(top, name)
        if os.path.isdir(mine):
            found += [entry.path for entry in os.scandir(mine) if entry.is_dir()]
    return found


class TestDetection:
    MOUNTS = (
        "30 23 0:26 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
        "32 30 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
        "35 30 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
    )

    def test_v1_dirs_below_our_own_cgroup(self, tmp_path):
        """v1: each controller's directory is below our own cgroup in that hierarchy."""
        point = tmp_path / "mem"
        (point / "outer" / "me").mkdir(parents=True)
        mounts = f"35 30 0:32 / {point} rw - cgroup cgroup rw,memory\n"
        found = cgroups.detect("4:memory:/outer/me\n1:cpu:/\n0::/\n", mounts)
        assert found.version == 1
        assert dict(found.dirs) == {"memory": str(point / "outer" / "me" / "ohseven")}
        assert set(found.missing) == {"cpu", "pids", "freezer"}

    def test_missing_hierarchy_is_explained(self):
        """No cgroup mount: nothing is made and the message names what is not enforced."""
        found = cgroups.detect("0::/\n", "30 23 0:26 / /sys rw - sysfs sysfs rw\n")
        assert found.dirs == ()
        message = found.message()
        assert message is not None and "no cgroup hierarchy" in message
        assert "memory_mb as the total" in message and "ponder" in message

    def test_v2_without_controllers_falls_back_to_v1(self, tmp_path):
        """An empty cgroup2 hierarchy (no controllers) is not used; v1 is."""
        unified, cpu = tmp_path / "unified", tmp_path / "cpu"
        unified.mkdir()
        cpu.mkdir()
        (unified / "cgroup.controllers").write_text("\n")
        mounts = (
            f"41 31 0:38 / {unified} rw - cgroup2 cgroup2 rw\n"
            f"32 31 0:29 / {cpu} rw - cgroup cgroup rw,cpu\n"
        )
        found = cgroups.detect("1:cpu:/\n0::/\n", mounts)
        assert found.version == 1 and found.controllers == ("cpu",)
        assert "lacks the controllers cpu, memory, pids" in found.reason

    def test_v2_with_controllers_is_preferred(self, tmp_path):
        """A cgroup2 hierarchy with cpu, memory and pids (writable) is used for everything."""
        own = tmp_path / "unified" / "user" / "me"
        own.mkdir(parents=True)
        (own / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
        (own / "cgroup.subtree_control").write_text("\n")
        mounts = f"41 31 0:38 / {tmp_path / 'unified'} rw - cgroup2 cgroup2 rw\n"
        found = cgroups.detect("0::/user/me\n", mounts)
        assert found.version == 2
        assert set(found.controllers) == {"cpu", "memory", "pids"}
        assert found.missing == ()
        assert "+cpu" in (own / "cgroup.subtree_control").read_text()

    def test_unwritable_cgroup_is_not_used(self):
        """A cgroup we may not write to (no delegation) is reported, not used (as root, the
        detection runs as an unprivileged uid, since root may write to any directory)."""
        folder = Path(tempfile.mkdtemp(prefix="ohseven-cg-"))
        try:
            folder.chmod(0o755)
            point = folder / "pids"
            point.mkdir()
            point.chmod(0o555)
            mounts = f"39 31 0:36 / {point} rw - cgroup cgroup rw,pids\n"
            code = (
                "from ohseven.referee.sandbox import cgroups\n"
                f"found = cgroups.detect('8:pids:/\\n', {mounts!r})\n"
                "print(found.dirs == () and 'not writable' in found.reason)\n"
            )
            argv = [sys.executable, "-c", code]
            if os.geteuid() == 0:
                argv = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", *argv]
            run = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd="/")
            assert run.stdout.strip() == "True", run.stderr
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def test_warning_is_given_once(self, monkeypatch, capsys):
        """Without cgroups the referee says once what is not enforced."""
        monkeypatch.setattr(cgroups, "support", lambda: cgroups.detect("0::/\n", ""))
        monkeypatch.setattr(cgroups, "_warned", False)
        first = cgroups.warn_unavailable()
        second = cgroups.warn_unavailable()
        assert first == second and first is not None
        err = capsys.readouterr().err
        assert err.count("warning: cgroups:") == 1 and "SECURITY.md" in err

    def test_no_cgroup_when_unavailable(self):
        """Where cgroups cannot be had, no cgroup is made (the bot still runs)."""
        none = cgroups.detect("0::/\n", "")
        assert cgroups.BotCgroup.create(memory_mb=1, cpus=1, processes=1, where=none) is None


@needs_cgroups
class TestLifecycle:
    def test_create_and_remove(self):
        """A bot's cgroup has the limits asked for and is gone after remove()."""
        group = cgroups.BotCgroup.create(memory_mb=100, cpus=0.5, processes=7)
        assert group is not None
        try:
            if SUPPORT.version == 1:
                read = cgroups._read
                assert read(os.path.join(group.dirs["cpu"], "cpu.cfs_quota_us")).strip() == "50000"
                assert read(os.path.join(group.dirs["pids"], "pids.max")).strip() == "7"
                memory = os.path.join(group.dirs["memory"], "memory.limit_in_bytes")
                assert read(memory).strip() == str(100 << 20)
        finally:
            group.remove()
        assert not any(os.path.exists(path) for path in group.dirs.values())

    def test_leftovers_of_a_dead_referee_are_removed(self):
        """The directory of a referee process that is gone is removed by the next referee."""
        top = dict(SUPPORT.dirs)["pids"]
        cgroups.BotCgroup.create(memory_mb=100, cpus=1, processes=7).remove()  # top exists
        dead = os.path.join(top, "r999999999-1")  # no such process
        os.makedirs(os.path.join(dead, "abc"))
        cgroups._prepared.clear()
        cgroups.BotCgroup.create(memory_mb=100, cpus=1, processes=7).remove()
        assert not os.path.exists(dead)

    @pytest.mark.parametrize("mode", ["bwrap", "unsandboxed"])
    def test_every_process_of_the_bot_is_inside(self, tmp_path, mode):
        """The bot's processes (children in new sessions too) are in its cgroup, and the
        cgroup is removed when the bot is killed."""
        bot = BotProcess(
            [sys.executable, BOT, "burn", "3"],
            name="burner",
            bot_dir=None,
            socket_dir=str(tmp_path),
            env={"OHSEVEN_ENDPOINT": f"ipc://{tmp_path}/none", "OHSEVEN_SECRET": "x"},
            config=SandboxConfig(mode=mode),
        )
        bot.start()
        try:
            group = bot._cgroup
            assert group is not None
            deadline = time.monotonic() + 10
            while len(group.tasks()) < 4 and time.monotonic() < deadline:
                time.sleep(0.02)
            tasks = group.tasks()
            assert bot.pid in tasks and len(tasks) >= 4
            for path in set(group.dirs.values()):  # every controller holds the same tasks
                assert sorted(cgroups._read(os.path.join(path, "cgroup.procs")).split()) == sorted(
                    map(str, tasks)
                )
        finally:
            bot.kill()
        assert not any(os.path.exists(path) for path in group.dirs.values())
        assert referee_dirs() == []

    def test_kill_of_a_frozen_bot(self, tmp_path):
        """A frozen bot is killed and its cgroup removed (it is thawed first)."""
        bot = BotProcess(
            [sys.executable, BOT, "burn", "2"],
            name="frozen",
            bot_dir=None,
            socket_dir=str(tmp_path),
            env={"OHSEVEN_ENDPOINT": f"ipc://{tmp_path}/none", "OHSEVEN_SECRET": "x"},
            config=SandboxConfig(),
        )
        bot.start()
        time.sleep(0.3)
        bot.freeze()
        time.sleep(0.1)
        started = time.monotonic()
        bot.kill()
        assert time.monotonic() - started < 5
        assert bot.poll() is not None
        assert referee_dirs() == []

    @pytest.mark.parametrize("mode", ["burn", "quick"])
    def test_a_bot_at_rest_is_frozen_at_once(self, tmp_path, mode):
        """At rest (no decision owed), a bot is frozen at once, whether it burns CPU or sleeps
        waiting: none runs while another bot of its table may (no CPU to share, so nothing
        to tell through it); thawed, it runs again."""
        context = zmq.Context()
        router = context.socket(zmq.ROUTER)
        router.bind(f"ipc://{tmp_path}/bot")  # bound before the start: handed to the bot's uid
        bot = _resting_bot(tmp_path, mode, endpoint=f"ipc://{tmp_path}/bot")
        try:
            # its hello is in: the bot has started (its burner too) and waits for an answer
            assert router.poll(60_000), bot.log()
            group = bot._cgroup
            assert group is not None and group.can_freeze
            bot.freeze()
            assert group.frozen
            deadline = time.monotonic() + 30
            while not _stopped(group) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert _stopped(group)
            used = group.usage().cpu_seconds
            time.sleep(0.2)
            assert group.usage().cpu_seconds == used  # not a microsecond more while frozen
            bot.thaw()
            assert not group.frozen and not _stopped(group)
        finally:
            bot.kill()
            router.close(linger=0)
            context.term()


def _stopped(group: cgroups.BotCgroup) -> bool:
    """Whether the kernel reports every task of ``group`` frozen (not just asked to be)."""
    if group.support.version == 2:
        with open(os.path.join(group.dirs["cpu"], "cgroup.events")) as handle:
            return "frozen 1" in handle.read().split("\n")
    with open(os.path.join(group.dirs["freezer"], "freezer.state")) as handle:
        return handle.read().strip() == "FROZEN"


def _resting_bot(tmp_path, mode: str, endpoint: str | None = None) -> BotProcess:
    """A started cgroup bot of ``cgroup_bot.py`` in ``mode`` (``burn``: one busy process;
    ``quick``: asleep in its first receive), with no referee to talk to (or one that never
    answers, listening at ``endpoint``)."""
    bot = BotProcess(
        [sys.executable, BOT, mode, "1"],
        name=mode,
        bot_dir=None,
        socket_dir=str(tmp_path),
        env={"OHSEVEN_ENDPOINT": endpoint or f"ipc://{tmp_path}/none", "OHSEVEN_SECRET": "x"},
        config=SandboxConfig(),
    )
    bot.start()
    return bot


def _work_median(result) -> float:
    times = [
        float(fields[0])
        for name, log in result.logs.items()
        if name.startswith("work")
        for fields in reported(log, "work")
    ]
    assert len(times) > 20
    return statistics.median(times)


@needs_cgroups
class TestCpu:
    @pytest.mark.parametrize(
        ("ponder", "bound"),
        [
            # the default: the burner's processes are frozen during the others' turns
            (False, 1.5),
            # they run, on at most one core and with one bot's weight: on a machine loaded by
            # other work the bots' share is what is contended, and the burner takes its third
            (True, 3.0),
        ],
    )
    def test_burner_does_not_slow_the_others(self, ponder, bound):
        """A bot with 16 busy setsid processes between its turns leaves the other bots no
        fault and their decision times within the bound of the same table without it."""
        config = SandboxConfig(ponder=ponder)
        work = ("work", "60000")
        ratios = []
        for _ in range(2):  # paired rounds: the CPU is shared with other work
            quiet = play_match(spec([work, work, ("quick",)]), sandbox=config)
            loud = play_match(spec([work, work, ("burn", "16")]), sandbox=config)
            for name in ("work0", "work1"):
                assert faults(quiet, name) == [] and faults(loud, name) == []
            ratios.append(_work_median(loud) / _work_median(quiet))
            if ratios[-1] <= bound:
                break
        assert min(ratios) <= bound, ratios

    def test_cpus_limit_caps_the_bot(self, tmp_path):
        """A bot of 4 busy processes with ``cpus`` 0.5 uses about half a core."""
        config = SandboxConfig(limits=Limits(cpus=0.5))
        bot = BotProcess(
            [sys.executable, BOT, "burn", "4"],
            name="capped",
            bot_dir=None,
            socket_dir=str(tmp_path),
            env={"OHSEVEN_ENDPOINT": f"ipc://{tmp_path}/none", "OHSEVEN_SECRET": "x"},
            config=config,
        )
        bot.start()
        try:
            time.sleep(0.5)
            group = bot._cgroup
            assert group is not None
            before, started = group.usage().cpu_seconds, time.monotonic()
            time.sleep(2.0)
            used = group.usage().cpu_seconds - before
            cores = used / (time.monotonic() - started)
        finally:
            bot.kill()
        assert 0.02 < cores < 0.65, cores  # the cap; a loaded machine may give it less
        assert bot.usage is not None and bot.usage.cpu_seconds > 0.5


@needs_cgroups
class TestMemory:
    @pytest.mark.parametrize("kind", ["memfd", "tmpfs"])
    def test_total_across_processes_is_limited(self, kind):
        """Three processes each holding 40% of ``memory_mb`` (in memfd files, or in the scratch
        tmpfs) are stopped at the bot's limit with the fault ``limit``."""
        limits = {kind: {"limits": (("memory_mb", 300), ("scratch_mb", 2048))}}
        result = play_match(spec([(kind, "120", "3"), ("quick",)], **limits))
        found = faults(result, f"{kind}0")
        statuses = [status for status, _ in found]
        assert FaultStatus.LIMIT in statuses, found
        detail = next(detail for status, detail in found if status is FaultStatus.LIMIT)
        assert "memory limit 300 MB reached (OOM kill)" in detail
        held = reported(result.logs[f"{kind}0"], "held")
        assert len(held) < 3  # not all three could hold their share
        assert faults(result, "quick1") == []

    def test_a_kill_at_the_last_decision_is_that_games_fault(self, monkeypatch):
        """A child killed at the limit during the bot's last decision of the match (the periodic
        check of the processes is never due) is still a ``limit`` fault of that game."""
        (count,) = reported(play_match(spec([("quick",), ("quick",)])).logs["quick0"], "requests")
        monkeypatch.setattr(referee, "_PROCESS_CHECK_SECONDS", 3600.0)
        limits = {"oomchild": {"limits": (("memory_mb", 300),)}}
        result = play_match(spec([("oomchild", count[0], "175"), ("quick",)], **limits))
        (found,) = faults(result, "oomchild0")
        assert found[0] is FaultStatus.LIMIT and "memory limit 300 MB" in found[1], found


@needs_cgroups
class TestPonder:
    def _idle(self, config: SandboxConfig, **fields) -> float:
        """The share of a core the ponder bot's burner got while the bot owed no decision."""
        bots = [("ponder",), ("slow", "40"), ("slow", "40")]
        result = play_match(spec(bots, **fields), sandbox=config)
        assert faults(result, "ponder0") == []
        ((cpu, wall),) = reported(result.logs["ponder0"], "idle")
        assert float(wall) > 2.0
        return float(cpu) / float(wall)

    def test_frozen_while_it_owes_no_decision(self):
        """Ponder off: a bot burning CPU gets (almost) none between its reply and its next
        request; with ponder on (for the sandbox, or for the bot alone) it gets what is free."""
        off = self._idle(SandboxConfig(ponder=False))
        on = self._idle(SandboxConfig(ponder=True))
        override = self._idle(SandboxConfig(ponder=False), ponder={"ponder": True})
        assert off < 0.1, (off, on, override)
        # the machine is shared: what is free varies, but far more than a frozen bot gets
        assert on > max(3 * off, 0.1) and override > max(3 * off, 0.1), (off, on, override)

    def test_a_bot_asked_again_at_once_thinks_unfrozen(self):
        """Ponder off: a bot asked again right after its reply (it won the trick and leads) is
        not at rest meanwhile, so a long think is never taken for pondering and frozen."""
        bots = [("work", "3000000"), ("quick",), ("quick",)]
        result = play_match(spec(bots), sandbox=SandboxConfig(ponder=False))
        times = [float(fields[0]) for fields in reported(result.logs["work0"], "work")]
        assert len(times) > 20 and statistics.median(times) > 60  # longer than a check period
        assert faults(result, "work0") == []

    @pytest.mark.parametrize("ponder", [False, True])
    def test_no_two_bots_compute_at_once(self, ponder):
        """Ponder off: no bot runs while another computes, simultaneous passes and bids
        included (asked one seat after another), so no bot can time another's work (the CPU
        contention channel); ponder on: the bots of a pass or a bid compute at once."""
        bots = [("stamp", "15")] * 3
        result = play_match(spec(bots), sandbox=SandboxConfig(ponder=ponder))
        windows = sorted(
            (int(start), int(end), name, kind)
            for name, log in result.logs.items()
            for kind, start, end in reported(log, "stamp")
        )
        assert len(windows) > 30 and not any(faults(result, f"stamp{i}") for i in range(3))
        overlaps = [(a, b) for a, b in zip(windows, windows[1:], strict=False) if b[0] < a[1]]
        if ponder:
            assert "bid" in {a[3] for a, _ in overlaps}, overlaps
        else:
            assert overlaps == [], overlaps[:3]


COLLUDER = os.path.join(os.path.dirname(__file__), "bots", "colluder.py")


def ran(log: str) -> list[tuple[float, float]]:
    """The stretches (by the machine's clock) a colluder says it ran unbroken."""
    return [
        (float(fields[0]), float(fields[1]))
        for fields in (line.split()[1:] for line in log.splitlines() if line.startswith("RUN "))
    ]


def overlap(one: list[tuple[float, float]], other: list[tuple[float, float]]) -> float:
    """Seconds during which a stretch of ``one`` and one of ``other`` both ran."""
    return sum(max(0.0, min(b, d) - max(a, c)) for a, b in one for c, d in other)


@needs_cgroups
class TestCollusion:
    def test_two_colluders_at_one_table_never_run_at_once(self):
        """Ponder off (the default): a sender burning CPU whenever it can run and a receiver
        counting whenever it can, at one table through the real referee, never run at the
        same moment (by the stretches both log with the machine's clock), simultaneous bids
        included; so the CPU they would share tells the receiver nothing of the sender."""
        start = time.time()
        bots = (
            BotSpec("send", (sys.executable, COLLUDER, "send", "0.025", str(start))),
            BotSpec("receive", (sys.executable, COLLUDER, "receive", "0.025", str(start))),
            BotSpec("quick2", (sys.executable, BOT, "quick")),
            BotSpec("quick3", (sys.executable, BOT, "quick")),
        )
        match = MatchSpec(
            match_id="collude",
            rules=Rules.make("oh-seven"),
            bots=bots,
            seatings=((0, 1, 2, 3),),
            seeds=(7,),
            time_control=CLOCK,
        )
        config = SandboxConfig(limits=Limits(log_bytes=4 << 20))  # room for every stretch
        result = play_match(match, sandbox=config)
        assert faults(result, "send") == [] and faults(result, "receive") == []
        sender, receiver = ran(result.logs["send"]), ran(result.logs["receive"])
        # both ran for real: seconds of burning and of counting in the game
        assert sum(b - a for a, b in sender) > 0.5, result.logs["send"][-2000:]
        assert sum(b - a for a, b in receiver) > 0.5, result.logs["receive"][-2000:]
        # a freeze takes effect within microseconds of the write that asks it
        assert overlap(sender, receiver) < 0.002, overlap(sender, receiver)
