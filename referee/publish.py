"""Publish a tournament: leaderboards (JSON, CSV, Markdown) and a static HTML site.

:func:`publish` rebuilds everything from the database in a tournament's output directory. The
pages are plain files that work offline from ``file://``: the charting library is vendored, and
each game's replay is a ``.js`` file loaded by a script tag (``fetch`` of local files is refused
by browsers). Every file is written atomically, so a reader never sees half of one.

The functions that compute what a page shows (:func:`leaderboard`, :func:`rating_history`,
:func:`head_to_head`, :func:`table_statistics`, :func:`bot_view`, :func:`replay_view`, ...)
are pure: they take records and replays and return plain data, which the templates render.
The schema of ``leaderboard.json`` and of the CSV/Markdown columns is in ``docs/LEADERBOARD.md``.
"""

from __future__ import annotations

import csv
import gc
import hashlib
import io
import json
import math
import os
import pickle
import re
import time
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import jinja2
import markupsafe
import trueskill

from ..core.rules import GAMES, OH_SEVEN
from . import uncertainty
from .files import write_atomic
from .ratings import (
    DRAW_PROBABILITY,
    BotRating,
    Ratings,
    game_ranks,
    make_env,
    order_free_table,
)
from .records import FaultStatus, GameRecord
from .replay import load_replay
from .secret import SecretError, load_secret, secret_from_seed
from .stats import SEAT_COUNTS, combine_seat_counts
from .stopping import META_KEY as STOPPING_KEY
from .stopping import Plan, verdicts
from .store import BotAggregate, Store, StoredGame, StoreError, aggregate

__all__ = [
    "LEADERBOARD_FORMAT",
    "LEADERBOARD_VERSION",
    "CSV_COLUMNS",
    "REPLAY_DATA",
    "PublishError",
    "Tournament",
    "slugify",
    "unique_slugs",
    "game_id",
    "replay_view",
    "compact_frames",
    "expand_frames",
    "round_outcomes",
    "load_tournament",
    "bot_rows",
    "progress",
    "leaderboard",
    "leaderboard_csv",
    "leaderboard_markdown",
    "rating_history",
    "head_to_head",
    "bot_statistics",
    "table_statistics",
    "game_rows",
    "game_pages",
    "bid_tricks",
    "bot_view",
    "config_items",
    "publish",
]

LEADERBOARD_FORMAT = "ohseven-leaderboard"
LEADERBOARD_VERSION = 3
SUIT_NAMES = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
SUIT_ORDER = "SHDC"  # as the rules list them, strongest first


class PublishError(Exception):
    """A tournament directory that cannot be published."""


# --------------------------------------------------------------------------- small helpers


def slugify(name: str) -> str:
    """A file-name-safe, lowercase form of a bot name: ``"Greedy Bot 2"`` -> ``greedy-bot-2``."""
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._").lower()
    return text or "bot"


def unique_slugs(names: Iterable[str]) -> dict[str, str]:
    """A distinct slug per name, suffixing ``-2``, ``-3``... when two names slug alike."""
    slugs: dict[str, str] = {}
    used: set[str] = set()
    for name in sorted(set(names)):
        base = slugify(name)
        slug, n = base, 1
        while slug in used:
            n += 1
            slug = f"{base}-{n}"
        used.add(slug)
        slugs[name] = slug
    return slugs


def game_id(match_id: str, game_index: int) -> str:
    """The identifier of a game in URLs and file names: ``<match>-g<index>``, slugged."""
    return f"{slugify(match_id)}-g{game_index}"


