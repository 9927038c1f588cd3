"""What the site's pages show beside the leaderboard, as plain data: every bot's rating over
the games (:func:`rating_history`, kept from one publish to the next for the games that can no
longer change), head-to-head, table statistics, the games tables' rows and pages, and a bot's
page (:func:`bot_view`). Pure functions of records and replays' outcomes."""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import trueskill
from ohseven.referee.fault_report import FaultSite, group_faults, public_paths, where
from ohseven.referee.records import FaultStatus, GameRecord
from ohseven.referee.results.archive import Tournament, game_id, new_ratings, rated_records, slugify
from ohseven.referee.results.leaderboard import RATE_KEYS, bot_statistics
from ohseven.referee.results.ratings import Ratings
from ohseven.referee.results.store import BotAggregate, StoredGame, aggregate
from ohseven.referee.stats import rate, rounded

__all__ = [
    "GAMES_PER_PAGE",
    "bid_tricks",
    "bot_view",
    "config_items",
    "format_number",
    "format_percent",
    "game_pages",
    "game_rows",
    "head_to_head",
    "rating_history",
    "rating_history_data",
    "ratings_from_data",
    "table_statistics",
]


#: the first occurrences of a kind of fault listed on a bot's page (each a link to its step)
FAULTS_LISTED = 5
#: the matches whose end of the bot's output is shown on its page (the first it faulted in)
LOGS_LISTED = 3
SUIT_ORDER = "SHDC"  # as the rules list them, strongest first


def rating_history(
    tournament: Tournament, max_points: int = 400
) -> tuple[Ratings, dict[str, list[list[float]]]]:
    """Every bot's rating over the games, replayed in canonical order.

    Returns the final ratings and, per bot, points ``[game number, mu, sigma]``: one at 0 (the
    prior) and one after each game the bot played (game numbers count finished games, 1-based),
    thinned to at most ``max_points`` (the last point is always kept).
    """
    ratings, history, _ = _rating_history(tournament, None)
    for name, points in history.items():
        history[name] = _thin(points, max_points)
    return ratings, history


def _prefix_key(tournament: Tournament, games: int) -> str:
    """What the ratings after the first ``games`` games depend on, hashed."""
    digest = hashlib.sha256()
    digest.update(
        json.dumps(
            [tournament.game, tournament.draw_probability, tournament.fault_ranks_last]
        ).encode()
    )
    for stored in tournament.games[:games]:
        record = stored.record
        faulted = sorted({fault.seat for fault in record.faults})
        digest.update(repr((stored.canonical_index, record.seats, record.ranks, faulted)).encode())
    return digest.hexdigest()


def _rating_history(
    tournament: Tournament, cache: Mapping[str, Any] | None
) -> tuple[Ratings, dict[str, list[list[float]]], dict[str, Any]]:
    """(ratings, unthinned history, the cache of the settled prefix): the TrueSkill replay of
    :func:`rating_history`, resumed from ``cache`` (the ratings after the games that can no
    longer change, :attr:`Tournament.settled`) when it still holds for these games."""
    ratings = new_ratings(tournament)
    history: dict[str, list[list[float]]] = {}
    for name in tournament.bots:
        rating = ratings.ratings[name]
        history[name] = [[0, round(rating.mu, 3), round(rating.sigma, 3)]]
    start = 0
    if cache:
        prefix = int(cache.get("prefix", 0))
        names = set(cache.get("ratings", {}))
        if (
            0 < prefix <= tournament.settled
            and names <= set(ratings.ratings)
            and cache.get("key") == _prefix_key(tournament, prefix)
        ):
            for name, (pi, tau, games) in cache["ratings"].items():
                rating = trueskill.Rating.__new__(trueskill.Rating)
                rating.pi, rating.tau = pi, tau
                ratings.ratings[name] = rating
                ratings.games[name] = games
                history[name] = [list(point) for point in cache["history"][name]]
            start = prefix
    saved: dict[str, Any] = dict(cache) if start and cache else {}
    games = tournament.games
    for number in range(start + 1, len(games) + 1):
        if number - 1 == tournament.settled and number - 1 > start:
            saved = _snapshot(tournament, ratings, history, number - 1)
        stored = games[number - 1]
        ratings.apply(stored.record)
        for name in stored.record.seats:
            rating = ratings.ratings[name]
            history[name].append([number, round(rating.mu, 3), round(rating.sigma, 3)])
    if tournament.settled == len(games) and len(games) > start:
        saved = _snapshot(tournament, ratings, history, len(games))
    return ratings, history, saved


