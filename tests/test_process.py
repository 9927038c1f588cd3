"""``sandbox.process.BotProcess``: what its own file owns beyond the sandbox's walls
(tests/test_sandbox.py): starting a bot when the referee holds many descriptors."""

from __future__ import annotations

import os
import resource
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from ohseven.referee.sandbox.process import BotProcess
from ohseven.referee.sandbox.settings import SandboxConfig

#: a descriptor number select() refuses (FD_SETSIZE is 1024)
PAST_SELECT = 1100


@pytest.fixture
def many_descriptors() -> Iterator[None]:
    """The process holds descriptors up to past :data:`PAST_SELECT`, as a server with a
    thousand client connections does: the next ones opened get numbers past it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < PAST_SELECT + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, PAST_SELECT + 1000), hard))
    held = []
    try:
        while not held or held[-1] < PAST_SELECT:
            held.append(os.open(os.devnull, os.O_RDONLY))
        yield
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.slow
def test_a_sandboxed_bot_starts_when_its_pipes_are_past_descriptor_1023(
    many_descriptors: None, tmp_path: Path
) -> None:
    sockets = tmp_path / "sock"
    sockets.mkdir()
    bot = BotProcess(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        name="many-fds",
        bot_dir=None,
        socket_dir=str(sockets),
        env={},
        config=SandboxConfig(),
    )
    try:
        bot.start()  # waits for bubblewrap's report on a pipe numbered past 1023
        assert bot.poll() is None
    finally:
        bot.kill()
