"""A bot's output, captured within bounds: the first and last halves of its stdout+stderr kept,
the middle counted and marked."""

from __future__ import annotations

import os
import threading


class LogBuffer:
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


def drain(fd: int, buffer: LogBuffer) -> None:
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