def rating_history_data(
    tournament: Tournament, cache: Mapping[str, Any] | None
) -> tuple[dict[str, list[float]], dict[str, list[list[float]]], dict[str, Any]]:
    """:func:`_rating_history` as plain data: the ratings as ``[pi, tau, games]`` per bot, the
    history thinned for the page, and the cache to save."""
    ratings, history, saved = _rating_history(tournament, cache)
    values = {
        name: [rating.pi, rating.tau, ratings.games[name]]
        for name, rating in ratings.ratings.items()
    }
    return values, {name: _thin(points, 400) for name, points in history.items()}, saved


def ratings_from_data(
    tournament: Tournament,
    data: tuple[dict[str, list[float]], dict[str, list[list[float]]], dict[str, Any]],
) -> tuple[Ratings, dict[str, list[list[float]]], dict[str, Any]]:
    values, history, saved = data
    ratings = new_ratings(tournament)
    for name, (pi, tau, games) in values.items():
        rating = trueskill.Rating.__new__(trueskill.Rating)
        rating.pi, rating.tau = pi, tau
        ratings.ratings[name] = rating
        ratings.games[name] = int(games)
    return ratings, history, saved


def _snapshot(
    tournament: Tournament, ratings: Ratings, history: dict[str, list[list[float]]], games: int
) -> dict[str, Any]:
    return {
        "prefix": games,
        "key": _prefix_key(tournament, games),
        "ratings": {
            name: [rating.pi, rating.tau, ratings.games[name]]
            for name, rating in ratings.ratings.items()
        },
        "history": {name: [list(point) for point in points] for name, points in history.items()},
    }


def _thin(points: list[list[float]], limit: int) -> list[list[float]]:
    if len(points) <= limit or limit < 2:
        return points
    step = (len(points) - 1) / (limit - 1)
    return [points[round(i * step)] for i in range(limit)]


def head_to_head(records: Iterable[GameRecord]) -> dict[str, dict[str, dict[str, Any]]]:
    """For every ordered pair of bots that met at a table: ``games``, ``ahead`` (games the first
    finished strictly ahead of the second), ``behind``, ``position`` (mean of the second's rank
    minus the first's: positive when the first usually finishes ahead) and ``points`` (mean of the
    first's total minus the second's)."""
    sums: dict[tuple[str, str], list[int]] = {}
    for record in records:
        seats, ranks, totals = record.seats, record.ranks, record.totals
        for i, a in enumerate(seats):
            rank, total = ranks[i], totals[i]
            for j, b in enumerate(seats):
                if i == j:
                    continue
                cell = sums.get((a, b))
                if cell is None:
                    cell = sums[(a, b)] = [0, 0, 0, 0, 0]
                other = ranks[j]
                cell[0] += 1
                cell[1] += rank < other
                cell[2] += rank > other
                cell[3] += other - rank
                cell[4] += total - totals[j]
    result: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for (a, b), (games, ahead, behind, position, points) in sums.items():
        result[a][b] = {
            "games": games,
            "ahead": ahead,
            "behind": behind,
            "position": round(position / games, 3),
            "points": round(points / games, 3),
        }
    return dict(result)


def _table_stats(record: GameRecord) -> Mapping[str, Any]:
    stats = record.stats if isinstance(record.stats, Mapping) else {}
    table = stats.get("table")
    return table if isinstance(table, Mapping) else {}


def table_statistics(records: Iterable[GameRecord], digits: int | None = 4) -> dict[str, Any]:
    """The per-table statistics of Board Game Arena over ``records``: games, scored rounds,
    tables by number of players, null-bid rate (share of accepted bids equal to 0), average top
    bid, forced re-bids per round, and the share of rounds whose trump was each suit (``none``:
    Oh Hell rounds without trump). Rates are rounded to ``digits`` (None: exact, for pages
    that format them once)."""

    def keep(value: float | None) -> float | None:
        return value if digits is None else rounded(value, digits)

    games = 0
    players: Counter[int] = Counter()
    counts: Counter[str] = Counter()
    trumps: Counter[str] = Counter()
    for record in records:
        games += 1
        players[len(record.seats)] += 1
        table = _table_stats(record)
        for key in ("rounds", "bids", "null_bids", "top_bid_sum", "rebids", "redeals"):
            value = table.get(key, 0)
            if isinstance(value, int) and not isinstance(value, bool):
                counts[key] += value
        for suit, count in (table.get("trump") or {}).items():
            trumps[str(suit)] += int(count)
    rounds = counts["rounds"]
    return {
        "games": games,
        "rounds": rounds,
        "players": dict(sorted(players.items())),
        "bids": counts["bids"],
        "null_bid_rate": keep(rate(counts["null_bids"], counts["bids"])),
        "average_top_bid": keep(rate(counts["top_bid_sum"], rounds)),
        "rebids_per_round": keep(rate(counts["rebids"], rounds)),
        "redeals": counts["redeals"],
        "trump_rates": {
            suit: keep(rate(trumps[suit], rounds))
            for suit in (*SUIT_ORDER, "none")
            if suit != "none" or trumps["none"]
        },
    }


