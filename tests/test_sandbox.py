"""The sandbox, tested with real bot processes under real bubblewrap: hostile bots in
``tests/bots/sandbox_probe.py`` try to escape and report what happened."""

from __future__ import annotations

import ast
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator

import attrs
import pytest
import zmq
from ohseven.referee.sandbox import uids
from ohseven.referee.sandbox.process import BotProcess
from ohseven.referee.sandbox.seccomp import FCNTL_DENIED, SYSCALLS, seccomp_program
from ohseven.referee.sandbox.settings import (
    BotStartError,
    SandboxConfig,
    SandboxError,
    check_sandbox,
)

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')

BOTS = os.path.join(os.path.dirname(__file__), "bots")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBE = os.path.join(BOTS, "sandbox_probe.py")
IS_ROOT = os.geteuid() == 0
SANDBOXED = SandboxConfig()
UNSANDBOXED = SandboxConfig(mode="unsandboxed")


def status(pid: int) -> dict[str, str]:
    """/proc/PID/status as a dict ({} once the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as lines:
            return {k: v.strip() for k, _, v in (line.partition(":") for line in lines)}
    except OSError:
        return {}


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie (dead, waiting to be reaped by init)."""
    fields = status(pid)
    return bool(fields) and fields["State"][0] not in "ZX"


def cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def uid_processes(uid: int) -> list[int]:
    """Host pids of the live processes whose real uid is ``uid``."""
    pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    return [p for p in pids if alive(p) and int(status(p).get("Uid", "-1 ").split()[0]) == uid]


def results(bot: BotProcess, word: str) -> list[str]:
    """The details of the probe's ``RESULT word ...`` lines."""
    prefix = f"RESULT {word} "
    return [line[len(prefix) :] for line in bot.log().splitlines() if line.startswith(prefix)]


def wait_for(bot: BotProcess, word: str, timeout: float = 10.0) -> list[str]:
    """Wait until the probe has reported ``word`` (or exited); its details."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = results(bot, word)
        if found or bot.poll() is not None:
            time.sleep(0.05)  # let the drain thread catch up with the last lines
            return results(bot, word)
        time.sleep(0.02)
    return results(bot, word)


@pytest.fixture
def dirs(tmp_path) -> dict[str, str]:
    """A socket directory, a 'referee' directory and another bot's directory, with secrets."""
    made = {}
    for name in ("sock", "referee", "other_bot"):
        path = tmp_path / name
        path.mkdir()
        (path / "secret.txt").write_text(f"secret of {name}")
        made[name] = str(path)
    return made


@pytest.fixture
def run(dirs) -> Iterator:
    """Start the probe with an action; every bot started is killed at the end of the test."""
    started: list[BotProcess] = []

    def start(*args: str, config: SandboxConfig = SANDBOXED, env=None) -> BotProcess:
        bot = BotProcess(
            [sys.executable, PROBE, *args],
            name=f"probe-{args[0]}",
            bot_dir=None,
            socket_dir=dirs["sock"],
            env=env or {"OHSEVEN_SECRET": "s3cret"},
            config=config,
        )
        started.append(bot)
        bot.start()
        return bot

    yield start
    for bot in started:
        bot.kill()


def limited(config: SandboxConfig = SANDBOXED, **limits) -> SandboxConfig:
    return attrs.evolve(config, limits=attrs.evolve(config.limits, **limits))


