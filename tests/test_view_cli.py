"""``ohseven-referee view``: a replay from ``match`` as a standalone page, opened offline in a
real headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ohseven.referee.replay import load_replay
from playwright.sync_api import sync_playwright

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')

ROOT = Path(__file__).resolve().parent.parent
RANDOM = str(ROOT / "example_bots" / "random_bot.py")


def referee(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ohseven.referee.cli", *args],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.fixture(scope="module")
def replay(tmp_path_factory) -> Path:
    """One game's replay written by ``match --replays``."""
    folder = tmp_path_factory.mktemp("replays")
    seed = str(2**100 + 12345)
    out = referee(
        "match", "--games", "1", "--seed", seed, "--sandbox", "unsandboxed", "--game", "oh-hell",
        "--replays", str(folder), RANDOM, RANDOM, RANDOM,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    (path,) = folder.glob("*.json")
    return path


class TestPage:
    def test_a_standalone_page_with_everything_inline(self, replay: Path, tmp_path: Path):
        """The page is written where asked and loads nothing else: no src or href to a file."""
        target = tmp_path / "elsewhere" / "game.html"
        target.parent.mkdir()
        out = referee("view", str(replay), "--output", str(target))
        assert out.returncode == 0, out.stderr
        assert str(target) in out.stdout
        html = target.read_text()
        assert re.findall(r'(?:src|href)="[^"#]', html) == []
        assert "window.ohsevenInline" in html

    def test_default_output_is_next_to_the_replay(self, replay: Path):
        """Without --output the page is REPLAY with .html."""
        out = referee("view", str(replay))
        assert out.returncode == 0 and replay.with_suffix(".html").is_file()

    def test_it_shows_the_game_offline_in_a_browser(self, replay: Path, tmp_path: Path):
        """Opened from file:// in another folder, the viewer steps to the end of the game and
        shows the replay's totals, and its exact seed."""
        target = tmp_path / "game.html"
        assert referee("view", str(replay), "-o", str(target)).returncode == 0
        data = load_replay(replay)
        executable = shutil.which("chromium") or shutil.which("chromium-browser")
        assert executable, "Chromium is required: apt-get install chromium"
        errors: list[str] = []
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
            page = browser.new_page()
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("requestfailed", lambda request: errors.append(request.url))
            page.goto(target.as_uri())
            page.wait_for_selector("#replay:not([hidden])")
            page.click("#last")
            totals = page.locator("#seats td.total").all_inner_texts()
            sub = page.inner_text("#replay-sub")
            browser.close()
        assert [int(t) for t in totals] == data["result"]["totals"]
        assert f"seed {data['seed']}" in sub
        assert errors == []


class TestErrors:
    @pytest.mark.parametrize("content", [None, "not json", json.dumps({"format": "other"})])
    def test_bad_replay_is_a_one_line_error(self, tmp_path: Path, content):
        """A missing or unreadable replay: exit 2 and one line, never a traceback."""
        path = tmp_path / "r.json"
        if content is not None:
            path.write_text(content)
        out = referee("view", str(path))
        assert out.returncode == 2, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_a_deep_file_is_refused_clearly(tmp_path):
    """A 200,000-deep JSON file: one clear line, no traceback."""
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    done = referee("view", str(path))
    assert done.returncode == 2, done.stderr
    assert "nested deeper than a replay can be" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1
