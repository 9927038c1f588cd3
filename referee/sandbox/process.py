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

import collections
import contextlib
import errno
import fcntl
import functools
import glob
import importlib.util
import json
import math
import os
import platform
import select
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence

import attrs
from ohseven.referee.sandbox import cgroups

__all__ = [
    "Limits",
    "SandboxConfig",
    "SandboxError",
    "BotStartError",
    "BotProcess",
    "check_sandbox",
    "extra_path_problem",
    "bot_folder",
    "seccomp_program",
    "MODES",
]

MODES = ("bwrap", "unsandboxed")

# Inside the sandbox: the private scratch directory (HOME, TMPDIR, the bot's writable space).
SANDBOX_SCRATCH = "/tmp"

# System directories every interpreter or compiled bot may need, bound read-only when present.
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# The pieces of /etc that the dynamic loader and common runtimes read (OpenSSL's configuration
# and the CA certificates that Node.js, Ruby or curl load at start, the alternatives that
# /usr/bin/java and friends point through, the JVMs' configuration), nothing else of /etc: not
# the accounts (a synthetic /etc/passwd and /etc/group name root, nobody and the bot), not
# /etc/ssl/private, not the host's names.
_ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/nsswitch.conf",
    "/etc/ssl/openssl.cnf",
    "/etc/ssl/certs",
    "/etc/ca-certificates",
    "/etc/ca-certificates.conf",
    "/etc/crypto-policies",
    "/etc/pki/tls/openssl.cnf",
    "/etc/pki/tls/certs",
    "/etc/pki/ca-trust",
    "/etc/protocols",
    "/etc/services",
    "/etc/mime.types",
)
# Hidden under an empty read-only tmpfs: file-nr, inode-nr, dentry-state (machine-wide counts).
_HIDDEN_PROC = "/proc/sys/fs"
# Runtimes with a configuration folder per version: every match of these is bound.
_ETC_GLOBS = ("/etc/java-*", "/etc/jvm", "/etc/mono", "/etc/dotnet", "/etc/R", "/etc/php*")
#: the ohseven packages a bot needs: the rules core and the SDK (and the example bots); the
#: referee's package is left out unless it shares their folder (a regular install)
_OHSEVEN_PACKAGES = ("ohseven.core", "ohseven.sdk", "ohseven.example_bots")

_START_TIMEOUT = 10.0  # seconds bubblewrap may take to set the sandbox up
_INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`, Fedora: `dnf install "
    "bubblewrap`), or run trusted bots without a sandbox with the explicit opt-in mode "
    '"unsandboxed"'
)


def _positive(instance: object, attribute: attrs.Attribute, value: float) -> None:
    if value <= 0:
        raise ValueError(f"{attribute.name} must be positive, got {value!r}")


@attrs.frozen
class Limits:
    """Resource limits of one bot: of all its processes together (its cgroup), and of each
    process (rlimits).

    ``memory_mb`` is the bot's TOTAL memory: everything its processes hold together, memfd
    files, shared memory and its scratch tmpfs included, without swap (the cgroup's memory
    limit); exceeding it is an OOM kill, the fault ``limit``. It is also each process's
    ``RLIMIT_AS`` (address space, not resident memory: runtimes that reserve large virtual
    areas, such as the JVM or Go, need a larger value), the only memory limit where cgroups
    cannot be had. ``cpus`` is how many cores the bot may use at most (a float; its cgroup's
    CPU quota), and every bot has the same CPU weight. ``cpu_seconds`` is ``RLIMIT_CPU`` of
    each process for the whole match. ``processes`` is the cgroup's count of the bot's
    processes and threads (``pids.max``), and ``RLIMIT_NPROC``, a per-bot limit only when the
    bot has its own uid (the referee is root). ``scratch_mb`` bounds the private tmpfs of the
    bwrap mode. ``log_bytes`` is how much of the bot's stdout+stderr is kept: the first and
    last halves; the middle is discarded and marked.
    """

    memory_mb: int = attrs.field(default=1024, validator=_positive)
    cpu_seconds: int = attrs.field(default=600, validator=_positive)
    processes: int = attrs.field(default=64, validator=_positive)
    file_size_mb: int = attrs.field(default=16, validator=_positive)
    open_files: int = attrs.field(default=128, validator=_positive)
    log_bytes: int = attrs.field(default=65536, validator=_positive)
    scratch_mb: int = attrs.field(default=64, validator=_positive)
    cpus: float = attrs.field(default=1.0, converter=float, validator=_positive)


