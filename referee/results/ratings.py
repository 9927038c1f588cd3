"""TrueSkill ratings from each game's free-for-all ranking.

A game is a free-for-all of one-bot teams ranked by total (equal totals draw). With
``fault_ranks_last`` a bot that faulted in a game ranks below every bot that did not (among
themselves faulted bots keep the order of their totals).

Two estimates of the same TrueSkill model:

- :func:`order_free` (what the leaderboard ranks by): expectation propagation over every game
  at once, with no dynamics (tau = 0), iterated to its fixed point. The posterior of the skills
  given the set of games does not depend on any order; the fixed point is computed from the
  games sorted by their content, so the same games give the same numbers bit for bit in
  whatever order they are passed.
- :class:`Ratings` / :func:`rate_games`: classic sequential TrueSkill (assumed-density
  filtering with tau > 0) applied in canonical game order. Its result depends on that order
  (a different order of the same games can move a bot by several sigma); it is kept for the
  "ratings over the games" chart and as extra fields.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import attrs
import trueskill
import trueskill.backends as _backends
from ohseven.core.rules import OH_HELL, OH_SEVEN, competition_ranks
from ohseven.referee.records import FaultStatus, GameRecord

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "DRAW_PROBABILITY",
    "FactorGraph",
    "factor_graph",
    "propagate",
    "BotRating",
    "Ratings",
    "game_ranks",
    "rate_games",
    "free_for_all",
    "make_env",
    "order_free",
    "order_free_table",
]

#: TrueSkill's draw probability is the chance that two players of equal skill draw. We estimated
#: it as the share of tied pairs of totals among bots of equal skill: uniformly random legal
#: play, 300 seeded games per table size (the same simulation as ``tests/test_ratings.py``
#: checks). Oh-Seven: 4.0% of pairs tie at 2 players, 4.7% at 3 and 4, 4.3% at 5 and 6 — its
#: totals spread over ~30 values, so ties are rare and nearly independent of the table size.
#: Oh Hell: 3.6% at 3, 4.6% at 4, 7.2% at 5 (more players, fewer hands, coarser totals of
#: 10 + tricks). We use one value per game, the mean over the usual table sizes.
DRAW_PROBABILITY = {OH_SEVEN: 0.045, OH_HELL: 0.05}


def make_env(game: str, draw_probability: float | None = None) -> trueskill.TrueSkill:
    """The TrueSkill environment of ``game``: default mu 25, sigma 25/3, beta, tau."""
    probability = draw_probability if draw_probability is not None else DRAW_PROBABILITY[game]
    return trueskill.TrueSkill(draw_probability=probability, backend=None)


def game_ranks(record: GameRecord, *, fault_ranks_last: bool = True) -> tuple[int, ...]:
    """The ranks TrueSkill sees for ``record`` (1 best, equal ranks draw)."""
    if not fault_ranks_last or not record.faults:
        return tuple(competition_ranks(record.totals))
    # a bot_error is the bot's own report of a legal substitute move: it does not rank last
    faulted = {fault.seat for fault in record.faults if fault.status is not FaultStatus.BOT_ERROR}
    # A faulted bot scores below every clean one: shift its total below the lowest clean total.
    low = min(record.totals) - max(record.totals) - 1
    keys = [total + (low if seat in faulted else 0) for seat, total in enumerate(record.totals)]
    return tuple(competition_ranks(keys))


@attrs.frozen
class BotRating:
    name: str
    mu: float
    sigma: float
    games: int

    @property
    def score(self) -> float:
        """The conservative estimate, mu - 3 sigma: what the leaderboard sorts by."""
        return self.mu - 3 * self.sigma


class Ratings:
    """Running TrueSkill ratings; :meth:`apply` games in canonical order."""

    def __init__(
        self,
        game: str,
        names: Iterable[str],
        *,
        draw_probability: float | None = None,
        fault_ranks_last: bool = True,
    ) -> None:
        self.env = make_env(game, draw_probability)
        self.fault_ranks_last = fault_ranks_last
        self.ratings = {name: self.env.create_rating() for name in names}
        self.games = dict.fromkeys(self.ratings, 0)

    def copy(self) -> Ratings:
        other = object.__new__(Ratings)
        other.env = self.env
        other.fault_ranks_last = self.fault_ranks_last
        other.ratings = dict(self.ratings)
        other.games = dict(self.games)
        return other

    def apply(self, record: GameRecord) -> None:
        """Update the ratings of the bots of one game."""
        for name in record.seats:
            if name not in self.ratings:
                raise KeyError(f"game {record.match_id}#{record.game_index}: unknown bot {name!r}")
        if len(set(record.seats)) != len(record.seats):
            raise ValueError(
                f"game {record.match_id}#{record.game_index}: a bot in two seats {record.seats}"
            )
        ranks = game_ranks(record, fault_ranks_last=self.fault_ranks_last)
        groups = [(self.ratings[name],) for name in record.seats]
        rated = free_for_all(self.env, [group[0] for group in groups], [r - 1 for r in ranks])
        for name, rating in zip(record.seats, rated, strict=True):
            self.ratings[name] = rating
            self.games[name] += 1

    def table(self) -> list[BotRating]:
        """Every bot's rating, best conservative score first (ties by name)."""
        rows = [
            BotRating(name, rating.mu, rating.sigma, self.games[name])
            for name, rating in self.ratings.items()
        ]
        return sorted(rows, key=lambda row: (-row.score, row.name))


