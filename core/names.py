"""Names and numbers both sides share, with no dependencies (the SDK imports this at every
bot's start): the two games, the suit letters in their order, each deck's rank labels, and the
wire protocol's version."""

__all__ = [
    "OH_SEVEN",
    "OH_HELL",
    "SUITS",
    "OH_SEVEN_RANKS",
    "OH_HELL_RANKS",
    "RANKS",
    "PROTOCOL_VERSION",
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
