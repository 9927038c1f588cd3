"""The authoritative rules engine for Oh-Seven and Oh Hell.

No I/O happens here. A :class:`Game` is a deterministic function of its rules, options,
number of players, seed and the players' decisions. It asks for one decision at a time, or one
simultaneous set (Oh-Seven passes and bids, Oh Hell ``simultaneous_bids``): :attr:`Game.to_act`
names the seats that owe a decision, :meth:`Game.legal_moves` lists what each may choose and
:meth:`Game.push` applies one. A bad decision raises a precise exception and changes nothing.

Moves are small ints: a card for an Oh-Seven bid and for every play, a number of tricks for an
Oh Hell bid, and a tuple of cards for a pass. Every step is recorded in :attr:`Game.events`;
an event with a ``"to"`` key is private to that seat, every other event is public.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .game import Game
from .names import OH_HELL, OH_SEVEN
from .oh_hell import OhHellGame, oh_hell_hand_sizes
from .oh_seven import OhSevenGame
from .options import (
    GAMES,
    HAND_ORDERS,
    OH_HELL_HANDS,
    OH_SEVEN_HAND,
    OH_SEVEN_ROUNDS,
    OPTIONS,
    PASS_SCHEDULE,
    PLAYER_RANGE,
    GameResult,
    IllegalMoveError,
    InvalidRulesError,
    MalformedMoveError,
    OutOfTurnError,
    Phase,
    Rules,
    RulesError,
    competition_ranks,
)
from .positions import InvalidPositionError, position_game

__all__ = [
    "OH_SEVEN",
    "OH_HELL",
    "GAMES",
    "Phase",
    "Rules",
    "Game",
    "OhSevenGame",
    "OhHellGame",
    "GameResult",
    "new_game",
    "competition_ranks",
    "RulesError",
    "InvalidRulesError",
    "IllegalMoveError",
    "OutOfTurnError",
    "MalformedMoveError",
    "PASS_SCHEDULE",
    "OH_HELL_HANDS",
    "OH_SEVEN_HAND",
    "OH_SEVEN_ROUNDS",
    "HAND_ORDERS",
    "OPTIONS",
    "PLAYER_RANGE",
    "oh_hell_hand_sizes",
    "InvalidPositionError",
    "position_game",
]


def new_game(
    game: str | Rules,
    players: int,
    seed: int,
    options: Mapping[str, object] | Iterable[str] | None = None,
    **table: Any,
) -> Game:
    """Start a game of ``game`` (a name or validated :class:`Rules`)."""
    rules = game if isinstance(game, Rules) else Rules.make(game, options)
    cls = OhSevenGame if rules.game == OH_SEVEN else OhHellGame
    return cls(players, seed, rules, **table)
