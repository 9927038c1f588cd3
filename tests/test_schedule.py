"""The schedule: every table, every seat, duplicate deals, canonical order, determinism."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.referee.config import load_config_text
from ohseven.referee.schedule import build_schedule, schedule_size


def config_of(tmp: Path, bots: int, sizes: list[int], **schedule):
    (tmp / "b.py").write_text("")
    lines = [
        "name: s",
        "game: oh-seven",
        f"table_size: {sizes}",
        "bots:",
        *(f"  - {{name: b{i}, file: b.py}}" for i in range(bots)),
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
        schedule = build_schedule(config)
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

    def test_rotations_replay_the_same_deal(self, tmp_path: Path) -> None:
        """The k rotations of a deal share its seed; different deals have different seeds."""
        config = config_of(tmp_path, 4, [3], games_per_table=2)
        for match in build_schedule(config):
            seeds = match.spec.seeds
            assert seeds[:3] == (seeds[0],) * 3 and seeds[3:] == (seeds[3],) * 3
            assert seeds[0] != seeds[3]

    def test_canonical_indices_are_consecutive(self, tmp_path: Path) -> None:
        """Each match's games follow the previous match's, from 0, without gaps."""
        config = config_of(tmp_path, 5, [2, 3], games_per_table=2, repeats=2)
        schedule = build_schedule(config)
        expected = 0
        for index, match in enumerate(schedule):
            assert match.index == index and match.first_game == expected
            expected += match.games
        assert len({m.spec.match_id for m in schedule}) == len(schedule)

    def test_deterministic_and_seed_dependent(self, tmp_path: Path) -> None:
        """The same config gives the same schedule; another seed, other deals."""
        config = config_of(tmp_path, 4, [3])
        assert build_schedule(config) == build_schedule(config)
        reseeded = load_config_text(
            "name: s\ngame: oh-seven\ntable_size: 3\nseed: 6\nbots:\n"
            + "".join(f"  - {{name: b{i}, file: b.py}}\n" for i in range(4)),
            base_dir=tmp_path,
        )
        assert build_schedule(config)[0].spec.seeds != build_schedule(reseeded)[0].spec.seeds


class TestGauntlet:
    def test_each_candidate_meets_every_field_combination(self, tmp_path: Path) -> None:
        """Gauntlet: candidate x C(field, k-1) tables, the candidate at every one of them."""
        config = config_of(
            tmp_path, 5, [3], type="gauntlet", candidates=["b0", "b1"], games_per_table=1
        )
        schedule = build_schedule(config)
        field = ["b2", "b3", "b4"]
        expected = {
            (candidate, *others)
            for candidate in ("b0", "b1")
            for others in itertools.combinations(field, 2)
        }
        assert {m.bot_names for m in schedule} == expected
        assert len(schedule) == len(expected)