#: the variables OpenMP, OpenBLAS, MKL and numexpr size their thread pools by
_THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_MAX_THREADS",
)


def _as_tuple(paths: Iterable[str]) -> tuple[str, ...]:
    return tuple(paths)


def _mode_valid(instance: object, attribute: attrs.Attribute, value: str) -> None:
    if value not in MODES:
        raise ValueError(f"sandbox mode must be one of {', '.join(MODES)}, got {value!r}")


@attrs.frozen
class SandboxConfig:
    """How bots are run.

    ``uid`` is the unprivileged uid/gid bots run as when the referee is root and
    ``uid_pool_size`` is 0. With ``uid_pool_size > 0`` (the default), each running bot takes a
    uid of its own from ``[uid_pool_start, uid_pool_start + uid_pool_size)``, held with a lock
    file so that concurrent referee processes never share one; these uids need no account.
    ``bwrap`` is the bubblewrap program (a name looked up in PATH, or a path). ``extra_paths``
    are further host paths made visible read-only at the same place (a JVM under /opt, say).
    ``ponder`` lets a bot run while it owes no decision; off (the default), its processes are
    frozen from its reply to its next request, so it thinks on its own clock only.
    """

    mode: str = attrs.field(default="bwrap", validator=_mode_valid)
    limits: Limits = Limits()
    uid: int = 65534
    uid_pool_start: int = 0x70000000
    uid_pool_size: int = 4096
    bwrap: str = "bwrap"
    extra_paths: tuple[str, ...] = attrs.field(default=(), converter=_as_tuple)
    ponder: bool = False


class SandboxError(RuntimeError):
    """The sandbox cannot be used on this machine (a missing tool, an unusable kernel feature)."""


class BotStartError(OSError):
    """A bot process could not be started (its command is missing, the sandbox failed)."""


def _is_root() -> bool:
    return os.geteuid() == 0


def _which(program: str) -> str | None:
    if os.sep in program:
        return program if os.path.isfile(program) and os.access(program, os.X_OK) else None
    return shutil.which(program)


def check_sandbox(config: SandboxConfig) -> None:
    """Raise :class:`SandboxError` with a clear message if ``config`` cannot run bots here."""
    if not sys.platform.startswith("linux"):
        raise SandboxError(f"bots can only be run on Linux, not on {sys.platform}")
    for tool in ("prlimit", "setpriv") if _is_root() else ("prlimit",):
        if _which(tool) is None:
            raise SandboxError(
                f"{tool} was not found in PATH; it is part of util-linux "
                "(Debian/Ubuntu: `apt-get install util-linux`)"
            )
    if config.mode == "bwrap" and _which(config.bwrap) is None:
        raise SandboxError(
            f"the sandbox program bubblewrap ({config.bwrap!r}) was not found: {_INSTALL_HINT}"
        )


def bot_folder(command: Sequence[str], directory: str | None) -> str | None:
    """The folder the sandbox shows a bot with this command (its ``directory``, or its script's)."""
    if directory:
        return os.path.realpath(directory)
    return _default_bot_dir(tuple(_absolutise(arg) for arg in command))


def extra_path_problem(path: str, protected: Mapping[str, str | None]) -> str | None:
    """What is wrong with ``path`` as an extra read-only path (None: nothing). ``protected``
    maps a description ("the output folder", "bot x's folder") to a folder no bot may see
    through it: the path may neither be inside it nor contain it."""
    if not os.path.isabs(path):
        return f"{path!r} is not an absolute path"
    if not os.path.exists(path):
        return f"{path} does not exist"
    real = os.path.realpath(path)
    if real == "/":
        return f"{path} would show the bots the whole file system"
    for what, folder in protected.items():
        if not folder:
            continue
        folder = os.path.realpath(folder)
        if _inside(real, [folder]) or _inside(folder, [real]):
            return f"{path} would show every bot {what} ({folder})"
    return None


# ---------------------------------------------------------------------------------------------
# uids


