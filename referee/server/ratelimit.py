"""Failed authentications counted and limited: tokens and session cookies that do not check
out, per client address (as uvicorn reports it: behind the documented reverse proxy on
loopback, the address the proxy forwards) and per author name (a session cookie names its
author). Past the limit within the window, every request of that address (or naming that
author) that carries a token or a session is refused with 429 and ``Retry-After`` until the
oldest failure leaves the window: guessing is slowed to a few tries a minute, and a client that
is refused learns nothing about its tries.

Memory is bounded: at most :data:`MAX_KEYS` keys are remembered (the least recently failed are
forgotten first), each with at most its limit of failure times.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

__all__ = ["FailureLimiter", "MAX_KEYS", "WINDOW_SECONDS"]

#: the window over which failures are counted (seconds)
WINDOW_SECONDS = 60.0
#: keys (addresses and author names) remembered at once
MAX_KEYS = 100_000


class FailureLimiter:
    """Failures per key within :data:`WINDOW_SECONDS`; a key with ``limit`` of them is
    refused until the oldest is older than the window. Thread-safe."""

    def __init__(
        self,
        limit: int,
        window: float = WINDOW_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = MAX_KEYS,
    ) -> None:
        if limit < 1:
            raise ValueError(f"limit: expected 1 or more, not {limit}")
        self.limit, self.window, self.clock, self.max_keys = limit, window, clock, max_keys
        self.failures: OrderedDict[str, deque[float]] = OrderedDict()
        self.lock = threading.Lock()

    def _recent(self, key: str, now: float) -> deque[float] | None:
        times = self.failures.get(key)
        if times is None:
            return None
        while times and times[0] <= now - self.window:
            times.popleft()
        if not times:
            del self.failures[key]
            return None
        return times

    def retry_after(self, key: str) -> int:
        """0 if ``key`` may try now, else the whole seconds until it may."""
        with self.lock:
            now = self.clock()
            times = self._recent(key, now)
            if times is None or len(times) < self.limit:
                return 0
            return max(1, math.ceil(times[0] + self.window - now))

    def fail(self, key: str) -> None:
        """Count a failure of ``key``."""
        with self.lock:
            now = self.clock()
            times = self._recent(key, now)
            if times is None:
                times = self.failures[key] = deque(maxlen=self.limit)
                while len(self.failures) > self.max_keys:
                    self.failures.popitem(last=False)
            else:
                self.failures.move_to_end(key)
            times.append(now)
