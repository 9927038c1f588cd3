"""The local worker pool: a fixed set of worker processes that play matches, behind :class:`Pool`.

The run loop (``tourney``) hands matches to a pool and reads what comes back; :class:`LocalPool`
plays them in worker processes forked on this host, ``cluster.ClusterPool`` on a Dask cluster.
A :class:`Job` is one match to play; what comes back on ``results`` is a :data:`PoolResult`:
a :class:`GameEnded` as each game ends (local pool only), a :class:`MatchEnded` with all of
them, or a :class:`MatchFailed` (the runner raised, a full disk, or on a cluster a match that
kept killing its workers).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import multiprocessing
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any, Literal, Protocol

import attrs
from ohseven.referee.records import GameRecord, MatchResult, MatchSpec
from ohseven.referee.sandbox.settings import SandboxConfig

__all__ = [
    "GameEnded",
    "Job",
    "LocalPool",
    "MatchEnded",
    "MatchFailed",
    "Pool",
    "PoolResult",
    "Results",
    "Runner",
]

#: play_match's signature: (spec, *, sandbox, replay_dir, on_game) -> MatchResult.
Runner = Callable[..., MatchResult]


@attrs.frozen
class Job:
    """One match for a pool to play: match ``index`` of the run, played by ``runner`` with
    ``sandbox`` (None: the runner's default), its replays in ``replay_dir`` (None: none)."""

    index: int
    spec: MatchSpec
    sandbox: SandboxConfig | None
    replay_dir: str | None
    runner: Runner


@attrs.frozen
class GameEnded:
    """A game of match ``index`` ended (the local pool reports each as it ends)."""

    index: int
    record: GameRecord


@attrs.frozen
class MatchEnded:
    """Match ``index`` was played: its games and its bots' logs (by name)."""

    index: int
    games: tuple[GameRecord, ...]
    logs: dict[str, str]


@attrs.frozen
class MatchFailed:
    """Match ``index`` could not be played: ``error`` (the runner raised; ``detail`` is its
    traceback), ``nospace`` (a full disk: the organiser frees space, then resumes) or, on a
    cluster, ``failed`` (it kept killing its workers; it is recorded failed, the run goes on)."""

    index: int
    why: Literal["error", "nospace", "failed"]
    detail: str


#: what comes back on a pool's ``results``
PoolResult = GameEnded | MatchEnded | MatchFailed


class Results(Protocol):
    """Where a pool's results arrive (``queue.Empty`` when none came within ``timeout``)."""

    def get(self, timeout: float | None = None) -> PoolResult: ...


class Pool(Protocol):
    """What the run loop needs of a pool of match players (local processes or a cluster)."""

    @property
    def results(self) -> Results: ...

    def submit(self, job: Job) -> None:
        """Queue one match to play."""

    def close_input(self) -> None:
        """No more matches will come: the workers end once the queued ones are played."""

    def reap(self) -> list[tuple[int, str]]:
        """``(match index, reason)`` of each match lost with its worker since the last call."""

    def alive(self) -> int:
        """How many workers are alive (fewer than the matches in flight: the pool is broken)."""

    def stop(self, grace: float = 10.0) -> None:
        """Stop at once: every match in flight is abandoned and its bots killed."""

    def join(self) -> None:
        """Wait for the workers to end (after ``close_input``)."""


# --------------------------------------------------------------------------- worker processes


class _Stop(BaseException):
    """Raised in a worker by SIGTERM, so the match unwinds and its bots are killed."""


_STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}


def _on_sigterm(signum: int, frame: object) -> None:
    raise _Stop()


def _set_parent_death_signal() -> None:
    """Ask Linux to SIGTERM this worker if the referee dies (even by SIGKILL)."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _worker(tasks: Any, results: Any, parent: int, current: Any = None, slot: int = 0) -> None:
    """Play the matches of ``tasks``; ``current[slot]`` holds the index of the match being
    played (-1: none), so that the parent knows which match a worker that died was playing."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    # Ctrl-C reaches the whole process group: the parent decides; a Python handler (unlike
    # SIG_IGN) is reset when the bots exec, so they keep the default behaviour.
    signal.signal(signal.SIGINT, lambda signum, frame: None)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)  # blocked by ``_spawn``
    _set_parent_death_signal()
    try:
        while os.getppid() == parent:
            job = tasks.get()
            if job is None:
                return
            index = job.index
            if current is not None:
                current[slot] = index

            def on_game(record: GameRecord, index: int = index) -> None:
                if os.getppid() != parent:
                    raise _Stop()
                results.put(GameEnded(index, record))

            try:
                result = job.runner(
                    job.spec, sandbox=job.sandbox, replay_dir=job.replay_dir, on_game=on_game
                )
            except _Stop:
                results.cancel_join_thread()  # the parent may be gone: never block on exit
                return
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    results.put(MatchFailed(index, "error", traceback.format_exc()))
                else:  # a full disk (replays) is the organiser's to fix, then resume
                    results.put(MatchFailed(index, "nospace", str(error)))
                return
            except Exception:
                results.put(MatchFailed(index, "error", traceback.format_exc()))
                return
            results.put(MatchEnded(index, result.games, dict(result.logs)))
            if current is not None:
                current[slot] = -1
    except _Stop:
        results.cancel_join_thread()
        return
    finally:  # from here a SIGTERM (the pool stopping) ends the process quietly
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


class LocalPool:
    """A fixed set of worker processes fed from a task queue; results on one queue."""

    def __init__(self, workers: int) -> None:
        context: Any = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
        self.context = context
        self.tasks = context.Queue()
        self.results = context.Queue()
        self.current = context.Array("i", [-1] * workers, lock=False)
        self.processes = [self._spawn(n) for n in range(workers)]

    def _spawn(self, slot: int) -> Any:
        process = self.context.Process(
            target=_worker,
            args=(self.tasks, self.results, os.getpid(), self.current, slot),
            name=f"ohseven-worker-{slot}",
            daemon=True,
        )
        # until the worker has its own handlers, a stop signal must wait: the handler it
        # inherits is the parent's, which would unwind the parent's code in the child
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        return process

    def reap(self) -> list[tuple[int, str]]:
        """``(match index, reason)`` of each match whose worker died playing it; every worker
        that died is replaced, so the other matches go on."""
        lost = []
        for slot, process in enumerate(self.processes):
            if process.is_alive() or process.exitcode == 0:
                continue
            code = process.exitcode
            index, self.current[slot] = self.current[slot], -1
            if index >= 0:
                how = f"exit code {code}"
                if code is not None and code < 0:
                    with contextlib.suppress(ValueError):
                        how = f"signal {signal.Signals(-code).name}"
                lost.append((index, f"the worker process playing it died ({how})"))
            self.processes[slot] = self._spawn(slot)
        return lost

    def submit(self, job: Job) -> None:
        self.tasks.put(job)

    def close_input(self) -> None:
        for _ in self.processes:
            self.tasks.put(None)

    def alive(self) -> int:
        return sum(process.is_alive() for process in self.processes)

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM every worker (each kills its bots), then SIGKILL what is left."""
        for process in self.processes:
            if process.is_alive() and process.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for process in self.processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(1)
        self.tasks.cancel_join_thread()
        self.results.cancel_join_thread()

    def join(self) -> None:
        for process in self.processes:
            process.join()
