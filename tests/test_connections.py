"""The server's connection guard (``server.connections``) on a real uvicorn on loopback with
real sockets: slow-loris clients are cut off at the header deadline and do not slow a normal
client down; the limits on heads and keep-alive hold."""

from __future__ import annotations

import contextlib
import select
import socket
import statistics
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from ohseven.referee.server.connections import (
    MAX_HEAD_BYTES,
    BodyGuard,
    GuardedH11Protocol,
    uvicorn_config,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

pytestmark = pytest.mark.slow

HOSTILE = 200


class ShortDeadline(GuardedH11Protocol):
    header_seconds = 2.0


async def hello(request: Request) -> Response:
    return PlainTextResponse("hello")


#: the bodies the echo route finished with (its ``finally``): a refused body ends there too
ENDED: list[str] = []


async def echo(request: Request) -> Response:
    try:
        return PlainTextResponse(str(len(await request.body())))
    finally:
        ENDED.append(request.url.path)


def guarded(seconds: float) -> Any:
    app = Starlette(routes=[Route("/", hello), Route("/{path}", echo, methods=["POST"])])
    return BodyGuard(app, {"/big": 1 << 20}, body_bytes=1024, seconds=seconds)


@contextlib.contextmanager
def running(protocol: type = ShortDeadline, app: Any = None) -> Iterator[str]:
    app = app or Starlette(routes=[Route("/", hello)])
    server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", 0, http=protocol))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            thread.join(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def latencies(url: str, count: int) -> list[float]:
    """``count`` requests, each on a new connection: their times in seconds."""
    times = []
    for _ in range(count):
        started = time.perf_counter()
        response = httpx.get(url + "/", timeout=30)
        times.append(time.perf_counter() - started)
        assert response.status_code == 200 and response.text == "hello"
    return times


class SlowLoris:
    """``count`` sockets that send a request head one byte a second, never finishing it; each
    socket's closing time (by the server) is noted. Stops by itself after ``limit`` s."""

    HEAD = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100_000

    def __init__(self, address: str, count: int, limit: float) -> None:
        host, port = address.removeprefix("http://").split(":")
        self.sockets = [socket.create_connection((host, int(port))) for _ in range(count)]
        self.opened = time.monotonic()
        self.closed: dict[int, float] = {}
        self.limit = limit
        self.sent = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        position = 0
        while not self.stop.is_set() and time.monotonic() - self.opened < self.limit:
            for number, sock in enumerate(self.sockets):
                if number in self.closed:
                    continue
                readable, _, _ = select.select([sock], [], [], 0)
                try:
                    if readable and not sock.recv(4096):
                        raise ConnectionResetError
                    sock.send(self.HEAD[position : position + 1])
                except OSError:
                    self.closed[number] = time.monotonic() - self.opened
            position += 1
            self.sent = position
            if len(self.closed) == len(self.sockets):
                return
            self.stop.wait(1.0)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=10)
        for sock in self.sockets:
            sock.close()


def test_slow_loris_clients_are_cut_off_and_a_normal_client_is_served_as_usual() -> None:
    with running() as url:
        latencies(url, 3)  # warm up
        baseline = statistics.median(latencies(url, 20))
        hostile = SlowLoris(url, HOSTILE, limit=60)
        try:
            while hostile.sent < 2:  # every socket has begun its head
                hostile.thread.join(0.05)
            during = latencies(url, 20)
            assert statistics.median(during) <= 10 * baseline + 0.25, (baseline, during)
            hostile.thread.join(timeout=70)
        finally:
            hostile.close()
        # every hostile socket was closed by the server at the deadline (2 s), not kept for
        # the minute the clients would have gone on
        assert len(hostile.closed) == HOSTILE, f"{HOSTILE - len(hostile.closed)} still open"
        assert max(hostile.closed.values()) < 2.0 + 8.0, sorted(hostile.closed.values())[-5:]
        assert min(hostile.closed.values()) >= 1.5  # not before its deadline
        # and the server serves as before
        assert statistics.median(latencies(url, 5)) <= 10 * baseline + 0.25


