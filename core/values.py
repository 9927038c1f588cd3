"""The domain's values as types: what a card, a move and an event are, in the engine and on
the wire. Aliases only, no dependencies (the SDK imports this as a bot starts)."""

from __future__ import annotations

from typing import Any, TypeAlias

__all__ = ["Card", "Bid", "Pass", "Move", "MoveRecord", "WireMove", "WireChoice", "Event"]

#: a card in the engine: ``suit * deck.ranks + rank`` (``core.cards``)
Card: TypeAlias = int
#: an Oh Hell bid: a number of tricks (an Oh-Seven bid is a :data:`Card`)
Bid: TypeAlias = int
#: a pass in the engine: the cards given
Pass: TypeAlias = tuple[int, ...]
#: a move in the engine: a card played or bid (Oh-Seven), an Oh Hell bid, a pass
Move: TypeAlias = int | tuple[int, ...]
#: a move of a game's record: ``(seat, kind, move)``, the kind a phase's name
MoveRecord: TypeAlias = tuple[int, str, Move]
#: a move on the wire and in replays: a card name, an Oh Hell bid, a list of card names
WireMove: TypeAlias = str | int | list[str]
#: one item of a request's legal list: a card name, or an Oh Hell bid
WireChoice: TypeAlias = str | int
#: an event of a game's log, as the seats' feeds and the replays carry it (JSON-like values)
Event: TypeAlias = dict[str, Any]
