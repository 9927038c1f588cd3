"""Run (or resume) a tournament from a YAML configuration, on a pool of local worker processes.

``ohseven-referee tourney CONFIG.yaml`` validates the whole configuration first, then plays every
match of the schedule that the output directory's database does not already hold as finished.
Worker processes play matches; the parent alone writes the database, one committed row per game
as it arrives, and keeps ``leaderboard.json`` up to date. Ratings are computed from the stored
games in canonical order, so they do not depend on the number of workers or on interruptions:
kill the referee at any moment, run the same command again, and it resumes (a match cut short is
played again from its start) and ends with the same leaderboard as an uninterrupted run. A
worker that dies mid-match records the match ``failed`` (its games discarded) and is replaced;
a rerun plays it again.

``ohseven-referee tourney --demo`` (or no file) runs the quickstart on the example bots.

With ``cluster: tcp://HOST:8786`` (or ``--cluster ADDRESS``) the matches are played on a Dask
cluster instead (see ``cluster`` and docs/CLUSTER.md); the rest stays here. A match that kept
killing its Dask workers is recorded ``failed`` and the tournament goes on; a rerun retries it.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import fcntl
import itertools
import json
import multiprocessing
import os
import queue
import shutil
import signal
import sqlite3
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from . import stopping
from .board import LEADERBOARD_NAME, Leaderboard
from .config import (
    ConfigError,
    TourneyConfig,
    changed_keys,
    demo_config,
    is_cluster_address,
    load_config,
)
from .files import write_json_atomic
from .records import GameRecord, MatchResult, MatchSpec
from .schedule import ScheduledMatch, draw_wave, iter_schedule, league_match, schedule_size
from .secret import (
    SECRET_NAME,
    SecretError,
    create_secret,
    fingerprint,
    load_secret,
    secret_from_seed,
    short_seed_warning,
)
from .store import DB_NAME, DamagedStoreError, Store, StoreError, database_error

__all__ = [
    "configure",
    "run",
    "run_tournament",
    "TourneyError",
    "TourneyOutcome",
]

#: the folder of the output directory that holds the bots' staged copies (see ``staging``)
STAGING_NAME = ".bots"

#: play_match's signature: (spec, *, sandbox, replay_dir, on_game) -> MatchResult.
Runner = Callable[..., MatchResult]


class TourneyError(RuntimeError):
    """A tournament that cannot run: output in use, another tournament's database, a crash."""


@attrs.frozen
class TourneyOutcome:
    matches: int
    games: int
    played_games: int  # games played by this run
    complete: bool
    interrupted: bool
    leaderboard: dict
    seconds: float
    failed: tuple[tuple[str, str], ...] = ()  # (match id, reason) of each failed match


# --------------------------------------------------------------------------- worker processes


def _default_runner(spec: MatchSpec, **kwargs: Any) -> MatchResult:
    from .match import play_match

    return play_match(spec, **kwargs)


def sandbox_config(config: TourneyConfig) -> Any:
    """The ``sandbox.SandboxConfig`` of the tournament (limits not given keep their defaults)."""
    from .sandbox import Limits, SandboxConfig

    limits = Limits(**dict(config.sandbox.limits))  # type: ignore[arg-type]  # checked by config
    return SandboxConfig(
        mode=config.sandbox.mode,
        limits=limits,
        ponder=config.sandbox.ponder,
        extra_paths=config.sandbox.extra_paths,
    )


