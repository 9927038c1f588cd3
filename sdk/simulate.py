"""Monte Carlo helpers: deal the unseen cards, and play the round out on the rules engine.

:func:`sample_hands` deals the cards a bot cannot see to the other seats, consistently with
everything its :class:`~ohseven.sdk.view.View` knows (hand sizes, suits a seat is out of, cards
shown as bids or passed to a seat, two copies per card with two decks). :func:`playout` plays
the rest of the round from a sampled deal on the referee's own engine
(:func:`ohseven.core.rules.position_game`) with a fast bid-aware policy for every seat, and
returns the round's points. :func:`evaluate_plays` and :func:`evaluate_bids` average playouts
over sampled deals within a time budget.

Cards are names (``"5H"``) in the view and small ints in the engine; :func:`deck_of` converts.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, cast

from ..core.cards import OH_HELL_DECK, OH_SEVEN_DECK, Deck
from ..core.precomputed import trick_keys
from ..core.rules import Game, Rules, position_game
from ..core.values import WireChoice
from .view import OH_SEVEN, SUITS, View, rank

__all__ = [
    "SampleError",
    "deck_of",
    "rules_of",
    "sample_hands",
    "greedy_play",
    "playout",
    "evaluate_plays",
    "evaluate_bids",
    "estimate_tricks",
]

Policy = Callable[[Game, int, random.Random], int]


class SampleError(ValueError):
    """No deal of the unseen cards fits what the view knows (the view is inconsistent)."""


def deck_of(view: View) -> Deck:
    """The engine's deck for the view's game."""
    return OH_SEVEN_DECK if view.game == OH_SEVEN else OH_HELL_DECK


_RULES_CACHE: dict[tuple[str, tuple[tuple[str, Any], ...]], Rules] = {}


def rules_of(view: View) -> Rules:
    """The validated engine :class:`Rules` of the view's game (cached)."""
    assert view.game is not None
    key = (view.game, tuple(sorted(view.rules.items())))
    rules = _RULES_CACHE.get(key)
    if rules is None:
        rules = _RULES_CACHE[key] = Rules.make(view.game, view.rules)
    return rules


# --------------------------------------------------------------------------- sampling


def sample_hands(view: View, rng: random.Random) -> list[list[str]]:
    """A random deal of the unseen cards to the other seats, consistent with the view.

    Returns one list of card names per seat: the own seat gets its real hand, every other seat
    exactly as many cards as it holds, including the cards known to be in its hand, and never
    a card of a suit it is known to be out of. The unseen cards left over are the ones nobody
    holds (not dealt, or the Oh Hell stock). Raises :class:`SampleError` when nothing fits.
    """
    me = view.seat
    n = view.players
    pool = Counter(view.unseen_cards())
    hands: list[list[str]] = [[] for _ in range(n)]
    hands[me] = list(view.hand)
    need = [0] * n
    for s in range(n):
        if s == me:
            continue
        known = view.known(s)
        for card in known:
            if pool[card] <= 0:
                raise SampleError(f"seat {s}: known card {card} is not among the unseen cards")
            pool[card] -= 1
        hands[s] = known
        need[s] = view.hand_count(s) - len(known)
        if need[s] < 0:
            raise SampleError(f"seat {s}: {len(known)} known cards exceed its hand")
    cards = list((+pool).elements())
    voids = view.voids
    seats = sorted((s for s in range(n) if need[s] > 0), key=lambda s: -len(voids[s]))
    for _ in range(20):
        rng.shuffle(cards)
        deal = _greedy(cards, seats, need, voids)
        if deal is not None:
            break
    else:
        deal = _exact(cards, seats, need, voids, rng)
    for s, got in deal.items():
        hands[s] = hands[s] + got
    return hands


def _greedy(
    cards: list[str], seats: list[int], need: list[int], voids: list[set[str]]
) -> dict[int, list[str]] | None:
    taken = [False] * len(cards)
    deal: dict[int, list[str]] = {}
    for s in seats:
        void = voids[s]
        want = need[s]
        got = []
        for i, card in enumerate(cards):
            if not taken[i] and card[1] not in void:
                taken[i] = True
                got.append(card)
                want -= 1
                if not want:
                    break
        if want:
            return None
        deal[s] = got
    return deal


def _exact(
    cards: list[str],
    seats: list[int],
    need: list[int],
    voids: list[set[str]],
    rng: random.Random,
) -> dict[int, list[str]]:
    """Card by card, keeping Hall's condition (per set of suits) true for the rest."""
    left = {s: need[s] for s in seats}
    by_suit = {x: [c for c in cards if c[1] == x] for x in SUITS}
    for cards_of in by_suit.values():
        rng.shuffle(cards_of)
    subsets = [frozenset(x for i, x in enumerate(SUITS) if m >> i & 1) for m in range(1, 16)]

    def feasible() -> bool:
        # every seat must be filled from suits it accepts: demand(T) <= supply(accepted by T)
        for suits in subsets:
            demand = sum(k for s, k in left.items() if k and SUITS_SET - voids[s] <= suits)
            if demand > sum(len(by_suit[x]) for x in suits):
                return False
        return True

    if not feasible():
        raise SampleError(f"no deal fits the known voids {voids} and hand sizes {need}")
    deal: dict[int, list[str]] = {s: [] for s in seats}
    for s in seats:
        while left[s]:
            options = [x for x in SUITS if by_suit[x] and x not in voids[s]]
            rng.shuffle(options)
            for x in options:
                card = by_suit[x].pop()
                left[s] -= 1
                if feasible():
                    deal[s].append(card)
                    break
                by_suit[x].append(card)
                left[s] += 1
            else:  # pragma: no cover - feasible() held before, so some suit works
                raise SampleError("no deal fits the view")
    return deal


