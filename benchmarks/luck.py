"""How much of a bot's points is the luck of the deal? A control-variate measurement.

The idea (AIVAT in poker): give every game a baseline, the points each seat would score on that
deal under a fixed reference policy, and report points minus baseline beside raw points. With
the baseline's coefficient fitted by least squares (pooled over every bot, so the same
correction applies to all), the adjusted mean's standard error is ``sqrt(1 - rho^2)`` of the
raw one, where ``rho`` is the correlation of a seat's points with its baseline: the goal of 30%
less standard error needs ``rho >= 0.71``.

The example bots (random, heuristic, and Monte Carlo with ``--samples``) play in-process
(``ohseven.sdk.local_game``: the same event feed and rules engine as under the referee) at
tables of three, the seats rotating, each game on a deal of its own. Three baselines are
measured on the same games:

- ``heuristic``: one playout of the deal with the (deterministic) heuristic bot in every seat;
- ``random-avg``: the mean of ``K`` playouts with the random bot in every seat;
- ``seat-heuristic``: for each seat, a playout with the heuristic bot in that seat and random
  bots elsewhere.

It prints, per bot and baseline, the ratio of adjusted to raw standard error (below 0.70 meets
the goal), and each baseline's CPU time per game against the games' own::

    python benchmarks/luck.py [--games 300] [--samples 8] [--playouts 4] [--seed 1]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time

from ohseven.example_bots.heuristic_bot import HeuristicBot
from ohseven.example_bots.montecarlo_bot import MonteCarloBot
from ohseven.example_bots.random_bot import RandomBot
from ohseven.referee.secret import derive_seed
from ohseven.sdk.bot import local_game


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--samples", type=int, default=8, help="Monte Carlo samples per decision")
    parser.add_argument("--playouts", type=int, default=4, help="K of the random-avg baseline")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    bots = [
        ("random", RandomBot),
        ("heuristic", HeuristicBot),
        ("montecarlo", functools.partial(MonteCarloBot, max_samples=args.samples)),
    ]
    names = [name for name, _ in bots]
    baselines = ("heuristic", "random-avg", "seat-heuristic")
    rows: list[tuple[str, int, dict[str, float]]] = []
    cpu = dict.fromkeys(("games", *baselines), 0.0)
    key = str(args.seed).encode()
    for g in range(args.games):
        seed = derive_seed(key, "luck", g)
        order = [(i + g) % 3 for i in range(3)]  # seat -> bot
        start = time.process_time()
        totals = local_game([bots[i][1]() for i in order], game="oh-seven", seed=seed).totals
        cpu["games"] += time.process_time() - start

        start = time.process_time()
        heuristic = local_game([HeuristicBot() for _ in range(3)], seed=seed).totals
        cpu["heuristic"] += time.process_time() - start

        start = time.process_time()
        average = [0.0] * 3
        for k in range(args.playouts):
            played = local_game([RandomBot() for _ in range(3)], seed=seed, index=k + 1).totals
            average = [a + p / args.playouts for a, p in zip(average, played, strict=True)]
        cpu["random-avg"] += time.process_time() - start

        start = time.process_time()
        seat_heuristic = [
            local_game(
                [HeuristicBot() if q == s else RandomBot() for q in range(3)], seed=seed
            ).totals[s]
            for s in range(3)
        ]
        cpu["seat-heuristic"] += time.process_time() - start
        for seat, bot in enumerate(order):
            values = {
                "heuristic": heuristic[seat],
                "random-avg": average[seat],
                "seat-heuristic": seat_heuristic[seat],
            }
            rows.append((names[bot], totals[seat], values))

    print(f"{args.games} games of {', '.join(names)} (3 seats, rotating, independent deals)")
    points = [row[1] for row in rows]
    print(f"{'baseline':16} {'rho':>6} {'beta':>6}  SE adjusted / raw per bot")
    for baseline in baselines:
        xs = [row[2][baseline] for row in rows]
        rho = statistics.correlation(points, xs)
        mean_x, mean_p = statistics.fmean(xs), statistics.fmean(points)
        beta = sum((p - mean_p) * (x - mean_x) for p, x in zip(points, xs, strict=True)) / sum(
            (x - mean_x) ** 2 for x in xs
        )
        ratios = []
        for name in names:
            raw = [row[1] for row in rows if row[0] == name]
            adjusted = [
                row[1] - beta * (row[2][baseline] - mean_x) for row in rows if row[0] == name
            ]
            ratios.append(f"{name} {statistics.stdev(adjusted) / statistics.stdev(raw):.3f}")
        print(f"{baseline:16} {rho:6.3f} {beta:6.3f}  " + "  ".join(ratios))
    print("CPU per game (s): " + ", ".join(f"{k} {v / args.games:.4f}" for k, v in cpu.items()))
    for baseline in baselines:
        print(f"  {baseline}: {cpu[baseline] / cpu['games']:.1%} of the games' own CPU")


if __name__ == "__main__":
    main()
