"""A gauntlet's stopping rule: stop a candidate once its difference to the field is settled.

The statistic is the candidate's **points per game minus the mean points of the field bots at
the same table**, game by game (the same deal, the same game: what the deal gives every seat
cancels out). Its estimate over the games seen is the ratio R = sum of differences / games,
with the cluster-robust variance of ``uncertainty.points_intervals`` (the unit is the deal: a
table's games of one seed, so a duplicated deal's rotations count once).

The test is the Sobel-Wald three-decision sequential test: two sequential probability ratio
tests (Wald's SPRT), ``better`` of H0: d = 0 against H1: d = +margin and ``worse`` of H0: d = 0
against H1: d = -margin, each with the normal approximation of the log-likelihood ratio with
the variance estimated from the games (the GSPRT that fishtest and fastchess use),

    LLR = (d1 - d0) * (R - (d0 + d1) / 2) / se^2,

and Wald's bounds +-ln(c / (1 - c)) for a confidence c (alpha = beta = 1 - c). Each test stops
at its first crossing and keeps its answer. The candidate is **better** once ``better`` accepts
its H1 (``worse`` then accepts its H0 at the same look), **worse** symmetrically, and **equal**
(within the margin) once both accept H0. So, up to the approximations, a candidate whose true
difference is <= 0 is called better with probability at most 1 - c, one whose difference is
>= 0 is called worse with at most 1 - c, and one whose difference is at least the margin either
way is called equal with at most 1 - c; between 0 and the margin either answer may come. These
bounds hold for a test looked at after every game; looking less often (after each repeat only)
can only lower the errors. A repeated fixed confidence interval would not do: looked at after
every repeat, it would cross zero by chance far more often than 1 - c.

Looks are taken only at deterministic points: after each **complete repeat** (wave) of the
gauntlet, from the games of complete repeats only, and not before the candidate has played
``min_games`` games of them. A decided candidate plays no later repeat; the referee starts a
repeat only once every match of the earlier ones is done. So the decisions, and the games
played, are the same with 1 or 2 workers, on a cluster and across a kill and resume.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
from ohseven.referee.plan.config import StopRule
from ohseven.referee.plan.schedule import SchedulePlan
from ohseven.referee.records import GameRecord

__all__ = ["Plan", "Verdict", "plan_of", "verdicts", "STATUSES", "META_KEY"]

#: a candidate's status: still playing, decided (better, worse, equal to the field within the
#: margin), or every repeat played without a decision
STATUSES = ("running", "better", "worse", "equal", "undecided")
#: the store's meta key that holds the :class:`Plan` (publish reads it)
META_KEY = "stopping"
#: a variance of the difference below this is taken as this (every deal gave the same result)
_MIN_VARIANCE = 1e-12


@attrs.frozen
class Plan:
    """What the stopping rule needs to know of a gauntlet's schedule."""

    rule: StopRule
    candidates: tuple[str, ...]
    #: repeats of the gauntlet (its waves)
    waves: int
    #: games of one whole repeat (every candidate)
    wave_games: int
    #: games and matches of one candidate in one repeat
    candidate_games: int
    candidate_matches: int

    @property
    def bound(self) -> float:
        """Wald's bound ln((1 - beta) / alpha) with alpha = beta = 1 - confidence."""
        confidence = self.rule.confidence
        return math.log(confidence / (1.0 - confidence))

    def to_json(self) -> str:
        return json.dumps(attrs.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> Plan | None:
        """The plan stored by :meth:`to_json`; None for no text or anything else."""
        try:
            data = json.loads(text or "null")
            if not isinstance(data, dict):
                return None
            rule = StopRule(**data.pop("rule"))
            data["candidates"] = tuple(data["candidates"])
            return cls(rule=rule, **data)
        except (TypeError, ValueError, KeyError):
            return None

    def document(self) -> dict[str, Any]:
        """The rule as published in ``leaderboard.json`` (``stopping``)."""
        return {
            "test": "sprt (sobel-wald): points per game minus the field's, after each repeat",
            "confidence": self.rule.confidence,
            "margin": self.rule.margin,
            "min_games": self.rule.min_games,
            "bound": round(self.bound, 6),
            "repeats": self.waves,
        }


def plan_of(sched: SchedulePlan) -> Plan | None:
    """The stopping plan of a gauntlet with ``schedule.stop``; None for any other schedule."""
    if sched.kind != "gauntlet" or sched.stop is None:
        return None
    matches, games = sched.size()
    candidates = tuple(sorted(set(sched.candidates)))
    per_wave_matches, per_wave_games = matches // sched.repeats, games // sched.repeats
    return Plan(
        rule=sched.stop,
        candidates=candidates,
        waves=sched.repeats,
        wave_games=per_wave_games,
        candidate_games=per_wave_games // len(candidates),
        candidate_matches=per_wave_matches // len(candidates),
    )


@attrs.frozen
class Verdict:
    """A candidate's state after the complete repeats it has played."""

    status: str
    #: complete repeats counted (the decision came after the last of them when decided)
    waves: int
    games: int
    #: points per game minus the field's, its standard error (None below two deals)
    difference: float | None = None
    se: float | None = None
    #: each test's log-likelihood ratio: where it stopped, or at the last look
    llr_better: float | None = None
    llr_worse: float | None = None

    @property
    def decided(self) -> bool:
        return self.status in ("better", "worse", "equal")

    def stopped(self, plan: Plan) -> bool:
        """Decided before the last repeat: its later repeats are not played."""
        return self.decided and self.waves < plan.waves

    def waves_played(self, plan: Plan) -> int:
        """The repeats this candidate plays in all."""
        return self.waves if self.decided else plan.waves

    def document(self, plan: Plan) -> dict[str, Any]:
        """The candidate's ``sprt`` object of ``leaderboard.json``."""

        def rounded(value: float | None) -> float | None:
            return None if value is None else round(value, 4)

        return {
            "status": self.status,
            "stopped": self.stopped(plan),
            "repeats": self.waves,
            "games": self.games,
            "difference": rounded(self.difference),
            "difference_se": rounded(self.se),
            "llr_better": rounded(self.llr_better),
            "llr_worse": rounded(self.llr_worse),
        }


class _Sums:
    """Running sums over a candidate's deals: n, sum D, sum G, sum D^2, sum D G, sum G^2."""

    def __init__(self) -> None:
        self.n = 0
        self.d = self.g = self.dd = self.dg = self.gg = 0.0

    def add(self, points: float, games: int) -> None:
        self.n += 1
        self.d += points
        self.g += games
        self.dd += points * points
        self.dg += points * games
        self.gg += games * games

    def estimate(self) -> tuple[float, float] | None:
        """(R, variance of R); None below two deals."""
        if self.n < 2:
            return None
        ratio = self.d / self.g
        spread = max(self.dd - 2.0 * ratio * self.dg + ratio * ratio * self.gg, 0.0)
        return ratio, self.n / (self.n - 1) * spread / (self.g * self.g)


def verdicts(
    plan: Plan,
    games: Iterable[tuple[int, GameRecord]],
    waves: int | None = None,
) -> dict[str, Verdict]:
    """Every candidate's verdict from ``games`` (canonical index, record): the looks after
    each complete repeat, in order, the first ``waves`` repeats only (default: all)."""
    limit = plan.waves if waves is None else min(waves, plan.waves)
    candidates = set(plan.candidates)
    # candidate -> repeat -> deal -> [sum of differences, games]
    units: dict[str, list[dict[tuple[str, int], list[float]]]] = {
        name: [{} for _ in range(limit)] for name in plan.candidates
    }
    counts = {name: [0] * limit for name in plan.candidates}
    for canonical, record in sorted(games, key=lambda item: item[0]):
        wave = canonical // plan.wave_games
        if wave >= limit:
            continue
        seats = [seat for seat, name in enumerate(record.seats) if name in candidates]
        if len(seats) != 1 or len(record.seats) < 2:
            continue  # not a gauntlet table
        seat = seats[0]
        name = record.seats[seat]
        others = [total for other, total in enumerate(record.totals) if other != seat]
        difference = record.totals[seat] - sum(others) / len(others)
        unit = units[name][wave].setdefault((record.match_id, record.seed), [0.0, 0])
        unit[0] += difference
        unit[1] += 1
        counts[name][wave] += 1
    return {name: _sequential(plan, units[name], counts[name]) for name in plan.candidates}


def _sequential(
    plan: Plan, waves: Sequence[Mapping[tuple[str, int], list[float]]], counts: list[int]
) -> Verdict:
    rule, bound = plan.rule, plan.bound
    margin = rule.margin
    sums = _Sums()
    better: str | None = None  # "h1" or "h0" once the test of d = +margin has stopped
    worse: str | None = None
    llr_better = llr_worse = ratio = variance = None
    done = played = 0
    for wave, deals in enumerate(waves):
        if counts[wave] != plan.candidate_games:
            break  # an incomplete repeat, and every later one, waits
        for key in sorted(deals):
            points, number = deals[key]
            sums.add(points, int(number))
        done, played = wave + 1, played + counts[wave]
        estimate = sums.estimate()
        if estimate is None:
            continue
        ratio, variance = estimate
        if played < rule.min_games:
            continue
        floor = max(variance, _MIN_VARIANCE)
        if better is None:
            llr_better = margin * (ratio - margin / 2.0) / floor
            better = "h1" if llr_better >= bound else "h0" if llr_better <= -bound else None
        if worse is None:
            llr_worse = margin * (-ratio - margin / 2.0) / floor
            worse = "h1" if llr_worse >= bound else "h0" if llr_worse <= -bound else None
        if better is not None and worse is not None:
            break
    if better == "h1":
        status = "better"
    elif worse == "h1":
        status = "worse"
    elif better == "h0" and worse == "h0":
        status = "equal"
    else:
        status = "undecided" if done == plan.waves else "running"
    return Verdict(
        status=status,
        waves=done,
        games=played,
        difference=ratio,
        se=None if variance is None else math.sqrt(variance),
        llr_better=llr_better,
        llr_worse=llr_worse,
    )
