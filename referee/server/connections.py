"""How the server's HTTP connections are held: uvicorn's settings and a header deadline.

uvicorn (with h11) waits for a request's headers for as long as the client likes: a client
that opens a connection and sends its headers one byte a second (slow loris) holds it forever,
and its keep-alive timer is even reset by each byte. :class:`GuardedH11Protocol` gives every
connection :data:`HEADER_SECONDS` to deliver a whole request head, from its opening and again
from the end of each response; a connection that has not done so is closed. With it,
:func:`uvicorn_config` sets the connection limits: at most :data:`MAX_CONCURRENCY` connections
or running requests (more are answered 503 at once), keep-alive :data:`KEEP_ALIVE_SECONDS`,
and a request head of at most :data:`MAX_HEAD_BYTES` (a longer one is a 400).

The server is meant to sit behind a TLS reverse proxy (docs/SERVER.md) with its own timeouts;
this keeps one that is reached directly, or through a proxy that streams requests, from being
held by a few hundred slow sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = [
    "GuardedH11Protocol",
    "HEADER_SECONDS",
    "KEEP_ALIVE_SECONDS",
    "MAX_CONCURRENCY",
    "MAX_HEAD_BYTES",
    "uvicorn_config",
]

#: seconds a connection has to send a whole request head (its request line and headers)
HEADER_SECONDS = 10.0
#: seconds an idle keep-alive connection is kept
KEEP_ALIVE_SECONDS = 5
#: connections or running requests at once; a request beyond is answered 503 at once
MAX_CONCURRENCY = 1000
#: the largest request head (request line and headers), in bytes
MAX_HEAD_BYTES = 16 * 1024


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on each request head (see the module)."""

    #: the deadline; a subclass (a test) may shorten it
    header_seconds: float = HEADER_SECONDS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._header_timer: asyncio.TimerHandle | None = None
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_seconds, self._header_deadline)

    def _disarm(self) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
            self._header_timer = None

    def _waiting_for_head(self) -> bool:
        """No request on this connection is being read or answered: the next head is due."""
        return self.conn.their_state is h11.IDLE and (
            self.cycle is None or self.cycle.response_complete
        )

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if not self._waiting_for_head():  # the head is in: the request's own time now
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self._waiting_for_head():
            self._arm()  # the next request's head is due within the deadline too

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _header_deadline(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or not self._waiting_for_head():
            return
        # (mid-way through a head there is nothing to say: just close)
        with contextlib.suppress(h11.LocalProtocolError):
            self.conn.send(h11.ConnectionClosed())
        self.transport.close()


def uvicorn_config(app: Any, host: str, port: int, **overrides: Any) -> uvicorn.Config:
    """The uvicorn configuration of the server's ``app`` on ``host:port`` (see the module);
    ``overrides``: other uvicorn settings (a test's shorter ones)."""
    settings: dict[str, Any] = {
        "host": host,
        "port": port,
        "http": GuardedH11Protocol,
        "log_level": "warning",
        "access_log": False,
        "lifespan": "off",
        "limit_concurrency": MAX_CONCURRENCY,
        "timeout_keep_alive": KEEP_ALIVE_SECONDS,
        "h11_max_incomplete_event_size": MAX_HEAD_BYTES,
        "server_header": False,
    }
    settings.update(overrides)
    return uvicorn.Config(app, **settings)
