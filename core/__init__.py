"""The rules core both sides share: cards, the rules engine of both games and the moves' wire
form. No I/O, no ZeroMQ: the referee (``ohseven.referee``) and the bot SDK (``ohseven.sdk``)
import it, and a bot needs nothing else of the referee's.

The names below are loaded on first use (PEP 562), so that ``ohseven.core.names``, which every
SDK bot imports as it starts, does not load the engine.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "Deck",
    "GAMES",
    "Game",
    "GameResult",
    "IllegalMoveError",
    "InvalidRulesError",
    "MalformedMoveError",
    "OH_HELL",
    "OH_HELL_DECK",
    "OH_SEVEN",
    "OH_SEVEN_DECK",
    "OhHellGame",
    "OhSevenGame",
    "OutOfTurnError",
    "Phase",
    "Rules",
    "RulesError",
    "UnknownCardError",
    "new_game",
]

_FROM_CARDS = {"Deck", "OH_HELL_DECK", "OH_SEVEN_DECK", "UnknownCardError"}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(".cards" if name in _FROM_CARDS else ".rules", __name__)
    return getattr(module, name)
