"""How sure a leaderboard is: intervals of points per game, superiority, tiers, games needed.

- :func:`points_intervals`: a 95% confidence interval of each bot's points per game, from an
  analytic cluster-robust standard error of the ratio points / games. The unit of resampling
  is the deal: the games of one table with the same seed (with ``schedule.deals: duplicate``
  a table's deal is replayed in every rotation, so those games are dependent; with independent
  deals every game is its own unit). Deterministic: no random numbers.
- :func:`superiority`: the likelihood of superiority of every pair from the rating posterior,
  P(skill_a > skill_b) = Phi((mu_a - mu_b) / sqrt(sigma_a^2 + sigma_b^2)).
- :func:`superiority_next`: the same for adjacent bots of a ranking only.
- :func:`tiers`: bots in ranking order, adjacent bots whose order is not settled (LOS below
  the threshold) share a tier.
- :func:`games_to_separate`: a rough count of more games after which an adjacent pair would be
  settled, if the gap in mu stays what it is.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence

from ohseven.referee.records import GameRecord

__all__ = [
    "DealUnits",
    "CONFIDENCE",
    "SETTLED",
    "games_to_separate",
    "points_intervals",
    "superiority",
    "superiority_next",
    "tiers",
]

#: the confidence of the points-per-game intervals
CONFIDENCE = 0.95
#: the likelihood of superiority from which an adjacent pair's order counts as settled
SETTLED = 0.95


def points_intervals(
    records: Iterable[GameRecord], bots: Iterable[str], confidence: float = CONFIDENCE
) -> dict[str, tuple[float, float] | None]:
    """Each bot's ``confidence`` interval of its points per game (None below two deals).

    The estimate is the ratio R = sum of points / games over the bot's deals c (P_c points in
    G_c games); its cluster-robust variance is n / (n - 1) * sum (P_c - R G_c)^2 / (sum G_c)^2
    for n deals, and the interval R -/+ t(n - 1) * SE uses Student's t with n - 1 degrees of
    freedom.
    """
    units = DealUnits(bots)
    for record in records:
        units.add(record)
    return units.intervals(confidence)


class DealUnits:
    """Each bot's points and games per deal, kept game by game (:func:`points_intervals`, and
    the live leaderboard that adds the games as they finish): only the intervals of the bots
    with new games are computed again. They depend only on the set of games added."""

    def __init__(self, bots: Iterable[str] = ()) -> None:
        self.units: dict[str, dict[tuple[str, int], list[int]]] = {name: {} for name in bots}
        self.known: dict[str, tuple[float, float] | None] = {}
        self.confidence: float | None = None
        self.changed: set[str] = set(self.units)

    def add(self, record: GameRecord) -> None:
        for seat, name in enumerate(record.seats):
            unit = self.units.setdefault(name, {}).setdefault(
                (record.match_id, record.seed), [0, 0]
            )
            unit[0] += record.totals[seat]
            unit[1] += 1
            self.changed.add(name)

    def bot(self, name: str) -> None:
        """Give ``name`` an interval (None) even without games."""
        if name not in self.units:
            self.units[name] = {}
            self.changed.add(name)

    def intervals(self, confidence: float = CONFIDENCE) -> dict[str, tuple[float, float] | None]:
        if confidence != self.confidence:
            self.known, self.confidence, self.changed = {}, confidence, set(self.units)
        for name in self.changed:
            self.known[name] = _interval(self.units[name], confidence)
        self.changed = set()
        return {name: self.known[name] for name in self.units}


def _interval(
    deals: dict[tuple[str, int], list[int]], confidence: float
) -> tuple[float, float] | None:
    n = len(deals)
    if n < 2:
        return None
    values = [deals[key] for key in sorted(deals)]
    points = sum(p for p, _ in values)
    games = sum(g for _, g in values)
    ratio = points / games
    spread = sum((p - ratio * g) ** 2 for p, g in values)
    se = math.sqrt(n / (n - 1) * spread) / games
    from scipy.special import stdtrit  # deferred: heavy (see ratings.factor_graph)

    half = float(stdtrit(n - 1, 0.5 + confidence / 2)) * se  # Student's t quantile
    return (ratio - half, ratio + half)


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def superiority(
    ratings: Mapping[str, tuple[float, float]], order: Sequence[str] | None = None
) -> dict[str, dict[str, float]]:
    """P(skill_a > skill_b) for every ordered pair of different bots (a -> b -> p).

    For each pair the probability of the bot earlier in ``order`` (default: the mapping's
    order) is computed and the other is one minus it, so the two always sum to 1.
    """
    names = list(order if order is not None else ratings)
    table: dict[str, dict[str, float]] = {name: {} for name in names}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            (mu_a, sigma_a), (mu_b, sigma_b) = ratings[a], ratings[b]
            spread = math.hypot(sigma_a, sigma_b)
            if spread > 0:
                p = _phi((mu_a - mu_b) / spread)
            else:
                p = 1.0 if mu_a > mu_b else 0.0 if mu_a < mu_b else 0.5
            table[a][b] = p
            table[b][a] = 1.0 - p
    return table


def superiority_next(
    ratings: Mapping[str, tuple[float, float]], order: Sequence[str]
) -> dict[str, dict[str, float]]:
    """:func:`superiority` of the adjacent pairs of ``order`` only (the same values): what a
    ranking's "better than the next" needs, in linear time."""
    table: dict[str, dict[str, float]] = {name: {} for name in order}
    for a, b in itertools.pairwise(order):
        pair = superiority({a: ratings[a], b: ratings[b]}, (a, b))
        table[a][b] = pair[a][b]
        table[b][a] = pair[b][a]
    return table


