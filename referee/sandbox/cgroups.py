"""A cgroup per bot: one CPU limit and share, one memory limit, one process count, a freezer.

Everything about cgroups lives here: finding a usable hierarchy (:func:`support`), creating a
bot's cgroup (:meth:`BotCgroup.create`), the argv prefix that puts the bot's first process in
it before anything of the bot runs (:meth:`BotCgroup.join_argv`), freezing and thawing, the
limit that killed a bot (:meth:`BotCgroup.limit_hit`), usage figures, killing what is left and
removing the cgroup.

cgroup v2 is used where a cgroup2 hierarchy offers the ``cpu``, ``memory`` and ``pids``
controllers below our own cgroup; otherwise the v1 hierarchies of ``cpu``, ``cpuacct``,
``memory``, ``pids`` and ``freezer``. Bots' cgroups are made below our own cgroup (read from
``/proc/self/cgroup``), so a referee that is not root works in a delegated (writable) subtree:

    <our cgroup>/ohseven/r<pid>-<start time>/<random token>

One directory per referee process; a referee that finds the directory of a referee process
that is gone (killed with SIGKILL, say) kills what is left in it and removes it.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import functools
import os
import secrets
import signal
import sys
import time
from typing import TextIO

import attrs

__all__ = ["Support", "BotCgroup", "Usage", "support", "detect", "warn_unavailable"]

#: the v1 controllers a bot's cgroup joins; ``cpuacct`` only gives usage figures
V1_CONTROLLERS = ("cpu", "cpuacct", "memory", "pids", "freezer")
#: the v2 controllers enabled for bots' cgroups (the freezer is built into every v2 cgroup)
V2_CONTROLLERS = ("cpu", "memory", "pids")
_TOP = "ohseven"
_CFS_PERIOD_US = 100_000
_REMOVE_SECONDS = 2.0

# what is not enforced without each controller (for the warning at start)
_LOST = {
    "cpu": "the cpus limit and equal CPU shares between bots",
    "memory": "memory_mb as the total of a bot's processes (RLIMIT_AS per process still holds)",
    "pids": "processes as a count for the whole bot (RLIMIT_NPROC per uid still holds as root)",
    "freezer": "ponder: false (bots keep running between their turns)",
}


@attrs.frozen
class Support:
    """What this machine offers: ``version`` 2 or 1 (0: none), and for each controller the
    directory under which bots' cgroups are made (``dirs``); ``reason`` says why a controller
    is missing."""

    version: int = 0
    dirs: tuple[tuple[str, str], ...] = ()
    reason: str = ""

    @property
    def controllers(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.dirs)

    @property
    def missing(self) -> tuple[str, ...]:
        have = set(self.controllers)
        if self.version == 2:
            have.add("freezer")
        return tuple(name for name in _LOST if name not in have)

    def message(self) -> str | None:
        """What is not enforced here, or None when every limit is."""
        missing = self.missing
        if not missing:
            return None
        lost = "; ".join(_LOST[name] for name in missing)
        why = self.reason or "no usable cgroup hierarchy"
        return f"cgroups: {why}; not enforced: {lost}"


def _mounts(mountinfo: str) -> list[tuple[str, str, str, set[str]]]:
    """(fstype, root, mount point, super options) of every cgroup mount."""
    found = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        before, _, after = line.partition(" - ")
        head, tail = before.split(), after.split()
        if len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        root = _unescape(head[3])
        point = _unescape(head[4])
        found.append((tail[0], root, point, set(tail[2].split(","))))
    return found


def _unescape(text: str) -> str:
    # mountinfo writes space, tab, newline and backslash as octal escapes
    for code in ("\\040", "\\011", "\\012", "\\134"):
        text = text.replace(code, chr(int(code[1:], 8)))
    return text


def _own(proc_cgroup: str) -> dict[str, str]:
    """Our cgroup path per v1 controller, and under ``""`` in the v2 hierarchy."""
    paths: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            paths[""] = path
        for name in controllers.split(","):
            if name:
                paths[name] = path
    return paths


def _place(root: str, point: str, path: str) -> str | None:
    """The directory of cgroup ``path`` in a hierarchy mounted from ``root`` at ``point``."""
    root = root.rstrip("/")
    if root and path != root and not path.startswith(root + "/"):
        return None  # our cgroup is not visible in this mount
    return os.path.join(point, path[len(root) :].lstrip("/"))


def _read(path: str) -> str:
    with open(path, encoding="ascii") as handle:
        return handle.read()


def _write(path: str, value: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def detect(proc_cgroup: str, mountinfo: str) -> Support:
    """The cgroups usable below our own cgroup, from ``/proc/self/cgroup`` and mountinfo."""
    mounts = _mounts(mountinfo)
    own = _own(proc_cgroup)
    reasons = []
    if "" in own:
        for fstype, root, point, _ in mounts:
            if fstype != "cgroup2":
                continue
            base = _place(root, point, own[""])
            if base is None:
                continue
            problem = _v2_problem(base)
            if problem is None:
                top = os.path.join(base, _TOP)
                return Support(2, tuple((name, top) for name in V2_CONTROLLERS))
            reasons.append(problem)
            break
    dirs = []
    for name in V1_CONTROLLERS:
        for fstype, root, point, options in mounts:
            if fstype != "cgroup" or name not in options or name not in own:
                continue
            base = _place(root, point, own[name])
            if base is None or not os.path.isdir(base):
                continue
            if not os.access(base, os.W_OK):
                reasons.append(f"the {name} cgroup {base} is not writable by us")
                break
            dirs.append((name, os.path.join(base, _TOP)))
            break
    if dirs:
        return Support(1, tuple(dirs), "; ".join(reasons))
    return Support(0, (), "; ".join(reasons) or "no cgroup hierarchy is mounted")


def _v2_problem(base: str) -> str | None:
    """Why the cgroup2 directory ``base`` cannot hold bots' cgroups, or None if it can."""
    try:
        available = _read(os.path.join(base, "cgroup.controllers")).split()
    except OSError as error:
        return f"cgroup v2 at {base} is unreadable ({error.strerror})"
    lacking = [name for name in V2_CONTROLLERS if name not in available]
    if lacking:
        return f"cgroup v2 at {base} lacks the controllers {', '.join(lacking)}"
    if not os.access(base, os.W_OK):
        return f"cgroup v2 at {base} is not writable by us (delegate it to this user)"
    try:
        _enable(base)
    except OSError as error:
        if error.errno == errno.EBUSY:
            return (
                f"cgroup v2 at {base} holds processes, so it cannot delegate controllers "
                "(run the referee in a leaf cgroup of a delegated subtree)"
            )
        return f"cannot enable controllers in cgroup v2 at {base} ({error.strerror})"
    return None