class TestAvailability:
    def test_bwrap_is_usable_here(self):
        """check_sandbox accepts the default configuration on this machine."""
        check_sandbox(SANDBOXED)

    def test_missing_bwrap_is_a_clear_error(self):
        """A bubblewrap that does not exist gives a SandboxError saying what to do."""
        with pytest.raises(SandboxError, match="bubblewrap") as info:
            check_sandbox(SandboxConfig(bwrap="/nonexistent/bwrap"))
        assert "apt-get install bubblewrap" in str(info.value)
        assert '"unsandboxed"' in str(info.value)

    def test_missing_bwrap_fails_start(self, dirs):
        """Starting a bot without bubblewrap raises BotStartError, not a traceback."""
        bot = BotProcess(
            [sys.executable, PROBE, "whoami"],
            name="b",
            bot_dir=None,
            socket_dir=dirs["sock"],
            env={},
            config=SandboxConfig(bwrap="/nonexistent/bwrap"),
        )
        with pytest.raises(BotStartError, match="bubblewrap"):
            bot.start()
        assert bot.poll() is None and bot.pid is None

    def test_unknown_mode_rejected(self):
        """A mode that is neither bwrap nor unsandboxed is refused."""
        with pytest.raises(ValueError, match="mode"):
            SandboxConfig(mode="docker")

    @pytest.mark.parametrize("config", [SANDBOXED, UNSANDBOXED], ids=["bwrap", "unsandboxed"])
    def test_missing_command(self, dirs, config):
        """A command that does not exist raises BotStartError naming it."""
        bot = BotProcess(
            ["no-such-bot-program", "x"],
            name="ghost",
            bot_dir=None,
            socket_dir=dirs["sock"],
            env={},
            config=config,
        )
        with pytest.raises(BotStartError, match="no-such-bot-program"):
            bot.start()

    def test_command_outside_the_sandbox_view(self, dirs, tmp_path):
        """A program the sandbox would not show the bot is refused at start."""
        program = tmp_path / "other_bot" / "run.sh"
        program.write_text("#!/bin/sh\necho hi\n")
        program.chmod(0o755)
        bot = BotProcess(
            [str(program)],
            name="outside",
            bot_dir=dirs["sock"],
            socket_dir=dirs["sock"],
            env={},
            config=SANDBOXED,
        )
        with pytest.raises(BotStartError, match="outside what the sandbox shows"):
            bot.start()


class TestIdentity:
    def test_not_root_and_no_capabilities(self, run):
        """The bot runs as a non-root uid with no capabilities."""
        bot = run("whoami")
        assert bot.wait(10) == 0, bot.log()
        assert results(bot, "uid") != ["0"] and results(bot, "euid") != ["0"]
        assert results(bot, "gid") != ["0"]
        assert results(bot, "caps") == ["0000000000000000"]
        if IS_ROOT:
            assert results(bot, "uid") == [str(bot.uid)]
            assert results(bot, "groups") in ([str(bot.uid)], ["-"])

    def test_own_pid_namespace(self, run):
        """The bot is a low pid in a PID namespace of its own."""
        bot = run("whoami")
        assert bot.wait(10) == 0, bot.log()
        assert int(results(bot, "pid")[0]) < 10

    def test_environment_is_minimal(self, run, monkeypatch):
        """The bot gets its own variables and a private HOME, none of the referee's."""
        monkeypatch.setenv("REFEREE_ONLY_SECRET", "do not leak")
        bot = run("whoami", env={"OHSEVEN_SECRET": "s3cret", "OHSEVEN_NAME": "probe"})
        assert bot.wait(10) == 0, bot.log()
        names = results(bot, "env")[0].split(",")
        assert "OHSEVEN_SECRET" in names and "OHSEVEN_NAME" in names
        assert "REFEREE_ONLY_SECRET" not in names
        assert results(bot, "home") == ["/tmp"]
        assert results(bot, "cwd") == [BOTS]

    def test_environment_is_the_one_protocol_md_lists(self, run):
        """Every variable a sandboxed bot sees is listed in PROTOCOL.md, and every one listed
        is seen (but ``OHSEVEN_STRICT``, only under ``check-bot --strict``, and ``PWD``, only
        where the bot has a cgroup)."""
        with open(os.path.join(ROOT, "PROTOCOL.md"), encoding="utf-8") as handle:
            text = handle.read()
        section = text[text.index("Its environment holds") : text.index("- The bot runs in")]
        listed = set(re.findall(r"`([A-Z][A-Z_]+)[`=]", section))
        referee = {name: "x" for name in listed if name.startswith("OHSEVEN_")}
        referee.pop("OHSEVEN_STRICT")
        bot = run("whoami", env=referee)
        assert bot.wait(10) == 0, bot.log()
        seen = set(results(bot, "env")[0].split(","))
        assert seen - listed == set()
        assert listed - seen <= {"OHSEVEN_STRICT", "PWD"}
        assert len(listed) == 17  # 5 of the referee's (one conditional), 11 of the sandbox, PWD

    @pytest.mark.parametrize("cpus,expected", [(0.5, "1 1 2"), (1.5, "2 2 2"), (3, "3 3 3")])
    def test_thread_pools_are_sized_by_the_cpu_limit(self, run, cpus, expected):
        """OpenMP and BLAS thread pools are told the bot's cores, not the host's, and glibc
        makes at most 2 malloc arenas (or one per core), not 8 per host core: each reserves
        64 MiB of the address space that ``memory_mb`` bounds (a JVM's threads failed)."""
        bot = run("whoami", config=limited(cpus=cpus))
        assert bot.wait(10) == 0, bot.log()
        assert results(bot, "threads") == [expected]

    @pytest.mark.skipif(not IS_ROOT, reason="distinct uids need a root referee")
    def test_concurrent_bots_get_distinct_uids(self, run):
        """Bots running at the same time never share a uid (RLIMIT_NPROC is per bot)."""
        bots = [run("scratch_put", f"m{i}") for i in range(4)]
        uids = {bot.uid for bot in bots}
        assert len(uids) == 4 and 0 not in uids

    def test_system_files_runtimes_need_are_readable(self, run):
        """The bot's uid reads what the loader, OpenSSL and the JVM read in /etc, and has a name."""
        host = [p for p in ("/etc/ld.so.cache", "/etc/ssl/openssl.cnf") if os.path.exists(p)]
        wanted = [*host, "/etc/passwd", "/etc/group"]
        bot = run("readable", *wanted)
        assert bot.wait(10) == 0, bot.log()
        assert [line.split()[0] for line in results(bot, "readable")] == wanted, bot.log()
        assert results(bot, "user") == ["bot"]

    def test_no_account_or_key_files(self, run):
        """The host's accounts, shadow and TLS private keys are not shown; passwd is synthetic."""
        secrets = ["/etc/shadow", "/etc/gshadow", "/etc/ssl/private", "/etc/hostname"]
        bot = run("readable", *secrets, "/etc/passwd")
        assert bot.wait(10) == 0, bot.log()
        assert [line.split()[0] for line in results(bot, "readable")] == ["/etc/passwd"]
        assert sorted(line.split()[0] for line in results(bot, "unreadable")) == sorted(secrets)
        with open("/etc/passwd") as host:
            host_users = {line.split(":")[0] for line in host if line.strip()}
        bot = run("read", "/etc/passwd")
        assert bot.wait(10) == 0, bot.log()
        shown = results(bot, "read")[0]
        assert not any(f"\\n{user}:" in shown for user in host_users - {"root", "nobody"})

    def test_can_import_ohseven(self, run):
        """Python bots import the SDK and the rules from inside the sandbox."""
        bot = run("imports")
        assert bot.wait(10) == 0, bot.log()
        assert results(bot, "imported") == ["ohseven.sdk ohseven.core.rules"]

    def test_no_referee_code_in_the_sandbox(self, run):
        """The sandbox shows a bot the rules core and the SDK, not the referee's package."""
        bot = run("imports")
        assert bot.wait(10) == 0, bot.log()
        assert results(bot, "referee") == ["hidden"]


