"""The tournament as the site reads it: everything of a tournament's database in one value
(:class:`Tournament`, :func:`load_tournament`), and the names of things on the site (bots'
slugs, games' ids)."""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from ohseven.core.rules import GAMES, OH_SEVEN
from ohseven.referee.plan.stopping import META_KEY as STOPPING_KEY
from ohseven.referee.plan.stopping import Plan
from ohseven.referee.records import GameRecord
from ohseven.referee.results.ratings import Ratings, game_ranks
from ohseven.referee.results.store import Store, StoredGame, StoreError
from ohseven.referee.secret import SecretError, load_secret, secret_from_seed

__all__ = [
    "PublishError",
    "Tournament",
    "game_id",
    "load_tournament",
    "new_ratings",
    "rated_records",
    "slugify",
    "unique_slugs",
]


class PublishError(Exception):
    """A tournament directory that cannot be published."""


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
    #: a league's bots left out because they could not start: (name, why)
    refused: tuple[tuple[str, str], ...] = ()

    @property
    def revealed(self) -> bool:
        return self.secret is not None

    @property
    def records(self) -> list[GameRecord]:
        return [stored.record for stored in self.games]


#: the store's meta key of a league's bots that could not start (name -> why)
REFUSED_KEY = "refused"


def _refused(text: str | None) -> tuple[tuple[str, str], ...]:
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError:
        return ()
    if not isinstance(value, dict):
        return ()
    return tuple(sorted((str(name), str(why)) for name, why in value.items()))


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


def _logs_shown(config: Mapping[str, Any], complete: bool) -> bool:
    """Whether the site shows the bots' output (``site_logs``): a bot's traces tell its rivals
    its strategy, so by default only once the tournament is complete."""
    shown = config.get("site_logs", "complete")
    return shown == "always" or (shown != "never" and complete)


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
        matches_total, games_total = store.scheduled()
        # rows are written as matches are scheduled: the referee keeps the totals in meta
        if meta.get("games_total", "").isdigit():
            games_total = int(meta["games_total"])
            matches_total = int(meta.get("matches_total", matches_total))
        matches_done = len(done)
        logs = store.all_logs()
    names: list[str] = []
    for entry in config.get("bots") or []:
        if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
            names.append(entry["name"])
    for stored in games:
        names.extend(stored.record.seats)
    raw_ratings = config.get("ratings")
    ratings_config: Mapping[str, Any] = raw_ratings if isinstance(raw_ratings, Mapping) else {}
    complete = len(games) == games_total > 0
    seed, secret = _revealed_secret(folder, config, complete)
    logs = logs if _logs_shown(config, complete) else {}
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
        refused=_refused(meta.get(REFUSED_KEY)),
    )


def _game_of(games: Sequence[StoredGame]) -> str | None:
    for stored in games:
        game = stored.record.stats.get("game") if isinstance(stored.record.stats, dict) else None
        if game in GAMES:
            return game
    return None


def new_ratings(tournament: Tournament) -> Ratings:
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