class _Stop(BaseException):
    """Raised in a worker by SIGTERM, so the match unwinds and its bots are killed."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise _Stop()


def _set_parent_death_signal() -> None:
    """Ask Linux to SIGTERM this worker if the referee dies (even by SIGKILL)."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _worker(tasks: Any, results: Any, parent: int, current: Any = None, slot: int = 0) -> None:
    """Play the matches of ``tasks``; ``current[slot]`` holds the index of the match being
    played (-1: none), so that the parent knows which match a worker that died was playing."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    # Ctrl-C reaches the whole process group: the parent decides; a Python handler (unlike
    # SIG_IGN) is reset when the bots exec, so they keep the default behaviour.
    signal.signal(signal.SIGINT, lambda signum, frame: None)
    _set_parent_death_signal()
    try:
        while os.getppid() == parent:
            job = tasks.get()
            if job is None:
                return
            index, spec, sandbox, replay_dir, runner = job
            if current is not None:
                current[slot] = index

            def on_game(record: GameRecord, index: int = index) -> None:
                if os.getppid() != parent:
                    raise _Stop()
                results.put(("game", index, record))

            try:
                result = runner(spec, sandbox=sandbox, replay_dir=replay_dir, on_game=on_game)
            except _Stop:
                results.cancel_join_thread()  # the parent may be gone: never block on exit
                return
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    results.put(("error", index, traceback.format_exc()))
                else:  # a full disk (replays) is the organiser's to fix, then resume
                    results.put(("nospace", index, str(error)))
                return
            except Exception:
                results.put(("error", index, traceback.format_exc()))
                return
            results.put(("done", index, (result.games, dict(result.logs))))
            if current is not None:
                current[slot] = -1
    except _Stop:
        results.cancel_join_thread()
        return
    finally:  # from here a SIGTERM (the pool stopping) ends the process quietly
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


class _Pool:
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
        process.start()
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

    def submit(self, job: tuple) -> None:
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


# --------------------------------------------------------------------------- display


def _verdict_text(verdict: dict | None, repeats: int) -> str:
    """A candidate's stopping verdict in the terminal: "better, stopped +9.67 (3/8)" (its
    difference of points per game to the field, after 3 of 8 repeats)."""
    if verdict is None:
        return ""
    stopped = ", stopped" if verdict["stopped"] else ""
    difference = verdict["difference"]
    shown = "" if difference is None else f" {difference:+.2f}"
    return f"{verdict['status']}{stopped}{shown} ({verdict['repeats']}/{repeats})"


class _Display:
    """A rich progress bar with ETA and a live leaderboard; silent when ``quiet``."""

    def __init__(self, config: TourneyConfig, total: int, done: int, quiet: bool) -> None:
        self.quiet = quiet
        self.live = None
        if quiet:
            return
        from rich.console import Console, Group
        from rich.live import Live
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.console = Console(stderr=True)
        self.progress = Progress(
            TextColumn(f"[bold]{config.name}[/] games"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
        )
        self.task = self.progress.add_task("games", total=total, completed=done)
        self._group = Group
        self.table = self._table(None)
        self.live = Live(
            Group(self.progress, self.table),
            console=self.console,
            refresh_per_second=4,
            transient=False,
        )

    def _table(self, document: dict | None) -> Any:
        from rich.table import Table

        table = Table(title="leaderboard", expand=False)
        columns = ("#", "bot", "score", "mu ± sigma", "P(>next)", "games", "pts/game (95% CI)")
        rule = (document or {}).get("stopping")
        for column in (*columns, "wins", "faults", *(("SPRT",) if rule else ())):
            table.add_column(column, justify="left" if column in ("bot", "SPRT") else "right")
        for bot in (document or {}).get("bots", []):
            interval = bot.get("points_per_game_ci")
            points = "-" if bot["points_per_game"] is None else f"{bot['points_per_game']:.2f}"
            if interval is not None:
                points += f" [{interval[0]:.2f}, {interval[1]:.2f}]"
            superiority = bot.get("superiority_next")
            table.add_row(
                bot.get("place", str(bot["rank"])),
                bot["name"],
                f"{bot['score']:.2f}",
                f"{bot['mu']:.2f} ± {bot['sigma']:.2f}",
                "" if superiority is None else f"{100 * superiority:.0f}%",
                str(bot["games"]),
                points,
                str(bot["wins"]),
                str(sum(bot["faults"].values())),
                *((_verdict_text(bot.get("sprt"), rule["repeats"]),) if rule else ()),
            )
        return table

    def __enter__(self) -> _Display:
        if self.live is not None:
            self.live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)

    def advance(self, games: int) -> None:
        if self.live is not None:
            self.progress.update(self.task, advance=games)

    def total(self, games: int) -> None:
        if self.live is not None:
            self.progress.update(self.task, total=games)

    def board(self, document: dict) -> None:
        if self.live is not None:
            self.live.update(self._group(self.progress, self._table(document)))

    def message(self, text: str) -> None:
        if self.live is not None:
            self.console.print(text)


# --------------------------------------------------------------------------- running


@contextlib.contextmanager
def _lock(directory: Path):
    directory.mkdir(parents=True, exist_ok=True)
    handle = open(directory / ".lock", "w")  # noqa: SIM115 - held for the whole run
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TourneyError(
                f"{directory} is in use by another running referee; wait for it or stop it"
            ) from None
        yield
    finally:
        handle.close()


def _staged(config: TourneyConfig, output: Path) -> TourneyConfig:
    """The configuration with its bots running from copies under ``output/.bots`` (see
    ``staging``); the copies must hold what the configuration's digest was computed from."""
    from .staging import StagingError, referee_paths, stage

    try:
        bots = stage(
            [bot.spec for bot in config.bots],
            str(output / STAGING_NAME),
            private=referee_paths(str(output), config.source),
            expected=dict(config.bot_digests),
            keep=True,
        )
    except StagingError as error:
        raise TourneyError(str(error)) from None
    entries = tuple(attrs.evolve(e, spec=b) for e, b in zip(config.bots, bots, strict=True))
    return attrs.evolve(config, bots=entries)


