"""Hands per second of our Oh Hell engine against OpenSpiel's ``oh_hell``, side by side.

Both engines play the same table: one hand of 4 players, 32 cards (4 suits x 8 ranks),
7 tricks, trump turned up, the hook on and OpenSpiel's scoring (``miss_scores_tricks``).
Every decision is ``random.choice`` over the legal ones. Ours shuffles and picks the dealer
from the game's seed; OpenSpiel's chance events (number of tricks, dealer, every card dealt)
are sampled by the driver, in two ways, each timed on its own:

- ``openspiel``: ``random.choice(state.legal_actions())`` at chance nodes too. Every chance
  event of ``oh_hell`` is uniform over its legal actions (checked at start-up), so this samples
  them exactly; it is the fastest faithful way to drive OpenSpiel from Python, and the ratio
  printed is against it.
- ``openspiel-outcomes``: the generic way, ``state.chance_outcomes()`` (action, probability
  pairs) and a choice among the actions; converting those pairs costs OpenSpiel more than its
  whole game logic, so it is shown for reference only.

Our engine is timed twice: ``ours`` as a Monte Carlo playout uses it (nobody reads the moves
or the event log, so the engine records them compactly and never builds them), and
``ours-logged`` as the referee uses it (``game.events`` is read as the hand starts, so every
move and event dict is built as it happens, and the complete log is there at the end).

The engines take turns in short batches so that noise on the machine hits all alike, and time
is CPU time of this process (other work on the machine does not count).

    python benchmarks/engine.py [--hands N] [--seconds S] [--batch B] [--seed K]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence

import pyspiel
from ohseven.core.rules import OH_HELL, OhHellGame, Rules

PLAYERS, RANKS, TRICKS = 4, 8, 7
RULES = Rules.make(OH_HELL, {"hook": True, "miss_scores_tricks": True})


def play_ours(hands: int, rng: random.Random, *, logged: bool = False) -> int:
    """Play ``hands`` random hands on our engine; returns the number of decisions made.

    ``logged``: read the event log as each hand starts, so that it is built as play goes.
    """
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
        if logged:
            events = game.events
        while not game.is_over:
            seat = game.to_act[0]
            game.push(seat, choice(game.legal_moves(seat)))
            decisions += 1
        # a bid and a play per trick from each player
        if logged and (
            events[-1]["type"] != "game_over" or len(game.moves) != PLAYERS * (1 + TRICKS)
        ):
            raise SystemExit("the event log or the move list is incomplete")
    return decisions


def play_openspiel(game: pyspiel.Game, hands: int, rng: random.Random) -> int:
    """Play ``hands`` random hands on OpenSpiel, chance events by ``legal_actions``."""
    choice = rng.choice
    decisions = 0
    for _ in range(hands):
        state = game.new_initial_state()
        while not state.is_terminal():
            decisions += not state.is_chance_node()
            state.apply_action(choice(state.legal_actions()))
    return decisions


def play_openspiel_outcomes(game: pyspiel.Game, hands: int, rng: random.Random) -> int:
    """Play ``hands`` random hands on OpenSpiel, chance events by ``chance_outcomes``."""
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


def check_uniform_chance(game: pyspiel.Game, rng: random.Random) -> None:
    """Fail unless every chance event of a few hands is uniform over its legal actions."""
    for _ in range(20):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probabilities = zip(*state.chance_outcomes(), strict=True)
                if list(actions) != state.legal_actions() or len(set(probabilities)) != 1:
                    raise SystemExit("OpenSpiel's chance events are not uniform: fix the driver")
            state.apply_action(rng.choice(state.legal_actions()))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=50_000, help="hands per engine at most")
    parser.add_argument(
        "--seconds", type=float, default=10.0, help="CPU seconds at most, all engines together"
    )
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
    check_uniform_chance(game, random.Random(args.seed))
    runs = {
        "ours": play_ours,
        "ours-logged": lambda n, rng: play_ours(n, rng, logged=True),
        "openspiel": lambda n, rng: play_openspiel(game, n, rng),
        "openspiel-outcomes": lambda n, rng: play_openspiel_outcomes(game, n, rng),
    }
    names = list(runs)
    rngs = {name: random.Random(args.seed + i) for i, name in enumerate(names)}
    for name in names:  # one untimed batch each, to warm caches
        runs[name](10, rngs[name])

    hands = dict.fromkeys(names, 0)
    spent = dict.fromkeys(names, 0.0)
    decisions = dict.fromkeys(names, 0)
    clock = time.process_time
    deadline = clock() + args.seconds
    turn = 0
    while hands["ours"] < args.hands and clock() < deadline:
        batch = min(args.batch, args.hands - hands["ours"])
        # rotate which engine goes first
        first = turn % len(names)
        for name in names[first:] + names[:first]:
            start = clock()
            decisions[name] += runs[name](batch, rngs[name])
            spent[name] += clock() - start
            hands[name] += batch
        turn += 1

    rate = {name: hands[name] / spent[name] for name in names}
    print(f"table: {PLAYERS} players, {4 * RANKS} cards, {TRICKS} tricks, trump turned up")
    for name in names:
        print(
            f"{name:<19} {hands[name]:>7} hands in {spent[name]:6.2f} s CPU: "
            f"{rate[name]:7.0f} hands/s ({decisions[name] / hands[name]:.1f} decisions/hand)"
        )
    for ours in ("ours", "ours-logged"):
        for other in ("openspiel", "openspiel-outcomes"):
            print(f"ratio {ours}/{other}: {rate[ours] / rate[other]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
