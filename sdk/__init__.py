"""The Python SDK for ohseven bots: subclass :class:`Bot`, call :func:`run`.

See docs/BOTS.md for the bot author's guide and PROTOCOL.md for the wire protocol.
"""

from .bot import PROTOCOL_VERSION, Bot, BotAnswerError, Driver, local_game, local_match, run
from .simulate import (
    SampleError,
    estimate_tricks,
    evaluate_bids,
    evaluate_plays,
    greedy_play,
    playout,
    sample_hands,
)
from .view import OH_HELL, OH_SEVEN, SUITS, View, ViewError, card_key, deck_names, rank, suit

__all__ = [
    "Bot",
    "BotAnswerError",
    "Driver",
    "OH_HELL",
    "OH_SEVEN",
    "PROTOCOL_VERSION",
    "SUITS",
    "SampleError",
    "View",
    "ViewError",
    "card_key",
    "deck_names",
    "estimate_tricks",
    "evaluate_bids",
    "evaluate_plays",
    "greedy_play",
    "local_game",
    "local_match",
    "playout",
    "rank",
    "run",
    "sample_hands",
    "suit",
]