def _remove_store(directory: Path) -> None:
    """What ``--fresh`` discards: the database, its secret, the leaderboards and every game's
    replay and replay data (a new tournament in the same folder must not show the old games)."""
    from .publish import REPLAY_DATA

    names = (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", SECRET_NAME, LEADERBOARD_NAME)
    for name in (*names, "leaderboard.csv", "leaderboard.md"):
        (directory / name).unlink(missing_ok=True)
    for folder in ("replays", REPLAY_DATA):
        shutil.rmtree(directory / folder, ignore_errors=True)


def tournament_secret(config: TourneyConfig, output: Path) -> bytes:
    """The secret the tournament's deals come from: the organiser's ``seed``, else the random
    secret kept in ``output`` (drawn with the database; a database without it cannot resume)."""
    if config.seed is not None:
        return secret_from_seed(config.seed)
    try:
        secret = load_secret(output)
        if secret is not None:
            return secret
        if (output / DB_NAME).exists():
            raise TourneyError(
                f"{output / DB_NAME} exists but its secret {output / SECRET_NAME} is missing: "
                "the remaining games cannot be dealt as they would have been (restore the file, "
                "or start over with --fresh)"
            )
        return create_secret(output)
    except SecretError as error:
        raise TourneyError(str(error)) from None


def run_tournament(
    config: TourneyConfig,
    *,
    workers: int | None = None,
    fresh: bool = False,
    quiet: bool = True,
    runner: Runner | None = None,
    sandbox: Any = None,
    board_interval: float = 0.5,
    cluster: str | None = None,
) -> TourneyOutcome:
    """Play (or resume) the tournament; returns when every match is done or on Ctrl-C.

    ``runner`` plays one match (default: ``match.play_match``); ``sandbox`` overrides the
    sandbox built from the configuration; ``cluster`` (default: the configuration's) is the
    address of a Dask scheduler that plays the matches instead of local workers. Raises
    :class:`TourneyError` and :class:`~.store.StoreError` for an output directory that cannot
    be used.
    """
    from .match import raise_fd_limit

    raise_fd_limit()  # the workers inherit it
    started = time.monotonic()
    output = Path(config.output)
    workers = max(1, workers or config.workers)
    league = config.schedule.type == "league"
    with _lock(output):
        config = _staged(config, output)
        if fresh:
            _remove_store(output)
        secret = tournament_secret(config, output)
        matches_total, total_games = schedule_size(config)
        with Store.open(output) as store:
            store.setup(
                digest=config.digest,
                config=config.document,
                secret_fingerprint=fingerprint(secret),
                accept=(lambda meta: _accept_league(config, store, meta)) if league else None,
            )
            if league:  # bots join and leave: the stored document and bots follow the file
                known = json.loads(store.meta().get("bot_fingerprints") or "{}")
                store.set_meta(
                    {
                        "config": json.dumps(config.document, sort_keys=True, default=str),
                        "bot_fingerprints": json.dumps(
                            {**known, **dict(config.bot_fingerprints)}, sort_keys=True
                        ),
                    }
                )
            board = Leaderboard(
                config, total_games, matches_total, secret, sorted(store.bot_names())
            )
            feed: _Feed = (  # a league's feed withdraws the matches of bots that left
                _LeagueFeed(config, secret, store, board)
                if league
                else _ScheduleFeed(config, secret, store)
                if board.stopping is None
                else _StoppingFeed(config, secret, store, board)
            )
            if board.stopping is not None:  # what publish needs to show the verdicts
                store.set_meta({stopping.META_KEY: board.stopping.to_json()})
            for index in store.unfinished_matches():  # cut short: played again from the start
                store.start_match(index)
            board.matches_done = sum(
                1 for status in store.match_status().values() if status == "done"
            )
            for stored in store.games():
                board.add(stored.canonical_index, stored.record)
            if isinstance(feed, _StoppingFeed):
                feed.totals()
            capacity = 4 * workers if (cluster or config.cluster) is None else 512
            first = feed.take(capacity, idle=True)
            store.set_meta(
                {"games_total": str(board.total_games), "matches_total": str(board.matches_total)}
            )
            write_json_atomic(output / LEADERBOARD_NAME, board.document())
            if not first:
                publish_site(output, _warn)
                return _outcome(store, board, 0, False, started)
            if sandbox is None and runner is None:
                sandbox = sandbox_config(config)
            replay_dir = str(output / "replays") if config.replays else None
            if replay_dir is not None:  # the raw replays name their seeds: private
                Path(replay_dir).mkdir(parents=True, exist_ok=True)
                os.chmod(replay_dir, 0o700)
            played, interrupted = _play(
                config,
                store,
                board,
                feed,
                first,
                workers=workers,
                capacity=capacity,
                runner=runner or _default_runner,
                sandbox=sandbox,
                replay_dir=replay_dir,
                quiet=quiet,
                board_interval=board_interval,
                cluster=cluster or config.cluster,
            )
            document = board.document()
            write_json_atomic(output / LEADERBOARD_NAME, document)
            publish_site(output, _warn)
            return _outcome(store, board, played, interrupted, started, document)


def _outcome(
    store: Store,
    board: Leaderboard,
    played: int,
    interrupted: bool,
    started: float,
    document: dict | None = None,
) -> TourneyOutcome:
    document = document or board.document()
    ids = {row["index"]: row["match_id"] for row in store.match_rows()} if store.failures() else {}
    return TourneyOutcome(
        board.matches_total,
        board.total_games,
        played,
        document["complete"],
        interrupted,
        document,
        time.monotonic() - started,
        tuple((ids[index], reason) for index, reason in store.failures().items()),
    )


def _accept_league(config: TourneyConfig, store: Store, meta: Mapping[str, str]) -> None:
    """Refuse to carry on a league whose past games the configuration would change: name each
    key that changed, and each bot that changed under the same name."""
    try:
        before = json.loads(meta.get("config") or "{}")
    except json.JSONDecodeError:
        return  # the digest check refuses it
    changes = changed_keys(before, config.document)
    if changes:
        listed = "; ".join(
            f"key `{key}` was {json.dumps(old)}, now {json.dumps(new)}" for key, old, new in changes
        )
        raise StoreError(
            f"{store.path} holds this league started with other settings: {listed}. During a "
            "league only `bots` and `schedule.games` may change (restore the key, or start over)"
        )
    known = json.loads(meta.get("bot_fingerprints") or "{}")
    for position, (name, print_) in enumerate(config.bot_fingerprints):
        if name in known and known[name] != print_:
            raise StoreError(
                f"{config.source}: key `bots[{position}]` ({name}): this bot's program or entry "
                "changed since it played in this league; give the new version a new name (the "
                "old one may stay or leave)"
            )


class _Feed:
    """Where the matches to play come from, in canonical order, as the pool has room."""

    done = False

    def take(self, room: int, idle: bool) -> list[ScheduledMatch]:
        """Up to ``room`` matches to play next; ``idle``: no match is being played."""
        raise NotImplementedError


class _ScheduleFeed(_Feed):
    """A round-robin or gauntlet, iterated: the matches not done, never all in memory."""

    def __init__(self, config: TourneyConfig, secret: bytes, store: Store) -> None:
        self.iterator: Iterator[ScheduledMatch] = iter_schedule(
            config, secret, store.done_matches()
        )

    def take(self, room: int, idle: bool) -> list[ScheduledMatch]:
        matches = list(itertools.islice(self.iterator, room))
        self.done = len(matches) < room
        return matches


class _StoppingFeed(_Feed):
    """A gauntlet with a stopping rule (see ``stopping``), repeat by repeat: repeat ``r + 1``
    starts once every match of the earlier repeats is done, without the candidates that the
    games of those repeats decided. The same games whatever the workers and interruptions."""

    def __init__(
        self, config: TourneyConfig, secret: bytes, store: Store, board: Leaderboard
    ) -> None:
        self.config, self.secret, self.store, self.board = config, secret, store, board
        assert board.stopping is not None, "a stopping feed needs the gauntlet's stopping rule"
        self.plan = board.stopping
        self.skip = store.done_matches()
        self.wave = 0
        self.iterator: Iterator[ScheduledMatch] = iter_schedule(
            config, secret, self.skip, repeats=(0,)
        )

    def take(self, room: int, idle: bool) -> list[ScheduledMatch]:
        matches = list(itertools.islice(self.iterator, room))
        while not matches and idle and not self.done:
            if self.wave + 1 >= self.plan.waves or self.store.failures():
                self.done = True  # (a failed match holds the next repeat back until a rerun)
                break
            self.wave += 1
            decided = {
                name for name, verdict in self.board.verdicts(self.wave).items() if verdict.decided
            }
            self.totals()
            self.iterator = iter_schedule(
                self.config, self.secret, self.skip, repeats=(self.wave,), leave_out=decided
            )
            matches = list(itertools.islice(self.iterator, room))
        return matches

    def totals(self) -> None:
        """The games and matches the gauntlet will hold, given the candidates decided so far."""
        board, plan = self.board, self.plan
        waves = [verdict.waves_played(plan) for verdict in board.verdicts().values()]
        board.total_games = plan.candidate_games * sum(waves)
        board.matches_total = plan.candidate_matches * sum(waves)
        self.store.set_meta(
            {"games_total": str(board.total_games), "matches_total": str(board.matches_total)}
        )


def matchmaking_ratings(board: Leaderboard) -> dict[str, tuple[float, float]]:
    """(mu, sigma) of every bot after every stored game, for drawing a league's next wave (the
    board holds every earlier wave's games then, and nothing later): the order-free TrueSkill
    estimate the leaderboard ranks by (``ratings.order_free``), a function of the set of games
    (computed from them sorted by content), so the same whatever order they finished in."""
    from .ratings import order_free

    config = board.config
    if not board.games:  # every bot at the prior (and NumPy left unimported at the start)
        return {name: (r.mu, r.sigma) for name, r in board.prefix.ratings.items()}
    return order_free(
        board.games.values(),
        board.names,
        game=config.game,
        draw_probability=config.ratings.draw_probability,
        fault_ranks_last=config.ratings.fault_ranks_last,
    )


class _LeagueFeed(_Feed):
    """A league's waves: the rest of the stored wave, then each next wave drawn (see
    ``schedule.draw_wave``) once every match of the previous one is done."""

    def __init__(
        self, config: TourneyConfig, secret: bytes, store: Store, board: Leaderboard
    ) -> None:
        self.config, self.secret, self.store, self.board = config, secret, store, board
        self.queue: list[ScheduledMatch] = []
        last = store.last_wave() or (-1, 0, 0)
        self.wave = last[0] + 1
        present = set(config.bot_names)
        rows = [] if last[0] < 0 else store.match_rows(last[1], last[1] + last[2] - 1)
        for row in rows:
            if row["status"] in ("done", "withdrawn"):
                continue
            if not present.issuperset(row["bots"]):  # a bot left before the match was played
                store.withdraw_match(row["index"])
                continue
            self.queue.append(
                league_match(
                    config,
                    secret,
                    row["index"],
                    row["first_game"],
                    last[0],
                    row["index"] - last[1],
                    row["bots"],
                )
            )
        self._totals()

    def _totals(self) -> None:
        rows = [row for row in self.store.match_rows() if row["status"] != "withdrawn"]
        self.scheduled = sum(row["games"] for row in rows)
        self.board.matches_total = len(rows)
        self.board.total_games = self.scheduled if self.done else self.config.schedule.games

    def take(self, room: int, idle: bool) -> list[ScheduledMatch]:
        if not self.queue and idle and not self.done:
            self._draw()
        matches, self.queue = self.queue[:room], self.queue[room:]
        return matches

    def _draw(self) -> None:
        if self.store.failures():  # the next wave waits for a rerun to play the failed match
            self.done = True
            return
        config, board = self.config, self.board
        ratings = matchmaking_ratings(board)
        played = {name: count for name, count in board.ratings().games.items()}
        tables = draw_wave(
            config,
            self.secret,
            self.wave,
            config.bot_names,
            ratings,
            played,
            config.schedule.games - self.scheduled,
        )
        if not tables:  # the budget is spent: the league is complete
            self.done = True
            self._totals()
            return
        index, first_game = self.store.next_match_index()
        for table_no, table in enumerate(tables):
            match = league_match(config, self.secret, index, first_game, self.wave, table_no, table)
            self.queue.append(match)
            index += 1
            first_game += match.games
        self.store.add_wave(
            self.wave,
            config.bot_names,
            [(m.index, m.spec.match_id, m.bot_names, m.first_game, m.games) for m in self.queue],
        )
        self.wave += 1
        self._totals()
        self.store.set_meta(
            {"games_total": str(board.total_games), "matches_total": str(board.matches_total)}
        )


def _warn(message: str) -> None:
    print(message, file=sys.stderr)


def publish_site(output: Path, warn: Callable[[str], None]) -> None:
    """Rebuild the static site and leaderboard files; a failure is a warning, not the end."""
    from .publish import publish

    try:
        publish(output)
    except Exception as error:  # noqa: BLE001 - the tournament must go on
        warn(f"warning: could not publish the site: {type(error).__name__}: {error}")


def _play(
    config: TourneyConfig,
    store: Store,
    board: Leaderboard,
    feed: _Feed,
    first: Sequence[ScheduledMatch],
    *,
    workers: int,
    capacity: int,
    runner: Runner,
    sandbox: Any,
    replay_dir: str | None,
    quiet: bool,
    board_interval: float,
    site_interval: float = 30.0,
    cluster: str | None = None,
) -> tuple[int, bool]:
    by_index: dict[int, ScheduledMatch] = {}
    outstanding: set[int] = set()
    written: dict[int, set[int]] = {}
    played = 0
    output = Path(config.output)
    if cluster is None:
        pool: Any = _Pool(workers)
    else:
        from .cluster import ClusterPool

        bots = [bot.spec for bot in config.bots]
        pool = ClusterPool(cluster, bots=bots, bot_mode=config.cluster_bots)

    def submit(matches: Sequence[ScheduledMatch]) -> None:
        """Record the matches as scheduled, clear what an interrupted run left of them (a match
        cut short is played again from its start), and queue them."""
        store.add_matches(
            (m.index, m.spec.match_id, m.bot_names, m.first_game, m.games) for m in matches
        )
        for match in matches:
            store.start_match(match.index)
            by_index[match.index] = match
            written[match.index] = set()
            outstanding.add(match.index)
            pool.submit((match.index, match.spec, sandbox, replay_dir, runner))

    def refill() -> None:
        while not feed.done and len(outstanding) < capacity:
            more = feed.take(capacity - len(outstanding), idle=not outstanding)
            if not more:
                break
            submit(more)
            display.total(board.total_games)

    last_board = board_cost = site_cost = 0.0
    last_site = time.monotonic()
    display = _Display(config, board.total_games, len(board.games), quiet)
    closed = False

    def write(index: int, record: GameRecord) -> None:
        nonlocal played
        if index not in written or record.game_index in written[index]:
            return
        canonical = by_index[index].first_game + record.game_index
        store.add_game(canonical, index, record)
        written[index].add(record.game_index)
        board.add(canonical, record)
        played += 1
        display.advance(1)

    def lost(index: int, reason: str) -> None:
        """The match's worker died: it is recorded failed (a rerun retries it), its games
        so far are discarded, and the tournament goes on."""
        nonlocal played
        store.fail_match(index, reason)
        outstanding.discard(index)
        for game in written[index]:
            board.discard(by_index[index].first_game + game)
        played -= len(written[index])
        written[index] = set()
        display.message(f"match {by_index[index].spec.match_id} failed: {reason}")

    try:
        submit(first)
        with display:
            while outstanding:
                try:
                    kind, index, payload = pool.results.get(timeout=0.25)
                except queue.Empty:
                    for index, reason in pool.reap() if cluster is None else ():
                        if index in outstanding:
                            lost(index, reason)
                    if pool.alive() < min(workers, len(outstanding)):
                        raise TourneyError(
                            "a worker process died unexpectedly; rerun the same command to resume"
                        ) from None
                    continue
                if index not in outstanding:  # a match already failed: its worker died
                    continue
                if kind == "game":
                    write(index, payload)
                elif kind == "done":
                    games, logs = payload
                    for record in games:
                        write(index, record)
                    store.finish_match(index, logs)
                    board.matches_done += 1
                    outstanding.discard(index)
                    del by_index[index], written[index]
                elif kind == "failed":  # on a cluster: the match kept killing its workers
                    store.fail_match(index, payload)
                    outstanding.discard(index)
                    display.message(f"match {by_index[index].spec.match_id} failed: {payload}")
                    del by_index[index], written[index]
                elif kind == "nospace":
                    raise OSError(errno.ENOSPC, payload)
                elif kind == "error":
                    match = by_index[index]
                    raise TourneyError(
                        f"match {match.spec.match_id} ({', '.join(match.bot_names)}) failed:\n"
                        f"{payload}"
                    )
                refill()
                if feed.done and not closed:
                    pool.close_input()
                    closed = True
                now = time.monotonic()
                # the board costs O(games): never spend more than a tenth of the time on it
                if now - last_board >= max(board_interval, 10 * board_cost) or not outstanding:
                    document = board.document()
                    write_json_atomic(output / LEADERBOARD_NAME, document)
                    display.board(document)
                    last_board = time.monotonic()
                    board_cost = last_board - now
                if now - last_site >= max(site_interval, 10 * site_cost) and outstanding:
                    publish_site(output, display.message)
                    last_site = time.monotonic()
                    site_cost = last_site - now
    except KeyboardInterrupt:
        pool.stop()
        return played, True
    except BaseException:
        pool.stop()
        raise
    if not closed:
        pool.close_input()
    pool.join()
    return played, False


# --------------------------------------------------------------------------- command line


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "config",
        nargs="?",
        help="the tournament's YAML file (see docs/CONFIG.md); none: the quickstart demo",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="run the quickstart tournament of the example bots (output in ./out/quickstart)",
    )
    parser.add_argument(
        "--workers", type=int, default=None, help="worker processes (default: the config's)"
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="discard what the output directory holds and start over",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no progress bar; print the final leaderboard only"
    )
    parser.add_argument(
        "--check", action="store_true", help="validate the configuration and show the schedule"
    )
    parser.add_argument(
        "--cluster",
        metavar="ADDRESS",
        default=None,
        help="play the matches on the Dask scheduler at ADDRESS (tcp://HOST:8786; default: the "
        "config's `cluster`, else local workers); see docs/CLUSTER.md",
    )


