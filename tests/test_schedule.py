"""The schedule: every table, every seat, deals of their own or duplicated, canonical order,
determinism from the secret and the bots' names."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.referee.config import load_config_text
from ohseven.referee.schedule import build_schedule, schedule_size

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
        schedule = build_schedule(config, SECRET)
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
        for match in build_schedule(config, SECRET):
            seeds, seatings = match.spec.seeds, match.spec.seatings
            assert seeds[0] != seeds[1] and seeds == seeds[:2] * 3  # both deals, each rotation
            assert seatings[0] == seatings[1] and len(set(seatings[::2])) == 3
            tables.append(set(seeds))
        assert len(set().union(*tables)) == sum(len(t) for t in tables)

    def test_independent_deals_never_repeat(self, tmp_path: Path) -> None:
        """Independent deals (the default): every game of the tournament has a deal of its own."""
        config = config_of(tmp_path, 5, [2, 3], games_per_table=3, repeats=2)
        assert config.schedule.deals == "independent"
        seeds = [seed for match in build_schedule(config, SECRET) for seed in match.spec.seeds]
        assert len(seeds) == len(set(seeds)) == schedule_size(config)[1]

    def test_canonical_indices_are_consecutive(self, tmp_path: Path) -> None:
        """Each match's games follow the previous match's, from 0, without gaps."""
        config = config_of(tmp_path, 5, [2, 3], games_per_table=2, repeats=2)
        schedule = build_schedule(config, SECRET)
        expected = 0
        for index, match in enumerate(schedule):
            assert match.index == index and match.first_game == expected
            expected += match.games
        assert len({m.spec.match_id for m in schedule}) == len(schedule)

    def test_deterministic_and_secret_dependent(self, tmp_path: Path) -> None:
        """The same config and secret give the same schedule; another secret, other deals."""
        config = config_of(tmp_path, 4, [3])
        assert build_schedule(config, SECRET) == build_schedule(config, SECRET)
        other = build_schedule(config, b"t" * 32)
        assert build_schedule(config, SECRET)[0].spec.seeds != other[0].spec.seeds
        assert [m.bot_names for m in other] == [m.bot_names for m in build_schedule(config, SECRET)]

    def test_the_order_of_the_bots_in_the_config_changes_nothing(self, tmp_path: Path) -> None:
        """Tables, seats and deals follow from the bots' names, not from their order."""
        for deals in ("independent", "duplicate"):
            listed = config_of(tmp_path, 5, [2, 3], deals=deals, games_per_table=2)
            shuffled = config_of(
                tmp_path, 5, [2, 3], order=[3, 0, 4, 2, 1], deals=deals, games_per_table=2
            )
            assert listed.bot_names != shuffled.bot_names
            assert build_schedule(listed, SECRET) == build_schedule(shuffled, SECRET)


class TestGauntlet:
    def test_each_candidate_meets_every_field_combination(self, tmp_path: Path) -> None:
        """Gauntlet: candidate x C(field, k-1) tables, the candidate at every one of them."""
        config = config_of(
            tmp_path, 5, [3], type="gauntlet", candidates=["b0", "b1"], games_per_table=1
        )
        schedule = build_schedule(config, SECRET)
        field = ["b2", "b3", "b4"]
        expected = {
            (candidate, *others)
            for candidate in ("b0", "b1")
            for others in itertools.combinations(field, 2)
        }
        assert {m.bot_names for m in schedule} == expected
        assert len(schedule) == len(expected)
