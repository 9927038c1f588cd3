"""The deterministic schedule of a tournament: which bots meet, in which seats, on which deals.

The grain is the *table*: one :class:`~.records.MatchSpec` per group of bots and repeat. A table
of ``k`` bots plays ``k * games_per_table`` games, the seats rotating from game to game so that
every bot sits in every seat equally often. With ``deals: independent`` (the default) every game
of the tournament has a deal of its own. With ``deals: duplicate`` the table plays its
``games_per_table`` deals once in each of the ``k`` rotations (duplicate play), rotation after
rotation, and the match gives every bot a fresh process before a deal its process has already
seen (see ``match``): one process per bot and rotation. No two tables share a deal, so no bot
process ever sees a deal twice.

Everything follows from the bots' names and the tournament secret, not from the order in which
the configuration lists the bots: tables are combinations of the names in sorted order, and each
deal is ``derive_seed(secret, ...)`` of the table's names. Round-robin: every combination of
``k`` bots, for each table size. Gauntlet: every candidate against every combination of
``k - 1`` bots of the field (the non-candidates).

Every match and every game has a canonical index: its place in the schedule. Ratings are applied
in that order, whatever order the games finish in.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator

import attrs

from .config import DEAL_MODES, TourneyConfig
from .records import MatchSpec
from .secret import derive_seed

__all__ = ["ScheduledMatch", "build_schedule", "derive_seed", "schedule_size", "DEAL_MODES"]



@attrs.frozen
class ScheduledMatch:
    """A match of the schedule: its index, the canonical index of its first game, its spec."""

    index: int
    first_game: int
    spec: MatchSpec

    @property
    def games(self) -> int:
        return len(self.spec.seeds)

    @property
    def bot_names(self) -> tuple[str, ...]:
        return tuple(bot.name for bot in self.spec.bots)


def _tables(config: TourneyConfig, size: int) -> Iterator[tuple[str, ...]]:
    """The tables of ``size`` bots, each as its bots' names in sorted order."""
    names = sorted(config.bot_names)
    if config.schedule.type == "gauntlet":
        candidates = sorted(config.schedule.candidates)
        field = [name for name in names if name not in candidates]
        for candidate in candidates:
            for others in itertools.combinations(field, size - 1):
                yield tuple(sorted((candidate, *others)))
    else:
        yield from itertools.combinations(names, size)


def _games(
    secret: bytes, deals: str, key: str, size: int, per_table: int
) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """(seatings, seeds) of a table's games. Independent: a deal per game, the seats rotating
    from game to game. Duplicate: the table's deals once per rotation, rotation by rotation, so
    that each rotation's fresh processes see every deal once."""
    rotations = [tuple((seat + r) % size for seat in range(size)) for r in range(size)]
    if deals == "duplicate":
        seeds = [derive_seed(secret, "deal", key, deal) for deal in range(per_table)]
        return (
            tuple(rotation for rotation in rotations for _ in range(per_table)),
            tuple(seeds * size),
        )
    games = per_table * size
    return (
        tuple(rotations[game % size] for game in range(games)),
        tuple(derive_seed(secret, "game", key, game) for game in range(games)),
    )


def build_schedule(config: TourneyConfig, secret: bytes) -> tuple[ScheduledMatch, ...]:
    """Every match of the tournament, in canonical order (repeat, table size, table), its deals
    derived from ``secret`` (see ``secret``)."""
    matches: list[ScheduledMatch] = []
    first_game = 0
    per_table = config.schedule.games_per_table
    by_name = {bot.name: bot.spec for bot in config.bots}
    for repeat in range(config.schedule.repeats):
        for size in config.table_sizes:
            for table in _tables(config, size):
                key = json.dumps([repeat, list(table)], separators=(",", ":"))
                seatings, seeds = _games(secret, config.schedule.deals, key, size, per_table)
                index = len(matches)
                spec = MatchSpec(
                    match_id=f"m{index:05d}",
                    rules=config.rules,
                    bots=tuple(by_name[name] for name in table),
                    seatings=seatings,
                    seeds=seeds,
                    time_control=config.time_control,
                    fallback_seed=derive_seed(secret, "fallback", key),
                )
                matches.append(ScheduledMatch(index, first_game, spec))
                first_game += len(seeds)
    return tuple(matches)


def schedule_size(config: TourneyConfig) -> tuple[int, int]:
    """(matches, games) of the tournament (deals do not change its size)."""
    schedule = build_schedule(config, b"size only")
    return len(schedule), sum(match.games for match in schedule)
