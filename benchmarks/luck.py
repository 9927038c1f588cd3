"""How much of a bot's points is the luck of the deal? Control variates, checked and bounded.

The idea (AIVAT in poker): give every game a baseline, what each seat would score on the same
cards under a fixed reference policy, and report points minus baseline beside raw points. With
the baseline's coefficient fitted by least squares (pooled over every bot, so the same
correction applies to all), the adjusted mean's standard error is ``sqrt(1 - rho^2)`` of the
raw one, where ``rho`` is the correlation of a seat's points with its baseline: the goal of 30%
less standard error needs ``rho >= 0.71``.

The example bots (random, heuristic, and Monte Carlo with ``--samples``) play in-process
(``ohseven.sdk.local_game``: the same event feed and rules engine as under the referee, the
deals from the game's seed exactly as ``referee.match`` deals them) at tables of three, the
seats rotating from deal to deal. The script prints, for Oh-Seven (default rules) and Oh Hell:

1. **Sanity check.** The heuristic bot in every seat of the real game: a baseline that replays
   the same deal with the same policy must then give ``rho = 1`` (and equal the points exactly).
   This checks the deal and seat alignment, the seeds and the rule options, and that every deal
   of a round (a re-deal after seven forced re-bids included) is replayed.
2. **The ceiling.** Every deal is played ``--replays`` times by the same bots in the same seats
   with fresh randomness for the bots. The share of a seat's variance that the deal explains
   (between-deal variance over total, from a one-way variance decomposition) bounds the
   ``rho^2`` of *every* baseline that is a function of the cards dealt. The deals are the only
   chance events of the game and these bots play a round from its own cards and moves, so
   AIVAT's correction at each chance event is such a function too. The best
   possible SE ratio is ``sqrt(1 - share)``; the share's 90% interval is a bootstrap over deals.
3. **Baselines**, each per bot as the SE ratio (adjusted over raw, first replay of each deal),
   and ``rho`` (within bots, pooled):

   - ``game-heuristic``: one playout of the whole game (the same seed) with the heuristic bot in
     every seat (the previous session's baseline);
   - ``deal-ref``: per chance event (each deal of each round, re-deals included), the points the
     seat scores while that deal is in force with the reference policy (the heuristic bot's
     rules, on the engine) in every seat, less its mean; summed over the game's deals;
   - ``deal-noisy``: the same, the mean of ``--playouts`` playouts with a reference that makes a
     uniformly random move a quarter of the time;
   - ``deal-random``: the same, the mean of ``--playouts`` playouts with random bots;
   - ``hand-ref``: the seat's own hand only: the mean over ``--playouts`` playouts of the
     reference in every seat, the other seats' cards dealt again at random each time;
   - ``features``: a least-squares fit of a seat's points on a deal to features of its hand
     (cards by rank, longest suit, Oh Hell: trumps by rank and the hand size), cross-fitted
     (ten folds by game: no game is predicted by a fit it took part in), pooled over the bots;
   - ``features-bot``: the same fitted to each bot's own seats (only the spread of its
     predictions enters the SE ratio; a leaderboard would centre them on random deals);
   - ``all``: every baseline above together, the same cross-fitted regression.

It prints each baseline's CPU time per game against the games' own::

    python benchmarks/luck.py [--games oh-seven,oh-hell] [--deals 200] [--replays 3]
        [--sanity 100] [--samples 8] [--playouts 8] [--seed 1]
        [--field random,heuristic,montecarlo]
"""

from __future__ import annotations

import argparse
import functools
import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from ohseven.core import rules as engine_rules
from ohseven.core.cards import OH_SEVEN_DECK
from ohseven.core.names import SUITS
from ohseven.core.rules import OH_HELL, OH_SEVEN, Game, OhHellGame, OhSevenGame, Phase, Rules
from ohseven.example_bots.heuristic_bot import HeuristicBot
from ohseven.example_bots.montecarlo_bot import MonteCarloBot
from ohseven.example_bots.random_bot import RandomBot
from ohseven.referee.secret import derive_seed
from ohseven.sdk import estimate_tricks, greedy_play
from ohseven.sdk.local import local_game

Deal = dict[str, Any]  # one chance event: the hands dealt, and for Oh Hell the table around them
Policy = Callable[[Game, int, random.Random], Any]


# --------------------------------------------------------------------------- the real games