def _print_board(document: dict) -> None:
    from rich.console import Console

    display = _Display.__new__(_Display)
    Console().print(display._table(document))


def _start_every_bot(config: TourneyConfig) -> str | None:
    """Start each bot once, as its matches will; the refusal to print if any cannot start (so
    that no bot is ever rated on fallback games because it never ran)."""
    from .match import start_check
    from .staging import StagingError, referee_paths, staged_bots

    # bots that start alike (the same command, directory and limits: a league's many versions
    # of one program) are started once, under the first one's name
    alike: dict[tuple, list[str]] = {}
    first: dict[tuple, Any] = {}
    for bot in config.bots:
        key = (bot.spec.command, bot.spec.directory, bot.spec.limits)
        alike.setdefault(key, []).append(bot.name)
        first.setdefault(key, bot.spec)
    private = referee_paths(config.output, config.source)
    try:  # from private copies of their files, as in the matches
        with staged_bots(list(first.values()), private=private, discover=False) as bots:
            started = start_check(
                tuple(bots), sandbox=sandbox_config(config), time_control=config.time_control
            )
    except StagingError as error:
        return f"{config.source}: {error}"
    failures = {
        name: started[spec.name]
        for key, spec in first.items()
        if spec.name in started
        for name in alike[key]
    }
    if not failures:
        return None
    lines = [f"{config.source}: {len(failures)} bot(s) could not start; nothing was played:"]
    for index, bot in enumerate(config.bots):
        if bot.name in failures:
            why, output = failures[bot.name]
            lines.append(f"  key `bots[{index}]` ({bot.name}): {why}")
            tail = output.strip().splitlines()[-12:]
            lines += [f"    | {line}" for line in tail] or ["    (it printed nothing)"]
    return "\n".join(lines)


