"""A clean stop asked by a signal: Ctrl-C, or SIGTERM from a service manager, raised in the
main thread as :class:`Stopped`, which every ``except KeyboardInterrupt`` takes for one."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType

__all__ = ["Stopped", "stop_on"]


class Stopped(KeyboardInterrupt):
    """The stop a signal asked for. Not a bare ``KeyboardInterrupt``: CPython
    remembers one that passed through a string ``exec`` (a dataclass made by a late import)
    and kills the process with SIGINT at exit, however cleanly it was caught."""


@contextlib.contextmanager
def stop_on(*signums: int) -> Iterator[list[int]]:
    """Raise :class:`Stopped` on the first of ``signums`` within the block, and append it to the
    list given to the block; the next ones are ignored until the block ends, so that they
    cannot cut the stop short."""
    received: list[int] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        for number in signums:
            signal.signal(number, signal.SIG_IGN)
        received.append(signum)
        raise Stopped(signal.Signals(signum).name)

    previous = {number: signal.signal(number, handler) for number in signums}
    try:
        yield received
    finally:
        for number, action in previous.items():
            signal.signal(number, action)
