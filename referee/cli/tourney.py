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
import errno
import os
import signal
import sqlite3
import sys
from pathlib import Path
from typing import Any

from ohseven.referee.files import DB_NAME
from ohseven.referee.plan.config import ConfigError, TourneyConfig, is_cluster_address
from ohseven.referee.plan.loader import demo_config, load_config
from ohseven.referee.plan.run_plan import sandbox_config
from ohseven.referee.plan.schedule import schedule_size
from ohseven.referee.plan.sections import MAX_WORKERS
from ohseven.referee.play.match import start_check
from ohseven.referee.results.board import LEADERBOARD_NAME
from ohseven.referee.results.display import print_board
from ohseven.referee.results.store import (
    DamagedStoreError,
    Store,
    StoreError,
    StoreIOError,
    database_error,
)
from ohseven.referee.sandbox import cgroups
from ohseven.referee.sandbox.settings import SandboxError, check_sandbox
from ohseven.referee.sandbox.staging import StagingError, referee_paths, staged_bots
from ohseven.referee.secret import short_seed_warning
from ohseven.referee.terminal import printable
from ohseven.referee.tournament.errors import TourneyError
from ohseven.referee.tournament.run import run_tournament
from ohseven.referee.tournament.stop_signals import stop_on

__all__ = ["configure", "run"]


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


def _start_every_bot(config: TourneyConfig) -> str | None:
    """Start each bot once, as its matches will; the refusal to print if any cannot start (so
    that no bot is ever rated on fallback games because it never ran)."""
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
        limits = config.staging
        with staged_bots(
            list(first.values()), private=private, discover=False, limits=limits
        ) as bots:
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
            where = next(  # the key that says how it starts: its command, or its file
                (
                    f"bots[{index}].{part}"
                    for part in ("command", "file")
                    if f"bots[{index}].{part}" in config.key_lines
                ),
                f"bots[{index}]",
            )
            lines.append(
                f"  {config.where(where)}: key `{where}` ({printable(bot.name)}): {printable(why)}"
            )
            tail = printable(output).strip().splitlines()[-12:]
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
            printable(
                f"warning: bot {bot} did not start in {games} game(s), where a random fallback "
                f"played for it: {detail}"
            ),
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
    if args.workers is not None and not 1 <= args.workers <= MAX_WORKERS:
        print(f"--workers {args.workers}: expected 1 to {MAX_WORKERS}", file=sys.stderr)
        return 2
    if not args.check:
        cgroups.warn_unavailable()  # once: what is not enforced without cgroups
    if args.cluster is not None and not is_cluster_address(args.cluster):
        print(
            f"--cluster {args.cluster}: expected an address like tcp://HOST:8786", file=sys.stderr
        )
        return 2
    if config.sandbox.mode != "unsandboxed":  # never fallback games for bots that cannot run
        try:
            check_sandbox(sandbox_config(config))
        except SandboxError as error:
            print(
                f"error: {error}\n(or, for trusted bots only, set `sandbox: {{mode: unsandboxed}}` "
                "in the configuration)",
                file=sys.stderr,
            )
            return 2
    if config.schedule.deals == "duplicate":
        print(
            "note: with `deals: duplicate` a bot can carry what it saw of a deal to its next "
            "rotation's process through the machine's page cache: for trusted bots only "
            "(SECURITY.md)",
            file=sys.stderr,
        )
    for name, why in config.left_out:  # a league's: the others play on
        print(printable(f"warning: bot {name} is left out of this run: {why}"), file=sys.stderr)
    # a league validates each bot before its own first match (see ``LeagueFeed``); the other
    # schedules depend on the set of bots: every bot starts once before any game
    league = config.schedule.type == "league"
    if (not league or args.check) and (refusal := _start_every_bot(config)) is not None:
        print(printable(refusal), file=sys.stderr)
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
    # Ctrl-C or SIGTERM (a service manager): the run stops cleanly (bots killed, database
    # consistent) and says so
    with stop_on(signal.SIGINT, signal.SIGTERM) as received:
        try:
            outcome = run_tournament(
                config,
                workers=args.workers,
                fresh=args.fresh,
                quiet=args.quiet,
                cluster=args.cluster,
            )
        except KeyboardInterrupt:  # between the run's own handling: nothing half-written
            how = "stopped by SIGTERM" if signal.SIGTERM in received else "interrupted"
            print(f"\n{how}; the database is consistent. Resume with: {again}", file=sys.stderr)
            return 143 if signal.SIGTERM in received else 130
        except (TourneyError, StoreError) as error:
            print(f"error: {printable(error)}", file=sys.stderr)
            if isinstance(error, StoreError) and not isinstance(
                error, DamagedStoreError | StoreIOError
            ):  # another tournament's or schema's database: not one to discard by accident
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
    terminated = signal.SIGTERM in received
    leaderboard = Path(config.output) / LEADERBOARD_NAME
    if outcome.interrupted:
        how = "stopped by SIGTERM" if terminated else "interrupted"
        print(
            f"\n{how} after {outcome.leaderboard['games_played']} of {outcome.games} games; "
            f"the database is consistent. Resume with: {again}",
            file=sys.stderr,
        )
        return 143 if terminated else 130
    if args.quiet:
        print_board(outcome.leaderboard)
    _warn_start_failures(Path(config.output))
    for refused in outcome.leaderboard.get("refused", []):
        print(
            printable(
                f"warning: bot {refused['name']} could not start and was left out of the league: "
                f"{refused['reason']}"
            ),
            file=sys.stderr,
        )
    if outcome.failed:
        for match_id, reason in outcome.failed:
            print(printable(f"match {match_id} failed: {reason}"), file=sys.stderr)
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