def rate_games(
    game: str,
    names: Iterable[str],
    records: Sequence[GameRecord],
    *,
    draw_probability: float | None = None,
    fault_ranks_last: bool = True,
) -> Ratings:
    """Ratings after ``records``, which must be in canonical order."""
    ratings = Ratings(
        game, names, draw_probability=draw_probability, fault_ranks_last=fault_ranks_last
    )
    for record in records:
        ratings.apply(record)
    return ratings


def _mean(pi: float, tau: float) -> float:
    return pi and tau / pi  # trueskill's Gaussian.mu


def _sum(terms: Sequence[tuple[float, float, float]]) -> tuple[float, float]:
    """trueskill's SumFactor.update: the message of sum(coeff * x) from (coeff, pi, tau) of
    each x's cavity."""
    pi_inv: float = 0
    mu: float = 0
    for coeff, pi, tau in terms:
        mu += coeff * _mean(pi, tau)
        if pi_inv == math.inf:
            continue
        try:
            pi_inv += coeff**2 / float(pi)
        except ZeroDivisionError:
            pi_inv = math.inf
    pi = 1.0 / pi_inv
    return pi, pi * mu


_MARGINS: dict[tuple, float] = {}


def _draw_margin(env: trueskill.TrueSkill) -> float:
    """The draw margin between two one-bot teams (as the library computes it per game)."""
    key = (env.draw_probability, env.beta, env.backend)
    if key not in _MARGINS:
        _MARGINS[key] = trueskill.calc_draw_margin(env.draw_probability, 2, env)
    return _MARGINS[key]


def _sum2(
    c0: float, pi0: float, tau0: float, c1: float, pi1: float, tau1: float
) -> tuple[float, float]:
    """:func:`_sum` of two terms, unrolled (the same operations)."""
    mu = 0 + c0 * (pi0 and tau0 / pi0)
    try:
        pi_inv = 0 + c0**2 / float(pi0)
    except ZeroDivisionError:
        pi_inv = math.inf
    mu += c1 * (pi1 and tau1 / pi1)
    if pi_inv != math.inf:
        try:
            pi_inv += c1**2 / float(pi1)
        except ZeroDivisionError:
            pi_inv = math.inf
    pi = 1.0 / pi_inv
    return pi, pi * mu


