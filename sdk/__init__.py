"""The Python SDK for ohseven bots: subclass :class:`Bot`, call :func:`run`.

See docs/BOTS.md for the bot author's guide and PROTOCOL.md for the wire protocol.
"""

from typing import Any

from .bot import PROTOCOL_VERSION, Bot, BotAnswerError, Driver, run
from .view import OH_HELL, OH_SEVEN, SUITS, View, ViewError, card_key, deck_names, rank, suit

#: the Monte Carlo helpers, imported on first use: they load the referee's rules engine, which
#: a bot that does not simulate should not pay for at every start
_SIMULATE = (
    "SampleError",
    "estimate_tricks",
    "evaluate_bids",
    "evaluate_plays",
    "greedy_play",
    "playout",
    "sample_hands",
)


#: the in-process games, imported on first use for the same reason
_LOCAL = ("local_game", "local_match")
#: the learning interface, imported on first use: an ordinary bot does not pay for it
_POLICY = ("PolicyBot", "Policy")


def __getattr__(name: str) -> Any:  # PEP 562
    if name in _SIMULATE:
        from . import simulate

        return getattr(simulate, name)
    if name in _LOCAL:
        from . import local

        return getattr(local, name)
    if name in _POLICY:
        from . import policy

        return getattr(policy, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Bot",
    "BotAnswerError",
    "Driver",
    "OH_HELL",
    "OH_SEVEN",
    "PROTOCOL_VERSION",
    "Policy",
    "PolicyBot",
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