class TestIsolation:
    def test_no_tcp_to_host(self, run):
        """A listener on the host's 127.0.0.1 is unreachable and accepts nothing."""
        with socket.create_server(("127.0.0.1", 0)) as server:
            server.settimeout(0.3)
            bot = run("connect_tcp", "127.0.0.1", str(server.getsockname()[1]))
            assert bot.wait(10) is not None
            assert results(bot, "blocked"), bot.log()
            assert not results(bot, "connected")
            with pytest.raises(TimeoutError):
                server.accept()

    def test_no_abstract_unix_socket(self, run):
        """An abstract unix socket of the host (network namespace bound) is unreachable."""
        name = f"ohseven-test-{uuid.uuid4().hex}"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
            server.bind("\0" + name)
            server.listen()
            bot = run("connect_abstract", name)
            assert bot.wait(10) is not None
            assert results(bot, "blocked"), bot.log()

    def test_cannot_read_referee_or_other_bots(self, run, dirs):
        """Files of the referee's directory and of another bot do not exist for the bot."""
        secrets = [os.path.join(dirs[d], "secret.txt") for d in ("referee", "other_bot")]
        bot = run("read", *secrets, os.path.join(os.getcwd(), "pyproject.toml"))
        assert bot.wait(10) == 0, bot.log()
        assert not results(bot, "read"), bot.log()
        assert len(results(bot, "denied")) == 3
        assert "secret of" not in bot.log()

    def test_socket_dir_is_readable(self, run, dirs):
        """The socket directory is visible at the same path."""
        bot = run("read", os.path.join(dirs["sock"], "secret.txt"))
        assert bot.wait(10) == 0, bot.log()
        assert results(bot, "read") == [f"{dirs['sock']}/secret.txt 'secret of sock'"]

    def test_cannot_write_outside_scratch(self, run, dirs):
        """Writes anywhere but the scratch directory (the socket directory included) fail."""
        targets = ["/x", "/usr/x", "/etc/x", os.path.join(BOTS, "x"), sys.prefix + "/x"]
        targets.append(os.path.join(dirs["sock"], "x"))
        bot = run("write", *targets, "/tmp/ok")
        assert bot.wait(10) == 0, bot.log()
        assert sorted(results(bot, "wrote")) == ["/tmp/ok"]
        assert len(results(bot, "denied")) == len(targets)
        assert not os.path.exists(os.path.join(BOTS, "x"))

    def test_cannot_see_or_signal_the_referee(self, run):
        """The referee's pid is neither visible nor signallable."""
        bot = run("signal", str(os.getpid()))
        assert bot.wait(10) == 0, bot.log()
        assert results(bot, "blocked") and results(bot, "invisible") == [""]

    def test_zeromq_through_socket_dir(self, run, dirs):
        """A bot connects to the referee's ipc socket in the socket directory."""
        context = zmq.Context.instance()
        router = context.socket(zmq.ROUTER)
        endpoint = f"ipc://{dirs['sock']}/seat"
        router.bind(endpoint)
        try:
            bot = run("zmq_hello", endpoint)
            assert router.poll(10000), bot.log()
            identity, message = router.recv_multipart()
            assert message == b"hello from the sandbox"
            router.send_multipart([identity, b"welcome"])
            assert bot.wait(10) == 0, bot.log()
            assert results(bot, "reply") == ["welcome"]
        finally:
            router.close(0)


