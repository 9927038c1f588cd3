"""Play a match of bots at one table and print the results.

Each BOT is the path of a Python bot file (run with this referee's own Python) or a quoted
command line; bots are named after their file (``random_bot.py`` plays as ``random``, a second
copy as ``random#2``). Seats rotate between games (in game g, seat s holds bot (s + g) mod n)
and the deals follow from --seed, so the same command plays the same deals again.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any

import attrs
from ohseven.core.rules import GAMES, OH_SEVEN, InvalidRulesError, Rules
from ohseven.referee.cli.bot_args import (
    BotArgumentError,
    add_extra_path_argument,
    add_limit_arguments,
    add_time_control_arguments,
    announce_seed,
    bot_specs,
    extra_paths,
    output_tail,
    sandbox_limits,
    stage_limits,
)
from ohseven.referee.fault_report import FaultSite, group_faults, render_groups, site_data
from ohseven.referee.play.descriptors import raise_fd_limit
from ohseven.referee.play.match import MatchSpecError, play_match
from ohseven.referee.records import BotSpec, FaultStatus, MatchResult, MatchSpec, TimeControl
from ohseven.referee.sandbox import cgroups
from ohseven.referee.sandbox.settings import (
    MODES,
    SandboxConfig,
    SandboxError,
    check_sandbox,
)
from ohseven.referee.sandbox.staging import StagingError, staged_bots
from ohseven.referee.secret import derive_seed, secret_from_seed
from ohseven.referee.terminal import console, markup, printable
from rich.table import Table

__all__ = [
    "configure",
    "add_table_arguments",
    "TableSetupError",
    "check_table",
    "run",
    "game_seeds",
    "rotating_seatings",
    "summarise",
    "print_summary",
    "render_faults",
]


class TableSetupError(ValueError):
    """Arguments of a table that cannot be played (rules, players, time control, sandbox,
    paths); the message is the whole explanation."""


def configure(parser: argparse.ArgumentParser) -> None:
    add_table_arguments(parser, games_help="games to play (default: one per bot)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    parser.add_argument("bots", nargs="+", metavar="BOT", help="a bot file or a command line")


def add_table_arguments(parser: argparse.ArgumentParser, *, games_help: str) -> None:
    """The options of a table of bots, shared by ``match`` and ``play``: the game and its
    rules, the games and their seed, the time control, replays and the sandbox."""
    parser.add_argument("--game", choices=GAMES, default=OH_SEVEN, help="default: %(default)s")
    parser.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a rule option (repeatable), e.g. passing=true",
    )
    parser.add_argument("--games", type=int, default=None, metavar="N", help=games_help)
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="S",
        help="deal seed: the same seed replays the same deals (default: a random 128-bit seed, "
        "printed)",
    )
    add_time_control_arguments(parser)
    parser.add_argument("--replays", metavar="DIR", help="save a replay of every game in DIR")
    parser.add_argument(
        "--sandbox", choices=MODES, default="bwrap", help="how bots run (default %(default)s)"
    )
    add_extra_path_argument(parser)
    add_limit_arguments(parser)


def game_seeds(seed: int, games: int) -> tuple[int, ...]:
    """Deal seeds of the games, derived one-way from ``seed`` (a deal of its own per game)."""
    secret = secret_from_seed(seed)
    return tuple(derive_seed(secret, "game", g) for g in range(games))


def render_faults(name: str, faults: Sequence[tuple[str, str, int]], tail: str) -> list[str]:
    """Text lines for a bot's faults, (status, detail, count) each, and its last output (no
    replay known: see :func:`~ohseven.referee.fault_report.render_groups`)."""
    sites = [FaultSite(status, detail) for status, detail, count in faults for _ in range(count)]
    return render_groups(name, group_faults(sites), tail)


def rotating_seatings(bots: int, games: int) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple((s + g) % bots for s in range(bots)) for g in range(games))


def summarise(result: MatchResult) -> dict:
    """The match as plain data: per bot totals and the games. A game a bot did not start in
    (``no_start``: the referee's fallback played its seat) credits it nothing: it counts in its
    ``fallback_games``, not in its points, wins, games or ranks."""
    names = [bot.name for bot in result.spec.bots]
    rows: dict[str, dict[str, Any]] = {
        name: {
            "name": name,
            **{"points": 0, "wins": 0, "games": 0, "fallback_games": 0, "rank_sum": 0},
            "faults": {},
        }
        for name in names
    }
    bid_made: Counter[str] = Counter()
    bid_total: Counter[str] = Counter()
    games = []
    for record in result.games:
        absent = {f.seat for f in record.faults if f.status is FaultStatus.NO_START}
        for seat, name in enumerate(record.seats):
            row = rows[name]
            if seat in absent:
                row["fallback_games"] += 1
                continue
            row["points"] += record.totals[seat]
            row["games"] += 1
            row["rank_sum"] += record.ranks[seat]
            row["wins"] += record.ranks[seat] == 1
            made, total = _bid_counts(record.stats, seat)
            bid_made[name] += made
            bid_total[name] += total
        for fault in record.faults:
            counts = rows[record.seats[fault.seat]]["faults"]
            counts[str(fault.status)] = counts.get(str(fault.status), 0) + 1
        games.append(
            {
                "index": record.game_index,
                "seed": record.seed,
                "seats": list(record.seats),
                "totals": list(record.totals),
                "ranks": list(record.ranks),
                "faults": [
                    {"seat": f.seat, **site_data(FaultSite.of(f, record.replay_path))}
                    for f in record.faults
                ],
                "replay": record.replay_path,
                "seconds": record.seconds,
            }
        )
    bots = []
    for name in names:
        row = rows[name]
        row["output_tail"] = output_tail(str(result.logs.get(name, "")))
        played = row.pop("rank_sum")
        row["avg_rank"] = round(played / row["games"], 3) if row["games"] else None
        row["bid_accuracy"] = (
            round(bid_made[name] / bid_total[name], 4) if bid_total[name] else None
        )
        bots.append(row)
    spec = result.spec
    return {
        "match": spec.match_id,
        "game": spec.rules.game,
        "rules": spec.rules.as_dict(),
        "bots": bots,
        "games": games,
    }


def _bid_counts(stats: dict, seat: int) -> tuple[int, int]:
    """Rounds where ``seat`` made its bid exactly, and rounds, from ``stats.game_statistics``."""
    seats = stats.get("seats") if isinstance(stats, dict) else None
    if isinstance(seats, list) and seat < len(seats) and isinstance(seats[seat], dict):
        fills, rounds = seats[seat].get("fills"), seats[seat].get("rounds")
        if isinstance(fills, int) and isinstance(rounds, int):
            return fills, rounds
    return 0, 0


def print_summary(summary: dict, arguments: dict[str, str], who: str = "bot") -> None:
    """:func:`summarise`'s summary as a table (names escaped; ``who`` heads their column),
    then each faulty bot's faults grouped (``arguments``: each bot's name -> its argument as
    given, for the command that replays a fault)."""
    statuses = [str(s) for s in FaultStatus]
    table = Table(title=f"{summary['game']}: {len(summary['games'])} games")
    for column in (who, "points", "wins", "avg rank", "bid accuracy", "faults"):
        table.add_column(column, justify="left" if column in (who, "faults") else "right")
    for row in sorted(summary["bots"], key=lambda r: (not r["games"], -r["points"])):
        faults = ", ".join(f"{s} {row['faults'][s]}" for s in statuses if s in row["faults"])
        accuracy = row["bid_accuracy"]
        played = bool(row["games"])  # a bot that never started is credited nothing
        table.add_row(
            markup(row["name"]),
            str(row["points"]) if played else "-",
            str(row["wins"]) if played else "-",
            "-" if row["avg_rank"] is None else f"{row['avg_rank']:.2f}",
            "-" if accuracy is None else f"{accuracy:.0%}",
            faults or "-",
        )
    console().print(table)
    for row in summary["bots"]:
        sites = [
            FaultSite.of(fault, game["replay"], f"game {game['index'] + 1}")
            for game in summary["games"]
            for fault in game["faults"]
            if game["seats"][fault["seat"]] == row["name"]
        ]
        if sites:
            lines = render_groups(
                row["name"],
                group_faults(sites),
                row["output_tail"],
                arguments.get(row["name"]),
                save_hint="(save the games with --replays DIR to ask a decision again)",
            )
            print(printable("\n".join(["", *lines])))  # bot-originated text: escaped


def _fail(message: str) -> int:
    print(f"ohseven-referee match: {printable(message)}", file=sys.stderr)
    return 2


def check_table(
    args: argparse.Namespace, bots: Sequence[BotSpec], players: int, games: int
) -> tuple[Rules, SandboxConfig, str | None]:
    """The rules, sandbox and replay folder of :func:`add_table_arguments`' options for a
    table of ``players`` with ``bots`` playing ``games`` games, checked (the replay folder is
    made); raises :class:`TableSetupError`."""
    try:
        rules = Rules.make(args.game, args.rule)
        rules.check_players(players)
    except InvalidRulesError as error:
        raise TableSetupError(str(error)) from None
    if games < 1:
        raise TableSetupError(f"--games must be at least 1, not {games}")
    if not args.move_timeout > 0 or not args.bank >= 0:
        raise TableSetupError("--move-timeout must be positive and --bank not negative")
    try:
        shown = extra_paths(args.extra_path, bots, args.replays and os.path.abspath(args.replays))
    except BotArgumentError as error:
        raise TableSetupError(str(error)) from None
    config = SandboxConfig(mode=args.sandbox, extra_paths=shown, limits=sandbox_limits(args))
    try:
        check_sandbox(config)
    except SandboxError as error:
        raise TableSetupError(str(error)) from None
    cgroups.warn_unavailable()  # once: what is not enforced without cgroups
    replay_dir = None
    if args.replays:
        try:
            os.makedirs(args.replays, exist_ok=True)
        except OSError as error:
            raise TableSetupError(f"--replays {args.replays}: {error.strerror}") from None
        replay_dir = args.replays
    return rules, config, replay_dir


def run(args: argparse.Namespace) -> int:
    raise_fd_limit()

    try:
        bots = bot_specs(args.bots)
    except BotArgumentError as error:
        return _fail(str(error))
    games = len(bots) if args.games is None else args.games
    try:
        rules, config, replay_dir = check_table(args, bots, len(bots), games)
    except TableSetupError as error:
        return _fail(str(error))
    seed = announce_seed(args.seed)
    spec = MatchSpec(
        match_id="match",
        rules=rules,
        bots=bots,
        seatings=rotating_seatings(len(bots), games),
        seeds=game_seeds(seed, games),
        time_control=TimeControl(move_seconds=args.move_timeout, bank_seconds=args.bank),
        fallback_seed=derive_seed(secret_from_seed(seed), "fallback"),
    )
    private = {"the replay folder": replay_dir} if replay_dir else {}
    try:
        # each bot runs from a private copy of its own files (see ``staging``)
        with staged_bots(bots, private=private, limits=stage_limits(args)) as staged:
            staged_spec = attrs.evolve(spec, bots=staged)
            result = play_match(staged_spec, sandbox=config, replay_dir=replay_dir)
    except (MatchSpecError, StagingError) as error:
        return _fail(str(error))
    summary = summarise(result)
    summary["seed"] = seed
    if args.json:
        print(json.dumps(summary))
    else:
        print_summary(summary, dict(zip((b.name for b in bots), args.bots, strict=True)))
    never = [row["name"] for row in summary["bots"] if row["faults"].get("no_start")]
    for name in never:  # its seats were the fallback's: its points and wins are not its own
        print(
            f"ohseven-referee match: {printable(name)} did not start (no_start): the referee's "
            "fallback played its seats, which credit it nothing",
            file=sys.stderr,
        )
    return 1 if never else 0
