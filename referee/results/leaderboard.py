"""The leaderboard document: each bot's row (:func:`bot_rows`), ``leaderboard.json``
(:func:`leaderboard`), and its CSV and Markdown tables. Deterministic: a function of the
finished games only. The schema is in ``docs/LEADERBOARD.md``."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ohseven.referee.plan.stopping import verdicts
from ohseven.referee.records import FaultStatus, GameRecord
from ohseven.referee.results import uncertainty
from ohseven.referee.results.archive import Tournament, new_ratings, rated_records, unique_slugs
from ohseven.referee.results.ratings import (
    DRAW_PROBABILITY,
    BotRating,
    Ratings,
    make_env,
    order_free_table,
)
from ohseven.referee.results.store import BotAggregate, aggregate
from ohseven.referee.stats import SEAT_COUNTS, combine_seat_counts, rate, rounded

__all__ = [
    "CSV_COLUMNS",
    "LEADERBOARD_FORMAT",
    "LEADERBOARD_VERSION",
    "RATE_KEYS",
    "SUPERIORITY_BOTS",
    "bot_rows",
    "bot_statistics",
    "leaderboard",
    "leaderboard_csv",
    "leaderboard_markdown",
    "order_free_estimate",
    "progress",
    "REFUSED_STATUS",
    "public_refusals",
    "statistics_of",
]


LEADERBOARD_FORMAT = "ohseven-leaderboard"


LEADERBOARD_VERSION = 3


def bot_rows(
    tournament: Tournament,
    ratings: Ratings | None = None,
    aggregates: Mapping[str, BotAggregate] | None = None,
    table: Sequence[BotRating] | None = None,
    intervals: Mapping[str, tuple[float, float] | None] | None = None,
) -> list[dict[str, Any]]:
    """The ranking: one row per bot, best conservative score (mu - 3 sigma) of the order-free
    TrueSkill estimate (``ratings.order_free``) first, with its uncertainty.

    ``ratings`` are the sequential ratings after every game in canonical order (computed here
    when not given), published as ``sequential_mu``/``sequential_sigma``. The fields are those
    of ``board.Leaderboard`` plus ``slug``, ``average_rank``, ``faults_total`` and
    ``fault_counts`` (every status, zeros included); see ``docs/LEADERBOARD.md``."""
    if ratings is None:
        ratings = new_ratings(tournament)
        for stored in tournament.games:
            ratings.apply(stored.record)
    records = tournament.records
    if table is None:
        table = order_free_estimate(tournament)
    order = [row.name for row in table]
    # adjacent pairs only (superiority_next): the full matrix is n^2; a tier checks its own
    skills = {row.name: (row.mu, row.sigma) for row in table}
    los = uncertainty.superiority_next(skills, order)
    tier_of = dict(zip(order, uncertainty.tiers(order, skills), strict=True))
    # a tier is a run of consecutive ranks: its first and last (1-based)
    spans: dict[int, list[int]] = {}
    for position, name in enumerate(order, start=1):
        spans.setdefault(tier_of[name], [position, position])[1] = position
    if intervals is None:
        intervals = uncertainty.points_intervals(records, tournament.bots)
    prior_sigma = make_env(tournament.game, tournament.draw_probability).sigma
    if aggregates is None:
        aggregates = aggregate(rated_records(records, tournament.fault_ranks_last), tournament.bots)
    statistics = statistics_of(aggregates)
    slugs = unique_slugs(tournament.bots)
    rows = []
    for position, rating in enumerate(table, start=1):
        sequential = ratings.ratings[rating.name]
        below = table[position] if position < len(table) else None
        tier = tier_of[rating.name]
        interval = intervals.get(rating.name)
        agg = aggregates[rating.name]
        stats = statistics.get(rating.name) or dict.fromkeys(RATE_KEYS)
        faults = dict(agg.faults)
        rank_sum = sum(rank * count for rank, count in agg.ranks)
        rows.append(
            {
                "rank": position,
                "name": rating.name,
                "slug": slugs[rating.name],
                "mu": round(rating.mu, 6),
                "sigma": round(rating.sigma, 6),
                "score": round(rating.score, 6),
                "tier": tier,
                "place": ("=" if spans[tier][0] < spans[tier][1] else "") + str(spans[tier][0]),
                "tied_from": spans[tier][0],
                "tied_to": spans[tier][1],
                "superiority_next": None
                if below is None
                else round(los[rating.name][below.name], 6),
                "games_to_separate": None
                if below is None
                else uncertainty.games_to_separate(
                    (rating.mu, rating.sigma, rating.games),
                    (below.mu, below.sigma, below.games),
                    prior_sigma,
                ),
                "sequential_mu": round(sequential.mu, 6),
                "sequential_sigma": round(sequential.sigma, 6),
                "games": agg.games,
                "points": agg.points,
                "points_per_game": rounded(agg.points_per_game, 4),
                "points_per_game_ci": None
                if interval is None
                else [round(interval[0], 4), round(interval[1], 4)],
                "points_per_round": rounded(stats["points_per_round"], 4),
                "wins": agg.wins,
                "win_rate": rounded(rate(agg.wins, agg.games), 4),
                "average_rank": rounded(rate(rank_sum, agg.games), 4),
                "ranks": {str(rank): count for rank, count in agg.ranks},
                "faults": faults,
                "faults_total": sum(faults.values()),
                "fault_counts": {
                    status.value: faults.get(status.value, 0) for status in FaultStatus
                },
                "faulted_games": agg.faulted_games,
                **{key: rounded(stats[key], 4) for key in RATE_KEYS[1:]},
            }
        )
    return rows


def order_free_estimate(tournament: Tournament) -> list[BotRating]:
    return order_free_table(
        tournament.records,
        tournament.bots,
        game=tournament.game,
        draw_probability=tournament.draw_probability,
        fault_ranks_last=tournament.fault_ranks_last,
    )


def progress(tournament: Tournament, played: int | None = None) -> dict[str, Any]:
    """How far the tournament is: games and matches finished of those scheduled (``played``:
    the games finished, when ``tournament.games`` does not hold them)."""
    if played is None:
        played = len(tournament.games)
    total = tournament.games_total
    return {
        "games_played": played,
        "games_total": total,
        "matches_done": tournament.matches_done,
        "matches_total": tournament.matches_total,
        "fraction": rounded(rate(played, total), 4),
        "complete": bool(total) and played == total,
    }


def leaderboard(
    tournament: Tournament,
    ratings: Ratings | None = None,
    aggregates: Mapping[str, BotAggregate] | None = None,
    table: Sequence[BotRating] | None = None,
    intervals: Mapping[str, tuple[float, float] | None] | None = None,
    played: int | None = None,
) -> dict[str, Any]:
    """The content of ``leaderboard.json`` (schema: ``docs/LEADERBOARD.md``): deterministic,
    a function of the finished games only (no clock). ``ratings`` (the sequential ones),
    ``aggregates`` (``store.aggregate`` of :func:`rated_records`) and ``table`` (the
    order-free ``ratings.order_free_table``) when the caller has them; also ``intervals``
    (``uncertainty.points_intervals``) and ``played`` (the games finished): a caller that
    keeps all of these up to date (``incremental.LiveBoard``) passes a ``tournament`` without
    its games."""
    done = progress(tournament, played)
    rows = bot_rows(tournament, ratings, aggregates, table, intervals)
    document = {
        "format": LEADERBOARD_FORMAT,
        "version": LEADERBOARD_VERSION,
        "tournament": tournament.name,
        "game": tournament.game,
        "rules": dict(tournament.config.get("rules") or {}),
        "seed": tournament.seed,
        "secret": tournament.secret,
        "config_digest": tournament.digest,
        "games_played": done["games_played"],
        "games_total": done["games_total"],
        "matches_done": done["matches_done"],
        "matches_total": done["matches_total"],
        "complete": done["complete"],
        "rating": "trueskill, order-free (expectation propagation over all games), "
        "score = mu - 3 sigma",
        "confidence": uncertainty.CONFIDENCE,
        "settled": uncertainty.SETTLED,
        "draw_probability": (
            tournament.draw_probability
            if tournament.draw_probability is not None
            else DRAW_PROBABILITY.get(tournament.game)
        ),
        "fault_ranks_last": tournament.fault_ranks_last,
        "bots": _with_verdicts(tournament, rows),
        "superiority": _superiority_matrix(rows),
        "stopping": None if tournament.stopping is None else tournament.stopping.document(),
    }
    if tournament.refused:  # a league's bots left out because they could not start
        document["refused"] = [{"name": name, "reason": why} for name, why in tournament.refused]
    return document


def _with_verdicts(tournament: Tournament, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row with its ``sprt``: a candidate's stopping verdict, else null."""
    plan = tournament.stopping
    if plan is None:
        for row in rows:
            row["sprt"] = None
        return rows
    games = ((stored.canonical_index, stored.record) for stored in tournament.games)
    found = verdicts(plan, games)
    for row in rows:
        verdict = found.get(row["name"])
        row["sprt"] = None if verdict is None else verdict.document(plan)
    return rows