def _uid_lock_dir() -> str:
    path = os.path.join(tempfile.gettempdir(), f"ohseven-uids-{os.geteuid()}")
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    info = os.lstat(path)
    if not os.path.isdir(path) or os.path.islink(path) or info.st_uid != os.geteuid():
        raise SandboxError(f"the uid lock directory {path} is not a directory owned by us")
    return path


#: what a uid's lock file holds once its last holder saw no process of that uid left: the next
#: holder need not scan /proc (about 17 ms, the most of a bot's start)
_CLEAN = b"clean"


class _UidLease:
    """A uid held exclusively (across processes too) until released."""

    def __init__(self, uid: int, fd: int | None) -> None:
        self.uid = uid
        self.exclusive = fd is not None
        self._fd = fd

    def release(self, clean: bool = False) -> None:
        """Give the uid back; ``clean``: no process of it is left (checked by the caller)."""
        if self._fd is not None:
            if clean:
                with contextlib.suppress(OSError):
                    os.pwrite(self._fd, _CLEAN, 0)
            os.close(self._fd)  # closing drops the flock
            self._fd = None


def _check_access(name: str, uid: int, command: Sequence[str]) -> None:
    """Unsandboxed, as root: can ``uid`` read the files the bot's command names (its script)?

    Without this, a bot under a private folder (``/root``, a 0700 temporary directory) exits
    at once and the organiser only sees ``no_start``; with it, the fault says why.
    """
    # the program itself is left to exec (which reports its own failure in the bot's log):
    # what it must read (a script) is what a private folder hides
    paths = [path for path in command[1:] if os.path.isabs(path) and os.path.isfile(path)]
    if not paths:
        return
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child drops to the bot's uid and reports what it cannot reach
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            denied = [path for path in paths if not os.access(path, os.R_OK)]
            os.write(write, "\n".join(denied).encode()[:4000])
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        unreadable = pipe.read().decode()
    os.waitpid(pid, 0)
    if unreadable:
        raise BotStartError(
            errno.EACCES,
            f"bot {name!r}: its unprivileged uid {uid} cannot read {unreadable.splitlines()[0]} "
            "(unsandboxed bots never run as root: make the bot's files and interpreter "
            "readable by every user, e.g. outside /root, or use the bwrap sandbox mode)",
        )


def _lease_uid(config: SandboxConfig) -> _UidLease | None:
    """The uid for a new bot: ``None`` when the referee is not root (the bot keeps our uid)."""
    if not _is_root():
        return None
    if config.uid_pool_size <= 0:
        return _UidLease(config.uid, None)
    directory = _uid_lock_dir()
    size = config.uid_pool_size
    offset = int.from_bytes(os.urandom(4), "little") % size
    for i in range(size):
        uid = config.uid_pool_start + (offset + i) % size
        path = os.path.join(directory, str(uid))
        try:  # a uid never leased from this directory: no referee ran a bot under it
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            fresh = True
        except FileExistsError:
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
            fresh = False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        # a uid released clean has no process; any other may have leftovers of a referee that
        # died without cleaning up. Held, it is marked not clean until released clean again.
        if not fresh and os.pread(fd, len(_CLEAN), 0) != _CLEAN:
            _kill_uid(uid)
        os.ftruncate(fd, 0)
        return _UidLease(uid, fd)
    raise BotStartError(
        errno.EAGAIN, f"all {size} sandbox uids from {config.uid_pool_start} are in use"
    )


