"""The leaderboard document kept up to date game by game, for a server that shows it live.

``board.Leaderboard.document`` computes everything from all the games each time: at 1,000 bots
and 100,000 games that is seconds of CPU (the order-free ratings' factor graph rebuilt and
solved from scratch, every bot's aggregates and points intervals summed again), so a league's
run loop writes ``leaderboard.json`` only now and then. :class:`LiveBoard` keeps each part as
the games arrive instead: the aggregates (``store.Aggregates``) and the deals behind the
points intervals (``uncertainty.DealUnits``) are sums; the factor graph only grows (the new
games' slots appended); the expectation propagation restarts from the previous messages
(``ratings.propagate``), so a document after a wave costs a few sweeps, not a cold solve.

The numbers are those of ``leaderboard.json`` for the same games, except the order-free mu and
sigma, which reach the same fixed point from another start: equal within the solver's
tolerance (1e-9), so the published 6 decimals agree but for a rare rounding of the last one.
``leaderboard.json``, written by the league from the games sorted by content, stays the
reference.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attrs
from ohseven.referee.records import GameRecord
from ohseven.referee.results.archive import Tournament, rated_records
from ohseven.referee.results.leaderboard import leaderboard
from ohseven.referee.results.ratings import (
    BotRating,
    FactorGraph,
    Ratings,
    factor_graph,
    make_env,
    propagate,
)
from ohseven.referee.results.store import Aggregates
from ohseven.referee.results.uncertainty import DealUnits

if TYPE_CHECKING:
    import numpy as np

__all__ = ["LiveBoard"]

#: as ``ratings.order_free``
_TOLERANCE = 1e-9
_MAX_SWEEPS = 5000


class LiveBoard:
    """The parts of the leaderboard of a growing set of games (see the module). Add each
    finished game once, in any order; :meth:`document` is ``leaderboard.leaderboard`` of them."""

    def __init__(
        self, game: str, *, draw_probability: float | None = None, fault_ranks_last: bool = True
    ) -> None:
        self.game = game
        self.draw_probability = draw_probability
        self.fault_ranks_last = fault_ranks_last
        self.env = make_env(game, draw_probability)
        self.names: list[str] = []
        self.known: set[str] = set()
        self.aggregates = Aggregates()
        self.units = DealUnits()
        self.games = 0
        self.unsolved: list[GameRecord] = []  # added, not yet in the graph
        self.slot_bot: np.ndarray | None = None
        self.top: np.ndarray | None = None
        self.draw: np.ndarray | None = None
        self.parity: np.ndarray | None = None
        self.messages: dict[str, np.ndarray] = {}
        self.solved: list[BotRating] | None = None

    def name(self, name: str) -> None:
        """Rate ``name`` (from the prior) even before its first game."""
        if name not in self.known:
            self.known.add(name)
            self.names.append(name)
            self.aggregates.name(name)
            self.units.bot(name)
            self.solved = None

    def add(self, record: GameRecord) -> None:
        """Take in one finished game."""
        for name in record.seats:
            self.name(name)
        for rated in rated_records((record,), self.fault_ranks_last):
            self.aggregates.add(rated)
        self.units.add(record)
        self.unsolved.append(record)
        self.games += 1
        self.solved = None

    def table(self) -> list[BotRating]:
        """The order-free ratings (as ``ratings.order_free_table``), best first."""
        if self.solved is not None:
            return self.solved
        import numpy as np  # deferred: heavy (see ratings.factor_graph)

        names = tuple(self.names)
        if self.unsolved:
            grown = factor_graph(self.unsolved, names, self.fault_ranks_last, presorted=True)
            self.unsolved = []
            if self.slot_bot is None or self.top is None:
                self.slot_bot, self.top = grown.slot_bot, grown.top
                self.draw, self.parity = grown.draw, grown.parity
            else:
                offset = len(self.slot_bot)
                self.slot_bot = np.concatenate([self.slot_bot, grown.slot_bot])
                self.top = np.concatenate([self.top, grown.top + offset])
                self.draw = np.concatenate([self.draw, grown.draw])
                self.parity = np.concatenate([self.parity, grown.parity])
        slots = self.slot_bot if self.slot_bot is not None else np.zeros(0, dtype=np.int64)
        top = self.top if self.top is not None else np.zeros(0, dtype=np.int64)
        graph = FactorGraph(
            names=names,
            slot_bot=slots,
            top=top,
            bottom=top + 1,
            draw=self.draw if self.draw is not None else np.zeros(0, dtype=bool),
            parity=self.parity if self.parity is not None else np.zeros(0, dtype=np.int64),
            games=np.bincount(slots, minlength=len(names)),
        )
        mu, sigma = propagate(graph, self.env, _TOLERANCE, _MAX_SWEEPS, self.messages)
        games = self.aggregates.games
        rows = [
            BotRating(name, float(mu[at]), float(sigma[at]), games[name])
            for at, name in enumerate(names)
        ]
        self.solved = sorted(rows, key=lambda row: (-row.score, row.name))
        return self.solved

    def document(self, tournament: Tournament, ratings: Ratings) -> dict[str, Any]:
        """``leaderboard.leaderboard`` of the games added: ``tournament`` says everything but
        the games (its ``games`` may be empty; its ``bots`` are rated too), ``ratings`` are the
        sequential ratings after the games in canonical order."""
        for name in tournament.bots:
            self.name(name)
        bots = tuple(self.names)
        for name in bots:  # a bot without games keeps the prior
            if name not in ratings.ratings:
                ratings.ratings[name] = ratings.env.create_rating()
                ratings.games[name] = 0
        return leaderboard(
            _with_bots(tournament, bots),
            ratings,
            self.aggregates.result(),
            self.table(),
            self.units.intervals(),
            played=self.games,
        )


def _with_bots(tournament: Tournament, bots: Iterable[str]) -> Tournament:
    return attrs.evolve(tournament, bots=tuple(bots))
