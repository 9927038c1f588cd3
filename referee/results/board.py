"""The running leaderboard of a tournament: the stored games in memory, their ratings kept up
to date as games arrive, and the ``leaderboard.json`` document built from them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ohseven.referee.plan import stopping
from ohseven.referee.plan.run_plan import RunPlan
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
        plan: RunPlan,
        total_games: int,
        matches_total: int = 0,
        names: Sequence[str] = (),
    ) -> None:
        self.plan = plan
        #: every bot rated: the plan's, then those of past games (a league's leavers)
        self.names = tuple(dict.fromkeys((*plan.bot_names, *names)))
        self.total_games = total_games
        self.matches_total = matches_total
        self.matches_done = 0
        self.prefix = self._fresh()
        self.prefix_end = 0  # canonical index of the first game not in the prefix
        self.games: dict[int, GameRecord] = {}
        #: a gauntlet's stopping rule (``stopping.Plan``), or None
        self.stopping = plan.stopping
        #: a league's bots left out because they could not start: name -> why
        self.refused: dict[str, str] = {}

    def _fresh(self) -> Ratings:
        return Ratings(
            self.plan.game,
            self.names,
            draw_probability=self.plan.ratings.draw_probability,
            fault_ranks_last=self.plan.ratings.fault_ranks_last,
        )

    def join(self, names: Sequence[str]) -> None:
        """Rate the bots of ``names`` not rated yet (a league's next wave's: bots joined) from
        the prior (they have no games yet)."""
        new = [name for name in names if name not in self.names]
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
        plan = self.plan
        # the secret is published only once complete, and only if ``reveal_seeds``
        reveal = plan.reveal_seeds and self.total_games > 0 and len(self.games) == self.total_games
        tournament = Tournament(
            name=plan.name,
            game=plan.game,
            seed=plan.seed if reveal else None,
            secret=plan.secret.hex() if reveal else None,
            config=plan.document,
            bots=self.names,
            games=tuple(StoredGame(index, -1, self.games[index]) for index in sorted(self.games)),
            matches_done=self.matches_done,
            matches_total=self.matches_total,
            games_total=self.total_games,
            digest=plan.digest,
            draw_probability=plan.ratings.draw_probability,
            fault_ranks_last=plan.ratings.fault_ranks_last,
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