def _proc_entries() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _status(pid: int) -> dict[str, str]:
    """The fields of /proc/PID/status ({} if the process is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            lines = status.read().splitlines()
    except OSError:
        return {}
    return {k: v.strip() for k, _, v in (line.partition(":") for line in lines)}


def _alive(fields: dict[str, str]) -> bool:
    """Whether the process is running (not a zombie waiting for its parent or init)."""
    return bool(fields) and not fields.get("State", "Z").startswith(("Z", "X"))


def _kill_uid(uid: int) -> bool:
    """SIGKILL every process whose real uid is ``uid`` (only for uids exclusive to one bot);
    whether none is left."""
    for _ in range(100):
        found = False
        for pid in _proc_entries():
            fields = _status(pid)
            if _alive(fields) and int(fields["Uid"].split()[0]) == uid:
                found = True
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        if not found:
            return True
        time.sleep(0.01)
    return False


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = collections.defaultdict(list)
    for pid in _proc_entries():
        ppid = _status(pid).get("PPid")
        if ppid:
            children[int(ppid)].append(pid)
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


# ---------------------------------------------------------------------------------------------
# seccomp: a classic BPF program handed to bubblewrap


_CLONE_NEWUSER = 0x10000000
# Per machine: audit arch, the first number of a foreign ABI sharing the arch (x32), the
# numbers of clone, unshare, clone3, of the syscalls a bot has no use for, and of fcntl and the
# syscalls of _SIGNALLING.
_SYSCALLS = {
    "x86_64": (
        0xC000003E,
        0x40000000,
        {"clone": 56, "unshare": 272, "clone3": 435},
        {
            "ptrace": 101, "kexec_load": 246, "add_key": 248, "request_key": 249,
            "keyctl": 250, "perf_event_open": 298, "open_by_handle_at": 304,
            "process_vm_readv": 310, "process_vm_writev": 311, "bpf": 321,
            "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426,
            "io_uring_register": 427,
        },
        {"fcntl": 72, "flock": 73, "inotify_init": 253, "inotify_add_watch": 254,
         "inotify_init1": 294, "fanotify_init": 300, "fanotify_mark": 301},
    ),
    "aarch64": (
        0xC00000B7,
        None,
        {"clone": 220, "unshare": 97, "clone3": 435},
        {
            "ptrace": 117, "kexec_load": 104, "add_key": 217, "request_key": 218,
            "keyctl": 219, "perf_event_open": 241, "open_by_handle_at": 265,
            "process_vm_readv": 270, "process_vm_writev": 271, "bpf": 280,
            "userfaultfd": 282, "io_uring_setup": 425, "io_uring_enter": 426,
            "io_uring_register": 427,
        },
        {"fcntl": 25, "flock": 32, "inotify_init1": 26, "inotify_add_watch": 27,
         "fanotify_init": 262, "fanotify_mark": 263},
    ),
}  # fmt: skip
# Cross-sandbox signals through a file both bots can see (a read-only system file): the answer
# of each syscall, and of each fcntl() command (args[1]) that locks, leases or watches a file.
_SIGNALLING = {
    "flock": errno.ENOLCK,
    "inotify_init": errno.ENOSYS,
    "inotify_init1": errno.ENOSYS,
    "inotify_add_watch": errno.ENOSYS,
    "fanotify_init": errno.EPERM,
    "fanotify_mark": errno.EPERM,
}
_FCNTL_DENIED = {
    5: errno.ENOLCK,  # F_GETLK
    6: errno.ENOLCK,  # F_SETLK
    7: errno.ENOLCK,  # F_SETLKW
    36: errno.ENOLCK,  # F_OFD_GETLK
    37: errno.ENOLCK,  # F_OFD_SETLK
    38: errno.ENOLCK,  # F_OFD_SETLKW
    1024: errno.ENOLCK,  # F_SETLEASE
    1025: errno.ENOLCK,  # F_GETLEASE
    1026: errno.EINVAL,  # F_NOTIFY (dnotify)
}


def seccomp_program(machine: str | None = None) -> bytes | None:
    """The seccomp filter of bots on ``machine`` (default: this one), None if unsupported.

    It denies (EPERM) creating a user namespace through clone() or unshare(), the syscalls in
    the table above, and every syscall of a foreign ABI (i386 or x32 on x86_64, which would
    otherwise bypass the numbers checked); clone3() gets ENOSYS so that the C library falls
    back to clone(), whose flags a classic BPF filter can inspect. File locks, leases and
    watches (flock, the fcntl() commands of ``_FCNTL_DENIED``, inotify, fanotify) are denied
    too: on a file that two bots see they would carry bits from one sandbox to another.
    """
    table = _SYSCALLS.get(machine or platform.machine())
    if table is None:
        return None
    arch, foreign_from, cloning, denied, signalling = table
    allow, deny = 0x7FFF0000, 0x00050000 | errno.EPERM
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    code: list[tuple[int, int, int, int]] = [
        (ld, 0, 0, 4),  # seccomp_data.arch
        (jeq, 1, 0, arch),
        (ret, 0, 0, deny),
        (ld, 0, 0, 0),  # seccomp_data.nr
    ]
    if foreign_from is not None:
        code += [(jge, 0, 1, foreign_from), (ret, 0, 0, deny)]
    code += [(jeq, 0, 1, cloning["clone3"]), (ret, 0, 0, 0x00050000 | errno.ENOSYS)]
    for number in denied.values():
        code += [(jeq, 0, 1, number), (ret, 0, 0, deny)]
    for name, answer in _SIGNALLING.items():
        if name in signalling:
            code += [(jeq, 0, 1, signalling[name]), (ret, 0, 0, 0x00050000 | answer)]
    commands = [(ld, 0, 0, 24)]  # low half of seccomp_data.args[1]: fcntl's command
    for command, answer in _FCNTL_DENIED.items():
        commands += [(jeq, 0, 1, command), (ret, 0, 0, 0x00050000 | answer)]
    commands.append((ret, 0, 0, allow))
    code += [(jeq, 0, len(commands), signalling["fcntl"]), *commands]
    code += [
        (jeq, 1, 0, cloning["clone"]),
        (jeq, 0, 3, cloning["unshare"]),
        (ld, 0, 0, 16),  # low half of seccomp_data.args[0]: the flags
        (jset, 0, 1, _CLONE_NEWUSER),
        (ret, 0, 0, deny),
        (ret, 0, 0, allow),
    ]
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in code)


# ---------------------------------------------------------------------------------------------
# output capture


class _LogBuffer:
    """The first and last ``limit // 2`` bytes of a stream; the middle is counted, not kept."""

    def __init__(self, limit: int) -> None:
        self._head_cap = limit - limit // 2
        self._tail_cap = limit // 2
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0
        self._lock = threading.Lock()

    def add(self, data: bytes) -> None:
        with self._lock:
            self.total += len(data)
            room = self._head_cap - len(self._head)
            if room > 0:
                self._head += data[:room]
                data = data[room:]
            if data and self._tail_cap:
                self._tail += data[-self._tail_cap :]
                excess = len(self._tail) - self._tail_cap
                if excess > 0:
                    del self._tail[:excess]

    @property
    def truncated(self) -> bool:
        return self.total > self._head_cap + self._tail_cap

    def text(self) -> str:
        with self._lock:
            head, tail, total = bytes(self._head), bytes(self._tail), self.total
        if total <= len(head) + len(tail):
            return (head + tail).decode("utf-8", errors="replace")
        dropped = total - len(head) - len(tail)
        return (
            head.decode("utf-8", errors="replace")
            + f"\n[... {dropped} bytes of output discarded ...]\n"
            + tail.decode("utf-8", errors="replace")
        )


