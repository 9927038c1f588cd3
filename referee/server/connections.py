"""How the server's HTTP connections are held: uvicorn's settings and a header deadline.

uvicorn (with h11) waits for a request's headers for as long as the client likes: a client
that opens a connection and sends its headers one byte a second (slow loris) holds it forever,
and its keep-alive timer is even reset by each byte. :class:`GuardedH11Protocol` gives every
connection :data:`HEADER_SECONDS` to deliver a whole request head, from its opening and again
from the end of each response; a connection that has not done so is closed. With it,
:func:`uvicorn_config` sets the connection limits: at most :data:`MAX_CONCURRENCY` connections
or running requests (more are answered 503 at once), keep-alive :data:`KEEP_ALIVE_SECONDS`,
and a request head of at most :data:`MAX_HEAD_BYTES` (a longer one is a 400).

:class:`BodyGuard` bounds what a request's body may cost once its head is in: at most
:data:`MAX_BODY_BYTES` (a larger path's own limit for uploads; more is a 413), and no pause of
more than :data:`BODY_SECONDS` between two pieces of it (a 408): uvicorn reads a body for as
long as the client sends it, so a JSON request of gigabytes filled the server's memory, and an
upload that stalls mid-body held its connection and its temporary file for ever.

The server is meant to sit behind a TLS reverse proxy (docs/SERVER.md) with its own timeouts;
this keeps one that is reached directly, or through a proxy that streams requests, from being
held by a few hundred slow sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

import h11
import uvicorn
from starlette.exceptions import HTTPException
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = [
    "BODY_SECONDS",
    "BodyGuard",
    "MAX_BODY_BYTES",
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
#: the largest request body of a path without a limit of its own (forms, JSON), in bytes
MAX_BODY_BYTES = 256 * 1024
#: seconds a request body may pause between two of its pieces
BODY_SECONDS = 30.0


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


class BodyGuard:
    """ASGI middleware: each request body at most ``limits[path]`` bytes (else
    :data:`MAX_BODY_BYTES`), each piece of it within ``seconds`` of the previous one (see the
    module). A refusal is raised as an :class:`HTTPException` from the application's own
    ``receive``: its handlers' ``finally`` clauses run (a temporary file is removed) and its
    error handler answers (413 or 408, and the connection is closed)."""

    def __init__(
        self,
        app: Any,
        limits: Mapping[str, int] | None = None,
        body_bytes: int = MAX_BODY_BYTES,
        seconds: float = BODY_SECONDS,
        refusals: Mapping[str, str] | None = None,
    ) -> None:
        self.app, self.limits = app, dict(limits or {})
        self.body_bytes, self.seconds = body_bytes, seconds
        #: a path's own 413 text (naming the configuration key of its limit)
        self.refusals = dict(refusals or {})

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limits.get(scope["path"], self.body_bytes)
        refusal = self.refusals.get(
            scope["path"], f"the request body is larger than this path's limit ({limit} bytes)"
        )
        seconds = self.seconds
        received, done = 0, False

        async def guarded() -> Any:
            nonlocal received, done
            if done:  # the body is in: later calls wait for the disconnect, for as long
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), seconds)
            except TimeoutError:
                raise HTTPException(
                    408,
                    f"the request body stopped arriving for {seconds:g} s",
                    headers={"Connection": "close"},
                ) from None
            if message["type"] != "http.request":
                done = True
                return message
            received += len(message.get("body", b""))
            if received > limit:
                done = True
                raise HTTPException(413, refusal, headers={"Connection": "close"})
            done = not message.get("more_body", False)
            return message

        await self.app(scope, guarded, send)


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
