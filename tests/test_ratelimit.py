"""Failed logins and token checks limited (``server.ratelimit``): the counter itself against a
model, and the real server on loopback refusing a guessing client with 429 and ``Retry-After``
(a real HTTP client; other addresses are told apart by the ``X-Forwarded-For`` that uvicorn
takes from a proxy on loopback, as behind the documented reverse proxy)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from ohseven.referee.server.headers import SESSION_COOKIE
from ohseven.referee.server.ratelimit import FailureLimiter
from test_server import Running, free_port, write_config


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class TestFailureLimiter:
    def test_refused_at_the_limit_until_the_oldest_failure_leaves_the_window(self) -> None:
        clock = Clock()
        limiter = FailureLimiter(3, window=60.0, clock=clock)
        for _step in range(3):
            assert limiter.retry_after("1.2.3.4") == 0
            limiter.fail("1.2.3.4")
            clock.now += 10
        assert limiter.retry_after("1.2.3.4") == 30  # the first failed at 1000, now 1030
        assert limiter.retry_after("5.6.7.8") == 0  # another key is not touched
        clock.now += 29.5
        assert limiter.retry_after("1.2.3.4") == 1
        clock.now += 0.5
        assert limiter.retry_after("1.2.3.4") == 0

    def test_memory_is_bounded(self) -> None:
        limiter = FailureLimiter(1, clock=Clock(), max_keys=100)
        for number in range(1000):
            limiter.fail(f"10.0.{number // 256}.{number % 256}")
        assert len(limiter.failures) == 100
        assert limiter.retry_after("10.0.3.231") > 0  # the latest are remembered

    @given(
        limit=st.integers(1, 5),
        gaps=st.lists(st.floats(0, 40, allow_nan=False), min_size=0, max_size=30),
    )
    def test_refused_exactly_when_the_window_holds_limit_failures(
        self, limit: int, gaps: list[float]
    ) -> None:
        """Model: a client fails whenever it is let in; it is refused exactly when ``limit``
        of its failures are less than a window old."""
        clock = Clock()
        limiter = FailureLimiter(limit, window=60.0, clock=clock)
        failures: list[float] = []
        for gap in gaps:
            clock.now += gap
            recent = [t for t in failures if t > clock.now - 60.0]
            wait = limiter.retry_after("k")
            assert (wait > 0) == (len(recent) >= limit)
            if wait:
                assert wait >= recent[0] + 60.0 - clock.now
            else:
                limiter.fail("k")
                failures.append(clock.now)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    folder = tmp_path_factory.mktemp("ratelimit-server")
    port = free_port()
    config = write_config(folder, port, auth_failures=3, auth_failures_per_author=5)
    running = Running(config, port)
    running.tokens = {  # type: ignore[attr-defined]
        name: running.add_author(name) for name in ("alice", "bob")
    }
    running.start()
    yield running
    if running.process is not None:
        assert running.stop() == 0, running.log.read_text()


def client(server: Running, address: str, token: str | None = None) -> httpx.Client:
    headers = {"X-Forwarded-For": address}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.Client(base_url=server.url, headers=headers, timeout=60)


def refused(response: httpx.Response) -> int:
    assert response.status_code == 429, (response.status_code, response.text)
    wait = int(response.headers["retry-after"])
    assert 1 <= wait <= 60
    return wait


@pytest.mark.slow
def test_token_guessing_is_refused_per_address(server: Running) -> None:
    alice = server.tokens["alice"]  # type: ignore[attr-defined]
    with client(server, "203.0.113.7", "guess-1") as guesser:
        for number in range(3):
            answer = guesser.get("/api/uploads", headers={"Authorization": f"Bearer g{number}"})
            assert answer.status_code == 401, answer.text
        refused(guesser.get("/api/uploads"))
        # refused before the check: even the right token, from that address, learns nothing
        answer = guesser.get("/api/uploads", headers={"Authorization": f"Bearer {alice}"})
        assert "too many failed" in answer.json()["error"]
        refused(answer)
        assert guesser.get("/api/leaderboard", headers={"Authorization": ""}).status_code != 429
    with client(server, "203.0.113.8", alice) as other:  # another address: served
        assert other.get("/api/uploads").status_code == 200


@pytest.mark.slow
def test_login_guessing_is_refused_per_address(server: Running) -> None:
    with client(server, "203.0.113.20") as browser:
        for _ in range(3):
            page = browser.post("/login", data={"token": "wrong"})
            assert page.status_code == 403 and "unknown token" in page.text
        page = browser.post("/login", data={"token": server.tokens["bob"]})  # type: ignore[attr-defined]
        wait = refused(page)
        assert f"try again in {wait} s" in page.text
    with client(server, "203.0.113.21") as browser:  # bob from elsewhere logs in
        page = browser.post("/login", data={"token": server.tokens["bob"]})  # type: ignore[attr-defined]
        assert page.status_code == 303 and page.headers["location"] == "/me"


@pytest.mark.slow
def test_forged_sessions_are_refused_per_author_name(server: Running) -> None:
    forged = f"alice.{2**40}.{'0' * 64}"
    for number in range(5):  # from five addresses: each below its own limit
        with client(server, f"198.51.100.{number}") as browser:
            browser.cookies.set(SESSION_COOKIE, forged)
            page = browser.get("/me")
            assert page.status_code == 401
            # the forged cookie is deleted by the answer
            assert f"{SESSION_COOKIE}=;" in page.headers["set-cookie"]
    with client(server, "198.51.100.99") as browser:  # a sixth address naming alice: refused
        browser.cookies.set(SESSION_COOKIE, forged)
        refused(browser.get("/me"))
        browser.cookies.set(SESSION_COOKIE, forged.replace("alice", "bob", 1))
        assert browser.get("/me").status_code == 401  # bob's name is not blocked
    # alice herself still logs in, and her own cookie checks out: no forger locks her out
    with client(server, "198.51.100.200") as browser:
        page = browser.post("/login", data={"token": server.tokens["alice"]})  # type: ignore[attr-defined]
        assert page.status_code == 303
        page = browser.get("/me")
        assert page.status_code == 200 and "alice" in page.text
