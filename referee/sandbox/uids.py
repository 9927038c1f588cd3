"""The unprivileged uids bots run as when the referee is root: a pool of uids leased
exclusively across referee processes (lock files), the check that a uid can read an unsandboxed
bot's files, the sockets handed to it, and the killing of every process left under a uid."""

from __future__ import annotations

import collections
import contextlib
import errno
import fcntl
import os
import signal
import stat
import tempfile
import time
from collections.abc import Sequence

from ohseven.referee.sandbox.settings import BotStartError, SandboxConfig, SandboxError, is_root


def uid_lock_dir() -> str:
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


class UidLease:
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


def check_access(name: str, uid: int, command: Sequence[str]) -> None:
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


def lease_uid(config: SandboxConfig) -> UidLease | None:
    """The uid for a new bot: ``None`` when the referee is not root (the bot keeps our uid)."""
    if not is_root():
        return None
    if config.uid_pool_size <= 0:
        return UidLease(config.uid, None)
    directory = uid_lock_dir()
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
            kill_uid(uid)
        os.ftruncate(fd, 0)
        return UidLease(uid, fd)
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


def kill_uid(uid: int) -> bool:
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


def descendants(root: int) -> list[int]:
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


def give(directory: str, uid: int) -> None:
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