def _enable(directory: str) -> None:
    """Enable the v2 controllers for the children of ``directory`` (if not yet)."""
    control = os.path.join(directory, "cgroup.subtree_control")
    enabled = _read(control).split()
    wanted = [name for name in V2_CONTROLLERS if name not in enabled]
    if wanted:
        _write(control, " ".join(f"+{name}" for name in wanted))


@functools.cache
def support() -> Support:
    """What this machine offers (found once per process)."""
    if not sys.platform.startswith("linux"):
        return Support(0, (), f"cgroups are a Linux feature, not on {sys.platform}")
    try:
        proc_cgroup = _read("/proc/self/cgroup")
        mountinfo = _read("/proc/self/mountinfo")
    except OSError as error:
        return Support(0, (), f"cannot read our cgroup ({error.strerror})")
    return detect(proc_cgroup, mountinfo)


_warned = False


def warn_unavailable(stream: TextIO | None = None) -> str | None:
    """Say once per process what the referee cannot enforce here (nothing when all is)."""
    global _warned
    message = support().message()
    if message is not None and not _warned:
        _warned = True
        print(f"warning: {message}; see SECURITY.md", file=stream or sys.stderr)
    return message


# ---------------------------------------------------------------------------------------------
# the referee's own directory


def _start_time(pid: int) -> str | None:
    try:
        stat = _read(f"/proc/{pid}/stat")
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]  # field 22: start time in clock ticks


def _referee_name() -> str:
    pid = os.getpid()
    return f"r{pid}-{_start_time(pid)}"


def _referee_alive(name: str) -> bool:
    pid_text, _, start = name[1:].partition("-")
    return pid_text.isdigit() and _start_time(int(pid_text)) == start


def _kill_tasks(directory: str) -> bool:
    """SIGKILL every task of a cgroup; whether it had any."""
    try:
        pids = _read(os.path.join(directory, "cgroup.procs")).split()
    except OSError:
        return False
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError, ValueError):
            os.kill(int(pid), signal.SIGKILL)
    return bool(pids)