def _rate(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None or math.isnan(value) else round(value, digits)


# --------------------------------------------------------------------------- the replay viewer

_JOINS_PREVIOUS = {"deal", "received", "trump"}


def _card_rank(card: str) -> int:
    return int(card[0]) if card[0].isdigit() else -1


def replay_view(replay: Mapping[str, Any]) -> dict[str, Any]:
    """The frames of a replay, one per thing a spectator would want to pause on.

    ``replay`` is a replay as ``referee/replay.py`` writes it (with the private events). A frame
    is the whole visible state after a group of events: every hand, the current trick, the bids
    (and every bid attempt of this deal), trump, tricks won and the running totals. ``rounds``
    and ``tricks`` index the first frame of each round and the frame completing each trick.
    """
    players = int(replay["players"])
    game = replay["game"]
    state: dict[str, Any] = {
        "round": 0,
        "deal": 0,
        "hand_size": 0,
        "dealer": None,
        "trump": None,
        "trump_card": None,
        "leader": None,
        "hands": [[] for _ in range(players)],
        "passes": [],
        "attempts": [],
        "bids": [None] * players,
        "bonus": [0] * players,
        "trick": [],
        "trick_no": 0,
        "winner": None,
        "tricks_won": [0] * players,
        "totals": [0] * players,
        "points": None,
        "scored": 0,
    }
    frames: list[dict[str, Any]] = []
    rounds: list[int] = []
    tricks: list[int] = []
    sheet: list[dict[str, Any]] = []
    pending: dict[str, Any] | None = None
    names = [
        name or f"seat {seat}" for seat, name in enumerate(replay.get("seats") or [None] * players)
    ]

    def caption_for(event: Mapping[str, Any]) -> tuple[str, str]:
        kind = event["type"]
        if kind in ("round", "deal"):
            size = state["hand_size"]
            text = f"Round {state['round'] + 1}: {size} card{'s' if size != 1 else ''} dealt"
            if state["deal"]:
                text += f" (redeal {state['deal']})"
            if game != "oh-seven":
                trump = state["trump_card"] or "no trump"
                text += f"; {names[state['dealer']]} deals, trump card {trump}"
            return "deal", text
        if kind in ("passed", "received"):
            return "pass", "Cards passed"
        if kind in ("bids", "trump"):
            last = state["attempts"][-1] if state["attempts"] else None
            if game == "oh-seven" and last is not None:
                if last["forced"]:
                    why = {
                        "sum_seven": "the bids sum to 7",
                        "identical_top": "two identical top cards",
                        "sum_seven_identical_top": "the bids sum to 7 and the top cards tie",
                    }.get(last["forced"], last["forced"])
                    who = ", ".join(names[s] for s in last["bonus"]) or "nobody"
                    return (
                        "rebid",
                        f"Bid attempt {last['attempt']}: re-bid forced ({why}); "
                        f"bonus point to {who}",
                    )
                top = last["top"][0]
                return (
                    "bids",
                    f"Bid attempt {last['attempt']}: sum {last['sum']}; top bid "
                    f"{last['cards'][top]} by {names[top]}; trump "
                    f"{SUIT_NAMES.get(state['trump'] or '', '?')}",
                )
            return "bids", "Bids revealed"
        if kind == "redeal":
            return "redeal", "Seven forced attempts: the round is dealt again"
        if kind == "bid":
            return "bid", f"{names[event['seat']]} bids {event['bid']}"
        if kind == "play":
            return "play", f"{names[event['seat']]} plays {event['card']}"
        if kind == "trick":
            return (
                "trick",
                f"Trick {state['trick_no']} won by {names[event['winner']]}",
            )
        if kind == "score":
            return "score", f"Round {event['round'] + 1} scored"
        if kind == "game_over":
            best = [names[s] for s in range(players) if event["ranks"][s] == 1]
            return "over", "Game over: " + " and ".join(best) + " win" + (
                "s" if len(best) == 1 else ""
            )
        return kind, kind

    def snapshot(event: Mapping[str, Any]) -> None:
        kind, caption = caption_for(event)
        frame = {
            "kind": kind,
            "caption": caption,
            "round": state["round"],
            "deal": state["deal"],
            "hand_size": state["hand_size"],
            "dealer": state["dealer"],
            "trump": state["trump"],
            "trump_card": state["trump_card"],
            "hands": [list(hand) for hand in state["hands"]],
            "passes": [dict(p) for p in state["passes"]],
            "attempts": [dict(a) for a in state["attempts"]],
            "bids": list(state["bids"]),
            "bonus": list(state["bonus"]),
            "trick": [list(pair) for pair in state["trick"]],
            "trick_no": state["trick_no"],
            "winner": state["winner"],
            "leader": state["leader"],
            "tricks_won": list(state["tricks_won"]),
            "totals": list(state["totals"]),
            "points": None if state["points"] is None else list(state["points"]),
            "scored": state["scored"],
        }
        if kind == "deal" and state["deal"] == 0:
            rounds.append(len(frames))
        if kind == "trick":
            tricks.append(len(frames))
        frames.append(frame)

    for event in replay["events"]:
        kind = event["type"]
        joins = kind in _JOINS_PREVIOUS or (
            kind == "passed" and pending is not None and pending["type"] in ("passed", "received")
        )
        if pending is not None and not joins:
            snapshot(pending)
            pending = None
        if kind == "round":
            if state["winner"] is not None or state["trick"]:
                state["trick"] = []
            state.update(
                round=event["round"],
                deal=event.get("deal", 0),
                hand_size=event["hand_size"],
                dealer=event.get("dealer"),
                trump=event.get("trump"),
                trump_card=event.get("trump_card"),
                leader=None,
                passes=[],
                attempts=[],
                bids=[None] * players,
                trick=[],
                trick_no=0,
                winner=None,
                tricks_won=[0] * players,
                points=None,
            )
            if event.get("deal", 0) == 0:
                state["bonus"] = [0] * players
            if game != "oh-seven" and event.get("dealer") is not None:
                state["leader"] = (event["dealer"] + 1) % players
        elif kind == "deal":
            state["hands"][event["to"]] = list(event["hand"])
        elif kind == "passed":
            giver = event["to"]
            for card in event["cards"]:
                state["hands"][giver].remove(card)
            state["passes"].append(
                {"giver": giver, "receiver": event["receiver"], "cards": list(event["cards"])}
            )
        elif kind == "received":
            hand = state["hands"][event["to"]] + list(event["cards"])
            state["hands"][event["to"]] = _sorted_hand(hand, game)
        elif kind == "bids" and "cards" in event:
            state["attempts"].append(
                {
                    "attempt": event["attempt"],
                    "cards": list(event["cards"]),
                    "top": list(event["top"]),
                    "sum": event["sum"],
                    "forced": event["forced"],
                    "bonus": list(event["bonus"]),
                }
            )
            for seat in event["bonus"]:
                state["bonus"][seat] += 1
                state["totals"][seat] += 1
            state["bids"] = [_card_rank(card) for card in event["cards"]]
        elif kind == "bids":
            state["bids"] = list(event["bids"])
        elif kind == "bid":
            state["bids"][event["seat"]] = event["bid"]
        elif kind == "trump":
            state["trump"] = event["suit"]
            state["leader"] = event["leader"]
            top = state["attempts"][-1]["cards"][event["leader"]] if state["attempts"] else None
            state["trump_card"] = top
        elif kind == "play":
            if state["winner"] is not None:
                state["trick"] = []
                state["winner"] = None
            state["hands"][event["seat"]].remove(event["card"])
            state["trick"].append([event["seat"], event["card"]])
        elif kind == "trick":
            state["trick_no"] += 1
            state["winner"] = event["winner"]
            state["tricks_won"][event["winner"]] += 1
            state["leader"] = event["winner"]
        elif kind == "score":
            state["points"] = list(event["points"])
            state["totals"] = list(event["totals"])
            state["scored"] = event["round"] + 1
            state["trick"] = []
            state["winner"] = None
            sheet.append(
                {
                    "round": event["round"],
                    "bids": list(event["bids"]),
                    "tricks": list(event["tricks"]),
                    "points": list(event["points"]),
                    "bonus": list(event.get("bonus") or [0] * players),
                    "totals": list(event["totals"]),
                }
            )
        elif kind == "game_over":
            state["totals"] = list(event["totals"])
        pending = dict(event)
    if pending is not None:
        snapshot(pending)
    result = replay.get("result") or {}
    return {
        "game": game,
        "rules": dict(replay.get("rules") or {}),
        "seed": None,  # seeds are published apart, and only once revealed (``Tournament``)
        "players": names,
        "result": {
            "totals": list(result.get("totals", [])),
            "ranks": list(result.get("ranks", [])),
        },
        "faults": [dict(f) for f in replay.get("faults") or []],
        "sheet": sheet,
        "frames": frames,
        "rounds": rounds,
        "tricks": tricks,
    }


_OH_HELL_RANKS = "23456789TJQKA"


def _sorted_hand(cards: list[str], game: str) -> list[str]:
    def key(card: str) -> tuple[int, int]:
        rank = int(card[0]) if game == "oh-seven" else _OH_HELL_RANKS.index(card[0])
        return ("CDHS".index(card[1]), rank)

    return sorted(cards, key=key)


def compact_frames(frames: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``frames`` as deltas: each keeps only the keys that changed since the previous one, and
    ``hands`` only the seats whose hand changed (a ``{"seat": hand}`` map). :func:`expand_frames`
    (and the viewer's JavaScript) undo it."""
    out: list[dict[str, Any]] = []
    previous: Mapping[str, Any] | None = None
    for frame in frames:
        if previous is None:
            out.append(dict(frame))
        else:
            delta = {k: v for k, v in frame.items() if k != "hands" and previous.get(k) != v}
            hands = {
                str(seat): hand
                for seat, hand in enumerate(frame["hands"])
                if hand != previous["hands"][seat]
            }
            if hands:
                delta["hands"] = hands
            out.append(delta)
        previous = frame
    return out


def expand_frames(deltas: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The full frames back from :func:`compact_frames`."""
    frames: list[dict[str, Any]] = []
    for delta in deltas:
        if not frames:
            frames.append(dict(delta))
            continue
        frame = dict(frames[-1])
        for key, value in delta.items():
            if key == "hands":
                hands = list(frame["hands"])
                for seat, hand in value.items():
                    hands[int(seat)] = hand
                frame["hands"] = hands
            else:
                frame[key] = value
        frames.append(frame)
    return frames


# --------------------------------------------------------------------------- the tournament


def _int_set(values: Iterable[int]) -> frozenset[int]:
    return frozenset(values)


@attrs.frozen
class Tournament:
    """Everything the site shows, read from the store in one go (see :func:`load_tournament`).

    ``games`` are the finished games in canonical order; ``logs`` maps a match index to each
    bot's truncated output in that match.
    """

    name: str
    game: str
    #: the organiser's seed, only once revealed (``reveal_seeds`` and the tournament complete)
    seed: int | None
    config: dict
    bots: tuple[str, ...]
    games: tuple[StoredGame, ...]
    matches_done: int = 0
    matches_total: int = 0
    games_total: int = 0
    logs: dict = attrs.field(factory=dict)
    digest: str | None = None
    draw_probability: float | None = None
    fault_ranks_last: bool = True
    #: the tournament secret (hex), only once revealed; games' seeds are shown only then too
    secret: str | None = None
    #: the indexes of the matches done: only their games' replays are published
    done_matches: frozenset[int] = attrs.field(factory=frozenset, converter=_int_set)
    #: how many of the first games are settled: canonical 0, 1, 2... of finished matches (their
    #: games never change, so the ratings after them are kept from one publish to the next)
    settled: int = 0
    #: a gauntlet's stopping rule (``stopping.Plan``), or None
    stopping: Plan | None = None

    @property
    def revealed(self) -> bool:
        return self.secret is not None

    @property
    def records(self) -> list[GameRecord]:
        return [stored.record for stored in self.games]


def _revealed_secret(
    folder: Path, config: Mapping[str, Any], complete: bool
) -> tuple[int | None, str | None]:
    """(seed, secret hex) to publish: only for a complete tournament whose organiser chose
    ``reveal_seeds``; (None, None) otherwise, so that nothing published gives a deal away."""
    if not complete or config.get("reveal_seeds") is not True:
        return None, None
    seed = config.get("seed")
    if isinstance(seed, int) and not isinstance(seed, bool):
        return seed, secret_from_seed(seed).hex()
    try:
        secret = load_secret(folder)
    except SecretError:
        secret = None
    return None, (secret.hex() if secret is not None else None)


def load_tournament(output_dir: str | os.PathLike[str]) -> Tournament:
    """Read the tournament in ``output_dir`` from its database (read-only use)."""
    folder = Path(output_dir)
    try:
        store = Store.open(folder, create=False)
    except StoreError as error:
        raise PublishError(str(error)) from None
    with store:
        meta = store.meta()
        try:
            config = json.loads(meta.get("config", "{}")) or {}
        except json.JSONDecodeError:
            config = {}
        games = tuple(store.games())
        done = store.done_matches()
        settled = 0
        while (
            settled < len(games)
            and games[settled].canonical_index == settled
            and games[settled].match_index in done
        ):
            settled += 1
        db = store.db
        matches_total, games_total = db.execute(
            "SELECT COUNT(*), COALESCE(SUM(games), 0) FROM matches"
        ).fetchone()
        # rows are written as matches are scheduled: the referee keeps the totals in meta
        if meta.get("games_total", "").isdigit():
            games_total = int(meta["games_total"])
            matches_total = int(meta.get("matches_total", matches_total))
        done = {index for index, status in store.match_status().items() if status == "done"}
        matches_done = len(done)
        logs = {}
        for (match_index,) in db.execute("SELECT DISTINCT match_index FROM logs"):
            logs[match_index] = store.logs(match_index)
    names: list[str] = []
    for entry in config.get("bots") or []:
        if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
            names.append(entry["name"])
    for stored in games:
        names.extend(stored.record.seats)
    raw_ratings = config.get("ratings")
    ratings_config: Mapping[str, Any] = raw_ratings if isinstance(raw_ratings, Mapping) else {}
    seed, secret = _revealed_secret(folder, config, len(games) == games_total > 0)
    return Tournament(
        name=str(config.get("name") or folder.resolve().name),
        game=str(config.get("game") or _game_of(games) or OH_SEVEN),
        seed=seed,
        secret=secret,
        config=config,
        bots=tuple(dict.fromkeys(names)),
        games=games,
        matches_done=matches_done,
        matches_total=matches_total,
        games_total=games_total,
        logs=logs,
        digest=meta.get("config_digest"),
        draw_probability=ratings_config.get("draw_probability"),
        fault_ranks_last=bool(ratings_config.get("fault_ranks_last", True)),
        done_matches=frozenset(done),
        settled=settled,
        stopping=Plan.from_json(meta.get(STOPPING_KEY)),
    )


def _game_of(games: Sequence[StoredGame]) -> str | None:
    for stored in games:
        game = stored.record.stats.get("game") if isinstance(stored.record.stats, dict) else None
        if game in GAMES:
            return game
    return None


def _ratings(tournament: Tournament) -> Ratings:
    return Ratings(
        tournament.game,
        tournament.bots,
        draw_probability=tournament.draw_probability,
        fault_ranks_last=tournament.fault_ranks_last,
    )


def rated_records(records: Iterable[GameRecord], fault_ranks_last: bool) -> Iterable[GameRecord]:
    """``records`` with the ranks the rating sees (``ratings.game_ranks``): with
    ``fault_ranks_last`` a bot that faulted ranks below every clean bot, so that the wins, ranks
    and average rank published agree with the rating's view of each game."""
    for record in records:
        ranks = game_ranks(record, fault_ranks_last=fault_ranks_last)
        yield record if ranks == record.ranks else attrs.evolve(record, ranks=ranks)


def bot_rows(
    tournament: Tournament,
    ratings: Ratings | None = None,
    aggregates: Mapping[str, BotAggregate] | None = None,
    table: Sequence[BotRating] | None = None,
) -> list[dict[str, Any]]:
    """The ranking: one row per bot, best conservative score (mu - 3 sigma) of the order-free
    TrueSkill estimate (``ratings.order_free``) first, with its uncertainty.

    ``ratings`` are the sequential ratings after every game in canonical order (computed here
    when not given), published as ``sequential_mu``/``sequential_sigma``. The fields are those
    of ``board.Leaderboard`` plus ``slug``, ``average_rank``, ``faults_total`` and
    ``fault_counts`` (every status, zeros included); see ``docs/LEADERBOARD.md``."""
    if ratings is None:
        ratings = _ratings(tournament)
        for stored in tournament.games:
            ratings.apply(stored.record)
    records = tournament.records
    if table is None:
        table = _order_free(tournament)
    order = [row.name for row in table]
    # adjacent pairs only (tiers and superiority_next): the full matrix is n^2
    los = uncertainty.superiority_next({row.name: (row.mu, row.sigma) for row in table}, order)
    tier_of = dict(zip(order, uncertainty.tiers(order, los), strict=True))
    # a tier is a run of consecutive ranks: its first and last (1-based)
    spans: dict[int, list[int]] = {}
    for position, name in enumerate(order, start=1):
        spans.setdefault(tier_of[name], [position, position])[1] = position
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
                "points_per_game": _round(agg.points_per_game, 4),
                "points_per_game_ci": None
                if interval is None
                else [round(interval[0], 4), round(interval[1], 4)],
                "points_per_round": _round(stats["points_per_round"], 4),
                "wins": agg.wins,
                "win_rate": _round(_rate(agg.wins, agg.games), 4),
                "average_rank": _round(_rate(rank_sum, agg.games), 4),
                "ranks": {str(rank): count for rank, count in agg.ranks},
                "faults": faults,
                "faults_total": sum(faults.values()),
                "fault_counts": {
                    status.value: faults.get(status.value, 0) for status in FaultStatus
                },
                "faulted_games": agg.faulted_games,
                **{key: _round(stats[key], 4) for key in RATE_KEYS[1:]},
            }
        )
    return rows


def _order_free(tournament: Tournament) -> list[BotRating]:
    return order_free_table(
        tournament.records,
        tournament.bots,
        game=tournament.game,
        draw_probability=tournament.draw_probability,
        fault_ranks_last=tournament.fault_ranks_last,
    )


def progress(tournament: Tournament) -> dict[str, Any]:
    """How far the tournament is: games and matches finished of those scheduled."""
    played = len(tournament.games)
    total = tournament.games_total
    return {
        "games_played": played,
        "games_total": total,
        "matches_done": tournament.matches_done,
        "matches_total": tournament.matches_total,
        "fraction": _round(_rate(played, total), 4),
        "complete": bool(total) and played == total,
    }


def leaderboard(
    tournament: Tournament,
    ratings: Ratings | None = None,
    aggregates: Mapping[str, BotAggregate] | None = None,
    table: Sequence[BotRating] | None = None,
) -> dict[str, Any]:
    """The content of ``leaderboard.json`` (schema: ``docs/LEADERBOARD.md``): deterministic,
    a function of the finished games only (no clock). ``ratings`` (the sequential ones),
    ``aggregates`` (``store.aggregate`` of :func:`rated_records`) and ``table`` (the
    order-free ``ratings.order_free_table``) when the caller has them."""
    done = progress(tournament)
    rows = bot_rows(tournament, ratings, aggregates, table)
    return {
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


# --------------------------------------------------------------------------- index page data


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
    ratings = _ratings(tournament)
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


#: games to rate beyond the cached prefix from which the rating history is computed in a
#: child process, beside the rest of the build
PARALLEL_GAMES = 20_000


def _cached_prefix(cache: Mapping[str, Any] | None) -> int:
    """The games a ratings cache says it holds (whether it still does is checked on use)."""
    prefix = (cache or {}).get("prefix")
    return prefix if isinstance(prefix, int) else 0


def _in_child(function: Callable[[], Any], parallel: bool = True) -> Callable[[], Any]:
    """Start ``function`` in a forked child process and return a function that waits for its
    result (picklable). In this process instead when not ``parallel``, on one core, without
    ``fork``, or when the child fails (the same result, later)."""
    if not parallel or (os.cpu_count() or 1) < 2 or not hasattr(os, "fork"):
        result = function()
        return lambda: result
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, send, and leave without any of the parent's cleanup
        status = 1
        try:
            os.close(reader)
            data = pickle.dumps(function(), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(writer, "wb") as pipe:
                pipe.write(data)
            status = 0
        finally:
            os._exit(status)
    os.close(writer)

    def join() -> Any:
        with os.fdopen(reader, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
        if status != 0 or not data:
            return function()
        return pickle.loads(data)

    return join


def _rating_history_data(
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


def _from_data(
    tournament: Tournament,
    data: tuple[dict[str, list[float]], dict[str, list[list[float]]], dict[str, Any]],
) -> tuple[Ratings, dict[str, list[list[float]]], dict[str, Any]]:
    values, history, saved = data
    ratings = _ratings(tournament)
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


def table_statistics(records: Iterable[GameRecord], digits: int | None = 4) -> dict[str, Any]:
    """The per-table statistics of Board Game Arena over ``records``: games, scored rounds,
    tables by number of players, null-bid rate (share of accepted bids equal to 0), average top
    bid, forced re-bids per round, and the share of rounds whose trump was each suit (``none``:
    Oh Hell rounds without trump). Rates are rounded to ``digits`` (None: exact, for pages
    that format them once)."""

    def keep(value: float | None) -> float | None:
        return value if digits is None else _round(value, digits)

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
        "null_bid_rate": keep(_rate(counts["null_bids"], counts["bids"])),
        "average_top_bid": keep(_rate(counts["top_bid_sum"], rounds)),
        "rebids_per_round": keep(_rate(counts["rebids"], rounds)),
        "redeals": counts["redeals"],
        "trump_rates": {
            suit: keep(_rate(trumps[suit], rounds))
            for suit in (*SUIT_ORDER, "none")
            if suit != "none" or trumps["none"]
        },
    }


# --------------------------------------------------------------------------- games and bot pages


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


def round_outcomes(replay: Mapping[str, Any]) -> list[list[int]]:
    """Every scored round of a replay as ``[seat, bid, tricks won]``, one per seat and round."""
    outcomes = []
    for event in replay["events"]:
        if event.get("type") == "score":
            for seat, (bid, won) in enumerate(zip(event["bids"], event["tricks"], strict=True)):
                outcomes.append([seat, int(bid), int(won)])
    return outcomes


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


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _number(value: float | None, digits: int = 2) -> str:
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
            _number(rates["points_per_round"]),
            "points (bonus included) / rounds",
        ),
        ("Points per game", _number(agg.points_per_game), "total points / games played"),
        ("Zero-bid rate", _percent(rates["zero_bid_rate"]), "share of rounds it bid 0"),
        ("Top-bid rate", _percent(rates["top_bid_rate"]), "share of rounds it had the top bid"),
        ("Bid-fill rate", _percent(rates["bid_fill_rate"]), "share of rounds with bid = tricks"),
        ("Overflow rate", _percent(rates["overflow_rate"]), "share of rounds with bid < tricks"),
        ("Underfill rate", _percent(rates["underfill_rate"]), "share of rounds with bid > tricks"),
        ("Win rate", _percent(_rate(agg.wins, agg.games)), "games ranked first (ties count)"),
        ("Rounds", str(rates["rounds"]), "scored rounds played"),
        ("Re-bid bonus points", str(rates["bonus_points"]), "Oh-Seven forced re-bid bonuses"),
    ]
    table_size = max((len(stored.record.seats) for stored in mine), default=0)
    ranks = dict(agg.ranks)
    faults = []
    fault_matches: dict[int, str] = {}
    for stored in mine:
        record = stored.record
        for fault in record.faults:
            if 0 <= fault.seat < len(record.seats) and record.seats[fault.seat] == name:
                faults.append(
                    {
                        "canonical": stored.canonical_index,
                        "game_id": game_id(record.match_id, record.game_index),
                        "match_id": record.match_id,
                        "game_index": record.game_index,
                        "status": fault.status.value,
                        "detail": fault.detail,
                    }
                )
                fault_matches[stored.match_index] = record.match_id
    logs = []
    for match_index, match_id in sorted(fault_matches.items()):
        text = (tournament.logs.get(match_index) or {}).get(name, "")
        if text.strip():
            clipped = text if len(text) <= log_chars else "…" + text[-log_chars:]
            logs.append({"match_id": match_id, "text": clipped})
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


# --------------------------------------------------------------------------- the site

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"
STATIC_FILES = ("style.css", "site.js", "replay.js", "chart.umd.min.js", "chart.js-LICENSE.md")
REPLAY_DATA = "replay-data"  # <output>/replay-data/<game id>.js, one per game with a replay
#: in REPLAY_DATA: the ratings after the settled games, so a republish rates only the new ones
RATINGS_CACHE = "ratings-cache.json"
#: games per page of the games list (``games/<n>.html``), most recent games on ``games.html``
GAMES_PER_PAGE = 500
RECENT_GAMES = 100
#: games listed on a bot's page (its most recent), bots in the index's matrix and chart: pages
#: stay small however large the league
BOT_RECENT_GAMES = 50
INDEX_BOTS = 30
#: the names of a tier's other bots in the index's tooltip of a shared place (a tier of a large
#: league can hold hundreds: every row naming them all made the index tens of megabytes)
TIED_NAMES = 10


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


def _tied_note(bots: Sequence[Mapping[str, Any]], row: Mapping[str, Any]) -> str:
    """``", tied with a, b and 5 more"``: the index's tooltip of a shared place, naming the
    first :data:`TIED_NAMES` other bots of the row's tier (its ranks ``tied_from``..``tied_to``)."""
    first, last = row["tied_from"], row["tied_to"]
    if first == last:
        return ""
    ranks = [
        rank for rank in range(first, min(last, first + TIED_NAMES) + 1) if rank != row["rank"]
    ]
    names = ", ".join(bots[rank - 1]["name"] for rank in ranks[:TIED_NAMES])
    more = last - first - TIED_NAMES  # the others of the tier, less those named
    return f", tied with {names}" + (f" and {more} more" if more > 0 else "")


def _heat(position: float) -> str:
    strength = min(1.0, abs(position) / 1.5)
    if position > 0:
        return f"rgba(43, 138, 62, {0.1 + 0.5 * strength:.2f})"
    if position < 0:
        return f"rgba(192, 57, 43, {0.1 + 0.5 * strength:.2f})"
    return "transparent"


def _escape(value: object, cache: dict[str, str] = {}) -> str:  # noqa: B006 - the cache
    """``markupsafe.escape`` as a string; numbers need none, and strings repeat (bot names)."""
    kind = type(value)
    if kind is int or kind is float:
        return str(value)
    if kind is str:
        text = cache.get(value)  # type: ignore[call-overload]
        if text is None:
            if len(cache) > 1_000_000:
                cache.clear()
            text = cache[value] = str(markupsafe.escape(value))  # type: ignore[index]
        return text
    return str(markupsafe.escape(value))


class _GameRows:
    """The games tables' row of a game (``game_rows``) as HTML, each (game, root) rendered
    once: a league's site lists 100,000 games in its pages and again on the bots' pages, and a
    template loop costs ten times this."""

    def __init__(self) -> None:
        self.cache: dict[tuple[int, str], markupsafe.Markup] = {}

    def __call__(self, g: Mapping[str, Any], root: str) -> markupsafe.Markup:
        key = (id(g), root)
        html = self.cache.get(key)
        if html is not None:
            return html
        e = _escape
        root = e(root)
        players = g["players"]
        cells = []
        for position, p in enumerate(players):
            faults = p["faults"]
            cells.append(
                f'<a href="{root}bots/{e(p["slug"])}.html"'
                + (' class="winner"' if p["rank"] == 1 else "")
                + f">{e(p['name'])}</a> {e(p['total'])} ({e(p['rank'])})"
                + (
                    f' <span class="tag bad">{e(faults)} fault{"s" if faults != 1 else ""}</span>'
                    if faults
                    else ""
                )
                + (" · " if position < len(players) - 1 else "")
            )
        seed = g["seed"]
        replay = (
            f'<a href="{root}replay.html?game={e(g["id"])}">replay</a>'
            if g["replay"]
            else '<span class="muted">–</span>'
        )
        neg = ' class="neg"' if g["faults"] else ""
        html = markupsafe.Markup(
            "    <tr>\n"
            f'      <td data-value="{e(g["canonical"])}">{e(g["canonical"])}</td>\n'
            f'      <td class="text" data-value="{e(g["match_id"])}">{e(g["match_id"])} '
            f"#{e(g['game_index'])}</td>\n"
            f'      <td data-value="{e(seed) if seed is not None else ""}">'
            f"{e(seed) if seed is not None else '–'}</td>\n"
            f'      <td class="text" data-value="{e(players[0]["name"]) if players else ""}">\n'
            + "".join(cells)
            + "      </td>\n"
            f'      <td data-value="{e(g["faults"])}"{neg}>'
            f"{e(g['faults'])}</td>\n"
            f'      <td class="text" data-value="{1 if g["replay"] else 0}">{replay}</td>\n'
            "    </tr>"
        )
        self.cache[key] = html
        return html


def _sign_class(value: float) -> str:
    return "pos" if value > 0 else ("neg" if value < 0 else "")


def _opponent_row(o: Mapping[str, Any]) -> markupsafe.Markup:
    """A row of a bot page's opponents table, as HTML (a bot meets hundreds in a league)."""
    e = _escape
    return markupsafe.Markup(
        f'        <tr><td class="text" data-value="{e(o["name"])}"><a href="{e(o["slug"])}.html">'
        f"{e(o['name'])}</a></td>\n"
        f'          <td data-value="{e(o["games"])}">{e(o["games"])}</td>'
        f'<td data-value="{e(o["ahead"])}">{e(o["ahead"])}</td>'
        f'<td data-value="{e(o["behind"])}">{e(o["behind"])}</td>\n'
        f'          <td data-value="{e(o["position"])}" class="{_sign_class(o["position"])}">'
        f"{o['position']:+.2f}</td>\n"
        f'          <td data-value="{e(o["points"])}" class="{_sign_class(o["points"])}">'
        f"{o['points']:+.1f}</td></tr>"
    )


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        fmt=_number,
        heat=_heat,
        game_row=_GameRows(),
        opponent_row=_opponent_row,
        tied_note=_tied_note,
    )
    return env


def _find_replay(output: Path, path: str) -> Path | None:
    given = Path(path)
    for candidate in (given, output / given, output / "replays" / given.name):
        if candidate.is_file():
            return candidate
    return None


def replay_script(
    ident: str, record: GameRecord, replay: Mapping[str, Any], seed: int | None = None
) -> str:
    """The ``.js`` file of one game's replay: a call of ``ohsevenReplay`` with its frames;
    ``seed`` (once revealed) as a string: a JavaScript number would round a 64-bit seed."""
    view = replay_view(replay)
    view["frames"] = compact_frames(view["frames"])
    view.update(id=ident, match_id=record.match_id, game_index=record.game_index)
    if seed is not None:
        view["seed"] = str(seed)
    text = json.dumps(view, separators=(",", ":"), ensure_ascii=True)
    return "ohsevenReplay(" + text.replace("</", "<\\/") + ");\n"


def publish(output_dir: str | os.PathLike[str], *, now: float | None = None) -> list[Path]:
    """Rebuild the leaderboards and the site of the tournament in ``output_dir``.

    Returns every file written. Replay pages of games already published are kept (a finished
    game never changes), so calling this during a tournament costs one pass over the database
    plus the rendering, and the replays of the new games only.
    """
    # Millions of small objects (every game's record, the pages' rows) and few cycles: the
    # cyclic collector would walk them all again and again (a third of the time at 100,000
    # games); it runs again once the site is written.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _publish(Path(output_dir), now)
    finally:
        if collecting:
            gc.enable()


def _publish(output: Path, now: float | None) -> list[Path]:
    tournament = load_tournament(output)
    cache_path = output / REPLAY_DATA / RATINGS_CACHE
    try:
        cache = json.loads(cache_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        cache = None
    if not isinstance(cache, dict):
        cache = None
    # The sequential replay of every game and the order-free estimate are the longest steps and
    # depend on nothing else: on a first build of a large tournament they run in a child
    # process while this one does the rest of what does not need them (replays, games pages).
    ranking = _in_child(
        lambda: (_rating_history_data(tournament, cache), _order_free(tournament)),
        parallel=len(tournament.games) - _cached_prefix(cache) >= PARALLEL_GAMES,
    )
    written: list[Path] = []

    def write(relative: str, data: str | bytes) -> None:
        path = output / relative
        if path.is_file() and path.read_bytes() == (
            data.encode("utf-8") if isinstance(data, str) else data
        ):
            return
        written.append(write_atomic(path, data))

    rated = list(rated_records(tournament.records, tournament.fault_ranks_last))
    aggregates = aggregate(rated, tournament.bots)
    h2h = head_to_head(rated)
    del rated
    stats = table_statistics(tournament.records, digits=None)  # formatted once, on the page
    for name in STATIC_FILES:
        write(f"static/{name}", (STATIC / name).read_bytes())
    replays, outcomes, changed = _publish_replays(output, tournament, written)
    if changed:
        write(f"{REPLAY_DATA}/outcomes.json", json.dumps(outcomes, separators=(",", ":")))
    slugs = unique_slugs(tournament.bots)  # as the board's rows have them
    games = game_rows(tournament.games, slugs, replays, reveal=tournament.revealed)
    generated = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(now))
    site = {"name": tournament.name, "generated": generated}
    env = _environment()
    pages = game_pages(games, GAMES_PER_PAGE)
    listing = env.get_template("games.html")
    common = {"site": site, "pages": pages, "total": len(games), "per_page": GAMES_PER_PAGE}
    recent = list(reversed(games[-RECENT_GAMES:]))
    write("games.html", listing.render(root="", games=recent, page=None, **common))
    for page in pages:
        write(page["href"], listing.render(root="../", games=page["rows"], page=page, **common))
    for stale in (output / "games").glob("*.html"):  # pages of a tournament started over
        if not (stale.stem.isdigit() and 1 <= int(stale.stem) <= len(pages)):
            stale.unlink(missing_ok=True)
    write("replay.html", env.get_template("replay.html").render(root="", site=site))

    sequential, table = ranking()
    ratings, history, saved = _from_data(tournament, sequential)
    board = leaderboard(tournament, ratings, aggregates, table)
    old = cache or {}
    if saved and (saved.get("prefix"), saved.get("key")) != (old.get("prefix"), old.get("key")):
        write_atomic(cache_path, json.dumps(saved, separators=(",", ":")))
    write("leaderboard.json", json.dumps(board, indent=2) + "\n")
    write("leaderboard.csv", leaderboard_csv(board))
    write("leaderboard.md", leaderboard_markdown(board))
    done = progress(tournament)
    order = [row["name"] for row in board["bots"]]
    trump_rows = [
        {
            "suit": suit,
            "label": (
                f"{SUIT_SYMBOLS[suit]} {SUIT_NAMES[suit]}" if suit in SUIT_NAMES else "No trump"
            ),
            "rate": rate,
        }
        for suit, rate in stats["trump_rates"].items()
        if rate is not None
    ]
    index = env.get_template("index.html").render(
        root="",
        site=site,
        board=board,
        progress=done,
        config_items=config_items(tournament.config),
        fault_statuses=[status.value for status in FaultStatus],
        h2h=h2h,
        h2h_bots=order[:INDEX_BOTS],
        table_rows=_table_rows(stats),
        trump_rows=trump_rows,
        games=list(reversed(games))[:20],
        page_data={
            "history": [{"name": name, "points": history[name]} for name in order[:INDEX_BOTS]],
            "trumps": trump_rows,
        },
    )
    write("index.html", index)
    by_canonical = {row["canonical"]: row for row in games}
    by_bot: dict[str, list[StoredGame]] = defaultdict(list)
    for stored in tournament.games:
        for name in stored.record.seats:
            by_bot[name].append(stored)
    bot_template = env.get_template("bot.html")
    statistics = statistics_of(aggregates)
    for row in board["bots"]:
        view = bot_view(
            tournament,
            row,
            h2h,
            slugs,
            outcomes,
            mine=by_bot.get(row["name"], []),
            aggregates=aggregates,
            statistics=statistics,
        )
        pairs = view["bid_tricks"]
        html = bot_template.render(
            root="../",
            site=site,
            bot=row,
            bots_total=len(board["bots"]),
            view=view,
            games=[by_canonical[index] for index in view["games"][::-1][:BOT_RECENT_GAMES]],
            page_data={
                "ranks": view["ranks"],
                "bid_tricks": pairs,
                "bid_tricks_max": max((n for _, _, n in pairs), default=1),
            },
        )
        write(f"bots/{row['slug']}.html", html)
    return written


SUIT_SYMBOLS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}


def _publish_replays(
    output: Path, tournament: Tournament, written: list[Path]
) -> tuple[list[str], dict[str, list[list[int]]], bool]:
    """Write the viewer's script of every game with a replay not yet published, and keep the
    games' round outcomes (for the bid-against-tricks charts) in ``outcomes.json``. Returns the
    ids of the games with a replay, the outcomes, and whether they changed.

    Only the games of matches done: a running match's deals may be played again (the other
    rotations of duplicate play; a match cut short is played again from its start), and its
    games may yet be discarded and replaced under the same ids."""
    folder = output / REPLAY_DATA
    try:
        outcomes = json.loads((folder / "outcomes.json").read_text(encoding="utf-8"))
        if not isinstance(outcomes, dict):
            outcomes = {}
    except (OSError, ValueError):
        outcomes = {}
    changed = False
    replays: list[str] = []
    for stored in tournament.games:
        record = stored.record
        if not record.replay_path or stored.match_index not in tournament.done_matches:
            continue
        ident = game_id(record.match_id, record.game_index)
        target = folder / f"{ident}.js"
        # once the seeds are revealed, the scripts are written again with them
        if target.is_file() and ident in outcomes and not tournament.revealed:
            replays.append(ident)
            continue
        source = _find_replay(output, record.replay_path)
        if source is None:
            continue
        try:
            replay = load_replay(source)
            seed = record.seed if tournament.revealed else None
            script = replay_script(ident, record, replay, seed)
            outcomes[ident] = round_outcomes(replay)
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            continue  # an unreadable replay: the game is listed without one
        written.append(write_atomic(target, script))
        replays.append(ident)
        changed = True
    return replays, outcomes, changed


def _table_rows(stats: Mapping[str, Any]) -> list[tuple[str, str]]:
    players = ", ".join(f"{n} players: {count}" for n, count in stats["players"].items())
    rows = [
        ("Games", str(stats["games"])),
        ("Rounds", str(stats["rounds"])),
        ("Tables", players or "–"),
        ("Null-bid rate", _percent(stats["null_bid_rate"])),
        ("Average top bid", _number(stats["average_top_bid"])),
        ("Forced re-bids per round", _number(stats["rebids_per_round"])),
        ("Redeals", str(stats["redeals"])),
    ]
    for suit, rate in stats["trump_rates"].items():
        label = (
            f"Trump {SUIT_SYMBOLS[suit]} {SUIT_NAMES[suit]}" if suit in SUIT_NAMES else "No trump"
        )
        rows.append((label, _percent(rate)))
    return rows
