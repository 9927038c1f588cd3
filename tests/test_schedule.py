"""The schedule: every table, every seat, deals of their own or duplicated, canonical order,
determinism from the secret and the bots' names."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.referee.plan.loader import load_config_text
from ohseven.referee.plan.schedule import (
    SchedulePlan,
    build_schedule,
    draw_wave,
    iter_schedule,
    league_match,
    schedule_size,
)

SECRET = b"s" * 32


def config_of(tmp: Path, bots: int, sizes: list[int], order=None, **schedule):
    (tmp / "b.py").write_text("")
    lines = [
        "name: s",
        "game: oh-seven",
        f"table_size: {sizes}",
        "bots:",
        *(f"  - {{name: b{i}, file: b.py}}" for i in (order or range(bots))),
        f"schedule: {dict(schedule) or {}}".replace("'", ""),
        "seed: 5",
    ]
    return load_config_text("\n".join(lines) + "\n", base_dir=tmp)


class TestRoundRobin:
    @settings(max_examples=25, deadline=None)
    @given(
        bots=st.integers(2, 6),
        size=st.integers(2, 5),
        games=st.integers(1, 3),
        repeats=st.integers(1, 2),
    )
    def test_counts_and_seats(self, tmp_path_factory, bots, size, games, repeats) -> None:
        """C(n, k) tables x k rotations x games x repeats; every bot in every seat equally."""
        size = min(size, bots)
        tmp = tmp_path_factory.mktemp("rr")
        config = config_of(tmp, bots, [size], games_per_table=games, repeats=repeats)
        schedule = build_schedule(SchedulePlan.of(config), SECRET)
        assert len(schedule) == math.comb(bots, size) * repeats
        assert schedule_size(config)[1] == len(schedule) * size * games
        for match in schedule:
            seats = Counter()
            for seating in match.spec.seatings:
                assert sorted(seating) == list(range(size))
                seats.update(enumerate(seating))
            assert set(seats.values()) == {games}  # bot b sat in seat s once per deal
        tables = Counter(frozenset(m.bot_names) for m in schedule)
        assert set(tables.values()) == {repeats}
        assert len(tables) == math.comb(bots, size)

    def test_duplicate_rotations_replay_the_same_deal(self, tmp_path: Path) -> None:
        """Duplicate deals: the table's deals are replayed in each of its k rotations, and no two
        tables share a deal."""
        config = config_of(tmp_path, 4, [3], games_per_table=2, deals="duplicate")
        tables = []
        for match in build_schedule(SchedulePlan.of(config), SECRET):
            seeds, seatings = match.spec.seeds, match.spec.seatings
            assert seeds[0] != seeds[1] and seeds == seeds[:2] * 3  # both deals, each rotation
            assert seatings[0] == seatings[1] and len(set(seatings[::2])) == 3
            tables.append(set(seeds))
        assert len(set().union(*tables)) == sum(len(t) for t in tables)

    def test_independent_deals_never_repeat(self, tmp_path: Path) -> None:
        """Independent deals (the default): every game of the tournament has a deal of its own."""
        config = config_of(tmp_path, 5, [2, 3], games_per_table=3, repeats=2)
        assert config.schedule.deals == "independent"
        seeds = [
            seed
            for match in build_schedule(SchedulePlan.of(config), SECRET)
            for seed in match.spec.seeds
        ]
        assert len(seeds) == len(set(seeds)) == schedule_size(config)[1]

    def test_canonical_indices_are_consecutive(self, tmp_path: Path) -> None:
        """Each match's games follow the previous match's, from 0, without gaps."""
        config = config_of(tmp_path, 5, [2, 3], games_per_table=2, repeats=2)
        schedule = build_schedule(SchedulePlan.of(config), SECRET)
        expected = 0
        for index, match in enumerate(schedule):
            assert match.index == index and match.first_game == expected
            expected += match.games
        assert len({m.spec.match_id for m in schedule}) == len(schedule)

    def test_deterministic_and_secret_dependent(self, tmp_path: Path) -> None:
        """The same config and secret give the same schedule; another secret, other deals."""
        config = config_of(tmp_path, 4, [3])
        assert build_schedule(SchedulePlan.of(config), SECRET) == build_schedule(
            SchedulePlan.of(config), SECRET
        )
        other = build_schedule(SchedulePlan.of(config), b"t" * 32)
        assert build_schedule(SchedulePlan.of(config), SECRET)[0].spec.seeds != other[0].spec.seeds
        assert [m.bot_names for m in other] == [
            m.bot_names for m in build_schedule(SchedulePlan.of(config), SECRET)
        ]

    def test_the_order_of_the_bots_in_the_config_changes_nothing(self, tmp_path: Path) -> None:
        """Tables, seats and deals follow from the bots' names, not from their order."""
        for deals in ("independent", "duplicate"):
            listed = config_of(tmp_path, 5, [2, 3], deals=deals, games_per_table=2)
            shuffled = config_of(
                tmp_path, 5, [2, 3], order=[3, 0, 4, 2, 1], deals=deals, games_per_table=2
            )
            assert listed.bot_names != shuffled.bot_names
            assert build_schedule(SchedulePlan.of(listed), SECRET) == build_schedule(
                SchedulePlan.of(shuffled), SECRET
            )


