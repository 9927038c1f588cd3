"""The journal: a game's moves and events, built only when read.

Its names are the engine's own (``game``, ``oh_seven`` and ``oh_hell`` record with them), not the
package's API: the record makers ``rec_*``, ``play_event``, ``trick_event``, ``seat_of_record``,
``EagerLog`` and the types ``JournalRecord``, ``MoveList``, ``EventList``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .names import SUITS
from .options import competition_ranks
from .values import Event, MoveRecord

# -- the journal: moves and events, built only when read
#
# The hot path records compact ``(maker, ...)`` tuples in ``Game._log``, and nothing at all
# for a play: the record of a complete trick stands for its plays. ``maker(record, names,
# moves, events)`` appends a record's moves and event dicts to the two lists. Nothing is built
# until ``Game.moves`` or ``Game.events`` is first read; from then on every record is built at
# once (``EagerLog``) and every play is appended as it happens, so a list obtained from either
# is always up to date. A record holds only values that never change afterwards (copies, or
# lists the game has stopped using).

#: a record: ``(maker, ...)``
JournalRecord = tuple[Any, ...]
#: the moves and the events a record's maker appends to
MoveList = list[MoveRecord]
EventList = list[Event]


def play_event(names: Sequence[str], seat: int, card: int) -> Event:
    """The ``play`` event of ``seat`` playing ``card``."""
    return {"type": "play", "seat": seat, "card": names[card]}


def trick_event(names: Sequence[str], leader: int, trick: list[int], winner: int) -> Event:
    return {"type": "trick", "leader": leader, "cards": [names[c] for c in trick], "winner": winner}


def rec_event(
    record: JournalRecord, names: Sequence[str], moves: MoveList, events: EventList
) -> None:
    """``(rec_event, event)``: an event already a dict."""
    events.append(record[1])


def rec_decision(
    record: JournalRecord, names: Sequence[str], moves: MoveList, events: EventList
) -> None:
    """``(rec_decision, seat, kind, move)``: a decision other than a play; its events follow."""
    moves.append(record[1:])


def rec_trick(
    record: JournalRecord, names: Sequence[str], moves: MoveList, events: EventList
) -> None:
    """``(rec_trick, leader, trick, winner, recorded)``: a complete trick, and the plays to it
    from ``trick[recorded]`` on (the earlier ones were recorded as they happened)."""
    _, leader, trick, winner, recorded = record
    n = len(trick)
    for i in range(recorded, n):
        seat = (leader + i) % n
        moves.append((seat, "play", trick[i]))
        events.append(play_event(names, seat, trick[i]))
    events.append(trick_event(names, leader, trick, winner))


def rec_deal(
    record: JournalRecord, names: Sequence[str], moves: MoveList, events: EventList
) -> None:
    """``(rec_deal, round_event, hands)``: a ``round`` event and a private ``deal`` per seat."""
    _, round_event, hands = record
    events.append(round_event)
    for seat, hand in enumerate(hands):
        events.append({"type": "deal", "to": seat, "hand": [names[c] for c in hand]})


def rec_hell_deal(
    record: JournalRecord, names: Sequence[str], moves: MoveList, events: EventList
) -> None:
    """``(rec_hell_deal, round, hand_size, dealer, trump_card, deck, first, players)``: an Oh
    Hell deal, from the dealt deck as ``OhHellGame._deal`` reads it."""
    _, number, size, dealer, trump_card, deck, first, n = record
    round_event = {
        "type": "round",
        "round": number,
        "hand_size": size,
        "dealer": dealer,
        "trump_card": None if trump_card is None else names[trump_card],
        "trump": None if trump_card is None else SUITS[trump_card // (len(names) // 4)],
    }
    hands = [sorted(deck[(s - first) % n : size * n : n]) for s in range(n)]
    rec_deal((rec_deal, round_event, hands), names, moves, events)


def rec_hell_bid(
    record: JournalRecord, names: Sequence[str], moves: MoveList, events: EventList
) -> None:
    """``(rec_hell_bid, seat, bid)``: an Oh Hell bid in turn."""
    _, seat, bid = record
    moves.append((seat, "bid", bid))
    events.append({"type": "bid", "seat": seat, "bid": bid})


def rec_hell_score(
    record: JournalRecord, names: Sequence[str], moves: MoveList, events: EventList
) -> None:
    """``(rec_hell_score, round, bids, tricks, points, totals)``."""
    _, number, bids, tricks, points, totals = record
    events.append(
        {
            "type": "score",
            "round": number,
            "bids": list(bids),
            "tricks": list(tricks),
            "points": list(points),
            "totals": list(totals),
        }
    )


def rec_game_over(
    record: JournalRecord, names: Sequence[str], moves: MoveList, events: EventList
) -> None:
    """``(rec_game_over, totals)``."""
    totals = record[1]
    events.append(
        {"type": "game_over", "totals": list(totals), "ranks": list(competition_ranks(totals))}
    )


def seat_of_record(record: JournalRecord) -> int:
    seat: int = record[1]
    return seat


class EagerLog:
    """The log once the moves or events have been read: each record is built at once."""

    __slots__ = ("moves", "events", "names")

    def __init__(self, moves: MoveList, events: EventList, names: Sequence[str]) -> None:
        self.moves = moves
        self.events = events
        self.names = names

    def append(self, record: JournalRecord) -> None:
        record[0](record, self.names, self.moves, self.events)

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is EagerLog
            and self.moves == other.moves
            and self.events == other.events
            and self.names == other.names
        )

    __hash__ = None  # type: ignore[assignment]