class TestSeccomp:
    def test_no_user_namespace(self, run):
        """The bot cannot create a user namespace, neither by unshare() nor in a child."""
        bot = run("user_namespace")
        assert bot.wait(10) == 0, bot.log()
        assert results(bot, "blocked") == ["EPERM"], bot.log()
        assert results(bot, "child") == ["blocked"]

    def test_exotic_syscalls_denied(self, run):
        """io_uring, bpf, userfaultfd and keyctl all fail with EPERM."""
        bot = run("exotic")
        assert bot.wait(10) == 0, bot.log()
        outcomes = {line.split()[0]: line.split()[2] for line in results(bot, "syscall")}
        assert outcomes == dict.fromkeys(
            ["io_uring_setup", "bpf", "userfaultfd", "keyctl"], "EPERM"
        )

    @pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
    def test_program_shape(self, machine):
        """The filter is whole 8-byte instructions ending in allow, within the BPF size limit."""
        program = seccomp_program(machine)
        assert program is not None and len(program) % 8 == 0 and len(program) // 8 < 4096
        assert program[-4:] == (0x7FFF0000).to_bytes(4, sys.byteorder)

    def test_unknown_machine(self):
        """No filter is offered for a machine whose syscall numbers are not known."""
        assert seccomp_program("s390x") is None


class TestCovertChannels:
    """Two bots in two sandboxes (other uids, namespaces) share read-only files such as the
    probe's own script; nothing done to such a file may carry a bit from one to the other."""

    @pytest.mark.parametrize("kind", ["flock", "fcntl", "ofd"])
    def test_no_bit_through_a_lock(self, run, kind):
        """A lock held on a shared file by one bot is invisible to the other: locks fail."""
        sender = run("lock_hold", kind, PROBE)
        assert wait_for(sender, "holding") or results(sender, "hold_failed"), sender.log()
        receiver = run("lock_probe", kind, PROBE)
        assert receiver.wait(10) == 0, receiver.log()
        assert results(receiver, "seen") == [], receiver.log()
        assert results(receiver, "probe_failed") == ["ENOLCK"], receiver.log()
        assert results(sender, "hold_failed") == ["ENOLCK"], sender.log()

    def test_no_bit_through_inotify(self, run):
        """A bot cannot watch a shared file for the other bot's accesses."""
        watcher = run("inotify_watch", PROBE, "3")
        assert wait_for(watcher, "watching") or results(watcher, "watch_failed"), watcher.log()
        toucher = run("file_touch", PROBE, "1")
        assert watcher.wait(10) == 0 and toucher.wait(10) == 0, watcher.log() + toucher.log()
        assert results(watcher, "events") == [], watcher.log()
        assert results(watcher, "watch_failed") == ["ENOSYS"], watcher.log()

    def test_no_leases_or_dnotify(self, run):
        """Leases (a signal when another process opens the file) and dnotify are refused."""
        bot = run("lease_notify", PROBE)
        assert bot.wait(10) == 0, bot.log()
        assert results(bot, "lease") == ["ENOLCK"], bot.log()
        assert results(bot, "getlease") == ["ENOLCK"], bot.log()
        assert results(bot, "notify") == ["EINVAL"], bot.log()

    def test_no_machine_wide_file_counts(self, run):
        """/proc/sys/fs (open files, inodes, dentries of the whole machine) is hidden."""
        bot = run("read", "/proc/sys/fs/file-nr", "/proc/sys/fs/inode-nr")
        assert bot.wait(10) == 0, bot.log()
        assert results(bot, "read") == [], bot.log()
        assert len(results(bot, "denied")) == 2, bot.log()

    @pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
    def test_filter_covers_each_lock_command(self, machine):
        """The filter names fcntl's lock, lease and notify commands and every signalling
        syscall of the machine's table."""

        program = seccomp_program(machine)
        assert program is not None
        words = {
            int.from_bytes(program[i + 4 : i + 8], sys.byteorder) for i in range(0, len(program), 8)
        }
        assert set(FCNTL_DENIED) <= words
        assert set(SYSCALLS[machine][4].values()) <= words