def tiers(
    order: Sequence[str], ratings: Mapping[str, tuple[float, float]], settled: float = SETTLED
) -> list[int]:
    """The tier (1 = best) of each bot of ``order`` (mu, sigma in ``ratings``): runs of
    consecutive bots of which no two are told apart. A new tier starts at a bot as soon as one
    bot of the current tier is better than it with a likelihood of at least ``settled``: a
    shared place joins only bots whose every pair is unsettled, never a chain of close
    neighbours from the leader down to a bot far below it."""
    import numpy as np  # the referee's dependency, as scipy is: not needed by the rest here
    from scipy.special import ndtr

    result: list[int] = []
    tier, start = 1, 0
    mu = np.array([ratings[name][0] for name in order], dtype=float)
    sigma = np.array([ratings[name][1] for name in order], dtype=float)
    for position in range(len(order)):
        if position:
            gap = mu[start:position] - mu[position]
            spread = np.hypot(sigma[start:position], sigma[position])
            with np.errstate(divide="ignore", invalid="ignore"):
                likely = np.where(spread > 0, ndtr(gap / spread), (gap > 0) * 1.0)
            if float(likely.max()) >= settled:
                tier, start = tier + 1, position
        result.append(tier)
    return result


def games_to_separate(
    upper: tuple[float, float, int],
    lower: tuple[float, float, int],
    prior_sigma: float,
    settled: float = SETTLED,
) -> int | None:
    """More games each of two bots (mu, sigma, games) would play until P(upper > lower)
    reaches ``settled``, if the gap in mu stays and each bot's precision beyond the prior grows
    in proportion to its games; 0 when already settled, None when it never would be (upper's
    mu not above lower's, or a bot without games)."""
    (mu_a, sigma_a, games_a), (mu_b, sigma_b, games_b) = upper, lower
    gap = mu_a - mu_b
    if gap <= 0 or games_a == 0 or games_b == 0:
        return None
    z = math.sqrt(2.0) * _erfinv(2.0 * settled - 1.0)
    target = (gap / z) ** 2  # the combined variance that settles the pair
    if sigma_a**2 + sigma_b**2 <= target:
        return 0
    prior = 1.0 / prior_sigma**2
    rate_a = max(1.0 / sigma_a**2 - prior, 0.0) / games_a  # precision per game
    rate_b = max(1.0 / sigma_b**2 - prior, 0.0) / games_b
    if rate_a == 0 or rate_b == 0:
        return None

    def variance(extra: float) -> float:
        a = prior + rate_a * (games_a + extra)
        return 1.0 / a + 1.0 / (prior + rate_b * (games_b + extra))

    low, high = 0.0, 1.0
    while variance(high) > target:
        high *= 2.0
        if high > 1e12:
            return None
    for _ in range(100):
        middle = (low + high) / 2
        if variance(middle) > target:
            low = middle
        else:
            high = middle
    return math.ceil(high)


def _erfinv(y: float) -> float:
    from scipy.special import erfinv  # deferred: heavy (see ratings.factor_graph)

    return float(erfinv(y))