def game_rows(
    games: Iterable[StoredGame],
    slugs: Mapping[str, str],
    replays: Iterable[str] = (),
    reveal: bool = False,
) -> list[dict[str, Any]]:
    """One row per game for the games tables; ``replays`` are the ids of games with a replay;
    a game's seed is shown only when ``reveal`` (else None)."""
    have = set(replays)
    rows = []
    for stored in games:
        record = stored.record
        faults = Counter(fault.seat for fault in record.faults)
        ident = game_id(record.match_id, record.game_index)
        rows.append(
            {
                "canonical": stored.canonical_index,
                "id": ident,
                "match_id": record.match_id,
                "game_index": record.game_index,
                "seed": record.seed if reveal else None,
                "players": [
                    {
                        "name": name,
                        "slug": slugs[name] if name in slugs else slugify(name),
                        "total": record.totals[seat],
                        "rank": record.ranks[seat],
                        "faults": faults.get(seat, 0),
                    }
                    for seat, name in enumerate(record.seats)
                ],
                "faults": len(record.faults),
                "replay": ident in have,
            }
        )
    return rows


def bid_tricks(
    games: Iterable[StoredGame], name: str, outcomes: Mapping[str, Sequence[Sequence[int]]]
) -> list[list[int]]:
    """``[bid, tricks won, rounds]`` for bot ``name``, over the games whose round outcomes
    (:func:`round_outcomes`, by game id) are known."""
    pairs: Counter[tuple[int, int]] = Counter()
    for stored in games:
        record = stored.record
        rows = outcomes.get(game_id(record.match_id, record.game_index))
        if not rows:
            continue
        for seat, bid, won in rows:
            if 0 <= seat < len(record.seats) and record.seats[seat] == name:
                pairs[(bid, won)] += 1
    return [[bid, won, n] for (bid, won), n in sorted(pairs.items())]