def _remove_tree(directory: str, thaw: bool) -> None:
    """Kill the tasks of a cgroup tree, then remove it, leaves first."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            if entry.is_dir(follow_symlinks=False):
                _remove_tree(entry.path, thaw)
    deadline = time.monotonic() + _REMOVE_SECONDS
    while True:
        if thaw:
            with contextlib.suppress(OSError):
                _write(os.path.join(directory, "freezer.state"), "THAWED")
            with contextlib.suppress(OSError):
                _write(os.path.join(directory, "cgroup.freeze"), "0")
        _kill_tasks(directory)
        try:
            os.rmdir(directory)
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() >= deadline:
                return
            time.sleep(0.005)


# (pid, controller top directory) -> this referee's directory in it; by pid, as a forked
# child inherits the dictionary but is a referee of its own
_prepared: dict[tuple[int, str], str] = {}


def _referee_dir(top: str, version: int) -> str:
    """This referee's directory under ``top`` (made, and leftovers removed, on first use)."""
    pid = os.getpid()
    mine = _prepared.get((pid, top))
    if mine is not None:
        return mine
    with contextlib.suppress(FileExistsError):
        os.mkdir(top, 0o755)
    if version == 2:
        _enable(top)
    name = _referee_name()
    for entry in os.scandir(top):
        if (
            entry.is_dir(follow_symlinks=False)
            and entry.name.startswith("r")
            and entry.name != name
            and not _referee_alive(entry.name)
        ):
            _remove_tree(entry.path, thaw=True)
    mine = os.path.join(top, name)
    with contextlib.suppress(FileExistsError):
        os.mkdir(mine, 0o755)
    if version == 2:
        _enable(mine)
    if not any(key[0] == pid for key in _prepared):
        atexit.register(_remove_referee_dirs, pid)
    _prepared[pid, top] = mine
    return mine


def _remove_referee_dirs(pid: int) -> None:
    """At exit: remove this referee's (empty) directories; the next referee removes any that
    are left."""
    if pid != os.getpid():
        return  # a forked child inherited the registration: not its directories
    for (owner, _), mine in _prepared.items():
        if owner == pid:
            with contextlib.suppress(OSError):
                os.rmdir(mine)


# ---------------------------------------------------------------------------------------------
# one bot


@attrs.frozen
class Usage:
    """What a bot's processes used: CPU seconds and the peak of memory (None if unknown)."""

    cpu_seconds: float | None
    memory_peak_mb: float | None


