"""Run (or resume) a tournament: the run loop behind ``ohseven-referee tourney`` (``tourney_cli``).

:func:`run_tournament` validates the output directory, stages the bots, opens the database and
plays what it does not hold as finished: matches drawn from a feed (``feeds``), played by a pool
(``pool.LocalPool``, or ``cluster.ClusterPool`` on a Dask cluster), each game written to the
database as it arrives and added to the running leaderboard (``board``), shown on the terminal
(``display``). The parent alone writes the database; ratings come from the stored games in
canonical order, so a run killed at any moment and resumed ends as an uninterrupted one.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import math
import os
import queue
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from ohseven.referee.files import DB_NAME, STAGING_NAME, write_json_atomic
from ohseven.referee.plan import stopping
from ohseven.referee.plan.config import TourneyConfig
from ohseven.referee.plan.digests import changed_keys
from ohseven.referee.plan.run_plan import RunPlan
from ohseven.referee.plan.schedule import ScheduledMatch, SchedulePlan
from ohseven.referee.play.descriptors import raise_fd_limit
from ohseven.referee.play.match import play_match, start_check
from ohseven.referee.records import BotSpec, GameRecord, MatchResult, MatchSpec
from ohseven.referee.results.board import LEADERBOARD_NAME, Leaderboard
from ohseven.referee.results.display import Display
from ohseven.referee.results.store import Store, StoreError
from ohseven.referee.sandbox.settings import SandboxConfig
from ohseven.referee.sandbox.staging import StagingError, referee_paths, stage, stage_each
from ohseven.referee.secret import (
    SECRET_NAME,
    SecretError,
    create_secret,
    fingerprint,
    load_secret,
    secret_from_seed,
)
from ohseven.referee.site.publish import REPLAY_DATA, publish
from ohseven.referee.terminal import printable
from ohseven.referee.tournament.cluster import ClusterPool, check_reachable
from ohseven.referee.tournament.errors import TourneyError
from ohseven.referee.tournament.feeds import Feed, LeagueFeed, ScheduleFeed, StoppingFeed
from ohseven.referee.tournament.pool import GameEnded, Job, LocalPool, MatchEnded, Pool, Runner

__all__ = [
    "run_tournament",
    "tournament_secret",
    "STAGING_NAME",
    "TourneyError",
    "TourneyOutcome",
]


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


def _default_runner(spec: MatchSpec, **kwargs: Any) -> MatchResult:
    return play_match(spec, **kwargs)


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
    ``staging``); the copies must hold what the configuration's digest was computed from. In a
    league, a bot whose files cannot be staged (changed since, grown too large) is left out with
    its reason (``left_out``) and the others play; elsewhere it stops the tournament."""
    arguments: dict[str, Any] = {
        "private": referee_paths(str(output), config.source),
        "expected": dict(config.bot_digests),
        "keep": True,
        "limits": config.staging,
    }
    specs = [bot.spec for bot in config.bots]
    root = str(output / STAGING_NAME)
    try:
        if config.schedule.type != "league":
            bots: list[BotSpec | None] = list(stage(specs, root, **arguments))
            failures: dict[int, str] = {}
        else:
            bots, failures = stage_each(specs, root, **arguments)
    except StagingError as error:
        raise TourneyError(str(error)) from None
    left_out = list(config.left_out)
    for index, why in failures.items():
        left_out.append((config.bots[index].name, why))
        _warn(f"warning: bot {config.bots[index].name} is left out of this run: {why}")
    staged = tuple(
        attrs.evolve(entry, spec=bot)
        for entry, bot in zip(config.bots, bots, strict=True)
        if bot is not None
    )
    return attrs.evolve(config, bots=staged, left_out=tuple(left_out))


def _remove_store(directory: Path) -> None:
    """What ``--fresh`` discards: the database, its secret, the leaderboards and every game's
    replay and replay data (a new tournament in the same folder must not show the old games)."""
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