class TestGauntlet:
    def test_each_candidate_meets_every_field_combination(self, tmp_path: Path) -> None:
        """Gauntlet: candidate x C(field, k-1) tables, the candidate at every one of them."""
        config = config_of(
            tmp_path, 5, [3], type="gauntlet", candidates=["b0", "b1"], games_per_table=1
        )
        schedule = build_schedule(SchedulePlan.of(config), SECRET)
        field = ["b2", "b3", "b4"]
        expected = {
            (candidate, *others)
            for candidate in ("b0", "b1")
            for others in itertools.combinations(field, 2)
        }
        assert {m.bot_names for m in schedule} == expected
        assert len(schedule) == len(expected)

    def test_one_repeat_without_the_stopped_candidates(self, tmp_path: Path) -> None:
        """iter_schedule of some repeats, leaving out a candidate's tables (a stopping rule),
        yields exactly those matches of the whole schedule: same indices, same deals."""
        config = config_of(tmp_path, 5, [2, 3], type="gauntlet", candidates=["b0", "b1"], repeats=3)
        schedule = build_schedule(SchedulePlan.of(config), SECRET)
        per_repeat = len(schedule) // 3
        for repeats, out in (((1,), {"b0"}), ((0, 2), {"b1"}), ((2,), set()), ((1,), {"b0", "b1"})):
            expected = [
                m
                for m in schedule
                if m.index // per_repeat in repeats and not out & set(m.bot_names)
            ]
            found = list(
                iter_schedule(
                    SchedulePlan.of(config),
                    SECRET,
                    {per_repeat + 1},
                    repeats=repeats,
                    leave_out=out,
                )
            )
            assert found == [m for m in expected if m.index != per_repeat + 1], (repeats, out)


class TestLazySizes:
    @settings(max_examples=30, deadline=None)
    @given(
        bots=st.integers(2, 7),
        sizes=st.lists(st.integers(2, 5), min_size=1, max_size=3, unique=True),
        games=st.integers(1, 3),
        repeats=st.integers(1, 2),
        gauntlet=st.booleans(),
    )
    def test_counted_sizes_equal_the_built_ones(
        self, tmp_path_factory, bots, sizes, games, repeats, gauntlet
    ) -> None:
        """schedule_size counts (matches, games) arithmetically: those of the built schedule."""
        sizes = [size for size in sizes if size <= (bots - 1 if gauntlet else bots)] or [2]
        extra = {"type": "gauntlet", "candidates": ["b0"]} if gauntlet else {}
        config = config_of(
            tmp_path_factory.mktemp("lazy"),
            bots,
            sizes,
            games_per_table=games,
            repeats=repeats,
            **extra,
        )
        schedule = build_schedule(SchedulePlan.of(config), SECRET)
        assert schedule_size(config) == (len(schedule), sum(m.games for m in schedule))

    def test_iterating_skips_done_matches_and_builds_nothing_ahead(self, tmp_path: Path) -> None:
        """iter_schedule yields the built schedule minus the skipped indices, lazily."""
        config = config_of(tmp_path, 6, [2, 3], games_per_table=2)
        schedule = build_schedule(SchedulePlan.of(config), SECRET)
        skipped = {0, 3, 7}
        assert list(iter_schedule(SchedulePlan.of(config), SECRET, skipped)) == [
            m for m in schedule if m.index not in skipped
        ]
        many = config_of(tmp_path, 100, [4])  # 3.9 million tables: never built whole
        first = list(itertools.islice(iter_schedule(SchedulePlan.of(many), SECRET), 3))
        assert [m.index for m in first] == [0, 1, 2] and schedule_size(many)[0] == math.comb(100, 4)


def league_of(tmp: Path, bots: int, sizes: list[int], games: int = 10**6, per_table: int = 1):
    return config_of(tmp, bots, sizes, type="league", games=games, games_per_table=per_table)


