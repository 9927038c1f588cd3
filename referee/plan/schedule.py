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

The functions read a :class:`SchedulePlan`, what the configuration says of the schedule read
once (:meth:`SchedulePlan.of`, part of the run's ``run_plan.RunPlan``), never the configuration;
:func:`schedule_size` sizes a configuration for those that hold one (the command line's check,
the server's final round).
"""

from __future__ import annotations

import itertools
import json
import math
import random
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence

import attrs
from ohseven.core.rules import Rules
from ohseven.referee.plan.config import DEAL_MODES, StopRule, TourneyConfig
from ohseven.referee.records import BotSpec, MatchSpec, TimeControl
from ohseven.referee.secret import derive_seed

__all__ = [
    "SchedulePlan",
    "ScheduledMatch",
    "build_schedule",
    "iter_schedule",
    "draw_wave",
    "newcomer_tables",
    "league_match",
    "derive_seed",
    "schedule_size",
    "DEAL_MODES",
]


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


@attrs.frozen
class SchedulePlan:
    """What the schedule is drawn from, read once from the configuration (:meth:`of`): the
    ``schedule`` section, the table sizes, the rules and clock of every match, and the bots
    (as staged) with their authors. A league's bots change between waves: its roster gives
    the next wave's plan."""

    #: ``round-robin``, ``gauntlet`` or ``league``
    kind: str
    rules: Rules
    time_control: TimeControl
    table_sizes: tuple[int, ...]
    games_per_table: int = 1
    repeats: int = 1
    #: ``independent`` or ``duplicate`` (``DEAL_MODES``)
    deals: str = "independent"
    #: a gauntlet's candidates
    candidates: tuple[str, ...] = ()
    #: a league's budget of games (0 for the other kinds)
    games: int = 0
    #: a gauntlet's stopping rule, or None
    stop: StopRule | None = None
    bots: tuple[BotSpec, ...] = ()
    #: (bot name, author) of the bots that name their author
    authors: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, config: TourneyConfig) -> SchedulePlan:
        """The plan of ``config``'s schedule, with its bots as they are (staged or not)."""
        sched = config.schedule
        return cls(
            kind=sched.type,
            rules=config.rules,
            time_control=config.time_control,
            table_sizes=config.table_sizes,
            games_per_table=sched.games_per_table,
            repeats=sched.repeats,
            deals=sched.deals,
            candidates=sched.candidates,
            games=sched.games,
            stop=sched.stop,
            bots=tuple(bot.spec for bot in config.bots),
            authors=tuple((bot.name, bot.author) for bot in config.bots if bot.author is not None),
        )

    @property
    def bot_names(self) -> tuple[str, ...]:
        return tuple(bot.name for bot in self.bots)

    def size(self) -> tuple[int, int]:
        """(matches, games) of the tournament, counted without building it (deals do not
        change its size). A league's games are its budget and its matches are drawn as it
        goes: (0, games)."""
        if self.kind == "league":
            return 0, self.games
        by = authors(self)
        if len(set(by.values())) < len(by):  # some tables are left out: counted one by one
            tables_of = {size: sum(1 for _ in _tables(self, size)) for size in self.table_sizes}
            matches = sum(tables_of.values())
            games = sum(count * size * self.games_per_table for size, count in tables_of.items())
            return matches * self.repeats, games * self.repeats
        names = len(self.bots)
        candidates = len(set(self.candidates))
        matches = games = 0
        for size in self.table_sizes:
            if self.kind == "gauntlet":
                tables = candidates * math.comb(names - candidates, size - 1)
            else:
                tables = math.comb(names, size)
            matches += tables
            games += tables * size * self.games_per_table
        return matches * self.repeats, games * self.repeats


def authors(schedule: SchedulePlan) -> dict[str, str]:
    """Bot name -> its author, for the bots that name one."""
    return dict(schedule.authors)


def _apart(table: Sequence[str], by: Mapping[str, str]) -> bool:
    """No two bots of ``table`` share an author."""
    written = [by[name] for name in table if name in by]
    return len(written) == len(set(written))


def _tables(schedule: SchedulePlan, size: int) -> Iterator[tuple[str, ...]]:
    """The tables of ``size`` bots, each as its bots' names in sorted order; never two bots of
    one author at a table."""
    names = sorted(schedule.bot_names)
    by = authors(schedule)
    if schedule.kind == "gauntlet":
        candidates = sorted(schedule.candidates)
        field = [name for name in names if name not in candidates]
        found: Iterator[tuple[str, ...]] = (
            tuple(sorted((candidate, *others)))
            for candidate in candidates
            for others in itertools.combinations(field, size - 1)
        )
    else:
        found = itertools.combinations(names, size)
    yield from (table for table in found if _apart(table, by))


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


def _positions(
    schedule: SchedulePlan, repeats: Iterable[int] | None = None
) -> Iterator[tuple[int, int, int, tuple[str, ...]]]:
    """(match index, first game, repeat, table) of every match in canonical order, cheaply (no
    deal is derived): what a resumed run skips through. ``repeats``: only those (ascending)."""
    per_table = schedule.games_per_table
    matches, total = schedule.size()
    every = range(schedule.repeats)
    for repeat in every if repeats is None else repeats:
        index = repeat * (matches // schedule.repeats)
        first_game = repeat * (total // schedule.repeats)
        for size in schedule.table_sizes:
            games = size * per_table
            for table in _tables(schedule, size):
                yield index, first_game, repeat, table
                index += 1
                first_game += games


def _match(
    schedule: SchedulePlan,
    by_name: Mapping[str, BotSpec],
    secret: bytes,
    index: int,
    first_game: int,
    key: str,
    table: Sequence[str],
) -> ScheduledMatch:
    size = len(table)
    per_table = schedule.games_per_table
    seatings, seeds = _games(secret, schedule.deals, key, size, per_table)
    spec = MatchSpec(
        match_id=f"m{index:05d}",
        rules=schedule.rules,
        bots=tuple(by_name[name] for name in table),
        seatings=seatings,
        seeds=seeds,
        time_control=schedule.time_control,
        fallback_seed=derive_seed(secret, "fallback", key),
    )
    return ScheduledMatch(index, first_game, spec)


def iter_schedule(
    schedule: SchedulePlan,
    secret: bytes,
    skip: Container[int] = frozenset(),
    *,
    repeats: Iterable[int] | None = None,
    leave_out: Container[str] = frozenset(),
) -> Iterator[ScheduledMatch]:
    """The matches of a round-robin or gauntlet in canonical order (repeat, table size, table),
    one at a time, leaving out the indices in ``skip``; deals derived from ``secret``.
    ``repeats``: only those repeats (ascending); ``leave_out``: not the tables of these bots (a
    gauntlet's stopped candidates). Indices stay those of the whole schedule."""
    if schedule.kind == "league":
        raise ValueError("a league is drawn wave by wave: see draw_wave")
    by_name = {bot.name: bot for bot in schedule.bots}
    for index, first_game, repeat, table in _positions(schedule, repeats):
        if index in skip or any(name in leave_out for name in table):
            continue
        key = json.dumps([repeat, list(table)], separators=(",", ":"))
        yield _match(schedule, by_name, secret, index, first_game, key, table)


def build_schedule(schedule: SchedulePlan, secret: bytes) -> tuple[ScheduledMatch, ...]:
    """Every match of a round-robin or gauntlet, in canonical order (see :func:`iter_schedule`;
    this holds them all in memory: for small schedules and tests)."""
    return tuple(iter_schedule(schedule, secret))


def schedule_size(config: TourneyConfig) -> tuple[int, int]:
    """(matches, games) of the configuration's tournament (:meth:`SchedulePlan.size`)."""
    return SchedulePlan.of(config).size()


# --------------------------------------------------------------------------- leagues


def league_match(
    schedule: SchedulePlan,
    secret: bytes,
    index: int,
    first_game: int,
    wave: int,
    table_no: int,
    table: Sequence[str],
) -> ScheduledMatch:
    """Match ``index`` of a league: table ``table_no`` of wave ``wave`` (its bots' names in
    sorted order); its deals derived from the secret, the wave and the table."""
    key = json.dumps(["league", wave, table_no, list(table)], separators=(",", ":"))
    by_name = {bot.name: bot for bot in schedule.bots}
    return _match(schedule, by_name, secret, index, first_game, key, table)


def _sizes(rng: random.Random, sizes: Sequence[int], players: int) -> list[int]:
    """Table sizes for a wave of ``players`` bots, drawn uniformly among the configured sizes
    that leave a seatable rest (the bots left over sit the wave out)."""
    low = min(sizes)
    chosen: list[int] = []
    rest = players
    while rest >= low:
        fits = [size for size in sizes if size == rest or low <= rest - size]
        fits = fits or [size for size in sizes if size <= rest]
        size = rng.choice(fits)
        chosen.append(size)
        rest -= size
    return chosen


def draw_wave(
    schedule: SchedulePlan,
    secret: bytes,
    wave: int,
    active: Sequence[str],
    ratings: Mapping[str, tuple[float, float]],
    played: Mapping[str, int],
    budget: int,
) -> list[tuple[str, ...]]:
    """The tables of wave ``wave`` of a league, each as its bots' names in sorted order.

    Every active bot gets at most one table. The bots with the fewest games (then the highest
    sigma) are seated first and at the largest tables, so the games per bot stay level; the
    bots left over when the sizes do not add up sit this wave out. Within the bots of one
    table size, each bot draws a performance from its rating, ``mu`` plus a normal deviate of
    variance ``sigma**2 + BETA**2`` (a few draw from anywhere in the field instead:
    ``EXPLORE``), the bots are sorted by it and consecutive bots share a table. So bots whose
    order is still uncertain (close ``mu``, or a high ``sigma``) sit together most often, a
    new bot's high sigma takes it across the whole field, and the spread of opponents stays
    wide. ``budget``: the games left; tables that would pass it are left out. Deterministic:
    the RNG is seeded from the secret and the wave number, and only the names (sorted)
    matter, not their order in ``active``.
    """
    names = sorted(set(active))
    by = authors(schedule)
    rng = random.Random(derive_seed(secret, "wave", wave))
    per_table = schedule.games_per_table
    if len(names) < min(schedule.table_sizes):
        return []
    tiebreak = {name: rng.random() for name in names}
    order = sorted(names, key=lambda n: (played.get(n, 0), -ratings[n][1], tiebreak[n]))
    sizes: list[int] = []
    for size in sorted(_sizes(rng, schedule.table_sizes, len(names)), reverse=True):
        if size * per_table <= budget:
            sizes.append(size)
            budget -= size * per_table
    low = min(ratings[name][0] for name in names)
    high = max(ratings[name][0] for name in names)
    tables: list[tuple[str, ...]] = []
    waiting = list(order)
    for size in sorted(set(sizes), reverse=True):
        count = sizes.count(size)
        group = _group(waiting, count * size, count, by)
        waiting = [name for name in waiting if name not in group]
        drawn = {}
        for name in group:
            mu, sigma = ratings[name]
            if rng.random() < EXPLORE:
                drawn[name] = rng.uniform(low, high)
            else:
                drawn[name] = rng.gauss(mu, math.sqrt(sigma**2 + BETA**2))
        line = sorted(group, key=lambda name: (drawn[name], name))
        tables += _seat(line, size, by)
    return tables


def newcomer_tables(
    schedule: SchedulePlan,
    secret: bytes,
    wave: int,
    newcomers: Sequence[str],
    field: Sequence[str],
    budget: int,
) -> list[tuple[str, ...]]:
    """The tables of a newcomer wave: bots that joined a league while a wave was being played
    each get one table at once (of the smallest configured size) instead of waiting for the
    next wave, against opponents drawn uniformly from ``field`` (the bots already playing),
    never two of one author at a table. Each newcomer (in sorted order) is seated if a table
    that fits the games left (``budget``) and its authors can be found; the others wait for
    the next wave. Deterministic: the RNG is seeded from the secret and the wave number, and
    only the names (sorted) matter; ratings and games played are not used (they depend on
    which matches of the running wave have finished, so on the number of workers)."""
    by = authors(schedule)
    rng = random.Random(derive_seed(secret, "newcomers", wave))
    size = min(schedule.table_sizes)
    games = size * schedule.games_per_table
    pool = sorted(set(field) - set(newcomers))
    tables: list[tuple[str, ...]] = []
    for name in sorted(set(newcomers)):
        if games > budget:
            break
        rng.shuffle(pool)
        table = [name]
        for other in pool:
            if len(table) == size:
                break
            if _apart([*table, other], by):
                table.append(other)
        if len(table) == size:
            tables.append(tuple(sorted(table)))
            budget -= games
    return tables


def _group(order: Sequence[str], wanted: int, tables: int, by: Mapping[str, str]) -> list[str]:
    """The first ``wanted`` bots of ``order`` taking at most ``tables`` bots of one author (a
    bot past that waits for a later group or wave): ``tables`` tables of distinct authors can
    then be made of them. The first bots of the order alone could hold two bots of one author
    for one table, which no seating separates: the wave was empty, and the league complete."""
    group: list[str] = []
    taken: dict[str, int] = {}
    for name in order:
        if len(group) == wanted:
            break
        author = by.get(name)
        if author is not None and taken.get(author, 0) >= tables:
            continue
        group.append(name)
        if author is not None:
            taken[author] = taken.get(author, 0) + 1
    return group


def _seat(line: Sequence[str], size: int, by: Mapping[str, str]) -> list[tuple[str, ...]]:
    """Consecutive bots of ``line`` share a table, but never two of one author: a bot whose
    author already sits at the table waits for the next one (a bot that finds no table sits
    the wave out)."""
    waiting = list(line)
    tables = []
    while len(waiting) >= size:
        table: list[str] = []
        taken: set[str] = set()
        index = 0
        while len(table) < size and index < len(waiting):
            author = by.get(waiting[index])
            if author is None or author not in taken:
                table.append(waiting.pop(index))
                if author is not None:
                    taken.add(author)
            else:
                index += 1
        if len(table) < size:
            break
        tables.append(tuple(sorted(table)))
    return tables


#: TrueSkill's default performance deviation (mu 25, sigma 25/3, beta 25/6)
BETA = 25 / 6
#: the share of bots that draw their place in a wave uniformly across the field
EXPLORE = 0.1