class TestLimits:
    def test_cpu_limit(self, run):
        """A bot spinning past cpu_seconds is killed by the kernel."""
        bot = run("spin", config=limited(cpu_seconds=1))
        status = bot.wait(15)
        assert status is not None and status != 0

    def test_fork_bomb_contained(self, run):
        """A fork bomb hits RLIMIT_NPROC; the bot's uid never exceeds the limit."""
        config = limited(processes=12)
        bot = run("fork_bomb", config=config)
        failed = wait_for(bot, "fork_failed")
        assert failed, bot.log()
        assert failed[0].split()[1] == "EAGAIN"
        if IS_ROOT:
            assert int(failed[0].split()[0]) < 12
            assert 1 < len(uid_processes(bot.uid)) <= 12
        bot.kill()
        if IS_ROOT:
            assert uid_processes(bot.uid) == []

    @pytest.mark.skipif(not IS_ROOT, reason="bots have a uid of their own only under root")
    def test_process_count_is_per_bot(self, run):
        """Two bots sharing one uid each get their own count of processes (the cgroup's), and
        neither exceeds it."""
        config = attrs.evolve(limited(processes=20), uid_pool_size=0)
        first = run("fork_bomb", config=config)
        first_failed = wait_for(first, "fork_failed")
        second = run("fork_bomb", config=config)
        second_failed = wait_for(second, "fork_failed")
        assert first_failed and second_failed, (first.log(), second.log())
        first_count, second_count = (int(f[0].split()[0]) for f in (first_failed, second_failed))
        assert first_failed[0].split()[1] == second_failed[0].split()[1] == "EAGAIN"
        assert 10 <= first_count < 20 and abs(second_count - first_count) <= 1
        assert len(uid_processes(config.uid)) <= 2 * 20

    def test_memory_hog_contained(self, run):
        """Allocating beyond memory_mb fails inside the bot."""
        bot = run("memory_hog", "400", config=limited(memory_mb=200))
        assert bot.wait(20) not in (0, None), bot.log()
        got = results(bot, "memory_error")
        assert got and int(got[0]) < 200, bot.log()

    def test_huge_file_fails(self, run):
        """Writing a file larger than file_size_mb fails with EFBIG."""
        bot = run("big_file", "8", config=limited(file_size_mb=2))
        assert bot.wait(10) == 0, bot.log()
        assert results(bot, "write_failed") == ["2 EFBIG"], bot.log()

    def test_scratch_is_bounded(self, run):
        """The scratch tmpfs fills up at scratch_mb."""
        bot = run("fill_scratch", "20", config=limited(scratch_mb=4))
        assert bot.wait(10) == 0, bot.log()
        failed = results(bot, "fill_failed")
        assert failed and failed[0].split()[1] == "ENOSPC", bot.log()
        assert int(failed[0].split()[0]) <= 4

    @pytest.mark.parametrize("config", [SANDBOXED, UNSANDBOXED], ids=["bwrap", "unsandboxed"])
    def test_stdout_flood_truncated(self, run, config):
        """A flood of output never blocks the bot and the log keeps head and tail only."""
        bot = run("flood", "20", config=limited(config, log_bytes=4000))
        assert bot.wait(20) == 0
        log = bot.log()
        assert bot.log_truncated
        assert len(log.encode()) < 4000 + 100
        assert log.startswith("yyyy") and log.endswith("END OF FLOOD\n")
        assert f"{20 * 1024 * 1024 + 13 - 4000} bytes of output discarded" in log


