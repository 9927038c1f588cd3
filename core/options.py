"""The games, their rule options and the rules core's exceptions."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

import attrs

from .names import OH_HELL, OH_SEVEN

GAMES = (OH_SEVEN, OH_HELL)

#: Oh-Seven card pass per round: (cards passed, +1 for left / -1 for right).
PASS_SCHEDULE = ((0, 0), (1, 1), (2, -1), (3, 1), (2, -1), (1, 1), (0, 0))
OH_SEVEN_ROUNDS = 7
OH_SEVEN_HAND = 7
OH_SEVEN_MAX_ATTEMPTS = 7
#: Oh Hell: number of hands (and the largest hand) by number of players.
OH_HELL_HANDS = {3: 15, 4: 13, 5: 10, 6: 8, 7: 7}
HAND_ORDERS = ("up", "down", "up-down", "down-up")


class Phase(enum.StrEnum):
    PASS = "pass"
    BID = "bid"
    PLAY = "play"
    OVER = "over"


# --------------------------------------------------------------------------- exceptions


class RulesError(Exception):
    """Base of every error the rules engine raises on purpose."""


class Described(Protocol):
    """What a move error reports of its game (a ``Game``, which imports this module)."""

    def describe(self) -> str: ...


class InvalidRulesError(RulesError, ValueError):
    """A game, option, option value or player count the rules do not allow."""


class IllegalMoveError(RulesError, ValueError):
    """A well-formed decision that the rules forbid in this state."""

    def __init__(self, message: str, *, seat: int, move: object, game: Described) -> None:
        super().__init__(f"seat {seat}: {message} [{game.describe()}]")
        self.seat = seat
        self.move = move
        self.state = game.describe()


class OutOfTurnError(IllegalMoveError):
    """A decision from a seat that does not owe one now."""


class MalformedMoveError(RulesError, TypeError):
    """A decision of the wrong type or shape for the decision asked for."""

    def __init__(self, message: str, *, seat: int, move: object, game: Described) -> None:
        super().__init__(f"seat {seat}: {message} [{game.describe()}]")
        self.seat = seat
        self.move = move
        self.state = game.describe()


# --------------------------------------------------------------------------- rules and options

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}

#: Oh Hell ``max_hand``: the largest hand played (0: every hand of the game)
MAX_HAND_RANGE = range(0, max(OH_HELL_HANDS.values()) + 1)

#: option -> (default, allowed values: strings, a range of integers, or None for a boolean),
#: per game.
OPTIONS: dict[str, dict[str, tuple[Any, tuple[str, ...] | range | None]]] = {
    OH_SEVEN: {
        "passing": (False, None),
        "identical_top_bonus": (True, None),
    },
    OH_HELL: {
        "hand_order": ("up", HAND_ORDERS),
        "hook": (False, None),
        "simultaneous_bids": (False, None),
        "must_trump": (False, None),
        "miss_scores_tricks": (False, None),
        "zero_bid_bonus": (False, None),
        "max_hand": (0, MAX_HAND_RANGE),
    },
}
PLAYER_RANGE = {OH_SEVEN: (2, 9), OH_HELL: (3, 7)}


def _coerce_option(game: str, key: str, value: object) -> object:
    default, allowed = OPTIONS[game][key]
    if allowed is None:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise InvalidRulesError(f"rule option {key}={value!r}: expected true or false")
    if isinstance(allowed, range):
        text = str(value).strip()
        if isinstance(value, bool) or not text.isdigit() or int(text) not in allowed:
            raise InvalidRulesError(
                f"rule option {key}={value!r}: expected an integer from {allowed.start} "
                f"to {allowed.stop - 1}"
            )
        return int(text)
    if value not in allowed:
        raise InvalidRulesError(
            f"rule option {key}={value!r}: expected one of {', '.join(allowed)}"
        )
    return value


@attrs.frozen
class Rules:
    """A game and its rule options, validated; every option is present with its value."""

    game: str
    options: tuple[tuple[str, object], ...]

    @classmethod
    def make(cls, game: str, options: Mapping[str, object] | Iterable[str] | None = None) -> Rules:
        """Validate ``options`` (a mapping, or ``KEY=VALUE`` strings) for ``game``."""
        if game not in OPTIONS:
            raise InvalidRulesError(f"unknown game {game!r}: expected one of {', '.join(GAMES)}")
        given: dict[str, object] = {}
        if options is not None:
            if isinstance(options, Mapping):
                given.update(options)
            else:
                for item in options:
                    key, sep, value = str(item).partition("=")
                    if not sep:
                        raise InvalidRulesError(f"rule {item!r}: expected KEY=VALUE")
                    given[key.strip()] = value.strip()
        known = OPTIONS[game]
        for key in given:
            if key not in known:
                raise InvalidRulesError(
                    f"unknown rule option {key!r} for {game}: expected one of {', '.join(known)}"
                )
        values: dict[str, object] = {key: default for key, (default, _) in known.items()}
        for key, raw in given.items():
            values[key] = _coerce_option(game, key, raw)
        if game == OH_HELL and values["hook"] and values["simultaneous_bids"]:
            raise InvalidRulesError(
                "rule options hook and simultaneous_bids cannot both be on: "
                "the hook restricts the last bidder, and simultaneous bids have none"
            )
        return cls(game, tuple(sorted(values.items())))

    def __getitem__(self, key: str) -> Any:
        for name, value in self.options:
            if name == key:
                return value
        raise KeyError(key)

    def as_dict(self) -> dict[str, object]:
        return dict(self.options)

    def check_players(self, players: int) -> None:
        low, high = PLAYER_RANGE[self.game]
        if not isinstance(players, int) or not low <= players <= high:
            raise InvalidRulesError(
                f"{self.game} is played by {low} to {high} players, not {players}"
            )


@attrs.frozen
class GameResult:
    """Final totals and ranks (1 is best; equal totals share a rank)."""

    totals: tuple[int, ...]
    ranks: tuple[int, ...]


def competition_ranks(totals: Sequence[int]) -> tuple[int, ...]:
    """Standard competition ranking of ``totals``, highest first: (10, 7, 10) -> (1, 3, 1)."""
    return tuple(1 + sum(1 for other in totals if other > total) for total in totals)
