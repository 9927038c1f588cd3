"""Shared test helpers: playing games out with uniformly random legal decisions."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from ohseven.referee.rules import Game, Phase


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