class TestKill:
    @pytest.mark.parametrize("config", [SANDBOXED, UNSANDBOXED], ids=["bwrap", "unsandboxed"])
    def test_kill_leaves_no_process(self, run, config):
        """After kill() no process of the bot's tree survives, even ones that left the session."""
        bot = run("tree", "2", config=config)
        daemons = wait_for(bot, "daemon")
        while len(daemons) < 2 and bot.poll() is None:
            daemons = wait_for(bot, "daemon")
        assert len(daemons) == 2, bot.log()
        if IS_ROOT:
            assert len(uid_processes(bot.uid)) >= 5
        bot.kill()
        assert bot.poll() is not None
        assert not alive(bot.pid)
        if IS_ROOT:
            assert uid_processes(bot.uid) == []
        if config.mode == "unsandboxed":  # host pids: they must be gone
            for pid in daemons:
                assert not alive(int(pid))

    @pytest.mark.parametrize("config", [SANDBOXED, UNSANDBOXED], ids=["bwrap", "unsandboxed"])
    def test_bot_dies_with_the_process_that_started_it(self, dirs, config):
        """A referee (or worker) killed with SIGKILL leaves no bot behind."""
        script = (
            "import sys, time\n"
            "from ohseven.referee.sandbox.process import BotProcess\n"
            "from ohseven.referee.sandbox.settings import SandboxConfig\n"
            "bot = BotProcess([sys.executable, '-c', 'import time; time.sleep(60)'],"
            " name='orphan',"
            f" bot_dir=None, socket_dir={dirs['sock']!r}, env={{}},"
            f" config=SandboxConfig(mode={config.mode!r}))\n"
            "bot.start()\n"
            "print(bot.pid, flush=True)\n"
            "time.sleep(60)\n"
        )
        parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        pid = int(parent.stdout.readline())
        deadline = time.monotonic() + 10
        # unsandboxed, setpriv sets the signal just before it execs the bot: wait until it has
        # (bwrap's pid stays bwrap, which watches its parent from the start)
        bot_program = os.fsencode(sys.executable)
        while (
            config.mode == "unsandboxed"
            and cmdline(pid).split(b"\0")[0] != bot_program
            and time.monotonic() < deadline
        ):
            time.sleep(0.01)
        assert alive(pid)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 5
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid)

    def test_kill_is_idempotent(self, run):
        """kill() twice is harmless and the status stays."""
        bot = run("scratch_put", "x")
        wait_for(bot, "put")
        bot.kill()
        status = bot.poll()
        bot.kill()
        assert status is not None and bot.poll() == status

    def test_scratch_wiped_bwrap(self, run):
        """What a bot leaves in its scratch is gone for the next bot."""
        marker = f"marker-{uuid.uuid4().hex}"
        first = run("scratch_put", marker)
        assert wait_for(first, "put") == ["/tmp"]
        first.kill()
        second = run("scratch_list")
        assert second.wait(10) == 0
        assert results(second, "scratch") == [""] or marker not in second.log()
        assert not os.path.exists(os.path.join("/tmp", marker))

    def test_scratch_wiped_unsandboxed(self, run):
        """In unsandboxed mode the host scratch directory is removed by kill()."""
        first = run("scratch_put", "marker", config=UNSANDBOXED)
        home = wait_for(first, "put")[0].strip()
        assert os.path.isfile(os.path.join(home, "marker"))
        first.kill()
        assert not os.path.exists(home)

    def test_die_with_parent_thread(self, dirs):
        """A sandbox started from a thread dies when that thread ends (documented)."""
        holder: list[BotProcess] = []

        def starter() -> None:
            bot = BotProcess(
                [sys.executable, PROBE, "scratch_put", "x"],
                name="t",
                bot_dir=None,
                socket_dir=dirs["sock"],
                env={},
                config=SANDBOXED,
            )
            bot.start()
            holder.append(bot)

        thread = threading.Thread(target=starter)
        thread.start()
        thread.join()
        bot = holder[0]
        try:
            assert bot.wait(10) is not None
        finally:
            bot.kill()


