"""What each seat is told: the event that opens a game for it, and the engine's events it may
see (an event with a ``"to"`` key is private to that seat), handed out once each, in order.
The referee's matches, ``check-bot`` and the SDK's local games all feed their bots this way."""

from __future__ import annotations

from collections.abc import Sequence

from .game import Game
from .values import Event

__all__ = ["EventFeed", "game_event"]


def game_event(game: Game, index: int, seat: int) -> Event:
    """The ``game`` event that opens game ``index`` of a match for ``seat``."""
    return {
        "type": "game",
        "index": index,
        "game": game.rules.game,
        "rules": game.rules.as_dict(),
        "players": game.players,
        "seat": seat,
        "rounds": game.rounds,
    }


class EventFeed:
    """The events of ``game`` that ``seat`` may see, handed out once each, in order."""

    __slots__ = ("events", "seat", "cursor", "prefix")

    def __init__(self, game: Game, seat: int, prefix: Sequence[Event] = ()) -> None:
        self.events = game.events
        self.seat = seat
        self.cursor = 0
        self.prefix = list(prefix)

    def take(self) -> list[Event]:
        events = self.events
        end = len(events)
        out = self.prefix
        self.prefix = []
        seat = self.seat
        for i in range(self.cursor, end):
            event = events[i]
            to = event.get("to")
            if to is None:
                out.append(event)
            elif to == seat:
                out.append({k: v for k, v in event.items() if k != "to"})
        self.cursor = end
        return out
