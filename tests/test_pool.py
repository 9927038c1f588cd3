"""The local worker pool: real forked worker processes playing jobs, dying, being stopped; and
the ``Pool`` interface that both the local pool and the cluster's pool give the run loop."""

from __future__ import annotations

import errno
import inspect
import os
import queue
import signal
import time
from typing import Any

import pytest
from ohseven.core.rules import OH_SEVEN, Rules
from ohseven.referee.records import BotSpec, GameRecord, MatchResult, MatchSpec
from ohseven.referee.tournament.cluster import ClusterPool
from ohseven.referee.tournament.pool import (
    GameEnded,
    Job,
    LocalPool,
    MatchEnded,
    MatchFailed,
    Pool,
    PoolResult,
)

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')

GAMES_PER_MATCH = 2


def spec(index: int) -> MatchSpec:
    bots = tuple(BotSpec(f"b{n}", ("true",)) for n in range(3))
    return MatchSpec(f"m{index:05d}", Rules.make(OH_SEVEN), bots, ((0, 1, 2),), (index,))


def record(spec: MatchSpec, game: int) -> GameRecord:
    return GameRecord(spec.match_id, game, 0, ("b0", "b1", "b2"), (1, 2, 3), (3, 2, 1))


def playing_runner(spec: MatchSpec, *, on_game: Any, **kwargs: Any) -> MatchResult:
    """Two games, each reported as it ends, then the match with both, and the worker's pid."""
    games = []
    for game in range(GAMES_PER_MATCH):
        games.append(record(spec, game))
        on_game(games[-1])
    return MatchResult(spec, tuple(games), {"pid": str(os.getpid())})


def dying_runner(spec: MatchSpec, *, on_game: Any, **kwargs: Any) -> MatchResult:
    """Match 1 kills its own worker (after one game); the others play."""
    if spec.match_id == "m00001":
        on_game(record(spec, 0))
        time.sleep(0.5)  # the queue's feeder thread sends the game first
        os.kill(os.getpid(), signal.SIGKILL)
    return playing_runner(spec, on_game=on_game)


def raising_runner(spec: MatchSpec, **kwargs: Any) -> MatchResult:
    raise ValueError("the runner broke")


def full_disk_runner(spec: MatchSpec, **kwargs: Any) -> MatchResult:
    raise OSError(errno.ENOSPC, "No space left on device")


def sleeping_runner(spec: MatchSpec, **kwargs: Any) -> MatchResult:
    time.sleep(120)
    raise AssertionError("not stopped")


def job(index: int, runner: Any) -> Job:
    return Job(index, spec(index), None, None, runner)


def as_tuple(result: PoolResult) -> tuple:
    """``(kind, index, payload)``: ``game`` (a record), ``done`` ((games, logs)), or why a
    match failed (its detail)."""
    if isinstance(result, GameEnded):
        return ("game", result.index, result.record)
    if isinstance(result, MatchEnded):
        return ("done", result.index, (result.games, result.logs))
    assert isinstance(result, MatchFailed)
    return (result.why, result.index, result.detail)


def results(pool: LocalPool, count: int, timeout: float = 60.0) -> list[tuple]:
    """The next ``count`` results (games, matches done, errors), reaping dead workers meanwhile."""
    got: list[tuple] = []
    deadline = time.monotonic() + timeout
    while len(got) < count:
        assert time.monotonic() < deadline, f"only {got}"
        try:
            got.append(as_tuple(pool.results.get(timeout=0.25)))
        except queue.Empty:
            got += [("lost", index, reason) for index, reason in pool.reap()]
    return got


@pytest.fixture
def pools():
    """Pools made with it are stopped at the end, whatever the test did."""
    made: list[LocalPool] = []

    def make(workers: int) -> LocalPool:
        made.append(LocalPool(workers))
        return made[-1]

    yield make
    for pool in made:
        pool.stop(grace=5)