class TestUnsandboxed:
    def test_runs_and_is_not_root(self, run):
        """The unsandboxed mode runs the bot, as a non-root uid when the referee is root."""
        bot = run("whoami", config=UNSANDBOXED)
        assert bot.wait(10) == 0, bot.log()
        if IS_ROOT:
            assert results(bot, "uid") == [str(bot.uid)]
        assert results(bot, "cwd") == [BOTS]

    def test_limits_still_apply(self, run):
        """rlimits apply without the sandbox too."""
        bot = run("big_file", "8", config=limited(UNSANDBOXED, file_size_mb=2))
        assert bot.wait(10) == 0, bot.log()
        assert results(bot, "write_failed") == ["2 EFBIG"], bot.log()

    @pytest.mark.skipif(not IS_ROOT, reason="bots run under another uid only when we are root")
    def test_unreadable_bot_is_refused_with_the_reason(self, tmp_path, dirs):
        """A bot file its unprivileged uid cannot read: a clear start error, not a silent exit."""
        private = tmp_path / "private"
        private.mkdir(mode=0o700)
        script = private / "bot.py"
        script.write_text("print('hello')\n")
        bot = BotProcess(
            [sys.executable, str(script)],
            name="hidden",
            bot_dir=None,
            socket_dir=dirs["sock"],
            env={},
            config=UNSANDBOXED,
        )
        with pytest.raises(BotStartError, match="cannot read .*private"):
            bot.start()
        bot.kill()


class TestHints:
    def test_node_modules_above_the_bot_folder_is_named(self, tmp_path, dirs):
        """A bot whose packages sit in a parent folder's node_modules is told they are hidden."""
        (tmp_path / "node_modules" / "zeromq").mkdir(parents=True)
        bot_dir = tmp_path / "mybot"
        bot_dir.mkdir()
        (bot_dir / "bot.py").write_text("raise SystemExit(1)\n")
        bot = BotProcess(
            [sys.executable, str(bot_dir / "bot.py")],
            name="hidden",
            bot_dir=None,
            socket_dir=dirs["sock"],
            env={},
            config=SANDBOXED,
        )
        hint = bot.hint()
        assert str(tmp_path / "node_modules") in hint and "invisible" in hint
        (bot_dir / "node_modules").mkdir()
        assert bot.hint() == ""
        assert BotProcess(
            [sys.executable, str(bot_dir / "bot.py")],
            name="u", bot_dir=None, socket_dir=dirs["sock"], env={}, config=UNSANDBOXED,
        ).hint() == ""  # fmt: skip


@pytest.mark.skipif(not IS_ROOT, reason="uid leases need a root referee")
class TestUidLeases:
    CONFIG = SandboxConfig(uid_pool_start=0x7FFF0000 + os.getpid() % 4096, uid_pool_size=1)

    def _squatter(self, uid: int) -> subprocess.Popen:
        """A process left running under ``uid`` (as a referee that died would leave one)."""
        command = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "sleep", "60"]
        return subprocess.Popen(command)

    def test_a_uid_not_released_clean_is_scanned_and_its_leftovers_killed(self):
        """A lease of a uid whose last holder did not release it clean kills its processes."""
        lease = uids.lease_uid(self.CONFIG)
        assert lease is not None
        uid = lease.uid
        lease.release()  # not clean: as if the holder died
        squatter = self._squatter(uid)
        time.sleep(0.2)
        again = uids.lease_uid(self.CONFIG)
        assert again is not None and again.uid == uid
        assert squatter.wait(5) == -9
        again.release(clean=True)

    def test_a_uid_released_clean_is_not_scanned(self, monkeypatch):
        """A uid released clean is leased again without the /proc scan; held, it is not clean."""
        lease = uids.lease_uid(self.CONFIG)
        assert lease is not None
        lease.release(clean=True)
        scans = []
        monkeypatch.setattr(uids, "kill_uid", lambda uid: scans.append(uid) or True)
        again = uids.lease_uid(self.CONFIG)
        assert again is not None and scans == []
        path = os.path.join(uids.uid_lock_dir(), str(again.uid))
        with open(path, "rb") as handle:
            assert handle.read() == b""  # held: no longer marked clean
        again.release(clean=True)

    def test_a_killed_bot_releases_its_uid_clean(self, dirs):
        """After a bot is killed and no process of its uid is left, the uid is marked clean."""
        bot = BotProcess(
            [sys.executable, "-c", "import time; time.sleep(30)"],
            name="sleeper",
            bot_dir=None,
            socket_dir=dirs["sock"],
            env={},
            config=attrs.evolve(self.CONFIG, mode="unsandboxed"),
        )
        bot.start()
        uid = bot.uid
        bot.kill()
        with open(os.path.join(uids.uid_lock_dir(), str(uid)), "rb") as handle:
            assert handle.read() == b"clean"


