"""Play in-process games with uniformly random legal decisions and print their statistics.

``ohseven-referee simulate --game oh-seven --players 4 --games 1000 --seed 1 [--rule KEY=VALUE]
[--json]``: every decision is drawn uniformly from the legal ones by one random generator seeded
from ``--seed`` (game ``g`` is dealt with a seed drawn from it too), so the same arguments print
the same numbers. Prints per-seat average totals, the table and seat statistics of
:mod:`ohseven.referee.stats` summed over all games, and the games per second.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from typing import Any

from ohseven.core.rules import GAMES, Phase, Rules, RulesError, new_game
from ohseven.referee.stats import combine_statistics, game_statistics
from ohseven.referee.terminal import console as terminal_console
from rich.table import Table

__all__ = ["configure", "run", "simulate"]


def simulate(rules: Rules, players: int, games: int, seed: int) -> dict[str, Any]:
    """Play ``games`` random games; return totals, statistics and timing as a JSON-ready dict."""
    rules.check_players(players)
    rng = random.Random(seed)
    choice = rng.choice
    totals = [0] * players
    stats = []
    started = time.perf_counter()
    for _ in range(games):
        game = new_game(rules, players, rng.getrandbits(64))
        push, legal = game.push, game.legal_moves
        while game.phase is not Phase.OVER:
            for seat in game.to_act:
                moves = legal(seat)
                push(seat, choice(moves if isinstance(moves, tuple) else list(moves)))
        for seat, score in enumerate(game.scores):
            totals[seat] += score
        stats.append(game_statistics(game))
    seconds = time.perf_counter() - started
    return {
        "game": rules.game,
        "rules": rules.as_dict(),
        "players": players,
        "games": games,
        "seed": seed,
        "average_totals": [total / games for total in totals],
        "statistics": combine_statistics(stats),
        "seconds": seconds,
        "games_per_second": games / seconds if seconds else float("inf"),
    }


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", choices=GAMES, default="oh-seven", help="ruleset to play")
    parser.add_argument("--players", type=int, default=4, help="players per table")
    parser.add_argument("--games", type=int, default=100, help="number of games")
    parser.add_argument("--seed", type=int, default=0, help="seed of deals and decisions")
    parser.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="rule option (repeatable), e.g. passing=true or hand_order=up-down",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    try:
        rules = Rules.make(args.game, args.rule)
        rules.check_players(args.players)
        if args.games < 1:
            raise ValueError(f"--games must be at least 1, not {args.games}")
    except (RulesError, ValueError) as error:
        print(f"ohseven-referee simulate: error: {error}", file=sys.stderr)
        return 2
    report = simulate(rules, args.players, args.games, args.seed)
    if args.json:
        print(json.dumps(report))
    else:
        _print_report(report)
    return 0


def _print_report(report: dict[str, Any]) -> None:
    console = terminal_console()
    stats = report["statistics"]
    table = stats["table"]
    options = ", ".join(f"{k}={v}" for k, v in report["rules"].items())
    console.print(
        f"{report['games']} random games of {report['game']} with {report['players']} players "
        f"(seed {report['seed']}; {options})"
    )
    summary = Table(title="Table")
    summary.add_column("statistic")
    summary.add_column("value", justify="right")
    summary.add_row("rounds", str(table["rounds"]))
    summary.add_row("null-bid rate", f"{table['null_bid_rate']:.3f}")
    summary.add_row("average top bid", f"{table['average_top_bid']:.3f}")
    if report["game"] == "oh-seven":
        summary.add_row("forced re-bids per round", f"{table['rebids'] / table['rounds']:.3f}")
        summary.add_row("redeals", str(table["redeals"]))
    for suit, rate in table["trump_rate"].items():
        if suit == "none" and report["game"] == "oh-seven":
            continue
        summary.add_row(f"trump {suit}", f"{rate:.3f}")
    console.print(summary)
    seats = Table(title="Seats")
    for column in ("seat", "avg", "pts/rd", "zero", "top", "fill", "over", "under", "bonus"):
        seats.add_column(column, justify="right")
    for seat, (average, row) in enumerate(
        zip(report["average_totals"], stats["seats"], strict=True)
    ):
        seats.add_row(
            str(seat),
            f"{average:.2f}",
            f"{row['points_per_round']:.3f}",
            f"{row['zero_bid_rate']:.3f}",
            f"{row['top_bid_rate']:.3f}",
            f"{row['bid_fill_rate']:.3f}",
            f"{row['overflow_rate']:.3f}",
            f"{row['underfill_rate']:.3f}",
            str(row["bonus_points"]),
        )
    console.print(seats)
    console.print(
        "avg: average total; pts/rd: points per round; zero, top, fill (bid = tricks), "
        "over (bid < tricks), under (bid > tricks): rates per round; bonus: re-bid points",
        highlight=False,
    )
    console.print(
        f"{report['games_per_second']:.1f} games/second ({report['seconds']:.2f} s)",
        highlight=False,
    )
