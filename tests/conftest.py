"""Shared test helpers: playing games out with uniformly random legal decisions, the
deterministic bot of the tournament tests, and the real headless Chromium of the browser
tests (``browser``: Debian's ``chromium`` on PATH, never a downloaded one). The fixtures of
tests/played_cup.py (``tourney``: a tournament played into a real store) are loaded as a plugin."""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ohseven.core.rules import Game, Phase
from playwright.sync_api import Browser, sync_playwright

#: fixtures shared by several test modules, in their own files
pytest_plugins = ["played_cup"]

#: where the browser tests leave their screenshots (the repository's ``artifacts/``)
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """The system's Chromium under Playwright, one per test module."""
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    assert executable, "Chromium is required: apt-get install chromium"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def play_random(game: Game, rng: random.Random, stop: Callable[[Game], bool] | None = None) -> Game:
    """Push uniformly random legal decisions until the game is over or ``stop(game)`` holds."""
    while game.phase is not Phase.OVER and not (stop and stop(game)):
        for seat in game.to_act:
            game.push(seat, rng.choice(list(game.legal_moves(seat))))
            if stop and stop(game):
                break
    return game


@pytest.fixture(scope="session")
def random_play() -> Callable[..., Game]:
    """:func:`play_random`, for tests in any module."""
    return play_random


#: A deterministic bot file for tournaments (same view, same answer), so that their results are
#: reproducible; ``STYLE`` picks the lowest card, the highest, or one chosen by a stable hash of
#: the view. It names the file it runs from on stderr (kept in the match logs).
FIXED_BOT_SOURCE = """
import sys
import zlib
from ohseven.sdk import Bot, run

STYLE = {style!r}
print("running", __file__, file=sys.stderr, flush=True)

class Fixed(Bot):
    name = "fixed-" + STYLE

    def pick(self, view, options):
        options = sorted(options, key=str)
        if STYLE == "low":
            return options[0]
        if STYLE == "high":
            return options[-1]
        key = "|".join(map(str, (sorted(view.hand), options, view.trump)))
        return options[zlib.crc32(key.encode()) % len(options)]

    def choose_pass(self, view, count):
        return sorted(view.legal, key=str)[:count]

    def choose_bid(self, view):
        return self.pick(view, view.legal)

    def choose_play(self, view):
        return self.pick(view, view.legal)

if __name__ == "__main__":
    run(Fixed)
"""