def _disk_full(error: OSError, again: str) -> int:
    print(
        f"error: the disk is full ({error.strerror or error}). The tournament stopped cleanly: "
        f"every finished game is in the database. Free some space and resume with: {again}",
        file=sys.stderr,
    )
    return 1


def _warn_start_failures(output: Path) -> None:
    """Bots that did not start were played by the fallback: say so loudly, with the reason."""
    with Store.open(output, create=False) as store:
        failures = store.start_failures()
    for bot, (games, detail) in failures.items():
        print(
            f"warning: bot {bot} did not start in {games} game(s), where a random fallback "
            f"played for it: {detail}",
            file=sys.stderr,
        )


def run(args: argparse.Namespace) -> int:
    try:
        if args.config and args.demo:
            print("give a configuration file or --demo, not both", file=sys.stderr)
            return 2
        config = load_config(args.config) if args.config else demo_config(os.getcwd())
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 2
    if not args.config and config.sandbox.mode == "unsandboxed":
        print(
            "note: bubblewrap (bwrap) is not installed, so the demo runs the example bots "
            "unsandboxed; see SECURITY.md",
            file=sys.stderr,
        )
    if args.workers is not None and args.workers < 1:
        print(f"--workers {args.workers}: expected 1 or more", file=sys.stderr)
        return 2
    if not args.check:
        from . import cgroups

        cgroups.warn_unavailable()  # once: what is not enforced without cgroups
    if args.cluster is not None and not is_cluster_address(args.cluster):
        print(
            f"--cluster {args.cluster}: expected an address like tcp://HOST:8786", file=sys.stderr
        )
        return 2
    if config.sandbox.mode != "unsandboxed":  # never fallback games for bots that cannot run
        from .sandbox import SandboxError, check_sandbox

        try:
            check_sandbox(sandbox_config(config))
        except SandboxError as error:
            print(
                f"error: {error}\n(or, for trusted bots only, set `sandbox: {{mode: unsandboxed}}` "
                "in the configuration)",
                file=sys.stderr,
            )
            return 2
    if (refusal := _start_every_bot(config)) is not None:
        print(refusal, file=sys.stderr)
        return 2
    if config.seed is not None and (warning := short_seed_warning(config.seed)):
        print(warning, file=sys.stderr)
    matches, total = schedule_size(config)  # counted, not built
    if args.check:
        shape = (
            f"a league of at most {total} games in waves"
            if config.schedule.type == "league"
            else f"{matches} matches, {total} games"
        )
        if config.schedule.stop is not None:
            shape += " at most (a candidate stops once its stopping rule decides)"
        print(
            f"{config.source}: valid. {config.name}: {config.game}, {len(config.bots)} bots, "
            f"{shape}; output {config.output}"
        )
        return 0
    again = f"ohseven-referee tourney {args.config}" if args.config else "ohseven-referee tourney"
    try:
        outcome = run_tournament(
            config,
            workers=args.workers,
            fresh=args.fresh,
            quiet=args.quiet,
            cluster=args.cluster,
        )
    except (TourneyError, StoreError) as error:
        print(f"error: {error}", file=sys.stderr)
        if isinstance(error, StoreError) and not isinstance(error, DamagedStoreError):
            print("(use --fresh to discard it, or set another `output`)", file=sys.stderr)
        return 1
    except sqlite3.DatabaseError as error:
        problem = database_error(Path(config.output) / DB_NAME, error)
        if not isinstance(problem, OSError):
            print(f"error: {problem}", file=sys.stderr)
            return 1
        return _disk_full(problem, again)
    except OSError as error:
        if error.errno != errno.ENOSPC:
            raise
        return _disk_full(error, again)
    leaderboard = Path(config.output) / LEADERBOARD_NAME
    if outcome.interrupted:
        print(
            f"\ninterrupted after {outcome.leaderboard['games_played']} of {outcome.games} games; "
            f"the database is consistent. Resume with: {again}",
            file=sys.stderr,
        )
        return 130
    if args.quiet:
        _print_board(outcome.leaderboard)
    _warn_start_failures(Path(config.output))
    if outcome.failed:
        for match_id, reason in outcome.failed:
            print(f"match {match_id} failed: {reason}", file=sys.stderr)
        print(
            f"{len(outcome.failed)} match(es) failed and are not rated; rerun to retry them: "
            f"{again}",
            file=sys.stderr,
        )
        return 1
    rate = outcome.played_games / outcome.seconds if outcome.seconds else 0.0
    print(
        f"{config.name}: {outcome.games} games done ({outcome.played_games} played now, "
        f"{rate:.1f} games/s). Leaderboard: {leaderboard}"
    )
    return 0
