"""Steps per second of the PettingZoo environment against OpenSpiel's ``oh_hell``, side by side.

Both play the table of benchmarks/engine.py: one hand of 4 players, 32 cards (4 suits x 8
ranks), 7 tricks, trump turned up, the hook on and OpenSpiel's scoring
(``miss_scores_tricks``). A step is one decision (a bid or a play); every step builds the
acting player's observation and picks a random legal action from it:

- ``env``: ``ohseven.env.raw_env``: ``observe(agent)`` (the observation vector and the action
  mask, numpy arrays) then ``step(action)``, an action drawn from ``legal()`` (the legal
  actions as a list, as OpenSpiel's ``legal_actions()``); ``reset`` deals;
- ``env-wrapped``: the same through ``ohseven.env.env()`` (PettingZoo's order-enforcing and
  bounds-checking wrappers) and ``last()``, for reference;
- ``openspiel``: ``state.information_state_tensor()`` then ``apply_action``, an action drawn
  from ``state.legal_actions()``; chance events (the deal) are drawn from their legal actions,
  which are uniform (see benchmarks/engine.py), and are not counted as steps.

They take turns in short batches so that noise hits all alike; time is this process's CPU time.
The last line ends with the ratio env/openspiel.

    python benchmarks/env.py [--seconds S] [--batch B] [--seed K]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np
import pyspiel
from ohseven.env import env, raw_env
from ohseven.env.aec import IllegalActionError

PLAYERS, RANKS, TRICKS = 4, 8, 7
SETTINGS = {
    "game": "oh-hell",
    "players": PLAYERS,
    "rules": {"hook": True, "miss_scores_tricks": True},
    "table": {"ranks": RANKS, "hand_sizes": (TRICKS,), "trump_on_last_hand": True},
}


def play_env(table: raw_env, hands: int, rng: random.Random) -> int:
    """``hands`` hands on the raw environment; returns the steps taken."""
    choice = rng.choice
    steps = 0
    for _ in range(hands):
        table.reset(seed=rng.getrandbits(62))
        game = table.game
        assert game is not None
        while not game.is_over:
            table.observe(table.agent_selection)
            table.step(choice(table.legal()))
            steps += 1
    return steps


def play_wrapped(table: object, hands: int, rng: random.Random) -> int:
    """``hands`` hands through PettingZoo's wrappers and ``last()``; returns the steps."""
    choice = rng.choice
    flat = np.flatnonzero
    steps = 0
    for _ in range(hands):
        table.reset(seed=rng.getrandbits(62))  # type: ignore[attr-defined]
        while True:
            obs, _, done, _, _ = table.last()  # type: ignore[attr-defined]
            if done:
                break
            table.step(choice(flat(obs["action_mask"])))  # type: ignore[attr-defined]
            steps += 1
    return steps


def play_openspiel(game: pyspiel.Game, hands: int, rng: random.Random) -> int:
    """``hands`` hands on OpenSpiel, the information state tensor at every decision."""
    choice = rng.choice
    steps = 0
    for _ in range(hands):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(choice(state.legal_actions()))
                continue
            state.information_state_tensor()
            state.apply_action(choice(state.legal_actions()))
            steps += 1
    return steps


def check_same_table(game: pyspiel.Game, table: raw_env) -> None:
    """Fail unless both play hands of the same number of decisions (a bid and 7 plays each)."""
    rng = random.Random(1)
    expected = PLAYERS * (1 + TRICKS)
    if play_openspiel(game, 1, rng) != expected or play_env(table, 1, rng) != expected:
        raise SystemExit("the two tables differ: fix the settings")
    try:
        table.reset(seed=1)
        table.step(0)  # no card is a legal bid
    except IllegalActionError:
        pass
    else:
        raise SystemExit("the environment accepted an illegal action")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=float, default=10.0, help="CPU seconds at most, all runs together"
    )
    parser.add_argument("--batch", type=int, default=50, help="hands per turn of each run")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.batch < 1:
        parser.error("--batch must be at least 1, --seconds above 0")

    game = pyspiel.load_game(
        "oh_hell",
        {
            "players": PLAYERS,
            "num_suits": 4,
            "num_cards_per_suit": RANKS,
            "num_tricks_fixed": TRICKS,
        },
    )
    table = raw_env(**SETTINGS)  # type: ignore[arg-type]
    wrapped = env(**SETTINGS)
    check_same_table(game, table)
    runs: dict[str, Callable[[int, random.Random], int]] = {
        "env": lambda n, rng: play_env(table, n, rng),
        "env-wrapped": lambda n, rng: play_wrapped(wrapped, n, rng),
        "openspiel": lambda n, rng: play_openspiel(game, n, rng),
    }
    names = list(runs)
    rngs = {name: random.Random(args.seed + i) for i, name in enumerate(names)}
    for name in names:  # one untimed batch each, to warm caches
        runs[name](5, rngs[name])
    steps = dict.fromkeys(names, 0)
    spent = dict.fromkeys(names, 0.0)
    clock = time.process_time
    deadline = clock() + args.seconds
    turn = 0
    while clock() < deadline:
        first = turn % len(names)
        for name in names[first:] + names[:first]:
            start = clock()
            steps[name] += runs[name](args.batch, rngs[name])
            spent[name] += clock() - start
        turn += 1
    rate = {name: steps[name] / spent[name] for name in names}
    print(
        f"table: {PLAYERS} players, {4 * RANKS} cards, {TRICKS} tricks; "
        f"observation: {table.observation_space('player_0')['observation'].shape[0]} floats "
        f"(ours), {game.information_state_tensor_size()} floats (OpenSpiel)"
    )
    for name in names:
        print(f"{name:<12} {steps[name]:>8} steps in {spent[name]:6.2f} s CPU: {rate[name]:8.0f}/s")
    print(f"ratio env-wrapped/openspiel: {rate['env-wrapped'] / rate['openspiel']:.2f}x")
    print(
        f"ratio env/openspiel (steps per second, observation every step): "
        f"{rate['env'] / rate['openspiel']:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