def play(bots: Sequence[Any], game: str, seed: int) -> tuple[tuple[int, ...], list[Deal]]:
    """A real game on ``seed``: its totals, and its deals with the points scored on each."""
    captured: list[Game] = []
    new_game = engine_rules.new_game

    def capture(*args: Any, **kwargs: Any) -> Game:
        captured.append(new_game(*args, **kwargs))
        return captured[-1]

    engine_rules.new_game = capture  # local_game imports it at call time: keep its engine
    try:
        totals = local_game(bots, game=game, seed=seed).totals
    finally:
        engine_rules.new_game = new_game
    engine = captured[0]
    n = engine.players
    deals: list[Deal] = []
    for event in engine.events:
        kind = event["type"]
        if kind == "round":
            deals.append({**event, "hands": [None] * n, "points": [0] * n})
        elif kind == "deal":
            deals[-1]["hands"][event["to"]] = event["hand"]
        elif kind == "bids" and game == OH_SEVEN:
            for s in event["bonus"]:
                deals[-1]["points"][s] += 1
        elif kind == "score":
            deals[-1]["points"] = [
                p + q for p, q in zip(deals[-1]["points"], event["points"], strict=True)
            ]
    assert [sum(d["points"][s] for d in deals) for s in range(n)] == list(totals)
    return totals, deals


# --------------------------------------------------------------------------- the reference


def reference(game: Game, seat: int, rng: random.Random) -> Any:
    """The heuristic bot's rules on the engine: the same move ``HeuristicBot`` makes."""
    if game.phase is not Phase.BID:
        return greedy_play(game, seat, rng)
    names = game.deck.names
    hand = [names[c] for c in game.hands[seat]]
    name = game.rules.game
    if name == OH_SEVEN:
        no_trump = estimate_tricks(hand, None, name, game.players)

        def gap(card: int) -> tuple[float, str]:
            label = names[card]
            rank = card % 8
            trump = label[1] if rank >= 4 else None
            estimate = estimate_tricks(hand, trump, name, game.players) if trump else no_trump
            return abs(rank - estimate), label

        return min(game.legal_moves(seat), key=gap)
    trump = None if game.trump is None else SUITS[game.trump]
    estimate = estimate_tricks(hand, trump, name, game.players)
    return min(game.legal_moves(seat), key=lambda bid: (abs(bid - estimate), bid))


def noisy(game: Game, seat: int, rng: random.Random) -> Any:
    """The reference, a uniformly random legal move a quarter of the time."""
    if rng.random() < 0.25:
        return randomly(game, seat, rng)
    return reference(game, seat, rng)


def randomly(game: Game, seat: int, rng: random.Random) -> Any:
    """A uniformly random legal move."""
    return rng.choice(list(game.legal_moves(seat)))


def replay_deal(rules: Rules, deal: Deal, hands: Sequence[Sequence[str]], seed: int) -> Game:
    """A game that starts on ``deal`` with ``hands`` (card names per seat)."""
    n = len(hands)
    if rules.game == OH_SEVEN:
        deck = OH_SEVEN_DECK
        cards = [deck.index[c] for c in _interleave(hands)]
        rest = [c for c in range(32) if c not in set(cards)]
        return OhSevenGame(n, seed, rules, stacked_decks=[cards + rest])
    deck = OhHellGame(n, 0, rules).deck
    first = (deal["dealer"] + 1) % n
    dealt = _interleave([hands[(first + i) % n] for i in range(n)])
    cards = [deck.index[c] for c in dealt]
    if deal["trump_card"] is not None:
        cards.append(deck.index[deal["trump_card"]])
    cards += [c for c in range(deck.size) if c not in set(cards)]
    return OhHellGame(
        n,
        seed,
        rules,
        stacked_decks=[cards],
        hand_sizes=(deal["hand_size"],),
        first_dealer=deal["dealer"],
        trump_on_last_hand=deal["trump_card"] is not None,
    )


def _interleave(hands: Sequence[Sequence[str]]) -> list[str]:
    return [hand[i] for i in range(len(hands[0])) for hand in hands]


def deal_points(
    rules: Rules, deal: Deal, hands: Sequence[Sequence[str]], policy: Policy, seed: int
) -> list[int]:
    """Each seat's points while ``deal`` is in force (re-bid bonuses, and the round's points
    unless seven forced re-bids deal again), ``policy`` in every seat."""
    game = replay_deal(rules, deal, hands, seed)
    rng = random.Random(seed)
    push = game.push
    if rules.game == OH_SEVEN:
        oh_seven: OhSevenGame = game  # type: ignore[assignment]
        while oh_seven.round == 0 and oh_seven.deal_number == 0:
            seat = game.to_act[0]
            push(seat, policy(game, seat, rng))
    else:
        while not game.is_over:
            seat = game.to_act[0]
            push(seat, policy(game, seat, rng))
    return list(game.scores)


