"""The rules core both sides share: cards, the rules engine of both games and the moves' wire
form. No I/O, no ZeroMQ: the referee (``ohseven.referee``) and the bot SDK (``ohseven.sdk``)
import it, and a bot needs nothing else of the referee's."""

from .cards import OH_HELL_DECK, OH_SEVEN_DECK, Deck, UnknownCardError
from .rules import (
    GAMES,
    OH_HELL,
    OH_SEVEN,
    Game,
    GameResult,
    IllegalMoveError,
    InvalidRulesError,
    MalformedMoveError,
    OhHellGame,
    OhSevenGame,
    OutOfTurnError,
    Phase,
    Rules,
    RulesError,
    new_game,
)

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