class TestMachineWide:
    """What tells a bot about the machine, the other bots, or what another process read."""

    def test_no_page_cache_probe_nor_sysinfo(self, run):
        """mincore, cachestat, Linux AIO and RWF_NOWAIT reads (which tell whether a file's
        pages are cached: what an earlier process of the bot read) and sysinfo (the machine's
        task count, load and free memory) are refused; plain reads still work."""
        bot = run("machine_probes", PROBE)
        assert bot.wait(10) == 0, bot.log()
        outcomes = {line.split()[0]: line.split()[2] for line in results(bot, "probe")}
        assert outcomes == dict.fromkeys(["sysinfo", "mincore", "cachestat", "io_setup"], "ENOSYS")
        # EOPNOTSUPP, which Linux spells ENOTSUP too
        assert results(bot, "preadv2") == ["nowait ENOTSUP", "plain ok"], bot.log()

    def test_machine_figures_are_the_sandboxs_own(self, run):
        """The machine-wide files of /proc show static figures of the sandbox's own (the
        bot's memory limit, counters that never move) or nothing; the pressure figures are
        hidden. A bot reading them twice while another bot works sees nothing change."""
        files = ["/proc/loadavg", "/proc/uptime", "/proc/meminfo", "/proc/stat", "/proc/vmstat"]
        files += ["/proc/diskstats", "/proc/interrupts", "/proc/pressure/cpu"]
        first = run("read", *files)
        busy = run("spin")  # another bot at work: tasks, CPU time, interrupts
        second = run("read", *files)
        assert first.wait(10) == 0 and second.wait(10) == 0, first.log() + second.log()
        busy.kill()
        seen = [
            dict(line.split(" ", 1) for line in results(bot, "read")) for bot in (first, second)
        ]
        assert seen[0] == seen[1], (first.log(), second.log())
        shown = {path: ast.literal_eval(text) for path, text in seen[0].items()}
        assert shown["/proc/loadavg"] == "0.00 0.00 0.00 1/1 1\n"
        assert shown["/proc/uptime"] == "1000.00 1000.00\n"
        memory = SANDBOXED.limits.memory_mb * 1024
        assert f"MemTotal:{memory:>15} kB" in shown["/proc/meminfo"]
        assert f"MemAvailable:{memory:>11} kB" in shown["/proc/meminfo"]
        cpu_lines = [line for line in shown["/proc/stat"].splitlines() if line.startswith("cpu")]
        assert len(cpu_lines) == (os.cpu_count() or 1) + 1
        assert "procs_running 1" in shown["/proc/stat"]
        for path in ("/proc/vmstat", "/proc/diskstats", "/proc/interrupts"):
            assert shown[path] == "", path
        assert "/proc/pressure/cpu" not in shown  # hidden: an empty folder
        with open("/proc/loadavg") as handle:  # the host's is not the sandbox's
            assert handle.read() != shown["/proc/loadavg"]

    @pytest.mark.parametrize(
        "command",
        [
            [sys.executable, "-c", "import os; print('RESULT cores', os.cpu_count())"],
            [
                "node", "-e", "const os = require('os'); "
                "console.log('RESULT cores', os.cpus().length, os.totalmem(), os.loadavg()[0])",
            ],
        ],
        ids=["python", "node"],
    )  # fmt: skip
    def test_runtimes_start(self, dirs, command):
        """Python and Node.js read these files at start (the cores, the memory) and start."""
        if shutil.which(command[0]) is None:
            pytest.skip(f"{command[0]} is not installed")
        bot = BotProcess(command, name="runtime", bot_dir=None, socket_dir=dirs["sock"],
                         env={}, config=SANDBOXED)  # fmt: skip
        try:
            bot.start()
            assert bot.wait(30) == 0, bot.log()
            (cores,) = results(bot, "cores")
            assert int(cores.split()[0]) == (os.cpu_count() or 1), bot.log()
        finally:
            bot.kill()