def redeal_others(
    deal: Deal, seat: int, rng: random.Random, deck: Sequence[str]
) -> list[list[str]]:
    """``deal``'s hands with every seat but ``seat`` dealt again from the cards it cannot see."""
    mine = set(deal["hands"][seat])
    if deal.get("trump_card") is not None:
        mine.add(deal["trump_card"])
    pool = [c for c in deck if c not in mine]
    rng.shuffle(pool)
    hands = []
    for s, hand in enumerate(deal["hands"]):
        if s == seat:
            hands.append(list(hand))
        else:
            hands.append(pool[: len(hand)])
            del pool[: len(hand)]
    return hands


def features(deal: Deal, seat: int, game: str) -> list[float]:
    """Features of a seat's hand on a deal (its position for Oh Hell)."""
    hand = deal["hands"][seat]
    suits = [sum(1 for c in hand if c[1] == x) for x in SUITS]
    if game == OH_SEVEN:
        ranks = [int(c[0]) for c in hand]
        return [*(float(ranks.count(r)) for r in range(8)), max(suits), min(suits)]
    order = "23456789TJQKA"
    ranks = [order.index(c[0]) for c in hand]
    trump = deal["trump_card"][1] if deal["trump_card"] else None
    trumps = [order.index(c[0]) for c in hand if c[1] == trump]
    n = len(deal["hands"])
    position = (seat - deal["dealer"] - 1) % n
    size = deal["hand_size"]
    return [
        float(size),
        *(float(sum(1 for r in ranks if r >= t)) for t in (12, 11, 10)),
        *(float(sum(1 for r in trumps if r >= t)) for t in (0, 9, 11, 12)),
        float(max(suits)),
        float(trump is None),
        *(float(position == p) for p in range(n - 1)),
    ]


# --------------------------------------------------------------------------- statistics


def cross_fit(x: np.ndarray, y: np.ndarray, groups: np.ndarray, folds: int = 10) -> np.ndarray:
    """Out-of-fold least-squares predictions of ``y`` (with an intercept), folds by group."""
    design = np.column_stack([np.ones(len(y)), x])
    fold = groups % folds
    out = np.empty(len(y))
    for f in range(folds):
        test = fold == f
        coef, *_ = np.linalg.lstsq(design[~test], y[~test], rcond=None)
        out[test] = design[test] @ coef
    return out


def adjust(
    points: np.ndarray, baseline: np.ndarray, bot_of: np.ndarray
) -> tuple[float, np.ndarray]:
    """(rho, ``points - beta * baseline``): ``beta`` the least-squares slope and ``rho`` the
    correlation within bots, pooled over bots (a bot's mean is its skill, not luck)."""
    x, y = baseline.astype(float), points.astype(float)
    for name in set(bot_of):
        mine = bot_of == name
        x[mine] -= x[mine].mean()
        y[mine] -= y[mine].mean()
    beta = float(x @ y / (x @ x))
    return float(x @ y / (x @ x * (y @ y)) ** 0.5), points - beta * baseline


def deal_share(values: dict[int, list[float]], draws: int = 2000) -> tuple[float, float, float]:
    """The share of the variance between deals (one-way random effects, ``R`` replays of each
    deal), and its 90% bootstrap interval (deals resampled)."""
    table = np.array(list(values.values()), dtype=float)  # deals x replays

    def share(rows: np.ndarray) -> np.ndarray:  # rows: (..., deals, replays)
        within = rows.var(axis=-1, ddof=1).mean(axis=-1)
        between = rows.mean(axis=-1).var(axis=-1, ddof=1) - within / rows.shape[-1]
        between = np.maximum(0.0, between)
        return between / (between + within)

    rng = np.random.default_rng(0)
    picks = rng.integers(0, len(table), size=(draws, len(table)))
    low, high = np.quantile(share(table[picks]), [0.05, 0.95])
    return float(share(table)), float(low), float(high)


# --------------------------------------------------------------------------- the run