class BotCgroup:
    """The cgroup (one directory per controller) of one bot, from :meth:`create` to
    :meth:`remove`."""

    def __init__(self, support: Support, dirs: dict[str, str], memory_mb: int) -> None:
        self.support = support
        self.dirs = dirs  # controller -> this bot's directory (v2: the same for all)
        self.memory_mb = memory_mb
        self.frozen = False
        self._freeze_fd: int | None = None
        self._oom_fd: int | None = None
        self._removed = False

    @classmethod
    def create(
        cls, *, memory_mb: int, cpus: float, processes: int, where: Support | None = None
    ) -> BotCgroup | None:
        """A new cgroup with these limits, None where cgroups cannot be had (see
        :func:`support`, or ``where``); raises OSError if the hierarchy refuses it."""
        found = where if where is not None else support()
        if not found.dirs:
            return None
        token = secrets.token_hex(6)
        dirs: dict[str, str] = {}
        group = cls(found, dirs, memory_mb)
        try:
            for name, top in found.dirs:
                parent = _referee_dir(top, found.version)
                path = os.path.join(parent, token)
                if path not in dirs.values():
                    os.mkdir(path, 0o755)
                dirs[name] = path
            group._limit(memory_mb, cpus, processes)
        except BaseException:
            group.remove()
            raise
        return group

    def _limit(self, memory_mb: int, cpus: float, processes: int) -> None:
        dirs, memory = self.dirs, memory_mb << 20
        quota = max(1000, round(cpus * _CFS_PERIOD_US))
        if self.support.version == 2:
            path = dirs["cpu"]
            _write(os.path.join(path, "cpu.max"), f"{quota} {_CFS_PERIOD_US}")
            _write(os.path.join(path, "cpu.weight"), "100")
            _write(os.path.join(path, "memory.max"), str(memory))
            with contextlib.suppress(FileNotFoundError):  # no swap accounting: no swap use
                _write(os.path.join(path, "memory.swap.max"), "0")
            _write(os.path.join(path, "memory.oom.group"), "1")
            _write(os.path.join(path, "pids.max"), str(processes))
            self._freeze_fd = os.open(os.path.join(path, "cgroup.freeze"), os.O_WRONLY)
            self._oom_fd = os.open(os.path.join(path, "memory.events"), os.O_RDONLY)
            return
        if "cpu" in dirs:
            _write(os.path.join(dirs["cpu"], "cpu.cfs_period_us"), str(_CFS_PERIOD_US))
            _write(os.path.join(dirs["cpu"], "cpu.cfs_quota_us"), str(quota))
            _write(os.path.join(dirs["cpu"], "cpu.shares"), "1024")
        if "memory" in dirs:
            path = dirs["memory"]
            _write(os.path.join(path, "memory.limit_in_bytes"), str(memory))
            with contextlib.suppress(FileNotFoundError):  # memsw: memory plus swap
                _write(os.path.join(path, "memory.memsw.limit_in_bytes"), str(memory))
            self._oom_fd = os.open(os.path.join(path, "memory.oom_control"), os.O_RDONLY)
        if "pids" in dirs:
            _write(os.path.join(dirs["pids"], "pids.max"), str(processes))
        if "freezer" in dirs:
            self._freeze_fd = os.open(os.path.join(dirs["freezer"], "freezer.state"), os.O_WRONLY)

    def join_argv(self) -> list[str]:
        """An argv prefix: a shell that moves itself into every controller's cgroup, then
        executes the rest of the argv (so every later process of the bot starts inside)."""
        procs = sorted({os.path.join(path, "cgroup.procs") for path in self.dirs.values()})
        script = (
            'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 126; shift; '
            'n=$((n - 1)); done; exec "$@"'
        )
        return ["/bin/sh", "-c", script, "sh", str(len(procs)), *procs]

    @property
    def can_freeze(self) -> bool:
        return self._freeze_fd is not None

    def freeze(self) -> None:
        """Ask the kernel to freeze every task (it does not wait for them to be frozen)."""
        if self._freeze_fd is not None and not self.frozen:
            self.frozen = True
            os.write(self._freeze_fd, b"1" if self.support.version == 2 else b"FROZEN")

    def thaw(self) -> None:
        """Thaw every task (back to running when this returns): the bot's rest is over."""
        if self._freeze_fd is not None and self.frozen:
            self.frozen = False
            os.write(self._freeze_fd, b"0" if self.support.version == 2 else b"THAWED")

    def limit_hit(self) -> str | None:
        """Which limit the kernel enforced by killing a process of the bot, or None."""
        if self._oom_fd is None:
            return None
        try:
            text = os.pread(self._oom_fd, 512, 0).decode("ascii", "replace")
        except OSError:
            return None
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit() and int(value) > 0:
                return f"memory limit {self.memory_mb} MB reached (OOM kill)"
        return None

    def usage(self) -> Usage:
        """CPU seconds and memory peak of the bot's processes so far."""
        cpu = peak = None
        with contextlib.suppress(OSError, ValueError, KeyError):
            if self.support.version == 2:
                stat = dict(
                    line.split()
                    for line in _read(os.path.join(self.dirs["cpu"], "cpu.stat")).splitlines()
                )
                cpu = int(stat["usage_usec"]) / 1e6
            else:
                cpu = int(_read(os.path.join(self.dirs["cpuacct"], "cpuacct.usage"))) / 1e9
        with contextlib.suppress(OSError, ValueError, KeyError):
            name = "memory.peak" if self.support.version == 2 else "memory.max_usage_in_bytes"
            peak = int(_read(os.path.join(self.dirs["memory"], name))) / (1 << 20)
        return Usage(cpu, peak)

    def tasks(self) -> list[int]:
        """The pids of the bot's processes still in the cgroup."""
        path = next(iter(self.dirs.values()), None)
        if path is None:
            return []
        try:
            return [int(pid) for pid in _read(os.path.join(path, "cgroup.procs")).split()]
        except OSError:
            return []

    def kill(self) -> None:
        """Thaw (a frozen task does not die) and SIGKILL every task, until none is left."""
        if self._removed:
            return
        self.frozen = True  # force the write: the freezer may be half-way
        self.thaw()
        if self.support.version == 2:
            with contextlib.suppress(OSError):
                _write(os.path.join(self.dirs["cpu"], "cgroup.kill"), "1")
        deadline = time.monotonic() + _REMOVE_SECONDS
        for path in set(self.dirs.values()):
            while _kill_tasks(path) and time.monotonic() < deadline:
                time.sleep(0.002)

    def remove(self) -> None:
        """Kill what is left and remove the cgroup (retried briefly while tasks exit)."""
        if self._removed:
            return
        self.kill()
        self._removed = True
        for fd in (self._freeze_fd, self._oom_fd):
            if fd is not None:
                os.close(fd)
        self._freeze_fd = self._oom_fd = None
        for path in set(self.dirs.values()):
            _remove_tree(path, thaw=False)

    def __repr__(self) -> str:
        return f"BotCgroup(v{self.support.version}, {sorted(set(self.dirs.values()))})"
