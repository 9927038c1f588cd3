"""Uncertainty of the leaderboard: points intervals, superiority, tiers, games to separate."""

from __future__ import annotations

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.core.rules import competition_ranks
from ohseven.referee.records import GameRecord
from ohseven.referee.results.uncertainty import (
    SETTLED,
    DealUnits,
    games_to_separate,
    points_intervals,
    superiority,
    superiority_next,
    tiers,
)


def game(match: str, index: int, seed: int, seats, totals) -> GameRecord:
    return GameRecord(
        match, index, seed, tuple(seats), tuple(totals), tuple(competition_ranks(totals))
    )


def simulated(rng: random.Random, tables: int, games: int, duplicate: bool) -> list[GameRecord]:
    """Tables of a, b, c; a's points are 10 + noise: a deal effect shared by the rotations of a
    duplicated deal plus a per-game part."""
    records = []
    for table in range(tables):
        for deal in range(games):
            seed = deal if duplicate else table * 1000 + deal
            shared = rng.gauss(0, 4)
            for rotation in range(3 if duplicate else 1):
                totals = [round(10 + shared + rng.gauss(0, 3)), rng.randint(0, 20), 5]
                index = deal * 3 + rotation if duplicate else deal
                records.append(game(f"t{table}", index, seed, "abc", totals))
    return records


class TestPointsIntervals:
    def test_coverage_on_independent_deals(self) -> None:
        """Over 200 simulated tournaments the 95% interval of a's points per game holds the
        true mean (10) in between 90% and 99% of them."""
        rng = random.Random(7)
        hits = 0
        for _ in range(200):
            low, high = points_intervals(simulated(rng, 4, 10, False), "abc")["a"]
            hits += low <= 10 <= high
        assert 0.90 <= hits / 200 <= 0.99

    def test_kept_game_by_game_they_are_the_same(self) -> None:
        """``DealUnits`` (the live leaderboard's) gives ``points_intervals`` exactly, whatever
        the order and batches the games come in; only the bots with new games are computed
        again."""
        rng = random.Random(11)
        records = simulated(rng, 3, 6, True)
        units = DealUnits("abcz")
        shuffled = rng.sample(records, len(records))
        for start in range(0, len(shuffled), 7):
            for record in shuffled[start : start + 7]:
                units.add(record)
            seen = shuffled[: start + 7]
            assert units.intervals() == points_intervals(seen, "abcz")
        assert units.changed == set()
        units.add(game("t9", 0, 99, "ab", [3, 4]))
        assert units.changed == {"a", "b"}
        assert units.intervals(0.5) == points_intervals(
            [*records, game("t9", 0, 99, "ab", [3, 4])], "abcz", 0.5
        )

    def test_coverage_on_duplicate_deals(self) -> None:
        """With duplicated deals (a shared deal effect) the interval, clustered on the deal,
        still covers 90% to 99% of the time."""
        rng = random.Random(8)
        hits = 0
        for _ in range(200):
            low, high = points_intervals(simulated(rng, 4, 5, True), "abc")["a"]
            hits += low <= 10 <= high
        assert 0.90 <= hits / 200 <= 0.99

    def test_no_interval_below_two_deals(self) -> None:
        """A bot with one deal (or none) has no interval."""
        records = [game("t", 0, 1, "ab", (3, 4)), game("t", 1, 1, "ab", (5, 2))]
        assert points_intervals(records, "abc") == {"a": None, "b": None, "c": None}

    def test_interval_holds_the_mean(self) -> None:
        """The interval is centred on the points per game."""
        records = [game("t", i, i, "ab", (i, 10 - i)) for i in range(6)]
        low, high = points_intervals(records, "ab")["a"]
        assert low < 2.5 < high and abs((low + high) / 2 - 2.5) < 1e-9


