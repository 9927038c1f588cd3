"""Hands per second of our Oh Hell engine against OpenSpiel's ``oh_hell``, side by side.

Both engines play the same table: one hand of 4 players, 32 cards (4 suits x 8 ranks),
7 tricks, trump turned up, the hook on and OpenSpiel's scoring (``miss_scores_tricks``).
Every decision is ``random.choice`` over the legal ones; OpenSpiel's chance events (number of
tricks, dealer, every card dealt) are sampled the same way, while ours shuffles and picks the
dealer from the game's seed. The two alternate in short batches so that noise on the machine
hits both alike.

    python benchmarks/engine.py [--hands N] [--seconds S] [--batch B]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence

import pyspiel
from ohseven.referee.rules import OH_HELL, OhHellGame, Rules

PLAYERS, RANKS, TRICKS = 4, 8, 7
RULES = Rules.make(OH_HELL, {"hook": True, "miss_scores_tricks": True})


def play_ours(hands: int, rng: random.Random) -> int:
    """Play ``hands`` random hands on our engine; returns the number of decisions made."""
    choice = rng.choice
    decisions = 0
    for _ in range(hands):
        game = OhHellGame(
            PLAYERS,
            rng.getrandbits(32),
            RULES,
            ranks=RANKS,
            hand_sizes=(TRICKS,),
            trump_on_last_hand=True,
        )
        while not game.is_over:
            seat = game.to_act[0]
            game.push(seat, choice(game.legal_moves(seat)))
            decisions += 1
    return decisions


def play_openspiel(game: pyspiel.Game, hands: int, rng: random.Random) -> int:
    """Play ``hands`` random hands on OpenSpiel; returns the number of decisions made."""
    choice = rng.choice
    decisions = 0
    for _ in range(hands):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, _ = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(choice(outcomes))
            else:
                state.apply_action(choice(state.legal_actions()))
                decisions += 1
    return decisions


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=50_000, help="hands per engine at most")
    parser.add_argument("--seconds", type=float, default=10.0, help="wall time at most")
    parser.add_argument("--batch", type=int, default=200, help="hands per turn of each engine")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.hands < 1 or args.seconds <= 0 or args.batch < 1:
        parser.error("--hands and --batch must be at least 1, --seconds above 0")

    game = pyspiel.load_game(
        "oh_hell",
        {
            "players": PLAYERS,
            "num_suits": 4,
            "num_cards_per_suit": RANKS,
            "num_tricks_fixed": TRICKS,
        },
    )
    rng_ours, rng_theirs = random.Random(args.seed), random.Random(args.seed + 1)
    # one untimed batch each, to warm caches
    play_ours(10, rng_ours)
    play_openspiel(game, 10, rng_theirs)

    hands = {"ours": 0, "openspiel": 0}
    spent = {"ours": 0.0, "openspiel": 0.0}
    decisions = {"ours": 0, "openspiel": 0}
    clock = time.process_time
    deadline = clock() + args.seconds
    turn = 0
    while hands["ours"] < args.hands and clock() < deadline:
        batch = min(args.batch, args.hands - hands["ours"])
        # alternate which engine goes first in each round
        for name in ("ours", "openspiel") if turn % 2 == 0 else ("openspiel", "ours"):
            start = clock()
            if name == "ours":
                decisions[name] += play_ours(batch, rng_ours)
            else:
                decisions[name] += play_openspiel(game, batch, rng_theirs)
            spent[name] += clock() - start
            hands[name] += batch
        turn += 1

    rate = {name: hands[name] / spent[name] for name in hands}
    print(f"table: {PLAYERS} players, {4 * RANKS} cards, {TRICKS} tricks, trump turned up")
    for name in ("ours", "openspiel"):
        print(
            f"{name:<10} {hands[name]:>7} hands in {spent[name]:6.2f} s: "
            f"{rate[name]:9.0f} hands/s ({decisions[name] / hands[name]:.1f} decisions/hand)"
        )
    print(f"ratio ours/openspiel: {rate['ours'] / rate['openspiel']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