def free_for_all(
    env: trueskill.TrueSkill, ratings: Sequence[trueskill.Rating], ranks: Sequence[int]
) -> list[trueskill.Rating]:
    """``env.rate([(r,) for r in ratings], ranks)`` for teams of one: the same factor graph,
    schedule and floating-point operations in the same order (so the same numbers, bit for bit;
    ``tests/test_ratings.py`` checks it), without the library's objects: about ten times faster.

    The graph per player (sorted by rank, ties in the given order): skill r, performance p,
    team performance t; between adjacent places a difference d and its truncation. Messages are
    (pi, tau) pairs; a variable is the product of its messages."""
    n = len(ratings)
    if n < 2:
        raise ValueError("Need multiple rating groups")
    if len(ranks) != n:
        raise ValueError("Wrong ranks")
    order = sorted(range(n), key=lambda i: ranks[i])
    beta2 = env.beta**2
    dynamic = env.tau
    # skill <- prior, performance <- skill, team performance <- performance (the "gray arrows")
    r_pi, r_tau, p_pi, p_tau, pl_pi, pl_tau = [], [], [], [], [], []
    t_pi, t_tau, ts_pi, ts_tau = [], [], [], []
    for i in order:
        rating = ratings[i]
        sigma = math.sqrt(rating.sigma**2 + dynamic**2)
        pi = sigma**-2
        tau = pi * rating.mu
        r_pi.append(pi)
        r_tau.append(tau)
        a = 1.0 / (1.0 + beta2 * pi)
        p_pi.append(a * pi)
        p_tau.append(a * tau)
        pl_pi.append(a * pi)  # the likelihood's message to the performance
        pl_tau.append(a * tau)
        m_pi, m_tau = _sum(((1, a * pi, a * tau),))
        t_pi.append(m_pi)
        t_tau.append(m_tau)
        ts_pi.append(m_pi)  # the team sum's message to the team performance
        ts_tau.append(m_tau)
    pairs = n - 1
    # messages to team performance k from the difference below it (k - 1) and above it (k)
    left_pi, left_tau = [0.0] * n, [0.0] * n
    right_pi, right_tau = [0.0] * n, [0.0] * n
    d_pi, d_tau = [0.0] * pairs, [0.0] * pairs
    dd_pi, dd_tau = [0.0] * pairs, [0.0] * pairs  # the difference factor's message to d
    dt_pi, dt_tau = [0.0] * pairs, [0.0] * pairs  # the truncation's message to d
    margin = _draw_margin(env)
    sorted_ranks = [ranks[i] for i in order]
    draws = [sorted_ranks[k] == sorted_ranks[k + 1] for k in range(pairs)]
    cdf, pdf = env.cdf, env.pdf
    inline = cdf is _backends.cdf and pdf is _backends.pdf
    if inline:  # the default backend: the same operations, without the calls
        erfc, exp, sqrt, inf = _backends.erfc, math.exp, math.sqrt, math.inf

        def cdf(x: float) -> float:
            return 0.5 * erfc(-x / _SQRT_2)

        def pdf(x: float) -> float:
            return _INV_SQRT_2PI * exp(-(x**2 / 2))

    def diff_down(k: int) -> None:
        pi, tau = _sum2(
            +1,
            t_pi[k] - right_pi[k],
            t_tau[k] - right_tau[k],
            -1,
            t_pi[k + 1] - left_pi[k + 1],
            t_tau[k + 1] - left_tau[k + 1],
        )
        d_pi[k] = (d_pi[k] - dd_pi[k]) + pi
        d_tau[k] = (d_tau[k] - dd_tau[k]) + tau
        dd_pi[k], dd_tau[k] = pi, tau

    def truncate_up(k: int) -> float:
        div_pi, div_tau = d_pi[k] - dt_pi[k], d_tau[k] - dt_tau[k]
        sqrt_pi = math.sqrt(div_pi)
        diff, draw_margin = div_tau / sqrt_pi, margin * sqrt_pi
        # the library's v and w functions, each value computed once
        if draws[k]:
            abs_diff = abs(diff)
            a, b = draw_margin - abs_diff, -draw_margin - abs_diff
            denom = cdf(a) - cdf(b)
            v_abs = ((pdf(b) - pdf(a)) / denom) if denom else a
            v = v_abs * (-1 if diff < 0 else +1)
            if not denom:
                raise trueskill._floating_point_error(env)
            w = (v_abs**2) + (a * pdf(a) - b * pdf(b)) / denom
        else:
            x = diff - draw_margin
            denom = cdf(x)
            v = (pdf(x) / denom) if denom else -x
            w = v * (v + x)
            if not 0 < w < 1:
                raise trueskill._floating_point_error(env)
        denom = 1.0 - w
        pi, tau = div_pi / denom, (div_tau + sqrt_pi * v) / denom
        dt_pi[k] = (pi + dt_pi[k]) - d_pi[k]
        dt_tau[k] = (tau + dt_tau[k]) - d_tau[k]
        pi_delta = abs(d_pi[k] - pi)  # trueskill's Variable.delta
        delta = 0.0 if pi_delta == math.inf else max(abs(d_tau[k] - tau), math.sqrt(pi_delta))
        d_pi[k], d_tau[k] = pi, tau
        return delta

    def diff_up(k: int, index: int) -> None:
        if index == 0:  # to team performance k: d + t[k + 1]
            pi, tau = _sum2(
                1.0,
                d_pi[k] - dd_pi[k],
                d_tau[k] - dd_tau[k],
                1.0,
                t_pi[k + 1] - left_pi[k + 1],
                t_tau[k + 1] - left_tau[k + 1],
            )
            t_pi[k] = (t_pi[k] - right_pi[k]) + pi
            t_tau[k] = (t_tau[k] - right_tau[k]) + tau
            right_pi[k], right_tau[k] = pi, tau
        else:  # to team performance k + 1: t[k] - d
            pi, tau = _sum2(
                1.0,
                t_pi[k] - right_pi[k],
                t_tau[k] - right_tau[k],
                -1.0,
                d_pi[k] - dd_pi[k],
                d_tau[k] - dd_tau[k],
            )
            t_pi[k + 1] = (t_pi[k + 1] - left_pi[k + 1]) + pi
            t_tau[k + 1] = (t_tau[k + 1] - left_tau[k + 1]) + tau
            left_pi[k + 1], left_tau[k + 1] = pi, tau

    def step(k: int, index: int) -> float:
        """diff_down(k), truncate_up(k), diff_up(k, index) in one call: the loop's body."""
        diff_down(k)
        delta = truncate_up(k)
        diff_up(k, index)
        return delta

    if inline:

        def step(k: int, index: int) -> float:  # noqa: F811 - the inlined body
            # diff_down(k), with _sum2 inlined while no precision is 0
            a_pi, a_tau = t_pi[k] - right_pi[k], t_tau[k] - right_tau[k]
            b_pi, b_tau = t_pi[k + 1] - left_pi[k + 1], t_tau[k + 1] - left_tau[k + 1]
            if a_pi and b_pi:
                mu = 0 + a_tau / a_pi
                pi_inv = 0 + 1 / a_pi
                mu += -1 * (b_tau / b_pi)
                if pi_inv != inf:
                    pi_inv += 1 / b_pi
                pi = 1.0 / pi_inv
                tau = pi * mu
            else:
                pi, tau = _sum2(+1, a_pi, a_tau, -1, b_pi, b_tau)
            d_pi_k = (d_pi[k] - dd_pi[k]) + pi
            d_tau_k = (d_tau[k] - dd_tau[k]) + tau
            dd_pi[k], dd_tau[k] = pi, tau
            # truncate_up(k)
            div_pi, div_tau = d_pi_k - dt_pi[k], d_tau_k - dt_tau[k]
            sqrt_pi = sqrt(div_pi)
            diff, draw_margin = div_tau / sqrt_pi, margin * sqrt_pi
            if draws[k]:
                abs_diff = abs(diff)
                a, b = draw_margin - abs_diff, -draw_margin - abs_diff
                denom = 0.5 * erfc(-a / _SQRT_2) - 0.5 * erfc(-b / _SQRT_2)
                pdf_a = _INV_SQRT_2PI * exp(-(a**2 / 2))
                pdf_b = _INV_SQRT_2PI * exp(-(b**2 / 2))
                v_abs = ((pdf_b - pdf_a) / denom) if denom else a
                v = v_abs * (-1 if diff < 0 else +1)
                if not denom:
                    raise trueskill._floating_point_error(env)
                w = (v_abs**2) + (a * pdf_a - b * pdf_b) / denom
            else:
                x = diff - draw_margin
                denom = 0.5 * erfc(-x / _SQRT_2)
                v = ((_INV_SQRT_2PI * exp(-(x**2 / 2))) / denom) if denom else -x
                w = v * (v + x)
                if not 0 < w < 1:
                    raise trueskill._floating_point_error(env)
            denom = 1.0 - w
            pi, tau = div_pi / denom, (div_tau + sqrt_pi * v) / denom
            dt_pi[k] = (pi + dt_pi[k]) - d_pi_k
            dt_tau[k] = (tau + dt_tau[k]) - d_tau_k
            pi_delta = abs(d_pi_k - pi)
            delta = 0.0 if pi_delta == inf else max(abs(d_tau_k - tau), sqrt(pi_delta))
            d_pi[k], d_tau[k] = pi, tau
            # diff_up(k, index)
            m_pi, m_tau = pi - dd_pi[k], tau - dd_tau[k]
            if index == 0:
                o_pi, o_tau = t_pi[k + 1] - left_pi[k + 1], t_tau[k + 1] - left_tau[k + 1]
                coeff = 1.0
            else:
                o_pi, o_tau = t_pi[k] - right_pi[k], t_tau[k] - right_tau[k]
                coeff = -1.0
            if m_pi and o_pi:
                if index == 0:  # 1.0 * d + 1.0 * t[k + 1]
                    mu = 0 + 1.0 * (m_tau / m_pi)
                    pi_inv = 0 + 1.0 / m_pi
                    mu += 1.0 * (o_tau / o_pi)
                    if pi_inv != inf:
                        pi_inv += 1.0 / o_pi
                else:  # 1.0 * t[k] - 1.0 * d
                    mu = 0 + 1.0 * (o_tau / o_pi)
                    pi_inv = 0 + 1.0 / o_pi
                    mu += -1.0 * (m_tau / m_pi)
                    if pi_inv != inf:
                        pi_inv += 1.0 / m_pi
                pi = 1.0 / pi_inv
                tau = pi * mu
            elif index == 0:
                pi, tau = _sum2(1.0, m_pi, m_tau, 1.0, o_pi, o_tau)
            else:
                pi, tau = _sum2(1.0, o_pi, o_tau, -1.0, m_pi, m_tau)
            del coeff
            if index == 0:
                t_pi[k] = (t_pi[k] - right_pi[k]) + pi
                t_tau[k] = (t_tau[k] - right_tau[k]) + tau
                right_pi[k], right_tau[k] = pi, tau
            else:
                t_pi[k + 1] = (t_pi[k + 1] - left_pi[k + 1]) + pi
                t_tau[k + 1] = (t_tau[k + 1] - left_tau[k + 1]) + tau
                left_pi[k + 1], left_tau[k + 1] = pi, tau
            return delta

    for _ in range(10):
        if pairs == 1:
            diff_down(0)
            delta: float = truncate_up(0)
        else:
            delta = 0
            for k in range(pairs - 1):
                delta = max(delta, step(k, 1))
            for k in range(pairs - 1, 0, -1):
                delta = max(delta, step(k, 0))
        if delta <= trueskill.DELTA:
            break
    diff_up(0, 0)
    diff_up(pairs - 1, 1)
    rated: list[trueskill.Rating | None] = [None] * n
    for place, i in enumerate(order):
        # performance <- team performance, skill <- performance (the "black arrows")
        pi, tau = _sum(((1.0, t_pi[place] - ts_pi[place], t_tau[place] - ts_tau[place]),))
        perf_pi, perf_tau = p_pi[place] + pi, p_tau[place] + tau
        msg_pi, msg_tau = perf_pi - pl_pi[place], perf_tau - pl_tau[place]
        a = 1.0 / (1.0 + beta2 * msg_pi)
        skill_pi, skill_tau = r_pi[place] + a * msg_pi, r_tau[place] + a * msg_tau
        mu = float(_mean(skill_pi, skill_tau))
        sigma = float(math.sqrt(1 / skill_pi) if skill_pi else math.inf)
        if sigma == 0:
            raise ValueError("sigma**2 should be greater than 0")
        rating = rated[i] = trueskill.Rating.__new__(trueskill.Rating)
        rating.pi = sigma**-2  # as Rating(mu, sigma) sets them
        rating.tau = rating.pi * mu
    return rated


