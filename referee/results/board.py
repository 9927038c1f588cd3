"""The running leaderboard of a tournament: the stored games in memory, their ratings kept up
to date as games arrive, and the ``leaderboard.json`` document built from them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ohseven.referee.plan import stopping
from ohseven.referee.plan.config import TourneyConfig
from ohseven.referee.records import GameRecord
from ohseven.referee.results.archive import Tournament
from ohseven.referee.results.leaderboard import leaderboard
from ohseven.referee.results.ratings import Ratings
from ohseven.referee.results.store import StoredGame

__all__ = ["LEADERBOARD_NAME", "Leaderboard"]

LEADERBOARD_NAME = "leaderboard.json"


class Leaderboard:
    """The live leaderboard of the stored games.

    The document ranks by the order-free TrueSkill estimate (``ratings.order_free``, recomputed
    from all the games each time :meth:`document` is called: its cost grows with the games, and
    the run loop calls it at most once per ten times its cost). The sequential ratings in
    canonical order, published beside it, are kept incrementally: those of the longest run of
    consecutive finished games from canonical index 0 are kept; games beyond a gap are rated on
    a copy each time, so the result is always that of applying every finished game in
    canonical order.
    """

    def __init__(
        self,
        config: TourneyConfig,
        total_games: int,
        matches_total: int = 0,
        secret: bytes | None = None,
        names: Sequence[str] = (),
    ) -> None:
        self.config = config
        #: every bot rated: the configuration's, then those of past games (a league's leavers)
        self.names = tuple(dict.fromkeys((*config.bot_names, *names)))
        self.secret = secret  # published only once complete, and only if ``reveal_seeds``
        self.total_games = total_games
        self.matches_total = matches_total
        self.matches_done = 0
        self.prefix = self._fresh()
        self.prefix_end = 0  # canonical index of the first game not in the prefix
        self.games: dict[int, GameRecord] = {}
        #: a gauntlet's stopping rule (``stopping.Plan``), or None
        self.stopping = stopping.plan_of(config)
        #: a league's bots left out because they could not start: name -> why
        self.refused: dict[str, str] = {}

    def _fresh(self) -> Ratings:
        return Ratings(
            self.config.game,
            self.names,
            draw_probability=self.config.ratings.draw_probability,
            fault_ranks_last=self.config.ratings.fault_ranks_last,
        )

    def join(self, config: TourneyConfig) -> None:
        """Take ``config`` (a league's next wave's: bots joined) and rate its new bots from the
        prior (they have no games yet)."""
        self.config = config
        new = [name for name in config.bot_names if name not in self.names]
        self.names = (*self.names, *new)
        for name in new:
            self.prefix.ratings[name] = self.prefix.env.create_rating()
            self.prefix.games[name] = 0

    def add(self, canonical_index: int, record: GameRecord) -> None:
        self.games[canonical_index] = record
        while self.prefix_end in self.games:
            self.prefix.apply(self.games[self.prefix_end])
            self.prefix_end += 1

    def discard(self, canonical_index: int) -> None:
        """Forget a game (its match failed); the ratings are recomputed when they included it."""
        if self.games.pop(canonical_index, None) is None:
            return
        if canonical_index < self.prefix_end:
            self.prefix = self._fresh()
            self.prefix_end = 0
            while self.prefix_end in self.games:
                self.prefix.apply(self.games[self.prefix_end])
                self.prefix_end += 1

    def ratings(self) -> Ratings:
        tail = sorted(index for index in self.games if index >= self.prefix_end)
        if not tail:
            return self.prefix
        ratings = self.prefix.copy()
        for index in tail:
            ratings.apply(self.games[index])
        return ratings

    def document(self) -> dict[str, Any]:
        """The content of ``leaderboard.json`` (``leaderboard.leaderboard``, the schema of
        docs/LEADERBOARD.md), from the games in memory: deterministic, no clock."""
        config = self.config
        reveal = (
            config.reveal_seeds
            and self.secret is not None
            and self.total_games > 0
            and len(self.games) == self.total_games
        )
        tournament = Tournament(
            name=config.name,
            game=config.game,
            seed=config.seed if reveal else None,
            secret=self.secret.hex() if reveal and self.secret is not None else None,
            config=config.document,
            bots=self.names,
            games=tuple(StoredGame(index, -1, self.games[index]) for index in sorted(self.games)),
            matches_done=self.matches_done,
            matches_total=self.matches_total,
            games_total=self.total_games,
            digest=config.digest,
            draw_probability=config.ratings.draw_probability,
            fault_ranks_last=config.ratings.fault_ranks_last,
            stopping=self.stopping,
            refused=tuple(sorted(self.refused.items())),
        )
        return leaderboard(tournament, self.ratings())

    def verdicts(self, waves: int | None = None) -> dict[str, stopping.Verdict]:
        """Each candidate's stopping verdict after the complete repeats among the first
        ``waves`` (default: all); empty without a stopping rule."""
        if self.stopping is None:
            return {}
        return stopping.verdicts(self.stopping, self.games.items(), waves)