class TestSuperiority:
    @settings(max_examples=50, deadline=None)
    @given(
        st.dictionaries(
            st.sampled_from("abcdef"),
            st.tuples(st.floats(0, 50), st.floats(0.01, 10)),
            min_size=2,
        )
    )
    def test_pairs_sum_to_one(self, ratings) -> None:
        """P(a > b) + P(b > a) = 1 for every pair, each in [0, 1]."""
        table = superiority(ratings)
        for a in ratings:
            for b in ratings:
                if a != b:
                    assert abs(table[a][b] + table[b][a] - 1.0) < 1e-12
                    assert 0.0 <= table[a][b] <= 1.0

    def test_equal_ratings_are_even(self) -> None:
        """Two bots with the same posterior are each better with probability 1/2."""
        assert superiority({"a": (25.0, 1.0), "b": (25.0, 1.0)})["a"]["b"] == 0.5

    @settings(max_examples=50, deadline=None)
    @given(
        st.dictionaries(
            st.text(min_size=1, max_size=3),
            st.tuples(st.floats(0, 50), st.floats(0.01, 10)),
            min_size=2,
            max_size=12,
        )
    )
    def test_adjacent_pairs_are_the_full_tables(self, ratings) -> None:
        """superiority_next holds exactly the full table's values of adjacent pairs."""
        order = sorted(ratings, key=lambda name: -ratings[name][0])
        full = superiority(ratings, order)
        near = superiority_next(ratings, order)
        for a, b in zip(order, order[1:], strict=False):
            assert near[a][b] == full[a][b] and near[b][a] == full[b][a]
        assert sum(len(row) for row in near.values()) == 2 * (len(order) - 1)


class TestTiers:
    def test_unsettled_neighbours_share_a_tier(self) -> None:
        """a is surely above b and c, b and c are close: tiers 1, 2, 2."""
        ratings = {"a": (40.0, 1.0), "b": (25.0, 1.0), "c": (24.5, 1.0)}
        assert tiers(list(ratings), ratings) == [1, 2, 2]

    def test_settled_order_gives_one_tier_each(self) -> None:
        """Bots far apart each get their own tier."""
        ratings = {"a": (40.0, 1.0), "b": (30.0, 1.0), "c": (20.0, 1.0)}
        assert tiers(list(ratings), ratings) == [1, 2, 3]

    def test_a_chain_of_close_neighbours_is_not_one_tier(self) -> None:
        """Each bot 2 points below the next (92% each, unsettled) but 4 points apart settled:
        the leader and the third do not share a place (a chain used to make them all =1)."""
        ratings = {name: (30.0 - 2 * i, 1.0) for i, name in enumerate("abcde")}
        assert tiers(list(ratings), ratings) == [1, 1, 2, 2, 3]

    @given(st.lists(st.tuples(st.floats(0, 50), st.floats(0.01, 10)), min_size=1, max_size=14))
    def test_every_pair_of_a_tier_is_unsettled(self, values) -> None:
        """Within a tier no bot is better than another with 95%; a new tier starts only where
        a bot of the one before is better than its first with 95%."""
        ratings = {f"b{i}": value for i, value in enumerate(values)}
        order = sorted(ratings, key=lambda name: -(ratings[name][0] - 3 * ratings[name][1]))
        found = tiers(order, ratings)
        table = superiority(ratings, order)
        assert found[0] == 1 and all(b - a in (0, 1) for a, b in itertools.pairwise(found))
        for i, a in enumerate(order):
            for j in range(i + 1, len(order)):
                if found[i] == found[j]:
                    assert table[a][order[j]] < SETTLED + 1e-9
        for j in range(1, len(order)):
            if found[j] != found[j - 1]:
                members = [order[i] for i in range(j) if found[i] == found[j - 1]]
                assert max(table[m][order[j]] for m in members) >= SETTLED - 1e-9


class TestGamesToSeparate:
    def test_settled_pair_needs_none(self) -> None:
        """A pair already settled needs 0 more games."""
        assert games_to_separate((30.0, 1.0, 100), (20.0, 1.0, 100), 25 / 3) == 0

    def test_close_pair_needs_more_the_closer_it_is(self) -> None:
        """A close pair needs more games, and a closer one more still; equal mu never."""
        near = games_to_separate((25.5, 1.0, 100), (25.0, 1.0, 100), 25 / 3)
        nearer = games_to_separate((25.2, 1.0, 100), (25.0, 1.0, 100), 25 / 3)
        assert 0 < near < nearer
        assert games_to_separate((25.0, 1.0, 100), (25.0, 1.0, 100), 25 / 3) is None

    def test_estimate_settles_the_pair(self) -> None:
        """After the estimated games (precision growing per game) the pair is at 95%."""
        prior = 25 / 3
        extra = games_to_separate((25.5, 1.0, 100), (25.0, 1.0, 100), prior)
        rate = (1 / 1.0 - 1 / prior**2) / 100
        sigma = (1 / (1 / prior**2 + rate * (100 + extra))) ** 0.5
        p = superiority({"a": (25.5, sigma), "b": (25.0, sigma)})["a"]["b"]
        assert 0.95 <= p < 0.951
