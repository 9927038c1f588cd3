"""Names and numbers both sides share, with no dependencies (the SDK imports this at every
bot's start): the two games, the suit letters in their order, each deck's rank labels, and the
wire protocol's version, and the rule that takes a trick."""

from typing import TypeVar

#: a suit as the engine has it (an index into ``SUITS``) or as a bot's view has it (a letter)
_Suit = TypeVar("_Suit", int, str)

__all__ = [
    "OH_SEVEN",
    "OH_HELL",
    "SUITS",
    "OH_SEVEN_RANKS",
    "OH_HELL_RANKS",
    "RANKS",
    "PROTOCOL_VERSION",
    "trick_strength",
]

OH_SEVEN = "oh-seven"
OH_HELL = "oh-hell"
#: Clubs < Diamonds < Hearts < Spades: the order that breaks Oh-Seven bid ties
SUITS = "CDHS"
OH_SEVEN_RANKS = "01234567"
OH_HELL_RANKS = "23456789TJQKA"
#: each game's rank labels, lowest first
RANKS = {OH_SEVEN: OH_SEVEN_RANKS, OH_HELL: OH_HELL_RANKS}
#: the version of the wire protocol (PROTOCOL.md) a hello names and a welcome answers
PROTOCOL_VERSION = 1


def trick_strength(suit: _Suit, rank: int, led: _Suit, trump: _Suit | None) -> int:
    """The rule that takes a trick: a card's strength in a trick whose first card is of suit
    ``led``. The strongest card takes the trick, the first played of equal ones (the two
    copies of a card with two decks): a trump beats every other suit, the led suit every suit
    but trump, and within a suit the higher ``rank`` wins; a card of any other suit takes
    nothing. The engine's trick tables (``core.precomputed``) and the SDK's view both use it."""
    if suit == trump:
        return 200 + rank
    if suit == led:
        return 100 + rank
    return rank
