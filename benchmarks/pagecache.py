"""What warming the page cache would cost, and whether it holds: the defence against the
timed-read channel of ``covert.py --table-cache`` (a bot reads chosen pages of a rarely read
system file, another times its own first read of them) that loads, before the bots start,
every page of every file the sandbox shows every bot read-only (the system folders, the
Python installation, the few files of ``/etc``), so that a read changes nothing.

It walks those paths as the sandbox of this tree shows them, loads every page not cached
(``cachestat`` says which; the pages are charged to this process's memory cgroup, which a bot's
own memory pressure does not reclaim), and reports the files, their size, what it read and how
long it took; then it walks again (what a referee would pay before each match to check), waits
``--wait`` seconds and counts the bytes no longer cached: on a machine that pages out idle memory
of its own accord (proactive reclaim, as virtual machines sized to their use do), warmed pages
do not stay, and only locking them in memory (``mlock``, the whole size) would keep them.

    python benchmarks/pagecache.py [--wait SECONDS] [--extra PATH ...]

It reads the whole tree from the disk on its first run: gigabytes of I/O, minutes.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import stat
import struct
import sys
import time
from collections.abc import Callable, Iterator, Sequence

import attrs
from ohseven.referee.sandbox.paths import SYSTEM_DIRS, etc_paths, normalise, python_paths

PAGE = 4096
_CACHESTAT = 451  # the same number on x86_64 and aarch64 (Linux 6.5)
_CHUNK = 1 << 20


@attrs.frozen
class Warmed:
    """What :func:`warm` did: the regular files it saw and their size (bytes), the bytes that
    were not cached and it read (-1 where the kernel cannot tell: it read everything), the
    files it could not open, and how long it took."""

    files: int
    size: int
    loaded: int
    unreadable: int
    seconds: float


def shared_paths(extra: Sequence[str] = ()) -> list[str]:
    """The host paths every sandbox shows read-only (not a bot's own folder)."""
    return normalise([*SYSTEM_DIRS, *etc_paths(), *python_paths(), *extra])


def warm(paths: Sequence[str], check_only: bool = False) -> Warmed:
    """Load (``check_only``: count) every page of every regular file under ``paths`` (symbolic
    links not followed) into the page cache, charged to this process's memory cgroup; pages
    already cached are not read again where the kernel says which (``cachestat``)."""
    began = time.monotonic()
    files = size = loaded = unreadable = 0
    buffer = bytearray(_CHUNK)
    cachestat = _cachestat_function()
    for path in _regular_files(paths):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            unreadable += 1
            continue
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):  # replaced since it was listed
                continue
            files += 1
            size += info.st_size
            cached = cachestat(fd) if cachestat is not None else None
            if cached is not None and cached * PAGE >= info.st_size:
                continue
            if check_only and cached is not None:
                loaded += info.st_size - cached * PAGE
            else:
                loaded += _read_all(fd, buffer)
        except OSError:
            unreadable += 1
        finally:
            os.close(fd)
    return Warmed(
        files=files,
        size=size,
        loaded=loaded if cachestat is not None else -1,
        unreadable=unreadable,
        seconds=time.monotonic() - began,
    )


def _regular_files(paths: Sequence[str]) -> Iterator[str]:
    for root in normalise(list(paths)):
        if os.path.isfile(root) and not os.path.islink(root):
            yield root
            continue
        for top, _, names in os.walk(root, followlinks=False):
            for name in names:
                path = os.path.join(top, name)
                try:
                    if stat.S_ISREG(os.lstat(path).st_mode):
                        yield path
                except OSError:
                    continue


def _read_all(fd: int, buffer: bytearray) -> int:
    total = 0
    while True:
        count = os.readv(fd, [buffer])
        if count <= 0:
            return total
        total += count


def _cachestat_function() -> Callable[[int], int | None] | None:
    """fd -> cached pages of the whole file, by ``cachestat`` (None where the kernel has none)."""
    libc = ctypes.CDLL(None, use_errno=True)
    span = ctypes.create_string_buffer(struct.pack("QQ", 0, 0))  # offset 0, length 0: all
    answer = ctypes.create_string_buffer(40)

    def cached(fd: int) -> int | None:
        if libc.syscall(_CACHESTAT, fd, span, answer, 0) != 0:
            return None
        return int(struct.unpack_from("Q", answer.raw)[0])

    probe = os.open(__file__, os.O_RDONLY)
    try:
        return cached if cached(probe) is not None else None
    finally:
        os.close(probe)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wait", type=float, default=60.0, help="seconds before the last count")
    parser.add_argument("--extra", nargs="*", default=[], help="extra_paths shown to every bot")
    args = parser.parse_args(argv)
    paths = shared_paths(args.extra)
    print("shown to every bot:", " ".join(paths))
    with open("/proc/meminfo") as handle:
        memory = {line.split(":")[0]: line.split()[1] for line in handle}
    print(
        f"memory: {int(memory['MemTotal']) >> 10} MB,"
        f" available {int(memory['MemAvailable']) >> 10} MB"
    )
    for label, check in (("warm", False), ("again", False)):
        done = warm(paths, check_only=check)
        print(
            f"{label:<6} {done.files} files, {done.size / 1e9:.2f} GB, read {done.loaded / 1e9:.2f}"
            f" GB not cached, {done.unreadable} unreadable, {done.seconds:.1f} s"
        )
        sys.stdout.flush()
    time.sleep(args.wait)
    done = warm(paths, check_only=True)
    print(
        f"after {args.wait:.0f} s: {done.loaded / 1e9:.2f} GB no longer cached"
        f" ({done.seconds:.1f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
