"""Per-table and per-seat statistics of games, computed from the event log alone.

:func:`game_statistics` returns a JSON-ready dict; :func:`statistics_from_events` does the same
from a replay's events. Every rate comes with the raw counts it is made of, so a tournament can
sum counts over games with :func:`combine_statistics` and recompute the rates. A rate whose
denominator is 0 is 0.0. Only completed (scored) rounds count.

``table``:

- ``players``: seats at the table; ``games``: games summed (1 for one game);
- ``rounds``: scored rounds; ``bids``: accepted bids (one per seat and round; Oh-Seven forced
  re-bid attempts are not bids); ``null_bids``: accepted bids of 0; ``null_bid_rate`` =
  null_bids / bids;
- ``top_bid_sum``: sum over rounds of the top bid (Oh-Seven: the rank of the accepted top bid
  card; Oh Hell: the highest bid); ``average_top_bid`` = top_bid_sum / rounds;
- ``rebids``: Oh-Seven forced re-bid attempts; ``redeals``: Oh-Seven deals repeated after seven
  forced attempts (both 0 for Oh Hell);
- ``trump``: rounds per trump suit, keys ``"C" "D" "H" "S" "none"``; ``trump_rate``: the same
  divided by rounds.

``seats`` (a list indexed by seat):

- ``rounds``; ``points``: round points (bonus excluded); ``bonus_points``: Oh-Seven re-bid
  bonus points; ``total`` = points + bonus_points; ``points_per_round`` = total / rounds;
- ``zero_bids`` / ``zero_bid_rate``: own bid was 0;
- ``top_bids`` / ``top_bid_rate``: own bid was the top bid (Oh-Seven: the seat bid the accepted
  top card; Oh Hell: the bid equals the round's highest bid, so ties all count);
- ``fills`` / ``bid_fill_rate``: bid = tricks won; ``overflows`` / ``overflow_rate``: bid <
  tricks; ``underfills`` / ``underfill_rate``: bid > tricks (rates per round).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ohseven.core.names import SUITS
from ohseven.core.rules import OH_SEVEN, Game

__all__ = [
    "game_statistics",
    "statistics_from_events",
    "combine_statistics",
    "combine_seat_counts",
    "TRUMP_KEYS",
    "SEAT_COUNTS",
    "rate",
    "rate_or_zero",
    "rounded",
]

TRUMP_KEYS = (*SUITS, "none")
_TABLE_COUNTS = ("games", "rounds", "bids", "null_bids", "top_bid_sum", "rebids", "redeals")
#: the raw counts of a seat's statistics (the rest are rates of them)
SEAT_COUNTS = (
    "rounds",
    "points",
    "bonus_points",
    "total",
    "zero_bids",
    "top_bids",
    "fills",
    "overflows",
    "underfills",
)


def game_statistics(game: Game) -> dict[str, Any]:
    """Statistics of ``game`` (over or not) from its event log."""
    return statistics_from_events(game.rules.game, game.players, game.events)


def statistics_from_events(
    game: str, players: int, events: Iterable[Mapping[str, Any]]
) -> dict[str, Any]:
    """Statistics of one game of ``game`` with ``players`` seats from its ``events``."""
    table: dict[str, Any] = dict.fromkeys(_TABLE_COUNTS, 0)
    table["games"] = 1
    trump_counts = dict.fromkeys(TRUMP_KEYS, 0)
    seats = [dict.fromkeys(SEAT_COUNTS, 0) for _ in range(players)]
    seven = game == OH_SEVEN
    trump: str | None = None
    top_seat: int | None = None
    for event in events:
        kind = event["type"]
        if kind == "round" and not seven:
            trump = event["trump"]
        elif kind == "trump":
            trump, top_seat = event["suit"], event["leader"]
        elif kind == "bids" and seven:
            if event["forced"]:
                table["rebids"] += 1
            for seat in event["bonus"]:
                seats[seat]["bonus_points"] += 1
        elif kind == "redeal":
            table["redeals"] += 1
        elif kind == "score":
            bids: Sequence[int] = event["bids"]
            tricks: Sequence[int] = event["tricks"]
            top = bids[top_seat] if seven and top_seat is not None else max(bids)
            table["rounds"] += 1
            table["bids"] += players
            table["null_bids"] += sum(1 for bid in bids if bid == 0)
            table["top_bid_sum"] += top
            trump_counts[trump if trump is not None else "none"] += 1
            for seat, stats in enumerate(seats):
                bid, won = bids[seat], tricks[seat]
                stats["rounds"] += 1
                stats["points"] += event["points"][seat]
                stats["zero_bids"] += bid == 0
                stats["top_bids"] += (seat == top_seat) if seven else (bid == top)
                stats["fills"] += bid == won
                stats["overflows"] += bid < won
                stats["underfills"] += bid > won
            trump, top_seat = None, None
    for stats in seats:
        stats["total"] = stats["points"] + stats["bonus_points"]
    table["players"] = players
    table["trump"] = trump_counts
    return _with_rates({"game": game, "table": table, "seats": seats})


def rate_or_zero(part: float, whole: float) -> float:
    """``part / whole``, 0.0 when ``whole`` is 0: a game's statistics (their JSON has no
    nulls, and a game without scored rounds is rare)."""
    return part / whole if whole else 0.0


def rate(part: float, whole: float) -> float | None:
    """``part / whole``, None when ``whole`` is 0: what a leaderboard or a page shows (a bot
    without a game has no win rate, rather than one of 0)."""
    return part / whole if whole else None


def rounded(value: float | None, digits: int = 3) -> float | None:
    """``value`` rounded to ``digits``; None stays None, and so does NaN (JSON has no NaN)."""
    return None if value is None or math.isnan(value) else round(value, digits)


def _with_rates(stats: dict[str, Any]) -> dict[str, Any]:
    table = stats["table"]
    rounds = table["rounds"]
    table["null_bid_rate"] = rate_or_zero(table["null_bids"], table["bids"])
    table["average_top_bid"] = rate_or_zero(table["top_bid_sum"], rounds)
    table["trump_rate"] = {
        key: rate_or_zero(count, rounds) for key, count in table["trump"].items()
    }
    for seat in stats["seats"]:
        _seat_rates(seat)
    return stats


def _seat_rates(seat: dict[str, Any]) -> dict[str, Any]:
    n = seat["rounds"]
    seat["points_per_round"] = rate_or_zero(seat["total"], n)
    seat["zero_bid_rate"] = rate_or_zero(seat["zero_bids"], n)
    seat["top_bid_rate"] = rate_or_zero(seat["top_bids"], n)
    seat["bid_fill_rate"] = rate_or_zero(seat["fills"], n)
    seat["overflow_rate"] = rate_or_zero(seat["overflows"], n)
    seat["underfill_rate"] = rate_or_zero(seat["underfills"], n)
    return seat


def combine_statistics(many: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Sum the counts of several games' statistics (same game and players) and redo the rates.

    Seat ``s`` of the result sums seat ``s`` of every game; to aggregate per bot instead, pass
    that bot's per-seat dicts to :func:`combine_seat_counts`.
    """
    items = list(many)
    if not items:
        raise ValueError("no statistics to combine")
    game, players = items[0]["game"], items[0]["table"]["players"]
    for item in items:
        if item["game"] != game or item["table"]["players"] != players:
            raise ValueError(
                f"cannot combine {item['game']} with {item['table']['players']} players "
                f"into {game} with {players} players"
            )
    table: dict[str, Any] = {key: sum(i["table"][key] for i in items) for key in _TABLE_COUNTS}
    table["players"] = players
    table["trump"] = {key: sum(i["table"]["trump"][key] for i in items) for key in TRUMP_KEYS}
    seats = [combine_seat_counts(i["seats"][s] for i in items) for s in range(players)]
    return _with_rates({"game": game, "table": table, "seats": seats})


def combine_seat_counts(seats: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Sum several per-seat statistics (e.g. one bot's seats over many games) with rates."""
    total = dict.fromkeys(SEAT_COUNTS, 0)
    for seat in seats:
        for key in SEAT_COUNTS:
            total[key] += seat[key]
    return _seat_rates(total)
