"""Where a tournament's matches come from, in canonical order, as the pool has room: a schedule
iterated (round-robin, gauntlet), a gauntlet repeat by repeat under its stopping rule, a league
wave by wave (drawn from :func:`matchmaking_ratings`). Each reads the run's plan
(``run_plan.RunPlan``: its schedule and secret), not the configuration."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterator, Sequence

from ohseven.referee.plan.run_plan import RunPlan
from ohseven.referee.plan.schedule import (
    ScheduledMatch,
    SchedulePlan,
    draw_wave,
    iter_schedule,
    league_match,
    newcomer_tables,
)
from ohseven.referee.records import BotSpec
from ohseven.referee.results.archive import REFUSED_KEY
from ohseven.referee.results.board import Leaderboard
from ohseven.referee.results.ratings import order_free
from ohseven.referee.results.store import Store

__all__ = ["Feed", "LeagueFeed", "ScheduleFeed", "StoppingFeed", "matchmaking_ratings"]


class Feed:
    """Where the matches to play come from, in canonical order, as the pool has room."""

    done = False

    def take(self, room: int, idle: bool) -> list[ScheduledMatch]:
        """Up to ``room`` matches to play next; ``idle``: no match is being played."""
        raise NotImplementedError


class ScheduleFeed(Feed):
    """A round-robin or gauntlet, iterated: the matches not done, never all in memory."""

    def __init__(self, plan: RunPlan, store: Store) -> None:
        self.iterator: Iterator[ScheduledMatch] = iter_schedule(
            plan.schedule, plan.secret, store.done_matches()
        )

    def take(self, room: int, idle: bool) -> list[ScheduledMatch]:
        matches = list(itertools.islice(self.iterator, room))
        self.done = len(matches) < room
        return matches


class StoppingFeed(Feed):
    """A gauntlet with a stopping rule (see ``stopping``), repeat by repeat: repeat ``r + 1``
    starts once every match of the earlier repeats is done, without the candidates that the
    games of those repeats decided. The same games whatever the workers and interruptions."""

    def __init__(self, plan: RunPlan, store: Store, board: Leaderboard) -> None:
        self.schedule, self.secret = plan.schedule, plan.secret
        self.store, self.board = store, board
        assert board.stopping is not None, "a stopping feed needs the gauntlet's stopping rule"
        self.stopping = board.stopping
        self.skip = store.done_matches()
        self.wave = 0
        self.iterator: Iterator[ScheduledMatch] = iter_schedule(
            self.schedule, self.secret, self.skip, repeats=(0,)
        )

    def take(self, room: int, idle: bool) -> list[ScheduledMatch]:
        matches = list(itertools.islice(self.iterator, room))
        while not matches and idle and not self.done:
            if self.wave + 1 >= self.stopping.waves or self.store.failures():
                self.done = True  # (a failed match holds the next repeat back until a rerun)
                break
            self.wave += 1
            decided = {
                name for name, verdict in self.board.verdicts(self.wave).items() if verdict.decided
            }
            self.totals()
            self.iterator = iter_schedule(
                self.schedule, self.secret, self.skip, repeats=(self.wave,), leave_out=decided
            )
            matches = list(itertools.islice(self.iterator, room))
        return matches

    def totals(self) -> None:
        """The games and matches the gauntlet will hold, given the candidates decided so far."""
        board, rule = self.board, self.stopping
        waves = [verdict.waves_played(rule) for verdict in board.verdicts().values()]
        board.total_games = rule.candidate_games * sum(waves)
        board.matches_total = rule.candidate_matches * sum(waves)
        self.store.set_meta(
            {"games_total": str(board.total_games), "matches_total": str(board.matches_total)}
        )


def matchmaking_ratings(board: Leaderboard) -> dict[str, tuple[float, float]]:
    """(mu, sigma) of every bot after every stored game, for drawing a league's next wave (the
    board holds every earlier wave's games then, and nothing later): the order-free TrueSkill
    estimate the leaderboard ranks by (``ratings.order_free``), a function of the set of games
    (computed from them sorted by content), so the same whatever order they finished in."""
    plan = board.plan
    if not board.games:  # every bot at the prior (and NumPy left unimported at the start)
        return {name: (r.mu, r.sigma) for name, r in board.prefix.ratings.items()}
    return order_free(
        board.games.values(),
        board.names,
        game=plan.game,
        draw_probability=plan.ratings.draw_probability,
        fault_ranks_last=plan.ratings.fault_ranks_last,
    )


class LeagueFeed(Feed):
    """A league's waves: the rest of the stored wave, then each next wave drawn (see
    ``schedule.draw_wave``) once every match of the previous one is done, among the bots of
    ``roster()`` when given (the schedule of the bots playing now: bots join and leave between
    waves; a bot that joins while a wave is played gets its first tables at once:
    ``_newcomers``)."""

    #: how often the roster is read for newcomers while a wave is played (seconds)
    POLL_SECONDS = 1.0

    def __init__(
        self,
        plan: RunPlan,
        store: Store,
        board: Leaderboard,
        roster: Callable[[], SchedulePlan] | None = None,
        validate: Callable[[Sequence[BotSpec]], dict[str, str]] | None = None,
    ) -> None:
        self.schedule, self.secret = plan.schedule, plan.secret
        self.store, self.board = store, board
        #: the schedule with the bots of the next wave (``serve``: its authors' bots)
        self.roster = roster
        #: start the bots given and return {name: why} of those that cannot start: each bot is
        #: validated before its own first match; one that fails is left out (``refused``)
        self.validate = validate
        self.valid: set[str] = set()
        self.refused: dict[str, str] = {}
        self.queue: list[ScheduledMatch] = []
        last = store.last_wave() or (-1, 0, 0)
        self.wave = last[0] + 1
        present = set(self.schedule.bot_names)
        #: the bots of the recorded waves (a newcomer is one not among them: see ``_newcomers``)
        self.seated: set[str] = store.wave_bots()
        self.polled = 0.0
        for wave, first, count in store.open_waves():  # latest (newcomer waves) first
            for row in store.match_rows(first, first + count - 1):
                if row["status"] in ("done", "withdrawn"):
                    continue
                if not present.issuperset(row["bots"]):  # a bot left before the match was played
                    store.withdraw_match(row["index"])
                    continue
                self.queue.append(
                    league_match(
                        self.schedule,
                        self.secret,
                        row["index"],
                        row["first_game"],
                        wave,
                        row["index"] - first,
                        row["bots"],
                    )
                )
        self._totals()

    def _totals(self) -> None:
        rows = [row for row in self.store.match_rows() if row["status"] != "withdrawn"]
        self.scheduled = sum(row["games"] for row in rows)
        self.board.matches_total = len(rows)
        self.board.total_games = self.scheduled if self.done else self.schedule.games

    def take(self, room: int, idle: bool) -> list[ScheduledMatch]:
        while True:
            if not self.queue and idle and not self.done:
                self._draw()
            elif self.roster is not None and not self.done:
                self._newcomers()
            matches, self.queue = self.queue[:room], self.queue[room:]
            if self.validate is None or not matches:
                return matches
            kept = self._validated(matches)
            if kept:  # (else every match was withdrawn: nothing is played, take more)
                return kept

    def _validated(self, matches: list[ScheduledMatch]) -> list[ScheduledMatch]:
        """The matches whose bots all start: the bots not validated yet are started first;
        the matches of a bot that cannot start are withdrawn, and it plays no later wave."""
        assert self.validate is not None
        unknown = {
            bot.name: bot
            for match in matches
            for bot in match.spec.bots
            if bot.name not in self.valid and bot.name not in self.refused
        }
        if unknown:
            failed = self.validate(list(unknown.values()))
            for name in unknown:
                if name in failed:
                    self.refused[name] = failed[name]
                else:
                    self.valid.add(name)
            self.board.refused = dict(self.refused)
            self.store.set_meta({REFUSED_KEY: json.dumps(self.refused, sort_keys=True)})
        kept = []
        for match in matches:
            if any(name in self.refused for name in match.bot_names):
                self.store.withdraw_match(match.index)
            else:
                kept.append(match)
        if len(kept) < len(matches):
            self._totals()
        return kept

    def _newcomers(self) -> None:
        """While a wave is being played, the bots that joined since it was drawn get their
        first tables at once (``schedule.newcomer_tables``), recorded as a wave of their own
        and played before the rest of the queue; the roster is read at most once every
        ``POLL_SECONDS``. When a bot joins is an event like an upload: for the same events
        the same wave is recorded, whatever the workers, and a resume plays the same tables."""
        now = time.monotonic()
        if now - self.polled < self.POLL_SECONDS or self.store.failures():
            return
        self.polled = now
        assert self.roster is not None
        schedule = self.roster()
        newcomers = [
            name
            for name in schedule.bot_names
            if name not in self.seated and name not in self.refused
        ]
        if not newcomers:
            return
        field = [name for name in schedule.bot_names if name in self.seated]
        field = [name for name in field if name not in self.refused]
        tables = newcomer_tables(
            schedule, self.secret, self.wave, newcomers, field, schedule.games - self.scheduled
        )
        if not tables:
            return
        self.schedule = schedule
        self.board.join(schedule.bot_names)
        self._record(tables, [name for table in tables for name in table], front=True)

    def _record(self, tables: Sequence[Sequence[str]], bots: Sequence[str], front: bool) -> None:
        """Record wave ``self.wave`` of ``tables`` durably and queue its matches (before the
        rest of the queue when ``front``: a newcomer wave)."""
        board = self.board
        index, first_game = self.store.next_match_index()
        matches = []
        for table_no, table in enumerate(tables):
            match = league_match(
                self.schedule, self.secret, index, first_game, self.wave, table_no, tuple(table)
            )
            matches.append(match)
            index += 1
            first_game += match.games
        self.store.add_wave(
            self.wave,
            list(bots),
            [(m.index, m.spec.match_id, m.bot_names, m.first_game, m.games) for m in matches],
        )
        self.queue = [*matches, *self.queue] if front else [*self.queue, *matches]
        self.seated.update(bots)
        self.wave += 1
        self._totals()
        self.store.set_meta(
            {"games_total": str(board.total_games), "matches_total": str(board.matches_total)}
        )

    def _draw(self) -> None:
        if self.store.failures():  # the next wave waits for a rerun to play the failed match
            self.done = True
            return
        if self.roster is not None:
            self.schedule = self.roster()
            self.board.join(self.schedule.bot_names)
        schedule, board = self.schedule, self.board
        ratings = matchmaking_ratings(board)
        played = {name: count for name, count in board.ratings().games.items()}
        active = [name for name in schedule.bot_names if name not in self.refused]
        tables = draw_wave(
            schedule,
            self.secret,
            self.wave,
            active,
            ratings,
            played,
            schedule.games - self.scheduled,
        )
        if not tables:  # the budget is spent: the league is complete
            self.done = True
            self._totals()
            self.store.set_meta(  # (what publish shows: the games the league holds)
                {"games_total": str(board.total_games), "matches_total": str(board.matches_total)}
            )
            return
        self._record(tables, active, front=False)