def format_percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def format_number(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def bot_view(
    tournament: Tournament,
    row: Mapping[str, Any],
    h2h: Mapping[str, Mapping[str, Mapping[str, Any]]],
    slugs: Mapping[str, str],
    outcomes: Mapping[str, Sequence[Sequence[int]]] | None = None,
    log_chars: int = 4000,
    mine: Sequence[StoredGame] | None = None,
    aggregates: Mapping[str, BotAggregate] | None = None,
    statistics: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """What the page of one bot shows: its statistics, finishing positions, bids against tricks,
    head-to-head rows, faults (with the end of its output in each match where it faulted) and
    the canonical indices of its games. ``mine``: its games, when the caller has them grouped
    (else they are picked out of every game); ``aggregates`` and ``statistics``: every bot's
    :func:`~store.aggregate` and :func:`bot_statistics`, when the caller has them (else they
    are computed from its games)."""
    name = row["name"]
    if mine is None:
        mine = [stored for stored in tournament.games if name in stored.record.seats]
    if aggregates is not None and name in aggregates:
        agg = aggregates[name]
    else:
        rated = rated_records((stored.record for stored in mine), tournament.fault_ranks_last)
        agg = aggregate(rated, [name])[name]
    if statistics is None:
        statistics = bot_statistics(stored.record for stored in mine)
    rates = statistics.get(name) or {
        "rounds": 0,
        "bonus_points": 0,
        **dict.fromkeys(RATE_KEYS),
    }
    stat_rows = [
        (
            "Points per round",
            format_number(rates["points_per_round"]),
            "points (bonus included) / rounds",
        ),
        ("Points per game", format_number(agg.points_per_game), "total points / games played"),
        ("Zero-bid rate", format_percent(rates["zero_bid_rate"]), "share of rounds it bid 0"),
        (
            "Top-bid rate",
            format_percent(rates["top_bid_rate"]),
            "share of rounds it had the top bid",
        ),
        (
            "Bid-fill rate",
            format_percent(rates["bid_fill_rate"]),
            "share of rounds with bid = tricks",
        ),
        (
            "Overflow rate",
            format_percent(rates["overflow_rate"]),
            "share of rounds with bid < tricks",
        ),
        (
            "Underfill rate",
            format_percent(rates["underfill_rate"]),
            "share of rounds with bid > tricks",
        ),
        ("Win rate", format_percent(rate(agg.wins, agg.games)), "games ranked first (ties count)"),
        ("Rounds", str(rates["rounds"]), "scored rounds played"),
    ]
    if tournament.game == "oh-seven":  # Oh Hell has no re-bids
        stat_rows.append(
            ("Re-bid bonus points", str(rates["bonus_points"]), "Oh-Seven forced re-bid bonuses")
        )
    table_size = max((len(stored.record.seats) for stored in mine), default=0)
    ranks = dict(agg.ranks)
    sites: list[FaultSite] = []
    occurrences: dict[FaultSite, dict[str, Any]] = {}
    fault_matches: dict[int, str] = {}
    for stored in mine:
        record = stored.record
        for fault in record.faults:
            if 0 <= fault.seat < len(record.seats) and record.seats[fault.seat] == name:
                site = FaultSite.of(fault, game_id(record.match_id, record.game_index))
                sites.append(site)
                occurrences.setdefault(
                    site,
                    {
                        "canonical": stored.canonical_index,
                        "game_id": site.replay,
                        "match_id": record.match_id,
                        "game_index": record.game_index,
                        "move": site.move,
                        "where": where(attrs.evolve(site, replay=None)),
                    },
                )
                fault_matches[stored.match_index] = record.match_id
    faults = [
        {
            "status": group.status,
            "location": public_paths(group.location),
            "count": group.count,
            "games": group.games,
            "detail": public_paths(group.first[0].detail),
            "first": [occurrences[site] for site in group.first],
            "more": group.count - len(group.first),
        }
        for group in group_faults(sites, keep=FAULTS_LISTED)
    ]
    logs = []
    # the bot's own reports carry their traceback: its output would only repeat them
    told = all(group["status"] == FaultStatus.BOT_ERROR.value for group in faults)
    for match_index, match_id in sorted(fault_matches.items())[: 0 if told else LOGS_LISTED]:
        text = (tournament.logs.get(match_index) or {}).get(name, "")
        if text.strip():
            clipped = text if len(text) <= log_chars else "…" + text[-log_chars:]
            logs.append({"match_id": match_id, "text": public_paths(clipped)})
    opponents = [
        {"name": other, "slug": slugs[other] if other in slugs else slugify(other), **cell}
        for other, cell in sorted(h2h.get(name, {}).items())
    ]
    return {
        "name": name,
        "stat_rows": stat_rows,
        "ranks": [[rank, ranks.get(rank, 0)] for rank in range(1, table_size + 1)],
        "bid_tricks": bid_tricks(mine, name, outcomes or {}),
        "opponents": opponents,
        "faults": faults,
        "logs": logs,
        "games": [stored.canonical_index for stored in mine],
    }


#: games per page of the games list (``games/<n>.html``), most recent games on ``games.html``
GAMES_PER_PAGE = 500


def game_pages(rows: Sequence[Mapping[str, Any]], per_page: int = GAMES_PER_PAGE) -> list[dict]:
    """The pages of the games list: ``number`` (from 1), ``href``, the canonical indices of its
    ``first`` and ``last`` game and its ``rows``, in canonical order."""
    pages = []
    for number, start in enumerate(range(0, len(rows), per_page), start=1):
        chunk = list(rows[start : start + per_page])
        pages.append(
            {
                "number": number,
                "href": f"games/{number}.html",
                "first": chunk[0]["canonical"],
                "last": chunk[-1]["canonical"],
                "rows": chunk,
            }
        )
    return pages


def config_items(config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The configuration as short ``key: value`` pairs for the index (bots and paths left out)."""
    items: list[tuple[str, str]] = []
    skip = {"bots", "name", "output", "seed", "game"}
    for key, value in config.items():
        if key in skip:
            continue
        if isinstance(value, Mapping):
            for sub, inner in value.items():
                if isinstance(inner, Mapping | list):
                    inner = json.dumps(inner, sort_keys=True)
                items.append((f"{key}.{sub}", str(inner)))
        elif isinstance(value, list):
            items.append((key, ", ".join(str(v) for v in value)))
        else:
            items.append((key, str(value)))
    return items