#: the bots (the best) in the superiority matrix of leaderboard.json: every pair of 1,000 bots
#: would be a million cells
SUPERIORITY_BOTS = 100


def _superiority_matrix(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """P(row bot's skill > column bot's) from the published mu and sigma, 6 decimals; for each
    pair the upper bot's value is rounded and the lower's is 1 minus it. The best
    :data:`SUPERIORITY_BOTS` bots only."""
    rows = rows[:SUPERIORITY_BOTS]
    table = uncertainty.superiority(
        {row["name"]: (row["mu"], row["sigma"]) for row in rows}, [row["name"] for row in rows]
    )
    names = [row["name"] for row in rows]
    matrix: dict[str, dict[str, float]] = {name: {} for name in names}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            p = round(table[a][b], 6)
            matrix[a][b] = p
            matrix[b][a] = round(1.0 - p, 6)
    return matrix


#: The columns of ``leaderboard.csv`` and ``leaderboard.md``, in order: (key, heading).
CSV_COLUMNS = (
    ("rank", "rank"),
    ("name", "bot"),
    ("score", "score"),
    ("mu", "mu"),
    ("sigma", "sigma"),
    ("place", "place"),
    ("superiority_next", "P(> next)"),
    ("games_to_separate", "games to separate"),
    ("games", "games"),
    ("points_per_game", "points/game"),
    ("points_per_game_low", "points/game low"),
    ("points_per_game_high", "points/game high"),
    ("wins", "wins"),
    ("win_rate", "win rate"),
    ("average_rank", "average rank"),
    ("faults_total", "faults"),
)


def _flat(row: Mapping[str, Any]) -> dict[str, Any]:
    """A bot's row with its points-per-game interval as two cells."""
    interval = row.get("points_per_game_ci")
    return {
        **row,
        "points_per_game_low": None if interval is None else interval[0],
        "points_per_game_high": None if interval is None else interval[1],
    }


def leaderboard_csv(board: Mapping[str, Any]) -> str:
    """``leaderboard.csv``: a header row of :data:`CSV_COLUMNS` keys, one row per bot."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([key for key, _ in CSV_COLUMNS])
    for row in board["bots"]:
        cells = _flat(row)
        writer.writerow(["" if cells[key] is None else cells[key] for key, _ in CSV_COLUMNS])
    return out.getvalue()


def _md_cell(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value).replace("|", "\\|")


def _seed_note(board: Mapping[str, Any]) -> str:
    if board.get("seed") is not None:
        return f", seed {board['seed']}"
    return f", secret {board['secret']}" if board.get("secret") else ""


def leaderboard_markdown(board: Mapping[str, Any]) -> str:
    """``leaderboard.md``: a title, the progress line and a table of :data:`CSV_COLUMNS`."""
    lines = [
        f"# {board['tournament']}",
        "",
        f"{board['game']}{_seed_note(board)}: {board['games_played']} of "
        f"{board['games_total']} games played{' (complete)' if board['complete'] else ''}. "
        "Ranked by the order-free TrueSkill score mu - 3 sigma; bots whose order is not "
        f"settled (P(> next) below {board.get('settled', uncertainty.SETTLED)}) share a "
        "place marked `=`.",
        "",
        "| " + " | ".join(heading for _, heading in CSV_COLUMNS) + " |",
        "|" + "|".join("---" if key == "name" else "---:" for key, _ in CSV_COLUMNS) + "|",
    ]
    for row in board["bots"]:
        cells = _flat(row)
        lines.append("| " + " | ".join(_md_cell(cells[key]) for key, _ in CSV_COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def _seat_stats(record: GameRecord, seat: int) -> Mapping[str, Any] | None:
    stats = record.stats if isinstance(record.stats, Mapping) else {}
    seats = stats.get("seats")
    if isinstance(seats, list) and seat < len(seats) and isinstance(seats[seat], Mapping):
        return seats[seat]
    return None


RATE_KEYS = (
    "points_per_round",
    "zero_bid_rate",
    "top_bid_rate",
    "bid_fill_rate",
    "overflow_rate",
    "underfill_rate",
)


def bot_statistics(records: Iterable[GameRecord]) -> dict[str, dict[str, Any]]:
    """The Board Game Arena statistics of every bot over ``records``: its per-seat counts (see
    ``stats.py``) summed over every seat it held, with the rates per round (``None`` without
    any scored round)."""
    seats: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        for seat, bot in enumerate(record.seats):
            counts = _seat_stats(record, seat)
            if counts is not None:
                seats[bot].append(counts)
    result = {}
    for bot, items in seats.items():
        combined = combine_seat_counts(items)
        if not combined["rounds"]:
            combined.update(dict.fromkeys(RATE_KEYS))
        result[bot] = combined
    return result


def statistics_of(aggregates: Mapping[str, BotAggregate]) -> dict[str, dict[str, Any]]:
    """:func:`bot_statistics` from the bots' aggregates (whose ``counts`` sum the same per-seat
    counts), without a second pass over the games."""
    result = {}
    for name, agg in aggregates.items():
        if not agg.counts:
            continue
        counts = dict(agg.counts)
        combined = combine_seat_counts([{key: counts.get(key, 0) for key in SEAT_COUNTS}])
        if not combined["rounds"]:
            combined.update(dict.fromkeys(RATE_KEYS))
        result[name] = combined
    return result


#: all that the public reads of why a league's bot was left out (a fault status: it could not
#: start). The reason itself (``feeds.LeagueFeed.refused``, the document's ``refused``) is for
#: the bot's author and the organiser only: it may name host paths (the sandbox's hint names the
#: bot's folder and what is hidden above it) and carry text the bot chose.
REFUSED_STATUS = FaultStatus.NO_START.value


def public_refusals(refused: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """A leaderboard's ``refused`` entries as the public reads them (the served and published
    leaderboards): the bot and :data:`REFUSED_STATUS`, never the reason."""
    return [{"name": str(entry.get("name")), "status": REFUSED_STATUS} for entry in refused]