def test_without_the_guard_slow_loris_sockets_are_held_open() -> None:
    """The counterpart: uvicorn's own h11 protocol keeps them (what the guard is for)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    with running(H11Protocol) as url:
        hostile = SlowLoris(url, 5, limit=5)
        try:
            hostile.thread.join(timeout=15)
        finally:
            hostile.close()
        assert not hostile.closed


def response(sock: socket.socket) -> bytes:
    """One whole response of the hello route (its body is 5 bytes)."""
    data = b""
    while not data.endswith(b"hello"):
        more = sock.recv(4096)
        assert more, data
        data += more
    return data


def test_a_head_within_the_deadline_is_served_and_keep_alive_works() -> None:
    with running() as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            for piece in (b"GET / HTTP/1.1\r\n", b"Host: x\r\n", b"\r\n"):
                sock.sendall(piece)
                time.sleep(0.3)  # a slow client, well within the deadline
            assert response(sock).endswith(b"hello")
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")  # the same connection again
            assert response(sock).endswith(b"hello")
            # then idle: closed once the next head is overdue (no reply, just the end)
            started = time.monotonic()
            sock.settimeout(15)
            assert sock.recv(4096) == b""
            assert time.monotonic() - started < 8


def test_an_endless_head_is_refused_at_the_limit() -> None:
    """A head that never ends is not buffered without bound: 400 once the limit is passed."""
    with running() as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: ")
            sent, answer = 0, b""
            while not answer and sent <= 4 * MAX_HEAD_BYTES:
                sock.sendall(b"a" * 1024)
                sent += 1024
                readable, _, _ = select.select([sock], [], [], 0.05)
                if readable:
                    answer = sock.recv(4096)
            assert answer.startswith(b"HTTP/1.1 400"), answer
            assert MAX_HEAD_BYTES - 1024 <= sent <= 2 * MAX_HEAD_BYTES, sent
        assert httpx.get(url + "/", timeout=10).status_code == 200


def answer(sock: socket.socket) -> bytes:
    """What the server says before it closes the connection (or 30 s pass)."""
    sock.settimeout(30)
    data = b""
    with contextlib.suppress(ConnectionResetError):
        while more := sock.recv(4096):
            data += more
    return data


def connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def post_head(path: str, length: int) -> bytes:
    return f"POST /{path} HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n".encode()


def test_a_body_past_its_paths_limit_is_refused() -> None:
    """uvicorn reads a body for as long as it comes: a JSON request of gigabytes was held in
    memory whole. Past the path's limit: 413, the connection closed, the handler ended."""
    with running(app=guarded(30.0)) as url:
        ENDED.clear()
        with connect(url) as sock:
            sock.sendall(post_head("json", 10_000_000) + b"{" * 4096)
            reply = answer(sock)
        assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
        assert b"1024 bytes" in reply and ENDED == ["/json"]
        # a body within the limit, and a large one where its path allows it
        assert httpx.post(url + "/json", content=b"x" * 1000, timeout=10).text == "1000"
        assert httpx.post(url + "/big", content=b"x" * 500_000, timeout=10).text == "500000"
        assert httpx.post(url + "/json", content=b"x" * 2000, timeout=10).status_code == 413


def test_a_body_that_stops_arriving_is_cut_off() -> None:
    """An upload that stalled mid-body held its connection, its handler and its temporary
    file for ever. Past the pause allowed: 408, the handler ended (its file removed)."""
    with running(app=guarded(1.0)) as url:
        ENDED.clear()
        with connect(url) as sock:
            started = time.monotonic()
            sock.sendall(post_head("big", 100_000) + b"x" * 100)
            reply = answer(sock)
            waited = time.monotonic() - started
        assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
        assert 1.0 <= waited < 20, waited
        assert ENDED == ["/big"]
        # a slow body whose pieces come within the pause is read whole
        with connect(url) as sock:
            sock.sendall(post_head("big", 30))
            for _ in range(3):
                time.sleep(0.3)
                sock.sendall(b"x" * 10)
            assert answer(sock).split(b"\r\n\r\n", 1)[1] == b"30"  # (closed after 5 s idle)
