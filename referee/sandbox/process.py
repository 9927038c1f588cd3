"""Run one bot process in a sandbox: no network, a private view of the file system, its own
PID namespace, an unprivileged uid, resource limits, and a bounded capture of its output.

Two modes (see SECURITY.md for the threat model):

``"bwrap"`` (the default)
    The bot runs under bubblewrap in fresh PID, network, IPC, UTS and cgroup namespaces, with a
    read-only view of the system directories, the Python installation running the referee, the
    installed ``ohseven`` packages and the bot's own directory, plus a private size-limited
    tmpfs at ``/tmp`` (``HOME``) that disappears with the sandbox, and the bot's socket
    directory read-only (connecting to a socket needs no writable mount). When the referee is
    root, bubblewrap sets up the mounts as root and the bot is then started through
    ``setpriv`` as a dedicated unprivileged uid (a distinct uid per running bot, taken from a
    pool, so ``RLIMIT_NPROC`` is a per-bot limit), with no capabilities, an empty bounding set
    and ``no_new_privs``. When the referee is not root,
    bubblewrap runs unprivileged in a new user namespace (nested user namespaces disabled) and
    the bot keeps the referee's uid.
``"unsandboxed"``
    An explicit opt-in for trusted bots: no namespaces, the bot sees the whole file system and
    the network. It still runs as the dedicated uid when the referee is root (never as root),
    in its own session, with the same resource limits, and its process tree is still killed.

Each bot gets a cgroup of its own (see ``cgroups``) that holds all its processes from the
first one: a CPU limit and an equal CPU share, one memory limit and one process count for all
its processes, and a freezer that stops it while it owes no decision (``ponder`` off). Per
process, POSIX rlimits are set with ``prlimit`` just before the bot's program is executed (no
``preexec_fn``: the referee is multi-threaded); where cgroups cannot be had, they are what
still holds.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence

from ohseven.referee.sandbox import cgroups
from ohseven.referee.sandbox.capture import LogBuffer, drain
from ohseven.referee.sandbox.paths import (
    SANDBOX_SCRATCH,
    SYSTEM_DIRS,
    absolutise,
    ancestors,
    bot_path,
    default_bot_dir,
    etc_data,
    etc_paths,
    inside,
    normalise,
    python_paths,
)
from ohseven.referee.sandbox.procfs import HIDDEN_DIRS, proc_files
from ohseven.referee.sandbox.seccomp import seccomp_program
from ohseven.referee.sandbox.settings import (
    BotStartError,
    SandboxConfig,
    SandboxError,
    check_sandbox,
    is_root,
    which,
)
from ohseven.referee.sandbox.uids import (
    UidLease,
    check_access,
    descendants,
    give,
    kill_uid,
    lease_uid,
)

__all__ = ["BotProcess", "malloc_arenas"]


_START_TIMEOUT = 10.0  # seconds bubblewrap may take to set the sandbox up


#: the variables OpenMP, OpenBLAS, MKL and numexpr size their thread pools by
_THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_MAX_THREADS",
)


def malloc_arenas(cpus: float) -> int:
    """``MALLOC_ARENA_MAX`` of a bot allowed ``cpus`` cores: 2, or its cores if more."""
    return max(2, math.ceil(cpus))


class BotProcess:
    """One bot process in the sandbox, from :meth:`start` to :meth:`kill`.

    ``command`` is run with ``env`` added to a minimal environment (PATH with the referee's
    Python first, HOME and TMPDIR the private scratch directory, LANG). Relative path arguments
    naming existing files are made absolute. ``bot_dir`` (read-only inside, and the working
    directory) defaults to the directory of the first existing file among the arguments
    (else of the program itself when it is a path outside the system directories).
    ``socket_dir`` is visible read-only at the same path; when the bot has its own uid, the
    sockets it holds at :meth:`start` are handed to that uid (the directory stays ours), so
    bind the ZeroMQ socket before starting the bot.

    With ``--die-with-parent`` the sandbox dies when the *thread* that called :meth:`start`
    exits: start bots from a thread that outlives them.
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        name: str,
        bot_dir: str | None,
        socket_dir: str,
        env: Mapping[str, str],
        config: SandboxConfig,
    ) -> None:
        if not command:
            raise ValueError(f"bot {name!r} has an empty command")
        self.name = name
        self.command = tuple(absolutise(arg) for arg in command)
        self.bot_dir = os.path.realpath(bot_dir) if bot_dir else default_bot_dir(self.command)
        self.socket_dir = os.path.realpath(socket_dir)
        self.env = dict(env)
        self.config = config
        self.pid: int | None = None
        self.uid: int | None = None  # the uid the bot runs as, when it is not ours
        self._proc: subprocess.Popen[bytes] | None = None
        self._log = LogBuffer(config.limits.log_bytes)
        self._drainer: threading.Thread | None = None
        self._lease: UidLease | None = None
        self._scratch: str | None = None  # host scratch directory (unsandboxed mode)
        self._pidfd: int | None = None  # the sandbox's PID 1 (bwrap mode)
        self._cgroup: cgroups.BotCgroup | None = None
        self._killed = False
        #: the limit the kernel enforced by killing a process of the bot (read at kill)
        self.limit_detail: str | None = None
        #: what the bot's processes used, read from its cgroup at kill (None without one)
        self.usage: cgroups.Usage | None = None

    # -- public ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the bot; raise :class:`BotStartError` if it cannot be started."""
        if self._proc is not None:
            raise BotStartError(errno.EBUSY, f"bot {self.name!r} was already started")
        try:
            check_sandbox(self.config)
        except SandboxError as error:
            raise BotStartError(errno.ENOENT, f"bot {self.name!r}: {error}") from None
        if not os.path.isdir(self.socket_dir):
            raise BotStartError(
                errno.ENOENT, f"bot {self.name!r}: socket directory {self.socket_dir} is missing"
            )
        if self.bot_dir is not None and not os.path.isdir(self.bot_dir):
            raise BotStartError(
                errno.ENOENT, f"bot {self.name!r}: bot directory {self.bot_dir} is missing"
            )
        self._lease = lease_uid(self.config)
        try:
            self._cgroup = self._make_cgroup()
            self._start()
        except BaseException:
            self.kill()
            raise

    def poll(self) -> int | None:
        """The bot's exit status (negative: killed by that signal), or None while it runs."""
        return None if self._proc is None else self._proc.poll()

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait up to ``timeout`` seconds for the bot to exit; its status, or None."""
        if self._proc is None:
            return None
        if timeout is not None and self._proc.returncode is None:
            # woken by the exit itself (Popen's own timed wait polls with growing sleeps)
            try:
                fd = os.pidfd_open(self._proc.pid)
            except OSError:
                pass
            else:
                try:
                    poller = select.poll()
                    poller.register(fd, select.POLLIN)
                    poller.poll(max(0, int(timeout * 1000 + 0.999)))
                finally:
                    os.close(fd)
                timeout = 0
        try:
            return self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def freeze(self) -> None:
        """The bot owes no decision: its processes may not run until :meth:`thaw` (a no-op
        with ``ponder`` on, or where there is no freezer). It does not wait for them to be
        frozen (the kernel stops each task within microseconds). Every bot is frozen as soon
        as it has answered, however little it computes at rest: then no two bots of a table
        ever run at once (the table asks one at a time, ``core.table.Table.one_at_a_time``),
        and none can tell another anything through the CPU they would share."""
        if self._cgroup is not None and not self.config.ponder and not self._killed:
            self._cgroup.freeze()

    def thaw(self) -> None:
        """Let the bot's processes run again (at once, when this returns)."""
        if self._cgroup is not None and not self._killed:
            self._cgroup.thaw()

    def limit_hit(self) -> str | None:
        """Which limit the kernel enforced by killing a process of the bot (an OOM kill), if
        any, e.g. ``memory limit 1024 MB reached (OOM kill)``."""
        if self._cgroup is not None and not self._killed:
            return self._cgroup.limit_hit()
        return self.limit_detail

    def kill(self) -> None:
        """Kill the bot's whole process tree, reap it, release its uid, wipe its scratch."""
        if self._killed:
            return
        self._killed = True
        group = self._cgroup
        if group is not None:  # a frozen task does not die before it is thawed
            group.thaw()
        proc = self._proc
        if proc is not None:
            # a bot already reaped has no children left under its pid: no /proc scan
            scan = self.config.mode == "unsandboxed" and proc.returncode is None
            doomed = descendants(proc.pid) if scan else []
            if self._pidfd is not None:
                with contextlib.suppress(ProcessLookupError):
                    signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            for pid in doomed:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait()
        if group is not None:
            self.limit_detail = group.limit_hit()
            self.usage = group.usage()
            group.remove()
            self._cgroup = None
        clean = False
        if self._lease is not None and self._lease.exclusive:
            clean = kill_uid(self._lease.uid)
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        if self._drainer is not None:
            self._drainer.join(timeout=2.0)
        if proc is not None and proc.stdout is not None:
            proc.stdout.close()
        if self._lease is not None:
            self._lease.release(clean)
            self._lease = None
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def hint(self) -> str:
        """Why a bot that exits at start may be missing files: what the sandbox hides from it
        that it probably wanted (a ``node_modules`` or virtual environment above its folder)."""
        if self.config.mode != "bwrap" or not self.bot_dir:
            return ""
        for name in ("node_modules", ".venv", "venv"):
            if os.path.isdir(os.path.join(self.bot_dir, name)):
                continue
            for parent in reversed(ancestors(os.path.join(self.bot_dir, name))):
                found = os.path.join(parent, name)
                if os.path.isdir(found) and not inside(found, self._visible_roots()):
                    return (
                        f"; the sandbox shows the bot only its own folder {self.bot_dir}: "
                        f"{found} above it is invisible (install the packages inside the "
                        "bot's folder, or add the folder to extra_paths)"
                    )
        return ""

    def log(self) -> str:
        """The captured stdout+stderr, at most ``log_bytes`` of it plus a truncation mark."""
        return self._log.text()

    @property
    def log_truncated(self) -> bool:
        """Whether some of the output was discarded."""
        return self._log.truncated

    def __enter__(self) -> BotProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.kill()

    def __repr__(self) -> str:
        return f"BotProcess(name={self.name!r}, pid={self.pid}, uid={self.uid})"

    # -- internals --------------------------------------------------------------------------

    def _make_cgroup(self) -> cgroups.BotCgroup | None:
        limits = self.config.limits
        try:
            return cgroups.BotCgroup.create(
                memory_mb=limits.memory_mb, cpus=limits.cpus, processes=limits.processes
            )
        except OSError as error:
            raise BotStartError(
                error.errno or errno.EPERM,
                f"bot {self.name!r}: cannot make its cgroup: {error.strerror or error}",
            ) from None

    def _start(self) -> None:
        config = self.config
        self.uid = self._lease.uid if self._lease is not None else None
        if self.uid is not None:
            give(self.socket_dir, self.uid)
        program = self._resolve_program()
        if config.mode == "bwrap":
            scratch = SANDBOX_SCRATCH
        else:
            self._scratch = scratch = tempfile.mkdtemp(prefix="ohseven-bot-")
            if self.uid is not None:
                os.chown(scratch, self.uid, self.uid)
        env = {
            "PATH": bot_path(),
            "HOME": scratch,
            "TMPDIR": scratch,
            "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            # numeric libraries size their thread pools by the host's cores, which a bot's
            # CPU quota and process count do not allow: by its cores instead
            **dict.fromkeys(_THREAD_VARIABLES, str(max(1, math.ceil(config.limits.cpus)))),
            # glibc reserves 64 MiB of address space per malloc arena, up to 8 per host core:
            # under RLIMIT_AS (memory_mb) a JVM's or Go's threads then fail to start
            "MALLOC_ARENA_MAX": str(malloc_arenas(config.limits.cpus)),
        }
        env.update(self.env)
        command = [program, *self.command[1:]]
        info_read: int | None = None
        pass_fds: list[int] = []
        if config.mode == "bwrap":
            info_read, info_write = os.pipe()
            pass_fds.append(info_write)
            seccomp_fd = None
            bpf = seccomp_program()
            if bpf is not None:
                seccomp_fd = os.memfd_create("ohseven-seccomp")
                os.write(seccomp_fd, bpf)
                os.lseek(seccomp_fd, 0, os.SEEK_SET)
                pass_fds.append(seccomp_fd)
            etc_fds = [_data_fd(name, data) for name, data in etc_data(self.uid).items()]
            pass_fds.extend(etc_fds)
            proc_fds = {
                path: _data_fd(os.path.basename(path), data)
                for path, data in proc_files(config.limits.memory_mb).items()
            }
            pass_fds.extend(proc_fds.values())
            argv = self._bwrap_argv(command, info_write, seccomp_fd, etc_fds, proc_fds)
            cwd = None
        else:
            if self.uid is not None:
                check_access(self.name, self.uid, command)
            argv = self._prlimit_argv() + self._setpriv_argv() + command
            cwd = self.bot_dir or scratch
        if self._cgroup is not None:  # joined before anything of the bot runs
            argv = self._cgroup.join_argv() + argv
        try:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=cwd or "/",
                pass_fds=pass_fds,
                start_new_session=True,
            )
        except OSError as error:
            raise BotStartError(
                error.errno, f"bot {self.name!r}: cannot run {argv[0]}: {error.strerror}"
            ) from None
        finally:
            for fd in pass_fds:
                os.close(fd)
        self.pid = self._proc.pid
        assert self._proc.stdout is not None
        self._drainer = threading.Thread(
            target=drain,
            args=(self._proc.stdout.fileno(), self._log),
            name=f"log-{self.name}",
            daemon=True,
        )
        self._drainer.start()
        if info_read is not None:
            self._await_sandbox(info_read)

    def _resolve_program(self) -> str:
        program = self.command[0]
        if os.sep in program:
            found = program if os.path.isfile(program) else None
        else:
            found = shutil.which(program, path=bot_path())
        if found is None:
            raise BotStartError(errno.ENOENT, f"bot {self.name!r}: command {program!r} not found")
        if self.config.mode == "bwrap":
            real = os.path.realpath(found)
            if not inside(real, self._visible_roots()):
                raise BotStartError(
                    errno.ENOENT,
                    f"bot {self.name!r}: command {program!r} ({real}) is outside what the "
                    "sandbox shows the bot; put it in the bot's directory or add it to "
                    "extra_paths",
                )
        return found

    def _visible_roots(self) -> list[str]:
        roots = [*SYSTEM_DIRS, *python_paths(), *self.config.extra_paths]
        if self.bot_dir:
            roots.append(self.bot_dir)
        return normalise(roots)

    def _prlimit_argv(self) -> list[str]:
        limits = self.config.limits
        argv = [
            which("prlimit") or "prlimit",
            f"--as={limits.memory_mb << 20}",
            f"--cpu={limits.cpu_seconds}",
            f"--fsize={limits.file_size_mb << 20}",
            f"--nofile={limits.open_files}",
            "--core=0",
        ]
        # NPROC counts the processes of the uid: only a uid of the bot's own makes it a
        # per-bot limit (a shared uid is bounded by the cgroup's per-bot count where it holds)
        counted = self._cgroup is not None and "pids" in self._cgroup.dirs
        if self._lease is not None and (self._lease.exclusive or not counted):
            argv.append(f"--nproc={limits.processes}")
        return [*argv, "--"]

    def _setpriv_argv(self) -> list[str]:
        # the parent-death signal: a bot outlives no referee (or worker) that dies, even by
        # SIGKILL; it is set after the uid change, which would clear it
        setpriv = which("setpriv") or "setpriv"
        if self.uid is None:
            return [setpriv, "--pdeathsig", "KILL", "--"]
        uid = str(self.uid)
        return [
            setpriv,
            "--reuid", uid, "--regid", uid, "--clear-groups",
            "--no-new-privs", "--bounding-set=-all", "--inh-caps=-all",
            "--pdeathsig", "KILL",
            "--",
        ]  # fmt: skip

    def _bwrap_argv(
        self,
        command: list[str],
        info_fd: int,
        seccomp_fd: int | None,
        etc_fds: Sequence[int],
        proc_fds: Mapping[str, int],
    ) -> list[str]:
        limits = self.config.limits
        argv = [
            which(self.config.bwrap) or self.config.bwrap,
            "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try",
            "--die-with-parent", "--new-session",
            "--hostname", "sandbox",
            "--info-fd", str(info_fd),
        ]  # fmt: skip
        if not is_root():  # unprivileged bubblewrap needs a user namespace; forbid nesting
            argv += ["--unshare-user", "--disable-userns"]
        if seccomp_fd is not None:
            argv += ["--seccomp", str(seccomp_fd)]
        # The root of the sandbox is a fresh tmpfs: only what is bound below exists.
        made: set[str] = set()

        def parents(path: str) -> None:
            for parent in ancestors(path):
                if parent not in made:
                    made.add(parent)
                    argv.extend(["--perms", "0755", "--dir", parent])

        for path in SYSTEM_DIRS:
            if os.path.islink(path):
                argv += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                argv += ["--ro-bind", path, path]
        argv += ["--proc", "/proc", "--dev", "/dev"]
        # the machine's figures that another bot moves at will (see ``procfs``): static
        # contents in their place, their folders hidden
        for path, fd in proc_fds.items():
            argv += ["--perms", "0444", "--ro-bind-data", str(fd), path]
        for path in HIDDEN_DIRS:
            if os.path.isdir(path):
                argv += ["--size", "4096", "--tmpfs", path, "--remount-ro", path]
        argv += ["--perms", "1777", "--size", str(limits.scratch_mb << 20)]
        argv += ["--tmpfs", SANDBOX_SCRATCH]
        # bubblewrap would make /etc (and /etc/ssl) 0700 root: the bot's uid could read nothing
        parents("/etc/passwd")
        for path in etc_paths():
            parents(path)
            argv += ["--ro-bind", path, path]
        argv += ["--perms", "0444", "--ro-bind-data", str(etc_fds[0]), "/etc/passwd"]
        argv += ["--perms", "0444", "--ro-bind-data", str(etc_fds[1]), "/etc/group"]
        argv += ["--perms", "0444", "--ro-bind-data", str(etc_fds[2]), "/etc/hosts"]
        readonly = [*python_paths(), *self.config.extra_paths]
        if self.bot_dir:
            readonly.append(self.bot_dir)
        system = [p for p in SYSTEM_DIRS if os.path.isdir(p)]
        for path in normalise(readonly):
            if inside(path, system):
                continue
            parents(path)
            argv += ["--ro-bind", path, path]
        parents(self.socket_dir)
        # read-only: connect() needs write permission on the socket inode only, which a
        # read-only mount keeps; the bot cannot create files there
        argv += ["--ro-bind", self.socket_dir, self.socket_dir]
        argv += ["--chdir", self.bot_dir or SANDBOX_SCRATCH]
        return [*self._prlimit_argv(), *argv, "--", *self._setpriv_argv(), *command]

    def _await_sandbox(self, info_fd: int) -> None:
        """Wait for bubblewrap to report the sandbox's PID 1; fail if it did not set up."""
        data = b""
        deadline = time.monotonic() + _START_TIMEOUT
        # poll, not select: select() refuses descriptors past 1023, and a server holding
        # a thousand client connections gives the pipe such a number
        poller = select.poll()
        poller.register(info_fd, select.POLLIN)
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not poller.poll(remaining * 1000):
                    break
                chunk = os.read(info_fd, 4096)
                if not chunk:
                    break
                data += chunk
                try:
                    child = int(json.loads(data)["child-pid"])
                except (ValueError, KeyError):
                    continue
                with contextlib.suppress(ProcessLookupError):
                    self._pidfd = os.pidfd_open(child)
                return
        finally:
            os.close(info_fd)
        assert self._proc is not None
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(1.0)
        if self._drainer is not None:
            self._drainer.join(timeout=1.0)
        message = self.log().strip() or "no message"
        raise BotStartError(
            errno.EPERM, f"bot {self.name!r}: the sandbox (bubblewrap) failed to start: {message}"
        )


def _data_fd(name: str, data: bytes) -> int:
    fd = os.memfd_create(f"ohseven-{name}")
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
