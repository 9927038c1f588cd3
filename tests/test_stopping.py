"""A gauntlet's stopping rule: the Sobel-Wald SPRT on a candidate's points per game minus the
field's, looked at after each complete repeat."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.core.rules import competition_ranks
from ohseven.referee.plan.config import StopRule
from ohseven.referee.plan.loader import load_config_text
from ohseven.referee.plan.schedule import SchedulePlan
from ohseven.referee.plan.stopping import Plan, plan_of, verdicts
from ohseven.referee.records import GameRecord

PER_WAVE = 6  # games of the candidate in one repeat


def plan(waves: int = 10, per_wave: int = PER_WAVE, **rule) -> Plan:
    """One candidate ``c`` against a field of ``f1`` and ``f2``, ``per_wave`` games a repeat."""
    return Plan(
        rule=StopRule(**{"margin": 2.0, "min_games": 6, **rule}),
        candidates=("c",),
        waves=waves,
        wave_games=per_wave,
        candidate_games=per_wave,
        candidate_matches=1,
    )


def record(wave: int, game: int, candidate: int, field=(0, 0), seed=None) -> GameRecord:
    totals = (candidate, *field)
    return GameRecord(
        f"m{wave:05d}",
        game,
        seed if seed is not None else wave * 1000 + game,
        ("c", "f1", "f2"),
        totals,
        tuple(competition_ranks(totals)),
    )


def games(differences: list[list[int]], per_wave: int = PER_WAVE) -> list[tuple[int, GameRecord]]:
    """(canonical index, record) of the candidate's games, one list of differences a repeat."""
    return [
        (wave * per_wave + game, record(wave, game, value))
        for wave, values in enumerate(differences)
        for game, value in enumerate(values)
    ]


def noisy(rng: random.Random, mean: float, waves: int, sd: float = 8.0) -> list[list[int]]:
    return [[round(rng.gauss(mean, sd)) for _ in range(PER_WAVE)] for _ in range(waves)]


class TestVerdicts:
    def test_a_clearly_stronger_candidate_is_better_and_stops(self) -> None:
        """+10 points a game against the field: better after two repeats, stopped early."""
        rng = random.Random(1)
        verdict = verdicts(plan(), games(noisy(rng, 10, 10)))["c"]
        assert verdict.status == "better" and verdict.waves == 2 and verdict.games == 12
        assert verdict.stopped(plan()) and verdict.waves_played(plan()) == 2
        assert verdict.difference > 5 and verdict.llr_better >= plan().bound
        assert verdict.llr_worse <= -plan().bound

    def test_a_clearly_weaker_candidate_is_worse(self) -> None:
        """-10 points a game: worse, mirrored."""
        verdict = verdicts(plan(), games(noisy(random.Random(2), -10, 10)))["c"]
        assert verdict.status == "worse" and verdict.waves < 10
        assert verdict.llr_worse >= plan().bound and verdict.llr_better <= -plan().bound

    def test_a_candidate_level_with_the_field_is_equal(self) -> None:
        """No difference and little noise: both tests accept "no difference", within the
        margin: equal."""
        verdict = verdicts(plan(), games(noisy(random.Random(3), 0, 10, sd=2.0)))["c"]
        assert verdict.status == "equal" and verdict.stopped(plan())
        assert verdict.llr_better <= -plan().bound and verdict.llr_worse <= -plan().bound

    def test_undecided_after_every_repeat_and_running_before(self) -> None:
        """Too few repeats to decide: running while repeats remain, undecided once all are
        played; an undecided candidate plays every repeat."""
        data = noisy(random.Random(4), 0, 3)
        assert verdicts(plan(waves=3), games(data))["c"].status == "undecided"
        running = verdicts(plan(waves=5), games(data))["c"]
        assert running.status == "running" and running.waves == 3
        assert not running.stopped(plan(waves=5)) and running.waves_played(plan(waves=5)) == 5

    def test_nothing_is_decided_before_min_games(self) -> None:
        """Below ``min_games`` the tests are not looked at, however clear the games."""
        data = noisy(random.Random(5), 10, 10)
        verdict = verdicts(plan(min_games=30), games(data))["c"]
        assert verdict.status == "better" and verdict.waves == 5 and verdict.games == 30

    def test_an_incomplete_repeat_is_not_looked_at(self) -> None:
        """A repeat missing a game (its match not done) holds its games and every later
        repeat's out of the test."""
        data = noisy(random.Random(6), 10, 4)
        every = games(data)
        partial = [item for item in every if item[0] != PER_WAVE + 2]  # repeat 1 lacks one
        verdict = verdicts(plan(), partial)["c"]
        assert verdict.status == "running" and verdict.waves == 1 and verdict.games == 6

    def test_waves_limits_the_looks_to_the_first_repeats(self) -> None:
        """``waves``: the verdict from the first repeats only, as the referee decides at the
        start of the next one."""
        data = noisy(random.Random(7), 10, 4)
        limited = verdicts(plan(min_games=2), games(data), waves=1)["c"]
        assert limited.waves == 1 and limited.games == 6

    def test_a_duplicated_deal_counts_once(self) -> None:
        """Three rotations of one deal with the same result carry no more evidence than one
        game: the unit of the variance is the deal."""
        rng = random.Random(8)
        data = noisy(rng, 3, 4)
        single = verdicts(plan(waves=4, min_games=2), games(data))["c"]
        tripled = [
            (
                wave * 3 * PER_WAVE + 3 * game + rotation,
                record(wave, 3 * game + rotation, value, seed=wave * 1000 + game),
            )
            for wave, values in enumerate(data)
            for game, value in enumerate(values)
            for rotation in range(3)
        ]
        three = verdicts(plan(waves=4, per_wave=3 * PER_WAVE, min_games=2), tripled)["c"]
        assert three.difference == single.difference
        assert abs(three.llr_better - single.llr_better) < 1e-9

    @settings(max_examples=30, deadline=None)
    @given(st.integers(0, 2**32), st.integers(-8, 8))
    def test_the_order_of_the_games_changes_nothing(self, seed: int, mean: int) -> None:
        """The verdict is a function of the set of games: any order gives the same bits."""
        rng = random.Random(seed)
        every = games(noisy(rng, mean, 6))
        shuffled = list(every)
        rng.shuffle(shuffled)
        assert verdicts(plan(), shuffled) == verdicts(plan(), every)

    def test_tables_of_other_bots_are_ignored(self) -> None:
        """Games without exactly one candidate (not a gauntlet table) count for no one."""
        data = games(noisy(random.Random(9), 10, 3))
        stray = GameRecord("x", 0, 1, ("f1", "f2"), (50, -50), (1, 2))
        assert verdicts(plan(), [*data, (2, stray)]) == verdicts(plan(), data)