def simulate(config, waves: int, ratings=None, secret: bytes = SECRET):
    """Draw ``waves`` waves with fixed ratings (default: the prior); (games, meetings)."""
    names = config.bot_names
    ratings = ratings or {name: (25.0, 25 / 3) for name in names}
    played: Counter[str] = Counter()
    met: Counter[tuple[str, str]] = Counter()
    for wave in range(waves):
        for table in draw_wave(
            SchedulePlan.of(config), secret, wave, names, ratings, played, 10**9
        ):
            for name in table:
                played[name] += len(table) * config.schedule.games_per_table
            for a, b in itertools.combinations(table, 2):
                met[(a, b)] += 1
    return played, met


class TestLeagueWaves:
    @settings(max_examples=15, deadline=None)
    @given(bots=st.integers(5, 23), sizes=st.sampled_from([[2], [3, 4], [2, 3, 4], [4, 5]]))
    def test_games_per_bot_stay_within_a_table(self, tmp_path_factory, bots, sizes) -> None:
        """Over many waves every bot plays about as often: the spread is below two tables."""
        config = league_of(tmp_path_factory.mktemp("wave"), bots, sizes)
        played, _ = simulate(config, 30)
        counts = [played[name] for name in config.bot_names]
        assert min(counts) > 0 and max(counts) - min(counts) <= 2 * max(sizes), counts

    def test_every_wave_seats_each_bot_at_most_once(self, tmp_path: Path) -> None:
        """A wave's tables are disjoint, sorted, of the configured sizes."""
        config = league_of(tmp_path, 17, [3, 4])
        names = config.bot_names
        prior = {name: (25.0, 8.0) for name in names}
        tables = draw_wave(SchedulePlan.of(config), SECRET, 0, names, prior, {}, 10**6)
        seated = [name for table in tables for name in table]
        assert len(seated) == len(set(seated)) >= 17 - 2
        assert all(list(t) == sorted(t) and len(t) in (3, 4) for t in tables)

    def test_close_ratings_meet_more(self, tmp_path: Path) -> None:
        """Settled bots (low sigma) spread out in mu meet their neighbours far more often than
        bots far above or below them, yet the spread of opponents stays wide."""
        config = league_of(tmp_path, 16, [4])
        ratings = {f"b{i}": (10.0 * i, 1.0) for i in range(16)}
        _, met = simulate(config, 200, ratings)
        pairs = list(itertools.combinations(range(16), 2))

        def mean(gap):
            chosen = [(i, j) for i, j in pairs if gap(j - i)]
            return sum(met[tuple(sorted((f"b{i}", f"b{j}")))] for i, j in chosen) / len(chosen)

        assert mean(lambda gap: gap == 1) > 3 * mean(lambda gap: gap >= 5)
        assert len(met) > 60  # of the 120 pairs

    def test_uncertain_bots_meet_a_wider_field(self, tmp_path: Path) -> None:
        """A bot whose rating is uncertain (high sigma) meets the bots far from its mu more
        often than a settled bot of the same mu does: its order against them is still open."""
        config = league_of(tmp_path, 10, [2])
        ratings = {f"b{i}": (10.0 * i, 1.0) for i in range(8)}
        ratings.update({"b8": (35.0, 12.0), "b9": (35.0, 1.0)})  # uncertain, settled
        _, met = simulate(config, 300, ratings)
        far = ["b0", "b1", "b6", "b7"]  # 25 or more from 35

        def far_meetings(name):
            return sum(met[tuple(sorted((name, other)))] for other in far)

        assert far_meetings("b8") > 2 * far_meetings("b9")

    def test_equal_ratings_spread_the_opponents(self, tmp_path: Path) -> None:
        """With equal ratings the tables are drawn at random: after 30 waves every bot has met
        most of the field."""
        config = league_of(tmp_path, 12, [3])
        _, met = simulate(config, 30)
        for name in config.bot_names:
            assert sum(1 for pair in met if name in pair) >= 8  # of 11 others

    def test_deterministic_from_the_secret_the_wave_and_the_names(self, tmp_path: Path) -> None:
        """The same secret, wave and ratings draw the same tables whatever the order of the
        bots; another wave or secret draws others."""
        config = league_of(tmp_path, 12, [3, 4])
        names = list(config.bot_names)
        prior = {name: (25.0, 8.0) for name in names}

        def draw(wave, order, secret=SECRET):
            return draw_wave(SchedulePlan.of(config), secret, wave, order, prior, {}, 10**6)

        assert draw(3, names) == draw(3, names[::-1])
        assert draw(3, names) != draw(4, names) and draw(3, names) != draw(3, names, b"u" * 32)

    def test_the_budget_leaves_out_the_tables_past_it(self, tmp_path: Path) -> None:
        """A wave holds no more games than the budget left; none when no table fits."""
        config = league_of(tmp_path, 12, [3, 4], per_table=2)
        prior = {name: (25.0, 8.0) for name in config.bot_names}
        tables = draw_wave(SchedulePlan.of(config), SECRET, 0, config.bot_names, prior, {}, 15)
        assert 0 < sum(len(t) * 2 for t in tables) <= 15
        assert draw_wave(SchedulePlan.of(config), SECRET, 0, config.bot_names, prior, {}, 5) == []

    def test_league_matches_deal_from_the_wave_and_the_table(self, tmp_path: Path) -> None:
        """A league's match is dealt from the secret, its wave and its table: same inputs, same
        deals; another wave, other deals."""
        config = league_of(tmp_path, 5, [3], per_table=2)
        table = ("b0", "b2", "b4")
        one = league_match(SchedulePlan.of(config), SECRET, 7, 40, 2, 1, table)
        assert one == league_match(SchedulePlan.of(config), SECRET, 7, 40, 2, 1, table)
        assert one.bot_names == table and one.games == 6 and one.first_game == 40
        other = league_match(SchedulePlan.of(config), SECRET, 7, 40, 3, 1, table)
        assert set(one.spec.seeds).isdisjoint(other.spec.seeds)