def _drain(fd: int, buffer: _LogBuffer) -> None:
    try:
        while True:
            try:
                data = os.read(fd, 65536)
            except InterruptedError:
                continue
            if not data:
                return
            buffer.add(data)
    except OSError:
        return


# ---------------------------------------------------------------------------------------------
# the view of the file system


def _python_paths() -> list[str]:
    """The Python installation running the referee and the installed ohseven packages."""
    paths = [sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))]
    for name in _OHSEVEN_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except ImportError:
            continue
        if spec is not None and spec.submodule_search_locations:
            paths.extend(spec.submodule_search_locations)
    return paths


def _normalise(paths: Sequence[str]) -> list[str]:
    """Existing absolute real paths, without those already inside another one."""
    real = sorted({os.path.realpath(p) for p in paths if p and os.path.exists(p)})
    kept: list[str] = []
    for path in real:
        if not any(path == k or path.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(path)
    return kept


def _inside(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _ancestors(path: str) -> list[str]:
    parts = path.strip("/").split("/")[:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


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
        self.command = tuple(_absolutise(arg) for arg in command)
        self.bot_dir = os.path.realpath(bot_dir) if bot_dir else _default_bot_dir(self.command)
        self.socket_dir = os.path.realpath(socket_dir)
        self.env = dict(env)
        self.config = config
        self.pid: int | None = None
        self.uid: int | None = None  # the uid the bot runs as, when it is not ours
        self._proc: subprocess.Popen[bytes] | None = None
        self._log = _LogBuffer(config.limits.log_bytes)
        self._drainer: threading.Thread | None = None
        self._lease: _UidLease | None = None
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
        self._lease = _lease_uid(self.config)
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
        frozen; a bot that has not yet used CPU while it rested is frozen only once it does
        (seen by :meth:`check_rest`), see ``cgroups.BotCgroup.rest``."""
        if self._cgroup is not None and not self.config.ponder and not self._killed:
            self._cgroup.rest()

    def check_rest(self) -> None:
        """Freeze the bot now if it has used CPU since :meth:`freeze` (call it periodically)."""
        if self._cgroup is not None and not self._killed:
            self._cgroup.check_rest()

    def thaw(self) -> None:
        """Let the bot's processes run again (at once, when this returns)."""
        if self._cgroup is not None and not self._killed:
            self._cgroup.thaw()

    @property
    def pondering(self) -> bool:
        """It has been caught computing at rest: :meth:`freeze` freezes it at once."""
        group = self._cgroup
        return group is not None and group.ponderer and not self.config.ponder

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
            doomed = _descendants(proc.pid) if scan else []
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
            clean = _kill_uid(self._lease.uid)
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
            for parent in reversed(_ancestors(os.path.join(self.bot_dir, name))):
                found = os.path.join(parent, name)
                if os.path.isdir(found) and not _inside(found, self._visible_roots()):
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
            _give(self.socket_dir, self.uid)
        program = self._resolve_program()
        if config.mode == "bwrap":
            scratch = SANDBOX_SCRATCH
        else:
            self._scratch = scratch = tempfile.mkdtemp(prefix="ohseven-bot-")
            if self.uid is not None:
                os.chown(scratch, self.uid, self.uid)
        env = {
            "PATH": _bot_path(),
            "HOME": scratch,
            "TMPDIR": scratch,
            "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            # numeric libraries size their thread pools by the host's cores, which a bot's
            # CPU quota and process count do not allow: by its cores instead
            **dict.fromkeys(_THREAD_VARIABLES, str(max(1, math.ceil(config.limits.cpus)))),
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
            etc_fds = [_data_fd(name, data) for name, data in _etc_data(self.uid).items()]
            pass_fds.extend(etc_fds)
            argv = self._bwrap_argv(command, info_write, seccomp_fd, etc_fds)
            cwd = None
        else:
            if self.uid is not None:
                _check_access(self.name, self.uid, command)
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
            target=_drain,
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
            found = shutil.which(program, path=_bot_path())
        if found is None:
            raise BotStartError(errno.ENOENT, f"bot {self.name!r}: command {program!r} not found")
        if self.config.mode == "bwrap":
            real = os.path.realpath(found)
            if not _inside(real, self._visible_roots()):
                raise BotStartError(
                    errno.ENOENT,
                    f"bot {self.name!r}: command {program!r} ({real}) is outside what the "
                    "sandbox shows the bot; put it in the bot's directory or add it to "
                    "extra_paths",
                )
        return found

    def _visible_roots(self) -> list[str]:
        roots = [*_SYSTEM_DIRS, *_python_paths(), *self.config.extra_paths]
        if self.bot_dir:
            roots.append(self.bot_dir)
        return _normalise(roots)

    def _prlimit_argv(self) -> list[str]:
        limits = self.config.limits
        argv = [
            _which("prlimit") or "prlimit",
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
        setpriv = _which("setpriv") or "setpriv"
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
        self, command: list[str], info_fd: int, seccomp_fd: int | None, etc_fds: Sequence[int]
    ) -> list[str]:
        limits = self.config.limits
        argv = [
            _which(self.config.bwrap) or self.config.bwrap,
            "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try",
            "--die-with-parent", "--new-session",
            "--hostname", "sandbox",
            "--info-fd", str(info_fd),
        ]  # fmt: skip
        if not _is_root():  # unprivileged bubblewrap needs a user namespace; forbid nesting
            argv += ["--unshare-user", "--disable-userns"]
        if seccomp_fd is not None:
            argv += ["--seccomp", str(seccomp_fd)]
        # The root of the sandbox is a fresh tmpfs: only what is bound below exists.
        made: set[str] = set()

        def parents(path: str) -> None:
            for parent in _ancestors(path):
                if parent not in made:
                    made.add(parent)
                    argv.extend(["--perms", "0755", "--dir", parent])

        for path in _SYSTEM_DIRS:
            if os.path.islink(path):
                argv += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                argv += ["--ro-bind", path, path]
        argv += ["--proc", "/proc", "--dev", "/dev"]
        # the machine's counts of open files, inodes and dentries: a signal from another bot
        argv += ["--size", "4096", "--tmpfs", _HIDDEN_PROC, "--remount-ro", _HIDDEN_PROC]
        argv += ["--perms", "1777", "--size", str(limits.scratch_mb << 20)]
        argv += ["--tmpfs", SANDBOX_SCRATCH]
        # bubblewrap would make /etc (and /etc/ssl) 0700 root: the bot's uid could read nothing
        parents("/etc/passwd")
        for path in _etc_paths():
            parents(path)
            argv += ["--ro-bind", path, path]
        argv += ["--perms", "0444", "--ro-bind-data", str(etc_fds[0]), "/etc/passwd"]
        argv += ["--perms", "0444", "--ro-bind-data", str(etc_fds[1]), "/etc/group"]
        argv += ["--perms", "0444", "--ro-bind-data", str(etc_fds[2]), "/etc/hosts"]
        readonly = [*_python_paths(), *self.config.extra_paths]
        if self.bot_dir:
            readonly.append(self.bot_dir)
        system = [p for p in _SYSTEM_DIRS if os.path.isdir(p)]
        for path in _normalise(readonly):
            if _inside(path, system):
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
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not select.select([info_fd], [], [], remaining)[0]:
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


def _etc_paths() -> list[str]:
    """The host files and folders of /etc shown to bots (those that exist here)."""
    paths = [path for path in _ETC_FILES if os.path.exists(path)]
    for pattern in _ETC_GLOBS:
        paths.extend(sorted(glob.glob(pattern)))
    return [path for path in paths if not os.path.islink(os.path.dirname(path))]


def _etc_data(uid: int | None) -> dict[str, bytes]:
    """The synthetic account and host files of the sandbox: passwd, group, hosts (in order)."""
    uid = os.getuid() if uid is None else uid
    users = {0: "root", 65534: "nobody"}
    users.setdefault(uid, "bot")
    passwd = "".join(
        f"{name}:x:{n}:{n}:{name}:{SANDBOX_SCRATCH if n == uid else '/'}:/bin/sh\n"
        for n, name in sorted(users.items())
    )
    group = "".join(f"{name}:x:{n}:\n" for n, name in sorted(users.items()))
    hosts = "127.0.0.1 localhost sandbox\n::1 localhost ip6-localhost\n"
    return {"passwd": passwd.encode(), "group": group.encode(), "hosts": hosts.encode()}


def _data_fd(name: str, data: bytes) -> int:
    fd = os.memfd_create(f"ohseven-{name}")
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _bot_path() -> str:
    return os.pathsep.join([os.path.join(sys.prefix, "bin"), "/usr/local/bin", "/usr/bin", "/bin"])


def _absolutise(arg: str) -> str:
    if arg and not arg.startswith(("-", "/")) and os.sep in arg and os.path.exists(arg):
        return os.path.abspath(arg)
    if arg and not arg.startswith(("-", "/")) and os.path.isfile(arg):
        return os.path.abspath(arg)
    return arg


def _default_bot_dir(command: Sequence[str]) -> str | None:
    for arg in command[1:]:
        if arg.startswith("/") and os.path.isfile(arg):
            return os.path.dirname(os.path.realpath(arg))
    program = command[0]
    if program.startswith("/") and os.path.isfile(program):
        real = os.path.realpath(program)
        system, real_system = _system_roots()
        if not _inside(real, real_system) and not _inside(program, system):
            return os.path.dirname(real)
    return None


@functools.cache
def _system_roots() -> tuple[list[str], list[str]]:
    """The system's and the running Python's folders, as given and as real paths (fixed for
    the life of the process: computed once, not once per bot)."""
    system = [*_SYSTEM_DIRS, *_python_paths()]
    return system, _normalise(system)


def _give(directory: str, uid: int) -> None:
    """Let ``uid`` connect to the sockets in ``directory``, and write nothing else there.

    The directory stays the referee's and can be traversed, not listed or written (0711); each
    socket in it is handed to ``uid`` (0600), as connect() needs write permission on it.
    """
    os.chown(directory, os.geteuid(), os.getegid())
    os.chmod(directory, 0o711)
    for entry in os.scandir(directory):
        if stat.S_ISSOCK(entry.stat(follow_symlinks=False).st_mode):
            os.chown(entry.path, uid, uid, follow_symlinks=False)
            os.chmod(entry.path, 0o600)