class TestErrorRates:
    """The guarantees, checked by simulation: 400 gauntlets of up to 40 repeats, looked at
    after each, 95% confidence (errors of 5% each way) and a margin of 2 points a game."""

    RUNS = 400

    def outcomes(self, mean: float, seed: int) -> dict[str, int]:
        rng = random.Random(seed)
        counts: dict[str, int] = {}
        rule = plan(waves=40, min_games=12)
        for _ in range(self.RUNS):
            status = verdicts(rule, games(noisy(rng, mean, 40)))["c"].status
            counts[status] = counts.get(status, 0) + 1
        return counts

    def test_no_difference_is_rarely_called_better_or_worse(self) -> None:
        """A candidate exactly level with the field is called better, or worse, in at most
        about 5% of the gauntlets each (looking after every repeat does not inflate it)."""
        counts = self.outcomes(0.0, 11)
        assert counts.get("better", 0) <= 0.07 * self.RUNS, counts
        assert counts.get("worse", 0) <= 0.07 * self.RUNS, counts
        assert counts.get("equal", 0) >= 0.5 * self.RUNS, counts

    def test_a_difference_of_the_margin_is_rarely_called_equal(self) -> None:
        """A candidate better by the margin is called equal in at most about 5%, and never
        worse."""
        counts = self.outcomes(2.0, 12)
        assert counts.get("equal", 0) <= 0.07 * self.RUNS, counts
        assert counts.get("worse", 0) == 0, counts
        assert counts.get("better", 0) >= 0.7 * self.RUNS, counts


class TestPlan:
    def config(self, tmp: Path, stop: str = "{margin: 3}"):
        (tmp / "b.py").write_text("")
        text = (
            "name: g\ngame: oh-seven\ntable_size: [2, 3]\nbots:\n"
            + "".join(f"  - {{name: {n}, file: b.py}}\n" for n in ("z", "a", "f1", "f2", "f3"))
            + f"schedule: {{type: gauntlet, candidates: [z, a], repeats: 4, stop: {stop}}}\n"
        )
        return load_config_text(text, base_dir=tmp)

    def test_the_plan_counts_a_repeat_and_a_candidate_in_it(self, tmp_path: Path) -> None:
        """Per repeat: every candidate meets 3 field bots at 2 and 3 pairs at 3 (18 games)."""
        found = plan_of(SchedulePlan.of(self.config(tmp_path)))
        assert found is not None and found.candidates == ("a", "z") and found.waves == 4
        assert (found.candidate_matches, found.candidate_games) == (6, 3 * 2 + 3 * 3)
        assert found.wave_games == 2 * found.candidate_games
        assert found.rule == StopRule(confidence=0.95, margin=3.0, min_games=30)

    def test_the_plan_survives_the_store(self, tmp_path: Path) -> None:
        """What the referee stores for publish reads back equal; anything else reads None."""
        found = plan_of(
            SchedulePlan.of(self.config(tmp_path, "{margin: 3, confidence: 0.99, min_games: 8}"))
        )
        assert Plan.from_json(found.to_json()) == found
        for text in (None, "", "[]", "{}", '{"rule": 3}', "not json"):
            assert Plan.from_json(text) is None, text

    def test_no_plan_without_a_stopping_rule(self, tmp_path: Path) -> None:
        """A gauntlet without `stop` has no plan."""
        config = self.config(tmp_path)
        import attrs

        bare = attrs.evolve(config, schedule=attrs.evolve(config.schedule, stop=None))
        assert plan_of(SchedulePlan.of(bare)) is None
