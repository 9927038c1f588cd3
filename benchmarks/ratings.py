"""Does the rating depend on the order the games are applied in? And what does it cost?

Builds two pools of real games of the example bots (the random and the heuristic bot, two
of each under different names and seeds) with the in-process engine (``ohseven.sdk``
``local_game``): the four tables of three of the four bots, seats rotating, every game its own
deal; 720 games (60 per rotation) and 2,700 games (225 per rotation). Each pool is rated in
seven orders (canonical, reversed, 5 seeded shuffles):

- ``order-free``: ``ratings.order_free`` as the leaderboard calls it (the games are sorted by
  content first, so the numbers are identical bit for bit);
- ``fixed point, unsorted``: the same propagation fed the games in each order as given (no
  sorting), showing that the fixed point itself does not depend on the order;
- ``sequential``: classic TrueSkill applied game by game in each order (the old leaderboard),
  and with tau = 0.

For each it prints every bot's smallest and largest mu over the orders, the largest sigma,
the spread (max - min mu) over that sigma, and the places the bot got. Then the time of one
order-free computation for 720, 2,700 and ~100,000 games (the 2,700 repeated under new match
ids), against the time of one sequential pass over the same games in the same run.

    python benchmarks/ratings.py [--small 720] [--large 2700] [--seed 1]
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time

import attrs
import trueskill
from ohseven.core.rules import OH_SEVEN
from ohseven.example_bots.heuristic_bot import HeuristicBot
from ohseven.example_bots.random_bot import RandomBot
from ohseven.referee.records import GameRecord
from ohseven.referee.results import ratings as module
from ohseven.referee.results.ratings import DRAW_PROBABILITY, order_free, rate_games
from ohseven.sdk import local_game

BOTS = {
    "random": lambda seed: RandomBot(seed),
    "random-2": lambda seed: RandomBot(seed + 1),
    "heuristic": lambda seed: HeuristicBot(seed),
    "heuristic-2": lambda seed: HeuristicBot(seed + 1),
}
SHUFFLES = 5


def pool(games: int, seed: int) -> list[GameRecord]:
    """``games`` games: 4 tables x 3 rotations x ``games / 12`` deals, each its own seed."""
    per_rotation = games // 12
    rng = random.Random(seed)
    records = []
    for table, names in enumerate(itertools.combinations(BOTS, 3)):
        game_index = 0
        for rotation in range(3):
            seats = names[rotation:] + names[:rotation]
            for _ in range(per_rotation):
                deal = rng.getrandbits(48)
                bots = [BOTS[name](deal + s) for s, name in enumerate(seats)]
                result = local_game(bots, game=OH_SEVEN, seed=deal)
                records.append(
                    GameRecord(f"t{table}", game_index, deal, seats, result.totals, result.ranks)
                )
                game_index += 1
    return records


def orders(records: list[GameRecord], seed: int) -> dict[str, list[GameRecord]]:
    result = {"canonical": records, "reversed": records[::-1]}
    rng = random.Random(seed)
    for number in range(SHUFFLES):
        shuffled = records[:]
        rng.shuffle(shuffled)
        result[f"shuffle {number + 1}"] = shuffled
    return result


def unsorted_fixed_point(records: list[GameRecord]) -> dict[str, tuple[float, float]]:
    env = module.make_env(OH_SEVEN)
    graph = module.factor_graph(records, BOTS, True, presorted=True)
    mu, sigma = module.propagate(graph, env, 1e-9, 5000)
    return {name: (float(mu[i]), float(sigma[i])) for i, name in enumerate(graph.names)}


def sequential(records: list[GameRecord], tau: float | None = None) -> dict:
    ratings = rate_games(OH_SEVEN, BOTS, records)
    if tau is not None:
        ratings = module.Ratings(OH_SEVEN, BOTS)
        ratings.env = trueskill.TrueSkill(
            draw_probability=DRAW_PROBABILITY[OH_SEVEN], tau=tau, backend=None
        )
        ratings.ratings = {name: ratings.env.create_rating() for name in BOTS}
        for record in records:
            ratings.apply(record)
    return {name: (r.mu, r.sigma) for name, r in ratings.ratings.items()}


def places(rated: dict[str, tuple[float, float]]) -> dict[str, int]:
    order = sorted(rated, key=lambda name: (-(rated[name][0] - 3 * rated[name][1]), name))
    return {name: order.index(name) + 1 for name in rated}


def report(label: str, results: list[dict[str, tuple[float, float]]]) -> float:
    print(f"  {label}")
    worst = 0.0
    for name in BOTS:
        mus = [result[name][0] for result in results]
        sigma = max(result[name][1] for result in results)
        spread = (max(mus) - min(mus)) / sigma
        worst = max(worst, spread)
        got = sorted({places(result)[name] for result in results})
        print(
            f"    {name:12s} mu {min(mus):8.4f} .. {max(mus):8.4f}  sigma <= {sigma:.4f}"
            f"  spread/sigma {spread:8.2e}  places {got}"
        )
    print(f"    largest spread/sigma: {worst:.2e}")
    return worst


def timed(repeats: int, function, *args) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function(*args)
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=720)
    parser.add_argument("--large", type=int, default=2700)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    worst_free = 0.0
    pools = {}
    for games in (args.small, args.large):
        start = time.perf_counter()
        records = pool(games, args.seed + games)
        pools[games] = records
        print(f"pool of {len(records)} games (built in {time.perf_counter() - start:.0f} s)")
        listed = orders(records, args.seed)
        free = [order_free(games_, BOTS) for games_ in listed.values()]
        assert all(result == free[0] for result in free), "order_free is not bit-identical"
        worst_free = max(worst_free, report("order-free (identical in every order)", free))
        fixed = [unsorted_fixed_point(games_) for games_ in listed.values()]
        worst_free = max(worst_free, report("fixed point, unsorted input", fixed))
        report("sequential TrueSkill (old leaderboard)", [sequential(g) for g in listed.values()])
        report("sequential TrueSkill, tau = 0", [sequential(g, 0.0) for g in listed.values()])
    print(f"order-free: largest spread over the orders / sigma = {worst_free:.2e} (bound 0.05)")
    large = pools[args.large]
    huge = [
        attrs.evolve(record, match_id=f"r{copy}-{record.match_id}")
        for copy in range(max(1, 100_000 // len(large)))
        for record in large
    ]
    print("time of one computation (best of 3; 1 for the largest), order-free vs sequential:")
    for records in (pools[args.small], large, huge):
        repeats = 1 if records is huge else 3
        free = timed(repeats, order_free, records, BOTS)
        seq = timed(repeats, rate_games, OH_SEVEN, BOTS, records)
        print(
            f"  {len(records):7d} games: order-free {free:8.3f} s, sequential {seq:8.3f} s,"
            f" ratio {free / seq:5.2f}"
        )
    return 0 if worst_free <= 0.05 else 1


if __name__ == "__main__":
    sys.exit(main())
