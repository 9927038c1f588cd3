"""Run (or resume) a tournament from a YAML configuration, on a pool of local worker processes.

``ohseven-referee tourney CONFIG.yaml`` validates the whole configuration first, then plays every
match of the schedule that the output directory's database does not already hold as finished.
Worker processes play matches; the parent alone writes the database, one committed row per game
as it arrives, and keeps ``leaderboard.json`` up to date. Ratings are computed from the stored
games in canonical order, so they do not depend on the number of workers or on interruptions:
kill the referee at any moment, run the same command again, and it resumes (a match cut short is
played again from its start) and ends with the same leaderboard as an uninterrupted run.

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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from .config import ConfigError, TourneyConfig, demo_config, is_cluster_address, load_config
from .ratings import Ratings
from .records import GameRecord, MatchResult, MatchSpec
from .schedule import ScheduledMatch, build_schedule
from .secret import (
    SECRET_NAME,
    SecretError,
    create_secret,
    fingerprint,
    load_secret,
    secret_from_seed,
    short_seed_warning,
)
from .store import DB_NAME, DamagedStoreError, Store, StoredGame, StoreError, database_error

__all__ = [
    "configure",
    "run",
    "run_tournament",
    "TourneyError",
    "TourneyOutcome",
    "Leaderboard",
    "LEADERBOARD_NAME",
]

LEADERBOARD_NAME = "leaderboard.json"

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

    limits = Limits(**dict(config.sandbox.limits))
    return SandboxConfig(mode=config.sandbox.mode, limits=limits)


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


def _worker(tasks: Any, results: Any, parent: int) -> None:
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
    except _Stop:
        results.cancel_join_thread()
        return
    finally:  # from here a SIGTERM (the pool stopping) ends the process quietly
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


class _Pool:
    """A fixed set of worker processes fed from a task queue; results on one queue."""

    def __init__(self, workers: int) -> None:
        context = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
        self.tasks = context.Queue()
        self.results = context.Queue()
        self.processes = [
            context.Process(
                target=_worker,
                args=(self.tasks, self.results, os.getpid()),
                name=f"ohseven-worker-{n}",
                daemon=True,
            )
            for n in range(workers)
        ]
        for process in self.processes:
            process.start()

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


# --------------------------------------------------------------------------- the leaderboard


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
    ) -> None:
        self.config = config
        self.secret = secret  # published only once complete, and only if ``reveal_seeds``
        self.total_games = total_games
        self.matches_total = matches_total
        self.matches_done = 0
        self.prefix = self._fresh()
        self.prefix_end = 0  # canonical index of the first game not in the prefix
        self.games: dict[int, GameRecord] = {}

    def _fresh(self) -> Ratings:
        return Ratings(
            self.config.game,
            self.config.bot_names,
            draw_probability=self.config.ratings.draw_probability,
            fault_ranks_last=self.config.ratings.fault_ranks_last,
        )

    def add(self, canonical_index: int, record: GameRecord) -> None:
        self.games[canonical_index] = record
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
        """The content of ``leaderboard.json`` (``publish.leaderboard``, the schema of
        docs/LEADERBOARD.md), from the games in memory: deterministic, no clock."""
        from .publish import Tournament, leaderboard

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
            bots=config.bot_names,
            games=tuple(StoredGame(index, -1, self.games[index]) for index in sorted(self.games)),
            matches_done=self.matches_done,
            matches_total=self.matches_total,
            games_total=self.total_games,
            digest=config.digest,
            draw_probability=config.ratings.draw_probability,
            fault_ranks_last=config.ratings.fault_ranks_last,
        )
        return leaderboard(tournament, self.ratings())


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as JSON through a temporary file renamed over ``path``."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, sort_keys=False)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


# --------------------------------------------------------------------------- display


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
        for column in (*columns, "wins", "faults"):
            table.add_column(column, justify="left" if column == "bot" else "right")
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
            )
        return table

    def __enter__(self) -> _Display:
        if self.live is not None:
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)

    def advance(self, games: int) -> None:
        if self.live is not None:
            self.progress.update(self.task, advance=games)

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
    started = time.monotonic()
    output = Path(config.output)
    workers = max(1, workers or config.workers)
    with _lock(output):
        if fresh:
            _remove_store(output)
        secret = tournament_secret(config, output)
        schedule = build_schedule(config, secret)
        total_games = sum(match.games for match in schedule)
        with Store.open(output) as store:
            store.setup(
                digest=config.digest,
                config=config.document,
                secret_fingerprint=fingerprint(secret),
                matches=[
                    (m.index, m.spec.match_id, m.bot_names, m.first_game, m.games) for m in schedule
                ],
            )
            pending = store.unfinished_matches()
            for index in pending:  # a match cut short is played again from its start
                store.start_match(index)
            board = Leaderboard(config, total_games, len(schedule), secret)
            board.matches_done = sum(
                1 for status in store.match_status().values() if status == "done"
            )
            for stored in store.games():
                board.add(stored.canonical_index, stored.record)
            write_json_atomic(output / LEADERBOARD_NAME, board.document())
            if not pending:
                publish_site(output, _warn)
                return TourneyOutcome(
                    len(schedule),
                    total_games,
                    0,
                    True,
                    False,
                    board.document(),
                    time.monotonic() - started,
                )
            if sandbox is None and runner is None:
                sandbox = sandbox_config(config)
            replay_dir = str(output / "replays") if config.replays else None
            if replay_dir is not None:
                Path(replay_dir).mkdir(parents=True, exist_ok=True)
            played, interrupted = _play(
                config,
                store,
                board,
                [schedule[index] for index in pending],
                workers=min(workers, len(pending)),
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
            return TourneyOutcome(
                len(schedule),
                total_games,
                played,
                document["complete"],
                interrupted,
                document,
                time.monotonic() - started,
                tuple(
                    (schedule[index].spec.match_id, reason)
                    for index, reason in store.failures().items()
                ),
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
    matches: Sequence[ScheduledMatch],
    *,
    workers: int,
    runner: Runner,
    sandbox: Any,
    replay_dir: str | None,
    quiet: bool,
    board_interval: float,
    site_interval: float = 30.0,
    cluster: str | None = None,
) -> tuple[int, bool]:
    by_index = {match.index: match for match in matches}
    outstanding = set(by_index)
    written: dict[int, set[int]] = {index: set() for index in by_index}
    played = 0
    output = Path(config.output)
    if cluster is None:
        pool: Any = _Pool(workers)
    else:
        from .cluster import ClusterPool

        bots = [bot.spec for bot in config.bots]
        pool = ClusterPool(cluster, bots=bots, bot_mode=config.cluster_bots)
    for match in matches:
        pool.submit((match.index, match.spec, sandbox, replay_dir, runner))
    pool.close_input()
    last_board = board_cost = site_cost = 0.0
    last_site = time.monotonic()
    display = _Display(config, board.total_games, len(board.games), quiet)

    def write(index: int, record: GameRecord) -> None:
        nonlocal played
        if record.game_index in written[index]:
            return
        canonical = by_index[index].first_game + record.game_index
        store.add_game(canonical, index, record)
        written[index].add(record.game_index)
        board.add(canonical, record)
        played += 1
        display.advance(1)

    try:
        with display:
            while outstanding:
                try:
                    kind, index, payload = pool.results.get(timeout=0.25)
                except queue.Empty:
                    if pool.alive() < min(workers, len(outstanding)):
                        raise TourneyError(
                            "a worker process died unexpectedly; rerun the same command to resume"
                        ) from None
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
                elif kind == "failed":  # on a cluster: the match kept killing its workers
                    store.fail_match(index, payload)
                    outstanding.discard(index)
                    display.message(f"match {by_index[index].spec.match_id} failed: {payload}")
                elif kind == "nospace":
                    raise OSError(errno.ENOSPC, payload)
                elif kind == "error":
                    match = by_index[index]
                    raise TourneyError(
                        f"match {match.spec.match_id} ({', '.join(match.bot_names)}) failed:\n"
                        f"{payload}"
                    )
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

    failures = start_check(
        tuple(bot.spec for bot in config.bots),
        sandbox=sandbox_config(config),
        time_control=config.time_control,
    )
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
    schedule = build_schedule(config, b"shape only")  # the deals do not change its shape
    total = sum(match.games for match in schedule)
    if args.check:
        print(
            f"{config.source}: valid. {config.name}: {config.game}, {len(config.bots)} bots, "
            f"{len(schedule)} matches, {total} games; output {config.output}"
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
