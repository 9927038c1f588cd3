"""``ohseven-referee play --web`` (referee.human.web): a person's whole game clicked through in
a real headless Chromium against sandboxed random bots, over real HTTP on loopback; a refused
answer is explained on the page; a bot's name reaches the page as text, never as HTML; the
page's API refuses a request without the session's token; Leave ends the game cleanly.

Needs Playwright for Python and Debian's ``chromium`` (found as tests/test_publish_browser.py
finds it; never downloaded)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ARTIFACTS
from playwright.sync_api import Browser, ConsoleMessage, Page

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = ROOT / "example_bots" / "random_bot.py"
#: a bot whose name (its file's stem) is HTML that would run a script if it were not escaped
EVIL = "<img src=x onerror=window.pwned=1>"


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error" and "400" not in message.text:  # the refused answer
            errors.append(message.text)

    page.on("console", on_console)
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert errors == [], f"console errors: {errors}"


class Session:
    """``play --web`` running as a real command; :attr:`url` is the address it printed."""

    def __init__(self, *args: str):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ohseven.referee.cli", "play", "--web", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        self.head = ""
        while "Your table:" not in self.head:
            line = self.process.stdout.readline()
            assert line, f"no address printed: {self.head}{self.process.stderr.read()}"
            self.head += line
        found = re.search(r"http://127\.0\.0\.1:\d+/\?token=\S+", self.head)
        assert found, self.head
        self.url = found.group()

    def finish(self) -> tuple[int, str, str]:
        out, err = self.process.communicate(timeout=120)
        return self.process.returncode, self.head + out, err

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()


@pytest.fixture
def session() -> Iterator[type[Session]]:
    made: list[Session] = []

    def start(*args: str) -> Session:
        made.append(Session(*args))
        return made[-1]

    yield start  # type: ignore[misc]
    for s in made:
        s.stop()


def decision(page: Page) -> str:
    """Wait until the page asks something (or the session ends); return what."""
    page.wait_for_function(
        "['bid', 'play', 'pass', 'finished'].includes(document.body.dataset.decision)",
        timeout=60_000,
    )
    return str(page.evaluate("document.body.dataset.decision"))


def test_a_whole_game_clicked_in_chromium(session, page: Page, tmp_path: Path) -> None:
    evil = tmp_path / f"{EVIL}_bot.py"
    evil.write_text(RANDOM_BOT.read_text())
    replays = tmp_path / "replays"
    s = session(
        "--game", "oh-hell", "--rule", "max_hand=2", "--seed", str(2**100 + 11),
        "--replays", str(replays), str(RANDOM_BOT), str(evil),
    )  # fmt: skip
    base = s.url.split("/?")[0]
    with pytest.raises(urllib.error.HTTPError) as refused:  # no token, no state
        urllib.request.urlopen(f"{base}/state", timeout=10)
    assert refused.value.code == 403
    page.goto(s.url)
    assert decision(page) == "bid"
    assert EVIL in page.locator("#seats").inner_text()  # the name, shown as text
    assert page.locator("#seats img").count() == 0
    assert page.evaluate("window.pwned") is None
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "play.png"), full_page=True)
    # an answer the rules refuse comes back explained (the page's buttons offer none)
    version = page.evaluate("document.body.dataset.version")
    result = page.evaluate(
        """async () => {
            const token = new URLSearchParams(location.search).get('token');
            const headers = {'X-Ohseven-Token': token};
            const state = await (await fetch('state', {headers: headers})).json();
            const r = await fetch('answer', {method: 'POST', headers: headers,
                body: JSON.stringify({id: state.decision.id, answer: '9'})});
            return [r.status, (await r.json()).error];
        }"""
    )
    assert result[0] == 400 and "you cannot bid 9 now" in result[1]
    page.wait_for_function(f"document.body.dataset.version !== '{version}'")
    assert "you cannot bid 9 now" in page.locator("#play-error").inner_text()
    clicks = 0
    while (kind := decision(page)) != "finished":
        version = page.evaluate("document.body.dataset.version")
        if kind == "bid":
            page.locator("#choices button").first.click()
        else:
            assert page.locator("#hand button.legal").count() >= 1
            page.locator("#hand button.legal").first.click()
        clicks += 1
        page.wait_for_function(f"document.body.dataset.version !== '{version}'")
    assert clicks == 5  # hands of 1 and 2 cards: two bids, three cards
    assert page.locator("#play-error").is_hidden()
    assert "Game over" in page.locator("#log").inner_text()
    assert page.locator("#sheet tbody tr").count() == 3  # two rounds and the totals
    code, out, err = s.finish()
    assert code == 0, err
    assert "bid accuracy" in out
    replay = json.loads((replays / "play-game000.json").read_text())
    assert replay["result"] is not None and replay["seats"][0] == "you"
    assert len([m for m in replay["moves"] if m[0] == 0]) == clicks


def test_a_pass_is_picked_then_sent_and_leave_ends_cleanly(
    session, page: Page, tmp_path: Path
) -> None:
    replays = tmp_path / "replays"
    s = session(
        "--game", "oh-seven", "--rule", "passing=true", "--seed", str(2**100 + 5),
        "--seat", "1", "--replays", str(replays), str(RANDOM_BOT), str(RANDOM_BOT),
    )  # fmt: skip
    page.goto(s.url)
    passed = False
    deadline = time.monotonic() + 120
    while not passed and time.monotonic() < deadline:
        kind = decision(page)
        version = page.evaluate("document.body.dataset.version")
        if kind == "pass":
            assert page.locator("#send").is_disabled()
            page.locator("#hand button.legal").first.click()  # round 2 passes one card
            assert page.locator("#hand button.picked").count() == 1
            page.locator("#send").click()
            passed = True
        elif kind == "bid":
            page.locator("#hand button.legal").first.click()
        else:
            page.locator("#hand button.legal").first.click()
        page.wait_for_function(f"document.body.dataset.version !== '{version}'")
    assert passed
    assert "You pass" in page.locator("#log").inner_text() or decision(page) == "bid"
    page.on("dialog", lambda dialog: dialog.accept())
    page.locator("#leave").click()
    code, out, err = s.finish()
    assert code == 0, err
    assert "stopped (left the page)" in out
    replay = json.loads((replays / "play-game000.json").read_text())
    assert replay["result"] is None
    assert [1, "pass"] in [m[:2] for m in replay["moves"]]
