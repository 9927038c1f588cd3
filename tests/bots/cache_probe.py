"""A hostile bot for the page cache tests: ``cache_probe.py ACTION PATH``.

It tries, on a file that every bot can read (a system file), what would let one bot drop
another's cached pages of it, so that the other's next read waits for the disk (a timed read
tells which pages were dropped: a covert channel, or a memory from one process to the next).
It prints ``RESULT <what> <return value> <errno>`` lines that the tests read from its log.
"""

import ctypes
import errno
import mmap
import os
import platform
import sys

NUMBERS = {
    "x86_64": {"fadvise64": 221, "readahead": 187, "madvise": 28, "process_madvise": 440},
    "aarch64": {"fadvise64": 223, "readahead": 213, "madvise": 233, "process_madvise": 440},
}[platform.machine()]
MADV_COLD, MADV_PAGEOUT = 20, 21
POSIX_FADV_WILLNEED, POSIX_FADV_DONTNEED = 3, 4


def result(word, value, code):
    # one write(2) per line: concurrent processes of the tree never interleave a line
    name = errno.errorcode.get(code, "-") if value != 0 else "-"
    os.write(1, f"RESULT {word} {value} {name}\n".encode())


def evict(path):
    """Every way a reader may drop a file's cached pages: fadvise(DONTNEED) of the whole file,
    madvise(MADV_COLD, MADV_PAGEOUT) of a shared mapping of it, process_madvise."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    size = os.fstat(fd).st_size
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]  # fmt: skip
    address = ctypes.c_void_p(libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0))
    bytes(ctypes.string_at(address, size))  # mapped and touched: the pages are ours too
    for word, advice in (("madvise_cold", MADV_COLD), ("madvise_pageout", MADV_PAGEOUT)):
        ctypes.set_errno(0)
        value = libc.syscall(NUMBERS["madvise"], address, ctypes.c_size_t(size), advice)
        result(word, value, ctypes.get_errno())
    ctypes.set_errno(0)
    # process_madvise(pidfd, iovec, count, advice, flags): a bad pidfd, only its answer counts
    value = libc.syscall(NUMBERS["process_madvise"], -1, None, 0, MADV_PAGEOUT, 0)
    result("process_madvise", value, ctypes.get_errno())
    libc.munmap(address, ctypes.c_size_t(size))
    ctypes.set_errno(0)
    value = libc.syscall(NUMBERS["fadvise64"], fd, ctypes.c_long(0), ctypes.c_long(0),
                         POSIX_FADV_DONTNEED)  # fmt: skip
    result("fadvise_dontneed", value, ctypes.get_errno())
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # the C library's way
        result("posix_fadvise", 0, 0)
    except OSError as error:
        result("posix_fadvise", -1, error.errno)
    os.close(fd)


def load(path):
    """The ways to load a file's pages without reading them: readahead, fadvise(WILLNEED)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    size = os.fstat(fd).st_size
    ctypes.set_errno(0)
    value = libc.syscall(NUMBERS["readahead"], fd, ctypes.c_long(0), ctypes.c_size_t(size))
    result("readahead", value, ctypes.get_errno())
    ctypes.set_errno(0)
    value = libc.syscall(NUMBERS["fadvise64"], fd, ctypes.c_long(0), ctypes.c_long(0),
                         POSIX_FADV_WILLNEED)  # fmt: skip
    result("fadvise_willneed", value, ctypes.get_errno())
    os.close(fd)


if __name__ == "__main__":
    {"evict": evict, "load": load}[sys.argv[1]](*sys.argv[2:])