SUITS_SET = frozenset(SUITS)


# --------------------------------------------------------------------------- playouts


def greedy_play(game: Game, seat: int, rng: random.Random) -> int:
    """A fast bid-aware play: win cheaply while under the bid, duck once it is made."""
    legal = cast(Sequence[int], game.legal_moves(seat))  # plays: a tuple
    if len(legal) == 1:
        return legal[0]
    ranks = game.deck.ranks
    trump = game.trump
    bid = game.bids[seat]
    need = (bid if bid is not None else 0) - game.tricks_won[seat]

    def strength(card: int) -> int:
        return card % ranks + (ranks if card // ranks == trump else 0)

    trick = game.trick
    if not trick:
        if need > 0:
            return max(legal, key=strength)
        return min(legal, key=strength)
    keys = trick_keys(game.deck, trump, trick[0] // ranks)  # the core's rule
    best = max(keys[card] for card in trick)
    winners = [c for c in legal if keys[c] > best]
    if need > 0:
        if winners:
            if len(trick) == game.players - 1:
                return min(winners, key=strength)
            return max(winners, key=strength)
        return min(legal, key=strength)
    losers = [c for c in legal if c not in winners]
    if losers:
        return max(losers, key=strength)
    return max(winners, key=strength)


def _position(
    view: View, hands_names: Sequence[Sequence[str]], bids: Sequence[int], seed: int = 0
) -> Game:
    deck = deck_of(view)
    parse = deck.index
    trump = None if view.trump is None else SUITS.index(view.trump)
    trick = view.trick
    leader = trick[0][0] if trick else view.leader
    assert leader is not None
    return position_game(
        rules_of(view),
        view.players,
        hands=[[parse[c] for c in hand] for hand in hands_names],
        trump=trump,
        leader=leader,
        trick=[parse[c] for _, c in trick],
        bids=list(bids),
        tricks_won=list(view.tricks_won),
        seed=seed,
    )


def _finish(game: Game, rng: random.Random, policy: Policy) -> list[int]:
    push = game.push
    while not game.is_over:
        seat = game.to_act[0]
        push(seat, policy(game, seat, rng))
    return list(game.scores)


def playout(
    view: View,
    hands: Sequence[Sequence[str]],
    rng: random.Random,
    *,
    first: str | None = None,
    bids: Sequence[int | None] | None = None,
    policy: Policy = greedy_play,
) -> list[int]:
    """Play the round out from the view's position with ``hands``; the round's points per seat.

    ``first`` is the card the seat to act plays first (default: the policy's choice); ``bids``
    defaults to the view's bids (all must be known).
    """
    known = list(view.bids if bids is None else bids)
    if None in known:
        raise ValueError(f"playout needs every bid, got {known}")
    game = _position(view, hands, cast(list[int], known))
    if first is not None:
        game.push(game.to_act[0], deck_of(view).index[first])
    return _finish(game, rng, policy)


def _objective(points: Sequence[int], me: int) -> float:
    others = [p for s, p in enumerate(points) if s != me]
    return points[me] - 0.25 * sum(others) / max(1, len(others))


def evaluate_plays(
    view: View,
    rng: random.Random,
    *,
    budget_s: float = 0.2,
    max_samples: int = 1000,
    min_samples: int = 1,
) -> dict[str, float]:
    """The mean value of each legal play over sampled deals (own points, less a quarter of the
    others' mean), sampling until ``budget_s`` seconds or ``max_samples`` deals."""
    legal = list(dict.fromkeys(view.legal))
    totals = dict.fromkeys(legal, 0.0)
    if len(legal) == 1:
        return totals
    bids = list(view.bids)
    deadline = time.perf_counter() + budget_s
    samples = 0
    me = view.seat
    while samples < max_samples and (samples < min_samples or time.perf_counter() < deadline):
        hands = sample_hands(view, rng)
        for card in legal:
            totals[card] += _objective(playout(view, hands, rng, first=card, bids=bids), me)
        samples += 1
    return {card: total / samples for card, total in totals.items()}


# --------------------------------------------------------------------------- bids


def estimate_tricks(
    hand: Sequence[str], trump: str | None, game: str | None, players: int
) -> float:
    """A quick estimate of the tricks ``hand`` wins with ``trump`` (a suit letter or None)."""
    total = 0.0
    if game == OH_SEVEN:
        top = 7
        crowd = 1.0 if players <= 3 else 0.8 if players <= 5 else 0.6
        for card in hand:
            r = rank(card)
            if card[1] == trump:
                total += 1.0 if r >= 6 else 0.75 if r >= 4 else 0.45
            elif r == top:
                total += 0.8 * crowd
            elif r == top - 1:
                total += 0.35 * crowd
    else:
        size = len(hand)
        crowd = 1.0 if players <= 4 else 0.8
        for card in hand:
            r = rank(card)  # 14 is the ace
            if card[1] == trump:
                total += 1.0 if r >= 12 else 0.7 if r >= 9 else 0.4
            elif r == 14:
                total += 0.85 * crowd
            elif r == 13 and size >= 3:
                total += 0.45 * crowd
            elif r == 12 and size >= 6:
                total += 0.15 * crowd
    return total


def _oh_seven_guess_bid(
    hand: Sequence[str], used: Sequence[str], players: int, rng: random.Random
) -> str:
    """An Oh-Seven bid card a plain heuristic player would choose (for opponent modelling)."""
    unused = Counter(hand)
    unused.subtract(used)
    options = [c for c in unused if unused[c] > 0]
    no_trump = estimate_tricks(hand, None, OH_SEVEN, players)
    best, best_gap = options[0], 99.0
    for card in options:
        r = rank(card)
        est = estimate_tricks(hand, card[1], OH_SEVEN, players) if r >= 4 else no_trump
        gap = abs(r - est) + 0.01 * rng.random()
        if gap < best_gap:
            best, best_gap = card, gap
    return best


def evaluate_bids(
    view: View,
    rng: random.Random,
    *,
    budget_s: float = 0.3,
    max_samples: int = 400,
    candidates: Sequence[WireChoice] | None = None,
) -> dict[WireChoice, float]:
    """The mean value of each candidate bid over sampled deals, playing the round out.

    Oh Hell: the other seats' missing bids are guessed with :func:`estimate_tricks` on their
    sampled hands. Oh-Seven: every other seat's bid card is guessed the same way; a bid that
    would force a re-bid is valued at its bonus point plus the sample's mean over the others.
    """
    legal = list(dict.fromkeys(view.legal if candidates is None else candidates))
    totals = dict.fromkeys(legal, 0.0)
    if len(legal) == 1:
        return totals
    deadline = time.perf_counter() + budget_s
    samples = 0
    while samples < max_samples and (samples < 1 or time.perf_counter() < deadline):
        hands = sample_hands(view, rng)
        if view.game == OH_SEVEN:
            values = _oh_seven_bid_sample(view, hands, legal, rng)
        else:
            values = _oh_hell_bid_sample(view, hands, legal, rng)
        for bid, value in values.items():
            totals[bid] += value
        samples += 1
    return {bid: total / samples for bid, total in totals.items()}


def _oh_hell_bid_sample(
    view: View, hands: list[list[str]], legal: list[WireChoice], rng: random.Random
) -> dict[WireChoice, float]:
    me, n = view.seat, view.players
    bids: list[int] = []
    for s in range(n):
        b = view.bids[s]
        if b is None:
            b = 0 if s == me else round(estimate_tricks(hands[s], view.trump, view.game, n))
        bids.append(int(b))
    values = {}
    for bid in legal:
        bids[me] = int(bid)
        values[bid] = _objective(playout(view, hands, rng, bids=bids), me)
    return values


def _oh_seven_bid_sample(
    view: View, hands: list[list[str]], legal: list[WireChoice], rng: random.Random
) -> dict[WireChoice, float]:
    me, n = view.seat, view.players
    used: list[list[str]] = [[] for _ in range(n)]
    for attempt in view.bid_attempts:
        for s, card in enumerate(attempt["cards"]):
            used[s].append(card)
    cards = ["" if s == me else _oh_seven_guess_bid(hands[s], used[s], n, rng) for s in range(n)]
    values: dict[WireChoice, float] = {}
    forced: list[tuple[WireChoice, float]] = []
    for card in legal:
        cards[me] = str(card)  # an Oh-Seven bid: a card name
        keys = [rank(c) * 4 + SUITS.index(c[1]) for c in cards]
        top_key = max(keys)
        tops = [s for s in range(n) if keys[s] == top_key]
        total = sum(rank(c) for c in cards)
        if total == 7 or len(tops) > 1:
            scores = me in tops and (total == 7 or view.rules.get("identical_top_bonus", True))
            forced.append((card, 1.0 if scores else 0.0))
            continue
        top = tops[0]
        view_trump, view_leader = view.trump, view.leader
        view.trump, view.leader = cards[top][1], top
        try:
            points = playout(view, hands, rng, bids=[rank(c) for c in cards])
        finally:
            view.trump, view.leader = view_trump, view_leader
        values[card] = _objective(points, me)
    baseline = sum(values.values()) / len(values) if values else 0.0
    for card, bonus in forced:
        values[card] = bonus + baseline
    return values
