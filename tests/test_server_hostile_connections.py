"""The competition server attacked through its HTTP connections by a client holding an
author's token: the real ``serve`` process on loopback, raw sockets and httpx. Each test is
an attack that once broke through (see ``server.connections``)."""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from ohseven.referee.server.connections import BODY_SECONDS
from test_server import Running, free_port, wait_for, write_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # real processes


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    folder = tmp_path_factory.mktemp("hostile-connections")
    port = free_port()
    running = Running(write_config(folder, port), port)
    running.token = running.add_author("mallory")  # type: ignore[attr-defined]
    running.start()
    yield running
    if running.process is not None:
        assert running.stop() == 0, running.log.read_text()


def peak_kib(server: Running) -> int:
    """The server process's peak resident memory (KiB)."""
    assert server.process is not None
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0])


def head(server: Running, path: str, length: int, kind: str) -> bytes:
    token = server.token  # type: ignore[attr-defined]
    return (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: {kind}\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


def answer(sock: socket.socket, seconds: float) -> bytes:
    sock.settimeout(seconds)
    data = b""
    with contextlib.suppress(ConnectionResetError, BrokenPipeError):
        while more := sock.recv(65536):
            data += more
            head, _, body = data.partition(b"\r\n\r\n")
            length = head.lower().split(b"content-length:")[-1].split(b"\r\n")[0].strip()
            if _ and length.isdigit() and len(body) >= int(length):
                break  # the whole response
    return data


def test_a_huge_json_body_is_refused_before_it_fills_memory(server: Running) -> None:
    """``POST /api/unrated`` read its JSON body whole: one author sending 200 MB grew the
    server's memory by as much (then parsed it in the event loop)."""
    before = peak_kib(server)
    size = 200 << 20
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(head(server, "/api/unrated", size, "application/json") + b'{"bot": "')
        sent, piece = 0, b"a" * (1 << 20)
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            while sent < size - (2 << 20):
                sock.sendall(piece)
                sent += len(piece)
        reply = answer(sock, 60)
    assert reply.startswith(b"HTTP/1.1 413"), reply[:300]
    assert sent < size - (2 << 20), "the whole body was read"
    grew = peak_kib(server) - before
    assert grew < 64 << 10, f"the server's memory grew by {grew} KiB"


def test_an_upload_that_stalls_mid_body_is_cut_off_and_leaves_nothing(server: Running) -> None:
    """An upload whose body stopped arriving held its connection, its handler and its
    temporary file (up to ``max_upload_bytes`` each) for ever: a few hundred of them filled
    the disk of every bot and game."""
    uploads = server.output / ".uploads"
    socks = []
    try:
        for _ in range(20):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
            socks.append(sock)
            sock.sendall(
                head(server, "/api/uploads?bot=stall", 10 << 20, "application/gzip")
                + bytes(1 << 20)
            )
        started = time.monotonic()
        # the bodies are on disk, each in its temporary file
        while len([n for n in os.listdir(uploads) if n.startswith(".tmp-body-")]) < 20:
            assert time.monotonic() - started < 120, os.listdir(uploads)
            time.sleep(0.1)
        replies = [answer(sock, BODY_SECONDS + 120) for sock in socks]
    finally:
        for sock in socks:
            sock.close()
    assert all(r.startswith(b"HTTP/1.1 408") for r in replies), [r[:100] for r in replies]
    assert not [n for n in os.listdir(uploads) if n.startswith(".tmp-")]
    # and the server serves as before
    token = server.token  # type: ignore[attr-defined]
    assert server.client(token).get("/api/uploads").status_code == 200


def games(server: Running) -> int:
    return int(server.client().get("/api/games", params={"limit": 1}).json()["total"])


def test_a_thousand_idle_connections_stop_neither_the_league_nor_the_server(
    server: Running,
) -> None:
    """1,200 idle connections (no token needed) gave the league's new bot pipes descriptor
    numbers past 1023, where ``select()`` refuses them: the match failed and ``serve`` exited.
    The connections are opened again as the header deadline closes them, until games go on.
    (Whether a new pipe lands past 1023 depends on timing here: tests/test_process.py shows
    the failure itself, without a race.)"""
    assert wait_for(lambda: games(server) > 0)
    socks: list[socket.socket] = []

    def hold(count: int) -> None:
        """Hold ``count`` fresh idle connections (the older ones closed)."""
        for sock in socks:
            sock.close()
        socks.clear()
        while len(socks) < count:
            socks.append(socket.create_connection(("127.0.0.1", server.port), timeout=30))

    before = games(server)
    deadline = time.monotonic() + 240
    try:
        while True:  # (1,200 connections also pass limit_concurrency: read between holds)
            hold(1200)
            time.sleep(3.0)  # new matches start their bots meanwhile
            hold(0)
            assert server.process is not None and server.process.poll() is None, (
                server.log.read_text()[-3000:]
            )
            if games(server) >= before + 3:
                break
            assert time.monotonic() < deadline, "no game was played"
    finally:
        hold(0)
    assert "out of range" not in server.log.read_text()