class TestLocalPool:
    def test_each_match_reports_its_games_then_done(self, pools) -> None:
        """Every job is played once: its games as they end, then ``done`` with all of them."""
        pool = pools(2)
        for index in range(4):
            pool.submit(job(index, playing_runner))
        got = results(pool, 4 * (GAMES_PER_MATCH + 1))
        for index in range(4):
            mine = [(kind, payload) for kind, i, payload in got if i == index]
            assert [kind for kind, _ in mine] == ["game"] * GAMES_PER_MATCH + ["done"]
            games, logs = mine[-1][1]
            assert [g.game_index for g in games] == list(range(GAMES_PER_MATCH))
            assert [payload for kind, payload in mine[:-1]] == list(games)
        pids = {int(payload[1]["pid"]) for kind, _, payload in got if kind == "done"}
        assert pids <= {process.pid for process in pool.processes}
        pool.close_input()
        pool.join()
        assert pool.alive() == 0 and pool.reap() == []  # ended cleanly: nothing to replace

    def test_a_worker_that_dies_is_reaped_with_its_match_and_replaced(self, pools) -> None:
        """SIGKILL of a worker mid-match: ``reap`` names the match and the signal, a new worker
        takes its place, and the other matches are played."""
        pool = pools(2)
        for index in range(3):
            pool.submit(job(index, dying_runner))
        got = results(pool, 1 + 2 * (GAMES_PER_MATCH + 1) + 1)
        lost = [(index, reason) for kind, index, reason in got if kind == "lost"]
        assert lost == [(1, "the worker process playing it died (signal SIGKILL)")]
        assert sorted(index for kind, index, _ in got if kind == "done") == [0, 2]
        assert pool.alive() == 2
        pool.submit(job(3, playing_runner))  # the replacement plays
        assert results(pool, GAMES_PER_MATCH + 1)[-1][:2] == ("done", 3)

    def test_a_runner_that_raises_reports_its_traceback(self, pools) -> None:
        """An exception in the runner comes back as ``error`` with the traceback."""
        pool = pools(1)
        pool.submit(job(7, raising_runner))
        ((kind, index, text),) = results(pool, 1)
        assert (kind, index) == ("error", 7)
        assert "Traceback" in text and "ValueError: the runner broke" in text

    def test_a_full_disk_is_reported_apart(self, pools) -> None:
        """ENOSPC in the runner comes back as ``nospace`` (the organiser frees space, resumes)."""
        pool = pools(1)
        pool.submit(job(2, full_disk_runner))
        ((kind, index, text),) = results(pool, 1)
        assert (kind, index) == ("nospace", 2) and "No space left" in text

    def test_stop_ends_the_matches_in_flight(self, pools) -> None:
        """``stop`` SIGTERMs workers in the middle of a match: they end within the grace."""
        pool = pools(2)
        for index in range(2):
            pool.submit(job(index, sleeping_runner))
        time.sleep(0.5)
        started = time.monotonic()
        pool.stop(grace=10)
        assert time.monotonic() - started < 10
        assert pool.alive() == 0


class TestInterface:
    MEMBERS = ("submit", "close_input", "reap", "alive", "stop", "join")

    def test_the_protocol_lists_what_the_run_loop_calls(self) -> None:
        """``Pool`` has the methods and the ``results`` queue of the run loop."""
        assert {name for name in self.MEMBERS if callable(getattr(Pool, name, None))} == set(
            self.MEMBERS
        )
        assert isinstance(Pool.__dict__["results"], property)

    @pytest.mark.parametrize("pool_class", [LocalPool, ClusterPool])
    def test_both_pools_have_every_method_of_pool(self, pool_class: type) -> None:
        """The local and the cluster's pool have each method, taking what ``Pool``'s takes."""
        for name in self.MEMBERS:
            method = getattr(pool_class, name, None)
            assert callable(method), f"{pool_class.__name__}.{name}"
            wanted = list(inspect.signature(getattr(Pool, name)).parameters)
            assert list(inspect.signature(method).parameters) == wanted, name

    def test_the_local_pool_has_a_results_queue(self, pools) -> None:
        """``results.get(timeout=...)`` raises ``queue.Empty`` when nothing came."""
        pool = pools(1)
        with pytest.raises(queue.Empty):
            pool.results.get(timeout=0.1)

    def test_the_cluster_pool_reaps_nothing(self) -> None:
        """Dask reschedules a dead worker's match itself: ``reap`` has nothing to report."""
        assert ClusterPool.reap(object.__new__(ClusterPool)) == []