# --------------------------------------------------------------------------- order-free ratings

_SQRT_2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
#: a truncation's variance factor 1 - w is kept at least this (a nearly impossible outcome)
_MIN_REMAINING = 1e-12
#: ... and w at least this (an outcome so expected that its message carries nothing)
_MIN_W = 1e-15
#: the share of a new skill message taken each sweep (all games are updated in parallel)
_DAMPING = 0.5
#: sweeps before the common level is extrapolated
_WARM_UP = 10
#: the share taken when the sweeps start from an earlier call's messages (a graph grown by a
#: few games: near the fixed point, undamped sweeps get there in half the sweeps; damped again
#: as soon as they stop converging, see :func:`propagate`)
_WARM_DAMPING = 1.0


def _canonical_key(record: GameRecord) -> tuple:
    return (
        record.match_id,
        record.game_index,
        record.seed,
        record.seats,
        record.totals,
        tuple(sorted((fault.seat, str(fault.status)) for fault in record.faults)),
    )


def _pdf(x: np.ndarray) -> np.ndarray:
    import numpy as np  # deferred: numpy and scipy take ~0.35 s to import (see factor_graph)

    return _INV_SQRT_2PI * np.exp(-0.5 * x * x)


def _v_w_win(t: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """TrueSkill's v and w of a win (d > eps), stable for very negative t - eps."""
    from scipy.special import erfcx  # deferred: heavy (see factor_graph)

    x = t - eps
    v = _SQRT_2_OVER_PI / erfcx(-x / _SQRT_2)  # pdf(x) / cdf(x)
    w = v * (v + x)
    return v, w


def _v_w_draw(t: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """TrueSkill's v and w of a draw (|d| <= eps), stable for large |t|."""
    import numpy as np  # deferred: heavy (see factor_graph)
    from scipy.special import erfcx, ndtr  # deferred: heavy (see factor_graph)

    sign = np.where(t < 0, -1.0, 1.0)
    u = np.abs(t)
    a, b = eps - u, -eps - u
    # With both tails small (a < 0) everything is divided by pdf(a); pdf(b) / pdf(a) is
    # exp(-2 eps u) and cdf(x) / pdf(x) is sqrt(pi / 2) * erfcx(-x / sqrt(2)).
    near = a >= 0
    ratio = np.exp(-2.0 * eps * u)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        denom_near = ndtr(a) - ndtr(b)
        v_near = (_pdf(b) - _pdf(a)) / denom_near
        w_near = v_near**2 + (a * _pdf(a) - b * _pdf(b)) / denom_near
        denom_far = math.sqrt(math.pi / 2.0) * (erfcx(-a / _SQRT_2) - ratio * erfcx(-b / _SQRT_2))
        v_far = (ratio - 1.0) / denom_far
        w_far = v_far**2 + (a - b * ratio) / denom_far
    v = np.where(near, v_near, v_far)
    w = np.where(near, w_near, w_far)
    return v * sign, w


@attrs.frozen
class FactorGraph:
    """The factor graph of a list of games (sorted canonically), as flat arrays."""

    names: tuple[str, ...]
    slot_bot: np.ndarray  # per (game, place): the bot's index; places best first
    top: np.ndarray  # per adjacent pair of places in a game: the better slot
    bottom: np.ndarray  # ... and the worse slot
    draw: np.ndarray  # the pair drew
    parity: np.ndarray  # the pair's position in its game, mod 2
    games: np.ndarray  # games per bot


def factor_graph(
    records: Iterable[GameRecord],
    names: Iterable[str],
    fault_ranks_last: bool,
    *,
    presorted: bool = False,
) -> FactorGraph:
    """The graph of ``records`` sorted canonically (``presorted``: in the order given, for
    the benchmark and tests that show the fixed point itself does not depend on it)."""
    # deferred: numpy and scipy take ~0.35 s to import, paid only where ratings are computed,
    # not by every command (--help, check-bot, match) nor by the pool's workers
    import numpy as np

    index = {name: position for position, name in enumerate(dict.fromkeys(names))}
    slot_bot: list[int] = []
    top: list[int] = []
    draw: list[bool] = []
    parity: list[int] = []
    for record in records if presorted else sorted(records, key=_canonical_key):
        for name in record.seats:
            if name not in index:
                raise KeyError(f"game {record.match_id}#{record.game_index}: unknown bot {name!r}")
        if len(set(record.seats)) != len(record.seats):
            raise ValueError(
                f"game {record.match_id}#{record.game_index}: a bot in two seats {record.seats}"
            )
        if len(record.seats) < 2:
            continue
        ranks = game_ranks(record, fault_ranks_last=fault_ranks_last)
        order = sorted(range(len(ranks)), key=lambda seat: (ranks[seat], seat))
        first = len(slot_bot)
        slot_bot.extend(index[record.seats[seat]] for seat in order)
        for place in range(len(order) - 1):
            top.append(first + place)
            draw.append(ranks[order[place]] == ranks[order[place + 1]])
            parity.append(place % 2)
    slots = np.asarray(slot_bot, dtype=np.int64)
    top_array = np.asarray(top, dtype=np.int64)
    return FactorGraph(
        names=tuple(index),
        slot_bot=slots,
        top=top_array,
        bottom=top_array + 1,
        draw=np.asarray(draw, dtype=bool),
        parity=np.asarray(parity, dtype=np.int64),
        games=np.bincount(slots, minlength=len(index)),
    )


def order_free(
    records: Iterable[GameRecord],
    bots: Iterable[str],
    *,
    game: str = OH_SEVEN,
    draw_probability: float | None = None,
    fault_ranks_last: bool = True,
    tolerance: float = 1e-9,
    max_sweeps: int = 5000,
) -> dict[str, tuple[float, float]]:
    """Order-free TrueSkill: every bot's posterior ``(mu, sigma)`` given all ``records``.

    Expectation propagation on TrueSkill's factor graph of every game at once (prior
    N(mu0, sigma0^2) per bot, performance = skill + N(0, beta^2), adjacent places of a game
    compared with the draw margin of ``draw_probability``, no skill dynamics), iterated until no
    mu or sigma moves by more than ``tolerance``. The fixed point does not depend on the order
    of the games, and the computation runs on the games sorted by their content, so any
    permutation of ``records`` gives identical numbers. Bots of ``bots`` without games keep the
    prior. Raises ``KeyError`` for a bot not in ``bots``, ``ValueError`` for a bot in two seats.
    """
    env = make_env(game, draw_probability)
    graph = factor_graph(records, bots, fault_ranks_last)
    mu, sigma = propagate(graph, env, tolerance, max_sweeps)
    return {
        name: (float(mu[position]), float(sigma[position]))
        for position, name in enumerate(graph.names)
    }


def order_free_table(
    records: Sequence[GameRecord],
    bots: Iterable[str],
    *,
    game: str = OH_SEVEN,
    draw_probability: float | None = None,
    fault_ranks_last: bool = True,
) -> list[BotRating]:
    """:func:`order_free` as rows, best conservative score first (ties by name)."""
    names = tuple(dict.fromkeys(bots))
    rated = order_free(
        records,
        names,
        game=game,
        draw_probability=draw_probability,
        fault_ranks_last=fault_ranks_last,
    )
    games = dict.fromkeys(names, 0)
    for record in records:
        for name in record.seats:
            games[name] += 1
    rows = [BotRating(name, mu, sigma, games[name]) for name, (mu, sigma) in rated.items()]
    return sorted(rows, key=lambda row: (-row.score, row.name))


def propagate(
    graph: FactorGraph,
    env: trueskill.TrueSkill,
    tolerance: float,
    max_sweeps: int,
    messages: dict[str, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The EP fixed point: each bot's posterior mean and standard deviation.

    ``messages``: the messages of an earlier call on a graph that this one extends (the same
    slots first, more after): the sweeps start from them (new slots from zero), and they are
    replaced by the final ones. The fixed point is the same within ``tolerance``; only the way
    there is shorter (the live leaderboard, ``results.incremental``): undamped
    (:data:`_WARM_DAMPING`) while each sweep's change stays within twice the least so far.

    Messages are in natural parameters (precision, precision * mean). A sweep sends every
    skill's cavity down to its performances, updates the comparisons of every game (the pairs
    at even places, then those at odd places: no two pairs updated together share a
    performance) and sends the performances' messages back up, damped, to the skills.
    """
    import numpy as np  # deferred: heavy (see factor_graph)

    bots = len(graph.names)
    pi0 = 1.0 / env.sigma**2
    tau0 = env.mu * pi0
    beta2 = env.beta**2
    eps = trueskill.calc_draw_margin(env.draw_probability, 2, env)
    slots = len(graph.slot_bot)
    if slots == 0:
        return np.full(bots, env.mu), np.full(bots, env.sigma)
    up_pi = np.zeros(slots)  # performance -> skill
    up_tau = np.zeros(slots)
    above_pi = np.zeros(slots)  # from the pair in which the slot is the better one
    above_tau = np.zeros(slots)
    below_pi = np.zeros(slots)  # from the pair in which the slot is the worse one
    below_tau = np.zeros(slots)
    arrays = (up_pi, up_tau, above_pi, above_tau, below_pi, below_tau)
    for name, array in zip(_MESSAGES, arrays, strict=True):
        if messages and name in messages:
            known = messages[name][:slots]
            array[: len(known)] = known
    groups = [
        (graph.top[mask], graph.bottom[mask], np.flatnonzero(graph.draw[mask]))
        for mask in (graph.parity == 0, graph.parity == 1)
    ]
    mu = np.full(bots, np.inf)
    sigma = np.full(bots, np.inf)
    damping = _WARM_DAMPING if messages else _DAMPING
    least = np.inf  # the least change of a sweep so far
    for sweep in range(max_sweeps):
        q_pi = pi0 + np.bincount(graph.slot_bot, weights=up_pi, minlength=bots)
        q_tau = tau0 + np.bincount(graph.slot_bot, weights=up_tau, minlength=bots)
        new_mu, new_sigma = q_tau / q_pi, 1.0 / np.sqrt(q_pi)
        change = max(np.max(np.abs(new_mu - mu)), np.max(np.abs(new_sigma - sigma)))
        mu, sigma = new_mu, new_sigma
        if change <= tolerance:
            break
        if damping != _DAMPING and (change > 2 * least or sweep >= _WARM_UP * 5):
            damping = _DAMPING  # the undamped sweeps do not settle (yet): damped, as a cold start
        least = min(least, change)
        cavity_pi = q_pi[graph.slot_bot] - up_pi
        cavity_tau = q_tau[graph.slot_bot] - up_tau
        down_pi = cavity_pi / (1.0 + cavity_pi * beta2)
        down_tau = cavity_tau / (1.0 + cavity_pi * beta2)
        for top, bottom, draw in groups:
            # the performances' messages to the pair, without the pair's own messages
            t_pi = down_pi[top] + below_pi[top]
            t_mu = (down_tau[top] + below_tau[top]) / t_pi
            b_pi = down_pi[bottom] + above_pi[bottom]
            b_mu = (down_tau[bottom] + above_tau[bottom]) / b_pi
            var = 1.0 / t_pi + 1.0 / b_pi
            sd = np.sqrt(var)
            mean = t_mu - b_mu
            v, w = _v_w_win(mean / sd, eps / sd)
            if draw.size:
                v[draw], w[draw] = _v_w_draw(mean[draw] / sd[draw], eps / sd[draw])
            w = np.clip(w, _MIN_W, 1.0 - _MIN_REMAINING)
            # the truncation's message to the difference (marginal / cavity): the marginal is
            # N(mean + sd v, var (1 - w))
            d_pi = w / (var * (1.0 - w))
            d_mu = mean + sd * v / w
            # ... and the difference's messages to the two performances
            above_pi[top] = 1.0 / (1.0 / d_pi + 1.0 / b_pi)
            above_tau[top] = above_pi[top] * (d_mu + b_mu)
            below_pi[bottom] = 1.0 / (1.0 / d_pi + 1.0 / t_pi)
            below_tau[bottom] = below_pi[bottom] * (t_mu - d_mu)
        m_pi = above_pi + below_pi
        m_tau = above_tau + below_tau
        new_up_pi = m_pi / (1.0 + m_pi * beta2)
        new_up_tau = m_tau / (1.0 + m_pi * beta2)
        if sweep >= _WARM_UP:
            # The likelihood only sees differences of skills: the common level of all skills
            # is held by the weak prior alone, and a plain sweep moves it by only about
            # pi0 / precision of its distance to the fixed point. Messages offset by e from
            # the fixed point have cavities offset by e (1 - pi0 / cavity precision), and the
            # game factors are shift-equivariant, so the new messages' mean drift D is about
            # -e * pi0 / cavity precision: shifting every message by D / c - D (c that mean
            # ratio) removes the offset. This changes the path, not the fixed point.
            weight = np.sum(new_up_pi)
            drift = np.sum(new_up_tau - new_up_pi * (up_tau / up_pi)) / weight
            c = np.sum(new_up_pi * (pi0 / cavity_pi)) / weight
            shift = drift / c
            above_tau = above_tau + above_pi * (shift - drift)
            below_tau = below_tau + below_pi * (shift - drift)
        else:
            shift = 0.0
        up_pi = damping * new_up_pi + (1.0 - damping) * up_pi
        up_tau = damping * new_up_tau + (1.0 - damping) * up_tau
        if shift:
            up_tau = up_tau + up_pi * (shift - damping * drift)
    if messages is not None:
        arrays = (up_pi, up_tau, above_pi, above_tau, below_pi, below_tau)
        messages.update(zip(_MESSAGES, arrays, strict=True))
    return mu, sigma


#: the names of the messages :func:`propagate` keeps between calls
_MESSAGES = ("up_pi", "up_tau", "above_pi", "above_tau", "below_pi", "below_tau")
