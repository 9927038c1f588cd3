"""The seccomp filter's page cache refusals, tested with a real hostile bot under real
bubblewrap (``tests/bots/cache_probe.py``): a bot cannot drop another process's cached pages
of a file they both read, nor load them without reading; and the filter's program itself."""

from __future__ import annotations

import ctypes
import mmap
import os
import pydoc_data.topics
import sys
import tempfile
import time
from collections.abc import Iterator

import pytest
from ohseven.referee.sandbox.process import BotProcess
from ohseven.referee.sandbox.seccomp import CACHE_ADVICE, MADVISE_DENIED, SYSCALLS, seccomp_program
from ohseven.referee.sandbox.settings import SandboxConfig

PROBE = os.path.join(os.path.dirname(__file__), "bots", "cache_probe.py")
PAGE = 4096
# A file of the standard library every sandboxed Python bot can read and that nothing here
# maps or reads (help()'s topics): a stand-in for any system file two bots share.
SHARED = pydoc_data.topics.__file__


def resident(path: str) -> int:
    """How many of the file's pages are in the page cache, by mincore() of an untouched
    mapping of it in this unsandboxed process (a read, even one that may not wait, would
    start loading them)."""
    size = os.path.getsize(path)
    libc = ctypes.CDLL(None, use_errno=True)
    with open(path, "rb") as handle:
        mapped = mmap.mmap(handle.fileno(), size, flags=mmap.MAP_PRIVATE,
                           prot=mmap.PROT_READ | mmap.PROT_WRITE)  # fmt: skip
        try:
            address = ctypes.addressof(ctypes.c_char.from_buffer(mapped))
            vector = ctypes.create_string_buffer(pages(path))
            if libc.mincore(ctypes.c_void_p(address), ctypes.c_size_t(size), vector) != 0:
                raise OSError(ctypes.get_errno(), "mincore")
            return sum(byte & 1 for byte in vector.raw)
        finally:
            del address
            mapped.close()


def drop(path: str) -> int:
    """Drop the file's cached pages (a page another CPU has not yet put on its list may stay:
    tried a few times); how many are left."""
    for _ in range(20):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
        left = resident(path)
        if left == 0:
            break
        time.sleep(0.05)
    return left


def pages(path: str) -> int:
    return (os.path.getsize(path) + PAGE - 1) // PAGE


@pytest.fixture
def probe() -> Iterator:
    """Run the hostile bot with an action in the default sandbox; its answers by name."""
    started: list[BotProcess] = []

    def run(action: str, path: str) -> dict[str, tuple[int, str]]:
        with tempfile.TemporaryDirectory(prefix="ohseven-cache-") as sockets:
            bot = BotProcess(
                [sys.executable, PROBE, action, path],
                name=f"cache-{action}",
                bot_dir=None,
                socket_dir=sockets,
                env={},
                config=SandboxConfig(),
            )
            started.append(bot)
            bot.start()
            assert bot.wait(30) == 0, bot.log()
        answers = {}
        for line in bot.log().splitlines():
            if line.startswith("RESULT "):
                _, word, value, name = line.split()
                answers[word] = (int(value), name)
        return answers

    yield run
    for bot in started:
        bot.kill()


@pytest.mark.slow
class TestPageCache:
    def test_a_bot_cannot_evict_a_shared_files_cached_pages(self, probe):
        """fadvise(DONTNEED) (straight and through the C library), madvise(MADV_COLD,
        MADV_PAGEOUT) of a mapping and process_madvise leave every cached page of a shared
        file cached: another bot's timed read of it learns nothing."""
        with open(SHARED, "rb") as handle:
            handle.read()
        assert resident(SHARED) == pages(SHARED)
        answers = probe("evict", SHARED)
        assert resident(SHARED) == pages(SHARED), answers
        assert answers == {
            "madvise_cold": (-1, "EINVAL"),
            "madvise_pageout": (-1, "EINVAL"),
            "process_madvise": (-1, "ENOSYS"),
            "fadvise_dontneed": (0, "-"),  # advice the filter answers without acting on it
            "posix_fadvise": (0, "-"),
        }

    def test_a_bot_cannot_load_pages_without_reading(self, probe):
        """readahead and fadvise(WILLNEED) succeed and load nothing (a read still does)."""
        before = drop(SHARED)
        answers = probe("load", SHARED)
        assert answers == {"readahead": (0, "-"), "fadvise_willneed": (0, "-")}
        assert resident(SHARED) <= before < pages(SHARED) // 2


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_names_each_cache_advice(machine):
    """The program holds every syscall number of the cache advice and madvise's denied
    advice values, and stays within the BPF size limit."""
    program = seccomp_program(machine)
    assert program is not None and len(program) // 8 < 4096
    words = {
        int.from_bytes(program[i + 4 : i + 8], sys.byteorder) for i in range(0, len(program), 8)
    }
    advice = SYSCALLS[machine][6]
    assert {advice[name] for name in CACHE_ADVICE} | {advice["madvise"]} <= words
    assert set(MADVISE_DENIED) <= words