def _secret_changed(config: TourneyConfig, output: Path) -> str:
    """What may have changed a tournament's secret, for the store's refusal."""
    if config.seed is not None:
        return (
            f"{config.where('seed')}: key `seed` was changed or added since it started "
            "(restore it to resume)"
        )
    return (
        f"{output / SECRET_NAME} is not the one drawn when it started: the file was replaced "
        "(by another tournament's?), or key `seed` was removed since it started (restore the "
        "tournament's own file, or the key, to resume)"
    )


def run_tournament(
    config: TourneyConfig,
    *,
    workers: int | None = None,
    fresh: bool = False,
    quiet: bool = True,
    runner: Runner | None = None,
    sandbox: SandboxConfig | None = None,
    board_interval: float = 0.5,
    cluster: str | None = None,
    roster: Callable[[TourneyConfig], TourneyConfig] | None = None,
    site: bool = True,
) -> TourneyOutcome:
    """Play (or resume) the tournament; returns when every match is done or on Ctrl-C.

    ``runner`` plays one match (default: ``match.play_match``); ``sandbox`` overrides the
    sandbox built from the configuration; ``cluster`` (default: the configuration's) is the
    address of a Dask scheduler that plays the matches instead of local workers. ``roster``
    (a league's, for ``serve``): the configuration with its staged bots, to the configuration
    with the bots that play next, called at the start and before each wave (the bots it adds
    must already be private copies: they are not staged). ``site``: publish the static site
    at the end and every half minute (``serve`` shows its own live pages instead). Raises
    :class:`TourneyError` and :class:`~.store.StoreError` for an output directory that cannot
    be used.
    """
    raise_fd_limit()  # the workers inherit it
    started = time.monotonic()
    output = Path(config.output)
    with _lock(output):
        config = _staged(config, output)
        house = config
        if roster is not None:
            config = roster(house)
        if fresh:  # nothing is discarded for a run that cannot start
            if (address := cluster or config.cluster) is not None:
                check_reachable(address)
            _remove_store(output)
        plan = RunPlan.resolve(
            config,
            tournament_secret(config, output),
            workers=workers,
            cluster=cluster,
            sandbox=sandbox,
        )
        secret = plan.secret
        with Store.open(output) as store:
            store.setup(
                digest=config.digest,
                config=config.document,
                secret_fingerprint=fingerprint(secret),
                secret_changed=_secret_changed(config, output),
                accept=lambda meta: (_accept_league if plan.league else _accept_resume)(
                    config, store, meta
                ),
            )
            # a league's bots join and leave: the stored document and bots follow the file;
            # the others keep their bots' fingerprints to name the bot that changed
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
                plan, plan.games_total, plan.matches_total, sorted(store.bot_names())
            )
            feed: Feed = (  # a league's feed withdraws the matches of bots that left
                LeagueFeed(
                    plan,
                    store,
                    board,
                    roster=None if roster is None else (lambda: SchedulePlan.of(roster(house))),
                    # each bot started before its own first match (not all before any game)
                    validate=_validator(plan, store) if runner is None else None,
                )
                if plan.league
                else ScheduleFeed(plan, store)
                if board.stopping is None
                else StoppingFeed(plan, store, board)
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
            if isinstance(feed, StoppingFeed):
                feed.totals()
            # no more worker processes than matches left to play (each is a process, started
            # whether it gets a match or not)
            workers = max(1, min(plan.workers, board.matches_total - board.matches_done))
            capacity = 4 * workers if plan.cluster is None else 512
            first = feed.take(capacity, idle=True)
            store.set_meta(
                {"games_total": str(board.total_games), "matches_total": str(board.matches_total)}
            )
            write_json_atomic(output / LEADERBOARD_NAME, board.document())
            if not first:
                if site:
                    publish_site(output, _warn)
                return _outcome(store, board, 0, False, started)
            if plan.replay_dir is not None:  # the raw replays name their seeds: private
                plan.replay_dir.mkdir(parents=True, exist_ok=True)
                os.chmod(plan.replay_dir, 0o700)
            played, interrupted = _play(
                plan,
                store,
                board,
                feed,
                first,
                workers=workers,
                capacity=capacity,
                runner=runner or _default_runner,
                # a runner given without a sandbox plays with its own default
                sandbox=plan.sandbox if sandbox is not None or runner is None else None,
                quiet=quiet,
                board_interval=board_interval,
                site_interval=30.0 if site else math.inf,
            )
            document = board.document()
            write_json_atomic(output / LEADERBOARD_NAME, document)
            if site:
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


#: the store's meta key of the bots that started once (by :func:`start_key`), across runs
VALIDATED_KEY = "validated"


def start_key(bot: BotSpec) -> str:
    """What decides whether a bot starts: its command, its folder (a staged or uploaded copy,
    named by its content) and its limits."""
    what = json.dumps([bot.command, bot.directory, bot.limits, bot.ponder], default=str)
    return hashlib.sha256(what.encode()).hexdigest()


def _validator(plan: RunPlan, store: Store) -> Callable[[Sequence[BotSpec]], dict[str, str]]:
    """A league's lazy validation (``LeagueFeed.validate``): the bots given are started once
    as their matches will start them (``match.start_check``; bots alike once) unless one alike
    started before, in this run or an earlier one (remembered in the store by
    :func:`start_key`); {name: why} of those that cannot start."""
    known = set(json.loads(store.meta().get(VALIDATED_KEY) or "[]"))

    def validate(bots: Sequence[BotSpec]) -> dict[str, str]:
        keys = {bot.name: start_key(bot) for bot in bots}
        first: dict[str, BotSpec] = {}
        for bot in bots:
            if keys[bot.name] not in known:
                first.setdefault(keys[bot.name], bot)
        if not first:
            return {}
        started = start_check(
            tuple(first.values()),
            sandbox=plan.sandbox,
            time_control=plan.time_control,
        )
        why = {key: started[bot.name][0] for key, bot in first.items() if bot.name in started}
        known.update(key for key in first if key not in why)
        store.set_meta({VALIDATED_KEY: json.dumps(sorted(known))})
        return {bot.name: why[keys[bot.name]] for bot in bots if keys[bot.name] in why}

    return validate


def _listed_changes(changes: list[tuple[str, Any, Any]]) -> str:
    return "; ".join(
        f"key `{key}` was {json.dumps(old, default=str)}, now {json.dumps(new, default=str)}"
        for key, old, new in changes
    )


def _changed_bot(config: TourneyConfig, meta: Mapping[str, str], what: str) -> None:
    """Raise naming the first bot whose program or entry changed under the same name."""
    known = json.loads(meta.get("bot_fingerprints") or "{}")
    for position, (name, print_) in enumerate(config.bot_fingerprints):
        if name in known and known[name] != print_:
            raise StoreError(
                f"{config.where(f'bots[{position}]')}: key `bots[{position}]` ({name}): this "
                f"bot's program or entry changed since it played in this {what}; give the new "
                "version a new name"
                + (" (the old one may stay or leave)" if what == "league" else "")
            )


def _accept_league(config: TourneyConfig, store: Store, meta: Mapping[str, str]) -> None:
    """Refuse to carry on a league whose past games the configuration would change: name each
    key that changed, and each bot that changed under the same name."""
    try:
        before = json.loads(meta.get("config") or "{}")
    except json.JSONDecodeError:
        return  # the digest check refuses it
    changes = changed_keys(before, config.document, config.defaults)
    if changes:
        raise StoreError(
            f"{store.path} holds this league started with other settings: "
            f"{_listed_changes(changes)}. During a league only `bots` and `schedule.games` may "
            "change (restore the key, or start over)"
        )
    _changed_bot(config, meta, "league")
    _renew_digest(config, store, meta)


def _accept_resume(config: TourneyConfig, store: Store, meta: Mapping[str, str]) -> None:
    """Refuse to resume a round-robin or a gauntlet whose configuration changed, naming each
    key that changed (a key written at its default is no change), else the bot whose files
    changed; a digest that differs only by defaults written out is renewed."""
    if meta.get("config_digest") == config.digest:
        return
    try:
        before = json.loads(meta.get("config") or "{}")
    except json.JSONDecodeError:
        return  # the digest check refuses it
    changes = changed_keys(before, config.document, config.defaults, league=False)
    if changes:
        raise StoreError(
            f"{store.path} holds this tournament started with other settings: "
            f"{_listed_changes(changes)}. Restore them to resume it"
        )
    _changed_bot(config, meta, "tournament")
    if not meta.get("bot_fingerprints"):
        raise StoreError(
            f"{store.path} holds this tournament with other bot files: no key of "
            f"{config.source} changed, so a bot's program did (which one is not known: the "
            "tournament was started by an older version). Restore it to resume it"
        )
    _renew_digest(config, store, meta)


def _renew_digest(config: TourneyConfig, store: Store, meta: Mapping[str, str]) -> None:
    """Nothing that decides the results changed, yet the digest did (a key written out at its
    default, by a version that counted it): the stored digest becomes this one."""
    if meta.get("config_digest") != config.digest:
        store.set_meta({"config_digest": config.digest})


def _warn(message: str) -> None:
    print(printable(message), file=sys.stderr)


def publish_site(output: Path, warn: Callable[[str], None]) -> None:
    """Rebuild the static site and leaderboard files; a failure is a warning, not the end."""
    try:
        publish(output)
    except Exception as error:  # noqa: BLE001 - the tournament must go on
        warn(f"warning: could not publish the site: {type(error).__name__}: {error}")


def _play(
    plan: RunPlan,
    store: Store,
    board: Leaderboard,
    feed: Feed,
    first: Sequence[ScheduledMatch],
    *,
    workers: int,
    capacity: int,
    runner: Runner,
    sandbox: SandboxConfig | None,
    quiet: bool,
    board_interval: float,
    site_interval: float = 30.0,
) -> tuple[int, bool]:
    by_index: dict[int, ScheduledMatch] = {}
    outstanding: set[int] = set()
    written: dict[int, set[int]] = {}
    played = 0
    output = plan.output
    replay_dir = None if plan.replay_dir is None else str(plan.replay_dir)
    if plan.cluster is None:
        pool: Pool = LocalPool(workers)
    else:
        pool = ClusterPool(plan.cluster, bots=list(plan.bots), bot_mode=plan.cluster_bots)

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
            pool.submit(Job(match.index, match.spec, sandbox, replay_dir, runner))

    def refill() -> None:
        while not feed.done and len(outstanding) < capacity:
            more = feed.take(capacity - len(outstanding), idle=not outstanding)
            if not more:
                break
            submit(more)
            display.total(board.total_games)

    last_board = board_cost = site_cost = 0.0
    last_site = time.monotonic()
    display = Display(plan.name, board.total_games, len(board.games), quiet)
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
                    result = pool.results.get(timeout=0.25)
                except queue.Empty:
                    for index, reason in pool.reap():
                        if index in outstanding:
                            lost(index, reason)
                    if pool.alive() < min(workers, len(outstanding)):
                        raise TourneyError(
                            "a worker process died unexpectedly; rerun the same command to resume"
                        ) from None
                    continue
                index = result.index
                if index not in outstanding:  # a match already failed: its worker died
                    continue
                if isinstance(result, GameEnded):
                    write(index, result.record)
                elif isinstance(result, MatchEnded):
                    for record in result.games:
                        write(index, record)
                    store.finish_match(index, result.logs)
                    board.matches_done += 1
                    outstanding.discard(index)
                    del by_index[index], written[index]
                elif result.why == "failed":  # on a cluster: the match kept killing its workers
                    store.fail_match(index, result.detail)
                    outstanding.discard(index)
                    name = by_index[index].spec.match_id
                    display.message(f"match {name} failed: {result.detail}")
                    del by_index[index], written[index]
                elif result.why == "nospace":
                    raise OSError(errno.ENOSPC, result.detail)
                else:
                    match = by_index[index]
                    raise TourneyError(
                        f"match {match.spec.match_id} ({', '.join(match.bot_names)}) failed:\n"
                        f"{result.detail}"
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
