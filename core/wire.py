"""The wire form of moves: card names for cards, an int for an Oh Hell bid, a list of card
names for a pass. Both sides convert with these (the referee's protocol and replays, the SDK's
local games), so they are strict: a bool is not an int and a card name must name a card of the
deck."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from .cards import UnknownCardError
from .game import Game
from .names import OH_SEVEN
from .precomputed import BID, PASS
from .values import Move, WireChoice, WireMove

__all__ = [
    "WireMoveError",
    "legal_to_wire",
    "move_to_wire",
    "move_from_wire",
]


class WireMoveError(ValueError):
    """A move in wire form of the wrong type or shape for its kind."""

    def __init__(self, message: str, *, kind: str, value: object) -> None:
        super().__init__(message)
        self.kind = kind
        self.value = value


def legal_to_wire(game: Game, seat: int) -> tuple[list[WireChoice], int]:
    """The ``legal`` list and ``count`` of a request to ``seat`` now: the whole hand and the
    number of cards to pass, or the legal bids or plays and 0."""
    phase = game.phase
    names = game.deck.names
    if phase is PASS:
        return [names[c] for c in game.hands[seat]], game.pass_count()
    # a bid or a play: a card, or an Oh Hell bid
    legal = cast(Sequence[int], game.legal_moves(seat))
    if phase is BID and game.rules.game != OH_SEVEN:
        return list(legal), 0
    return [names[c] for c in legal], 0


def move_to_wire(game: Game, kind: str, move: Move) -> WireMove:
    """``move`` (engine ints) of ``kind`` in ``game`` as its wire form (card names)."""
    names = game.deck.names
    if kind == "pass":
        if isinstance(move, int):
            raise WireMoveError(
                f"a pass is a sequence of cards, not {move!r}", kind=kind, value=move
            )
        return [names[card] for card in move]
    if kind not in ("play", "bid"):
        raise WireMoveError(f"unknown move kind {kind!r}", kind=kind, value=move)
    if type(move) is not int:
        raise WireMoveError(f"a {kind} is an int, not {move!r}", kind=kind, value=move)
    if kind == "play" or game.rules.game == OH_SEVEN:
        return names[move]
    return move


def _card(game: Game, kind: str, value: object) -> int:
    if type(value) is not str:
        raise WireMoveError(
            f"a {kind} must be a card name like {game.deck.names[-1]!r}, not {value!r}",
            kind=kind,
            value=value,
        )
    card = game.deck.index.get(value)
    if card is None:
        raise UnknownCardError(value, game.deck)
    return card


def move_from_wire(game: Game, kind: str, value: object) -> Move:
    """The engine form of a wire ``value`` of ``kind``.

    Raises :class:`WireMoveError` for a value of the wrong type or shape and
    :class:`~ohseven.core.cards.UnknownCardError` for a string that is not a card of the deck
    (both are ``ValueError``). Legality is the engine's business, not checked here.
    """
    if kind == "play":
        return _card(game, kind, value)
    if kind == "bid":
        if game.rules.game == OH_SEVEN:
            return _card(game, kind, value)
        if type(value) is not int:
            raise WireMoveError(
                f"an Oh Hell bid must be an integer number of tricks, not {value!r}",
                kind=kind,
                value=value,
            )
        return value
    if kind == "pass":
        if type(value) is not list and type(value) is not tuple:
            raise WireMoveError(
                f"a pass must be a list of card names, not {value!r}", kind=kind, value=value
            )
        return tuple(_card(game, kind, item) for item in value)
    raise WireMoveError(f"unknown move kind {kind!r}", kind=kind, value=value)