def sanity(game: str, rules: Rules, deals: int, key: bytes) -> None:
    """Heuristic bots in every seat: each baseline of the same policy must give rho = 1."""
    points, whole, per_deal, exact = [], [], [], 0
    for g in range(deals):
        seed = derive_seed(key, "sanity", game, g)
        totals, played = play([HeuristicBot() for _ in range(3)], game, seed)
        again = local_game([HeuristicBot() for _ in range(3)], game=game, seed=seed).totals
        sums = [0] * 3
        for d, deal in enumerate(played):
            value = deal_points(rules, deal, deal["hands"], reference, derive_seed(key, "v", d))
            sums = [a + b for a, b in zip(sums, value, strict=True)]
        exact += sum(a == b for a, b in zip(sums, totals, strict=True))
        points += totals
        whole += again
        per_deal += sums
    print(
        f"  sanity (heuristic bot in every seat, {deals} games): rho game-heuristic "
        f"{statistics.correlation(points, whole):.3f}, deal-ref "
        f"{statistics.correlation(points, per_deal):.3f}; deal-ref equals the points for "
        f"{exact} of {3 * deals} seats"
    )


def run(game: str, args: argparse.Namespace) -> None:
    rules = Rules.make(game)
    key = str(args.seed).encode()
    deck = list(OH_SEVEN_DECK.names if game == OH_SEVEN else OhHellGame(3, 0).deck.names)
    field = args.field.split(",")
    print(
        f"{game} (default rules), tables of {', '.join(field)} (montecarlo --samples "
        f"{args.samples})"
    )
    if args.sanity:
        sanity(game, rules, args.sanity, key)
    factories: dict[str, Callable[[], Any]] = {
        "random": RandomBot,
        "heuristic": HeuristicBot,
        "montecarlo": functools.partial(MonteCarloBot, max_samples=args.samples),
    }
    names = [
        name if field.count(name) == 1 else f"{name}{field[:i].count(name) + 1}"
        for i, name in enumerate(field)
    ]
    bots = [(label, factories[name]) for label, name in zip(names, field, strict=True)]
    per_deal_baselines = ("deal-ref", "deal-noisy", "deal-random", "hand-ref")
    cpu = dict.fromkeys(("games", "game-heuristic", *per_deal_baselines), 0.0)
    replayed: dict[str, dict[int, list[float]]] = {name: {} for name in names}
    rows: list[dict[str, Any]] = []  # one per seat of a game's first replay
    per_deal_total = dict.fromkeys(per_deal_baselines, 0.0)  # over every seat and deal
    deal_rows: list[dict[str, Any]] = []  # one per seat and deal of a first replay
    for g in range(args.deals):
        seed = derive_seed(key, "luck", game, g)
        order = [(i + g) % 3 for i in range(3)]  # seat -> bot
        for r in range(args.replays):
            start = time.process_time()
            players = [bots[i][1]() for i in order]
            for s, bot in enumerate(players):
                bot.rng.seed(derive_seed(key, "bot", game, g, r, s))
            totals, played = play(players, game, seed)
            cpu["games"] += time.process_time() - start
            for s, i in enumerate(order):
                replayed[names[i]].setdefault(g, []).append(totals[s])
            if r:
                continue
            start = time.process_time()
            whole = local_game([HeuristicBot() for _ in range(3)], game=game, seed=seed).totals
            cpu["game-heuristic"] += time.process_time() - start
            sums = {b: [0.0] * 3 for b in per_deal_baselines}
            for d, deal in enumerate(played):
                values: dict[str, list[float]] = {}
                vseed = derive_seed(key, "v", game, g, d)
                start = time.process_time()
                values["deal-ref"] = deal_points(rules, deal, deal["hands"], reference, vseed)
                cpu["deal-ref"] += time.process_time() - start
                for label, policy in (("deal-noisy", noisy), ("deal-random", randomly)):
                    start = time.process_time()
                    mean = [0.0] * 3
                    for k in range(args.playouts):
                        got = deal_points(rules, deal, deal["hands"], policy, vseed + k)
                        mean = [m + p / args.playouts for m, p in zip(mean, got, strict=True)]
                    values[label] = mean
                    cpu[label] += time.process_time() - start
                start = time.process_time()
                rng = random.Random(vseed)
                own = [0.0] * 3
                for s in range(3):
                    for k in range(args.playouts):
                        hands = redeal_others(deal, s, rng, deck)
                        got = deal_points(rules, deal, hands, reference, vseed + k)
                        own[s] += got[s] / args.playouts
                values["hand-ref"] = own
                cpu["hand-ref"] += time.process_time() - start
                for s in range(3):
                    for b in per_deal_baselines:
                        sums[b][s] += values[b][s]
                        per_deal_total[b] += values[b][s]
                    deal_rows.append(
                        {
                            "game": g,
                            "seat": s,
                            "bot": names[order[s]],
                            "points": deal["points"][s],
                            "features": features(deal, s, game),
                            "deals": 1,
                        }
                    )
            for s, i in enumerate(order):
                rows.append(
                    {
                        "bot": names[i],
                        "game": g,
                        "seat": s,
                        "points": totals[s],
                        "game-heuristic": whole[s],
                        **{b: sums[b][s] for b in per_deal_baselines},
                        # the chance events of the seat's game: their number times the mean
                        # per deal is what each sum's centring subtracts
                        "deals": len(played),
                    }
                )

    # each chance event's correction is its value less the mean value of a deal
    for b in per_deal_baselines:
        mean = per_deal_total[b] / len(deal_rows)
        for row in rows:
            row[b] -= mean * row["deals"]
    # cross-fitted features: out-of-fold prediction per deal, summed over the game's deals
    x = np.array([row["features"] for row in deal_rows])
    y = np.array([row["points"] for row in deal_rows], dtype=float)
    groups = np.array([row["game"] for row in deal_rows])
    deal_bot = np.array([row["bot"] for row in deal_rows])
    pooled = cross_fit(x, y, groups)
    own = np.empty(len(y))  # each bot's own fit: its mean is a bot's own, so centre it on
    for name in names:  # the population's features (only the spread matters here)
        mine = deal_bot == name
        own[mine] = cross_fit(x[mine], y[mine], groups[mine])
    for label, predicted in (("features", pooled), ("features-bot", own)):
        by_game: dict[tuple[int, int], float] = {}
        for row, p in zip(deal_rows, predicted, strict=True):
            by_game[row["game"], row["seat"]] = by_game.get((row["game"], row["seat"]), 0.0) + p
        for row in rows:
            row[label] = by_game[row["game"], row["seat"]]
    points = np.array([row["points"] for row in rows], dtype=float)
    baselines = ("game-heuristic", *per_deal_baselines, "features", "features-bot")
    table = {b: np.array([row[b] for row in rows], dtype=float) for b in baselines}
    # a deal sum is centred per deal: the number of deals (re-deals) is a covariate too
    count = np.array([row["deals"] for row in rows], dtype=float)
    combined = cross_fit(
        np.column_stack([*table.values(), count]), points, np.array([row["game"] for row in rows])
    )
    table["all"] = combined
    bot_of = np.array([row["bot"] for row in rows])
    print(f"  {args.deals} deals, each played {args.replays} times (seats rotating by deal)")
    print(f"  {'':16} {'rho':>6}  SE adjusted / raw per bot")
    ceiling = {name: deal_share(replayed[name]) for name in names}
    print(
        f"  {'ceiling':16} {'':>6}  "
        + "  ".join(f"{name} {(1 - ceiling[name][0]) ** 0.5:.3f}" for name in names)
        + "\n  (the deal's share of a seat's variance, 90% interval: "
        + ", ".join(f"{n} {c[0]:.2f} [{c[1]:.2f}, {c[2]:.2f}]" for n, c in ceiling.items())
        + ")"
    )
    for label, baseline in table.items():
        rho, adjusted = adjust(points, baseline, bot_of)
        ratios = []
        for name in names:
            mine = bot_of == name
            ratios.append(f"{name} {adjusted[mine].std(ddof=1) / points[mine].std(ddof=1):.3f}")
        print(f"  {label:16} {rho:6.3f}  " + "  ".join(ratios))
    print(
        "  CPU per game (s): "
        + ", ".join(
            f"{k} {v / (args.deals * (args.replays if k == 'games' else 1)):.4f}"
            for k, v in cpu.items()
        )
    )
    per_game = cpu["games"] / (args.deals * args.replays)
    print(
        "  share of the games' own CPU: "
        + ", ".join(f"{k} {v / args.deals / per_game:.1%}" for k, v in cpu.items() if k != "games")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default=f"{OH_SEVEN},{OH_HELL}")
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--replays", type=int, default=3)
    parser.add_argument("--sanity", type=int, default=100, help="games of the sanity check")
    parser.add_argument("--samples", type=int, default=8, help="Monte Carlo samples per decision")
    parser.add_argument("--playouts", type=int, default=8, help="playouts per deal and baseline")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--field", default="random,heuristic,montecarlo", help="the three bots of every table"
    )
    args = parser.parse_args()
    for game in args.games.split(","):
        run(game, args)


if __name__ == "__main__":
    main()