def authored(tmp: Path, authors: list[int], sizes: list[int], **schedule):
    """``config_of`` with bot ``i`` written by author ``authors[i]``."""
    (tmp / "b.py").write_text("")
    lines = [
        "name: s", "game: oh-seven", f"table_size: {sizes}", "bots:",
        *(f"  - {{name: b{i}, file: b.py, author: a{a}}}" for i, a in enumerate(authors)),
        f"schedule: {dict(schedule) or {}}".replace("'", ""), "seed: 5",
    ]  # fmt: skip
    return load_config_text("\n".join(lines) + "\n", base_dir=tmp)


class TestAuthors:
    """Two bots of one author never sit at one table (they could share their hands)."""

    @settings(max_examples=25, deadline=None)
    @given(authors=st.lists(st.integers(0, 3), min_size=3, max_size=7), size=st.integers(2, 3))
    def test_round_robin_keeps_authors_apart(self, tmp_path_factory, authors, size) -> None:
        config = authored(tmp_path_factory.mktemp("a"), authors, [size], games_per_table=1)
        by = {bot.name: bot.author for bot in config.bots}
        matches = build_schedule(SchedulePlan.of(config), SECRET)
        for match in matches:
            names = match.bot_names
            assert len({by[name] for name in names}) == len(names), names
        # every table of bots of distinct authors is played, and counted
        apart = [
            table
            for table in itertools.combinations(sorted(by), size)
            if len({by[name] for name in table}) == size
        ]
        assert sorted(tuple(sorted(m.bot_names)) for m in matches) == sorted(apart)
        assert schedule_size(config) == (len(apart), len(apart) * size)

    @settings(max_examples=25, deadline=None)
    @given(
        authors=st.lists(st.integers(0, 4), min_size=4, max_size=12),
        wave=st.integers(0, 50),
    )
    def test_league_waves_keep_authors_apart(self, tmp_path_factory, authors, wave) -> None:
        config = authored(tmp_path_factory.mktemp("l"), authors, [2, 3], type="league", games=100)
        by = {bot.name: bot.author for bot in config.bots}
        names = sorted(by)
        prior = dict.fromkeys(names, (25.0, 25 / 3))
        tables = draw_wave(SchedulePlan.of(config), SECRET, wave, names, prior, {}, 10**6)
        seated = [name for table in tables for name in table]
        assert len(seated) == len(set(seated))
        for table in tables:
            assert len({by[name] for name in table}) == len(table), table

    def test_without_authors_nothing_changes(self, tmp_path) -> None:
        """Bots without an author are nobody's: the schedule is the one it always was."""
        plain = config_of(tmp_path, 5, [3])
        assert schedule_size(plain) == (math.comb(5, 3), math.comb(5, 3) * 3)

    def test_two_bots_of_one_author_never_empty_a_league_wave(self, tmp_path) -> None:
        """The bots to seat were the first of the order (fewest games), whatever their
        authors: when two bots of one author were among the three of the wave's only table,
        no table was drawn and the league ended as complete (an author uploading a second bot
        ended the competition for everyone)."""
        config = authored(tmp_path, [0, 1, 2, 3, 3], [3], type="league", games=10**6)
        names = sorted(bot.name for bot in config.bots)
        prior = dict.fromkeys(names, (25.0, 25 / 3))
        by = {bot.name: bot.author for bot in config.bots}
        for wave in range(40):
            tables = draw_wave(SchedulePlan.of(config), SECRET, wave, names, prior, {}, 10**6)
            assert len(tables) == 1, wave
            assert len({by[name] for name in tables[0]}) == 3
