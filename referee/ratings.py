"""TrueSkill ratings from each game's free-for-all ranking, applied in canonical game order.

A game is a free-for-all of one-bot teams ranked by total (equal totals draw). With
``fault_ranks_last`` a bot that faulted in a game ranks below every bot that did not (among
themselves faulted bots keep the order of their totals). Games are applied in canonical order,
so the ratings depend only on the set of finished games, never on the order they finished in;
:func:`rate_games` recomputes them from the store's records.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs
import trueskill

from .records import FaultStatus, GameRecord
from .rules import OH_HELL, OH_SEVEN, competition_ranks

__all__ = [
    "DRAW_PROBABILITY",
    "BotRating",
    "Ratings",
    "game_ranks",
    "rate_games",
    "make_env",
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
        rated = self.env.rate(groups, ranks=[rank - 1 for rank in ranks])
        for name, (rating,) in zip(record.seats, rated, strict=True):
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
