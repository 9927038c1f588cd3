"""Helpers of the rules engine's tests: stacked decks written as card names, the events and
snapshot of a game, and hypothesis strategies of the games' configurations."""

from __future__ import annotations

import copy
import random
from collections import Counter

from hypothesis import strategies as st
from ohseven.core.cards import OH_HELL_DECK, OH_SEVEN_DECK
from ohseven.core.rules import OhSevenGame, Phase

SEVEN = OH_SEVEN_DECK
HELL = OH_HELL_DECK
SUITS = "CDHS"


def c7(names: str) -> list[int]:
    return [SEVEN.parse(name) for name in names.split()]


def ch(names: str) -> list[int]:
    return [HELL.parse(name) for name in names.split()]


def stack_seven(hands: list[str]) -> list[int]:
    """A deck order dealing ``hands[s]`` (names) to seat ``s``: card i goes to seat i % n."""
    seats = [c7(hand) for hand in hands]
    n = len(seats)
    order = [seats[i % n][i // n] for i in range(7 * n)]
    rest = Counter(list(range(32)) * (1 if n <= 4 else 2))
    rest.subtract(order)
    assert min(rest.values()) >= 0, "a stacked hand holds a card too often"
    return order + sorted(rest.elements())


def stack_hell(hands: list[str], dealer: int, turn: str | None = None) -> list[int]:
    """A deck order dealing ``hands[s]`` to seat ``s`` from the dealer's left, then ``turn``."""
    seats = [ch(hand) for hand in hands]
    n, k = len(seats), len(seats[0])
    order = [seats[(dealer + 1 + i) % n][i // n] for i in range(k * n)]
    if turn is not None:
        order.append(HELL.parse(turn))
    return order + [card for card in range(52) if card not in order]


def snapshot(game: object) -> dict:
    state = {key: copy.deepcopy(value) for key, value in vars(game).items() if key != "rng"}
    state["rng"] = game.rng.getstate()  # type: ignore[attr-defined]
    return state


def events_of(game, kind: str) -> list[dict]:
    return [event for event in game.events if event["type"] == kind]


def push_all(game, moves: list[tuple[int, object]]) -> None:
    for seat, move in moves:
        game.push(seat, move)


def finish_round_without_rebid(game: OhSevenGame, rng: random.Random) -> None:
    """Play the current Oh-Seven round out at random, choosing bids that force no re-bid."""
    start = game.round
    while game.round == start and not game.is_over:
        if game.phase is Phase.BID:
            seats = list(game.to_act)
            chosen = {}
            for seat in seats[:-1]:
                chosen[seat] = rng.choice(list(game.legal_moves(seat)))
            last = seats[-1]
            for card in game.legal_moves(last):
                cards = [*chosen.values(), card]
                keys = sorted(((c % 8) * 4 + c // 8 for c in cards), reverse=True)
                if sum(c % 8 for c in cards) != 7 and keys[0] != keys[1]:
                    chosen[last] = card
                    break
            else:
                raise AssertionError("no bid avoids a re-bid")
            for seat in seats:
                game.push(seat, chosen[seat])
        else:
            seat = game.to_act[0]
            game.push(seat, rng.choice(list(game.legal_moves(seat))))


oh_seven_configs = st.tuples(
    st.just("oh-seven"),
    st.integers(2, 9),
    st.fixed_dictionaries({"passing": st.booleans(), "identical_top_bonus": st.booleans()}),
)
oh_hell_configs = st.tuples(
    st.just("oh-hell"),
    st.integers(3, 7),
    st.fixed_dictionaries(
        {
            "hand_order": st.sampled_from(["up", "down", "up-down", "down-up"]),
            "must_trump": st.booleans(),
            "miss_scores_tricks": st.booleans(),
            "zero_bid_bonus": st.booleans(),
        }
    ).flatmap(
        lambda options: st.sampled_from(
            [options, {**options, "hook": True}, {**options, "simultaneous_bids": True}]
        )
    ),
)
configs = st.one_of(oh_seven_configs, oh_hell_configs)
seeds = st.integers(0, 2**32 - 1)
