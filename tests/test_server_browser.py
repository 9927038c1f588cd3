"""The competition server's author pages in a real headless Chromium (the system's, as in
tests/test_publish_browser.py): log in with the token, upload a bot with the form, follow its
check to the report, see it on the live leaderboard; the session cookie is out of the page's
reach and a forged one is refused."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ARTIFACTS
from playwright.sync_api import Browser, Page
from test_server import RANDOM_BOT, Running, free_port, wait_for, write_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # real processes; a loaded machine


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    folder = tmp_path_factory.mktemp("browser-server")
    port = free_port()
    running = Running(write_config(folder, port), port)
    running.tokens = {"alice": running.add_author("alice")}  # type: ignore[attr-defined]
    running.start()
    yield running
    if running.process is not None:
        assert running.stop() == 0, running.log.read_text()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert errors == [], f"page errors: {errors}"


def test_login_upload_and_report(server: Running, page: Page, tmp_path: Path) -> None:
    page.goto(f"{server.url}/login")
    page.fill("#token", "not my token")
    page.click("#login")
    assert "unknown token" in page.locator("#message").inner_text()
    page.fill("#token", server.tokens["alice"])  # type: ignore[attr-defined]
    page.click("#login")
    page.wait_for_url(f"{server.url}/me")
    assert "alice's bots" in page.inner_text("h1")
    assert page.evaluate("document.cookie") == ""  # HttpOnly: out of the page's reach
    bot = tmp_path / "webbot.py"
    bot.write_text(RANDOM_BOT)
    page.fill("#bot", "webbot")
    page.set_input_files("#file", str(bot))
    page.click("#send")
    page.wait_for_url(f"{server.url}/me/uploads/*")

    def state() -> str | None:
        page.reload()
        text = page.locator("#state").inner_text()
        return text if text in ("passed", "failed") else None

    assert wait_for(state, step=1.0) == "passed"
    report = page.locator("#report").inner_text()
    assert "oh-seven" in report and "pass" in report
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "server-report.png"), full_page=True)
    page.goto(f"{server.url}/me")
    row = page.locator('#versions tr[data-version="alice/webbot v1"]')
    assert "passed" in row.inner_text()
    page.goto(f"{server.url}/")

    def listed() -> bool:
        page.reload()
        return page.locator('#ranking tr[data-bot="alice/webbot v1"]').count() == 1

    wait_for(listed, step=1.0)
    assert "active" in page.locator('#ranking tr[data-bot="alice/webbot v1"]').inner_text()
    page.screenshot(path=str(ARTIFACTS / "server-index.png"), full_page=True)


def test_a_bad_upload_shows_the_limit_and_a_forged_session_is_refused(
    server: Running, browser: Browser, page: Page, tmp_path: Path
) -> None:
    page.goto(f"{server.url}/login")
    page.fill("#token", server.tokens["alice"])  # type: ignore[attr-defined]
    page.click("#login")
    page.wait_for_url(f"{server.url}/me")
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not an archive")
    page.fill("#bot", "junk")
    page.set_input_files("#file", str(junk))
    page.click("#send")
    assert "gzip" in page.locator("#message").inner_text()
    forged = browser.new_context()
    forged.add_cookies(
        [
            {
                "name": "ohseven_session",
                "value": f"alice.{int(time.time()) + 3600}.{'0' * 64}",
                "url": server.url,
            }
        ]
    )
    other = forged.new_page()
    response = other.goto(f"{server.url}/me")
    assert response is not None and response.status == 401
    assert "alice's bots" not in other.content()
    forged.close()


def test_unrated_games_requested_with_the_form(server: Running, page: Page) -> None:
    """After the first test (alice/webbot v1 plays): the request form, its CSRF token, the
    result page with the games' places."""
    page.goto(f"{server.url}/login")
    page.fill("#token", server.tokens["alice"])  # type: ignore[attr-defined]
    page.click("#login")
    page.wait_for_url(f"{server.url}/me")
    page.click("#unrated-link")
    page.wait_for_url(f"{server.url}/me/unrated")
    page.select_option("#bot", "alice/webbot v1")
    page.check('input[name="opponent"][value="random"]')
    page.check('input[name="opponent"][value="heuristic"]')
    page.fill("#games", "2")
    page.click("#request")
    page.wait_for_url(f"{server.url}/me/unrated/*")

    def state() -> str | None:
        page.reload()
        text = page.locator("#state").inner_text()
        return text if text in ("done", "failed") else None

    assert wait_for(state, step=1.0) == "done"
    rows = page.locator("#results tbody tr")
    assert rows.count() == 2
    assert "alice/webbot v1" in rows.first.inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "server-unrated.png"), full_page=True)
