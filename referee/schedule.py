"""The deterministic schedule of a tournament: which bots meet, in which seats, on which deals.

The grain is the *table*: one :class:`~.records.MatchSpec` per group of bots and repeat. A table
of ``k`` bots plays ``games_per_table`` deals, each ``k`` times with the seats rotated so that
every bot sits in every seat once per deal; all rotations of a deal share one game seed, so they
replay the same cards (duplicate play). Tables of the same size in the same repeat play the same
deals too. Round-robin: every combination of ``k`` bots, for each table size. Gauntlet: every
candidate against every combination of ``k - 1`` bots of the field (the non-candidates).

Every match and every game has a canonical index: its place in the schedule. Ratings are applied
in that order, whatever order the games finish in.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator

import attrs

from .config import TourneyConfig
from .records import MatchSpec

__all__ = ["ScheduledMatch", "build_schedule", "derive_seed", "schedule_size"]


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


def derive_seed(seed: int, *parts: object) -> int:
    """A 63-bit seed from the tournament ``seed`` and ``parts``, stable across Python versions."""
    text = "/".join(str(part) for part in (seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def _tables(config: TourneyConfig, size: int) -> Iterator[tuple[int, ...]]:
    names = config.bot_names
    if config.schedule.type == "gauntlet":
        candidates = [names.index(name) for name in config.schedule.candidates]
        field = [i for i in range(len(names)) if i not in candidates]
        for candidate in candidates:
            for others in itertools.combinations(field, size - 1):
                yield (candidate, *others)
    else:
        yield from itertools.combinations(range(len(names)), size)


def build_schedule(config: TourneyConfig) -> tuple[ScheduledMatch, ...]:
    """Every match of the tournament, in canonical order (repeat, table size, table)."""
    matches: list[ScheduledMatch] = []
    first_game = 0
    per_table = config.schedule.games_per_table
    for repeat in range(config.schedule.repeats):
        for size in config.table_sizes:
            deal_seeds = [
                derive_seed(config.seed, "deal", size, repeat, deal) for deal in range(per_table)
            ]
            for table in _tables(config, size):
                seatings = tuple(
                    tuple((seat + rotation) % size for seat in range(size))
                    for _ in range(per_table)
                    for rotation in range(size)
                )
                seeds = tuple(seed for seed in deal_seeds for _ in range(size))
                index = len(matches)
                spec = MatchSpec(
                    match_id=f"m{index:05d}",
                    rules=config.rules,
                    bots=tuple(config.bots[i].spec for i in table),
                    seatings=seatings,
                    seeds=seeds,
                    time_control=config.time_control,
                    fallback_seed=derive_seed(config.seed, "fallback", index),
                )
                matches.append(ScheduledMatch(index, first_game, spec))
                first_game += len(seeds)
    return tuple(matches)


def schedule_size(config: TourneyConfig) -> tuple[int, int]:
    """(matches, games) of the tournament."""
    schedule = build_schedule(config)
    return len(schedule), sum(match.games for match in schedule)
