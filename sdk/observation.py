"""The learning interface's one encoding: a seat's view as a fixed-size vector, and the fixed
discrete action space (bids, cards, passes). The environment (``ohseven.env``) and
:class:`~ohseven.sdk.policy.PolicyBot` both build their observations here, from a
:class:`~ohseven.sdk.view.View` folded from the seat's events, so a policy trained in the
environment sees the same numbers in a sandboxed match. Pure Python: no numpy needed.

**Actions** (``ACTIONS`` = 68, the same for both games and every table):

- ``0 .. 51``: a card, slot ``13 * suit + rank`` (suits C, D, H, S; ranks in the game's order,
  lowest first: Oh-Seven ``0`` .. ``7`` use ranks 0..7 of each suit, Oh Hell ``2`` .. ``A`` use
  0..12). It plays the card, bids it (an Oh-Seven bid is a card), or passes it: a pass of ``k``
  cards is ``k`` decisions of one card each (:data:`PICKED` shows the cards chosen so far).
- ``52 .. 67``: an Oh Hell bid of ``action - 52`` tricks (0 .. 15).

**Observation** (``OBS_SIZE`` floats): the blocks of :data:`LAYOUT` in order. Seats are relative
to the observer (0: itself, 1: the next seat to its left, ...; seats past the table's size stay
0). Counts of cards are numbers of copies (two with two decks, Oh-Seven with 5+ players).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ohseven.core.names import OH_HELL, OH_SEVEN, RANKS, SUITS
from ohseven.sdk.view import View

__all__ = [
    "ACTIONS",
    "BID_BASE",
    "CARD_SLOTS",
    "LAYOUT",
    "MAX_BID",
    "MAX_SEATS",
    "OBS_SIZE",
    "EncodeError",
    "action_mask",
    "action_to_move",
    "card_slot",
    "encode",
    "legal_actions",
    "observation",
    "offsets",
    "slot_name",
]

CARD_SLOTS = 52
MAX_BID = 15
BID_BASE = CARD_SLOTS
ACTIONS = BID_BASE + MAX_BID + 1
MAX_SEATS = 9
_HAND_ORDERS = ("up", "down", "up-down", "down-up")
_FLAGS = (
    "passing",
    "identical_top_bonus",
    "hook",
    "simultaneous_bids",
    "must_trump",
    "miss_scores_tricks",
    "zero_bid_bonus",
)

#: (block, size, meaning), in the order of the vector
LAYOUT: tuple[tuple[str, int, str], ...] = (
    ("game", 2, "one-hot: oh-seven, oh-hell"),
    ("players", MAX_SEATS, "one-hot: index players - 1"),
    ("rules", len(_FLAGS) + 4, "the options " + ", ".join(_FLAGS) + "; hand_order one-hot"),
    ("decision", 3, "one-hot: pass, bid, play (all 0: no decision owed)"),
    (
        "scalars",
        9,
        "round / rounds, hand size / 15, cards held / 15, Oh-Seven bid attempt of this deal / 7, "
        "redeals of this round / 7, cards to pass / 3, cards picked / 3, cards in the trick / "
        "players, pass goes left (1) or right (0)",
    ),
    ("trump", 5, "one-hot: C, D, H, S, no trump (all 0: not known yet)"),
    ("trump_card", CARD_SLOTS, "the turned-up card (Oh Hell)"),
    ("hand", CARD_SLOTS, "own cards"),
    ("picked", CARD_SLOTS, "cards picked so far for the pass being decided"),
    ("passed", CARD_SLOTS, "cards this seat passed this round"),
    ("received", CARD_SLOTS, "cards this seat received this round"),
    ("used_bids", CARD_SLOTS, "own cards already shown as a bid this deal (Oh-Seven)"),
    ("seen", CARD_SLOTS, "cards played this round"),
    ("bids", 2 * MAX_SEATS, "per relative seat: bid known (1), bid / 15"),
    ("tricks_won", MAX_SEATS, "per relative seat: tricks won this round / 15"),
    ("scores", MAX_SEATS, "per relative seat: game total / 100"),
    ("dealer", MAX_SEATS, "one-hot relative seat of the dealer (Oh Hell)"),
    ("leader", MAX_SEATS, "one-hot relative seat that leads (or led) the trick"),
    ("voids", 4 * MAX_SEATS, "per relative seat, per suit: known to be out of it"),
    ("trick", CARD_SLOTS * MAX_SEATS, "the current trick: per relative seat, the card it played"),
    ("known", CARD_SLOTS * MAX_SEATS, "per relative seat: cards known in its hand now"),
)


def offsets() -> dict[str, int]:
    """Each block's first index in the vector."""
    out = {}
    at = 0
    for name, size, _ in LAYOUT:
        out[name] = at
        at += size
    return out


_AT = offsets()
OBS_SIZE = sum(size for _, size, _ in LAYOUT)


class EncodeError(ValueError):
    """An action that is not legal for the decision it answers."""


def _slots(game: str) -> dict[str, int]:
    ranks = RANKS[game]
    return {r + s: 13 * i + j for i, s in enumerate(SUITS) for j, r in enumerate(ranks)}


_SLOT = {game: _slots(game) for game in (OH_SEVEN, OH_HELL)}
_NAME = {game: {slot: name for name, slot in table.items()} for game, table in _SLOT.items()}


def card_slot(game: str, card: str) -> int:
    """The action (and observation) slot of the card named ``card`` in ``game``."""
    return _SLOT[game][card]


def slot_name(game: str, slot: int) -> str:
    """The name of the card in ``slot`` in ``game``; ``KeyError`` for a slot it has no card."""
    return _NAME[game][slot]


def _decision(view: View) -> str | None:
    kind = view.kind
    return kind if kind in ("pass", "bid", "play") else None


#: id(rules dict) -> (the dict, game, players, the indices of the blocks that are fixed for
#: a game: game, players, rules); holding the dict keeps the id from being reused
_STATIC: dict[int, tuple[dict[str, Any], str, int, list[int]]] = {}


def _static(view: View, game: str, n: int) -> list[int]:
    rules = view.rules
    entry = _STATIC.get(id(rules))
    if entry is None or entry[0] is not rules or entry[1] != game or entry[2] != n:
        if len(_STATIC) >= 256:
            _STATIC.clear()
        ones = [_AT["game"] + (0 if game == OH_SEVEN else 1), _AT["players"] + n - 1]
        base = _AT["rules"]
        ones += [base + i for i, flag in enumerate(_FLAGS) if rules.get(flag)]
        order = rules.get("hand_order")
        if order in _HAND_ORDERS:
            ones.append(base + len(_FLAGS) + _HAND_ORDERS.index(order))
        entry = _STATIC[id(rules)] = (rules, game, n, ones)
    return entry[3]


_DECISION = {"pass": _AT["decision"], "bid": _AT["decision"] + 1, "play": _AT["decision"] + 2}
_TRUMP = {suit: _AT["trump"] + i for i, suit in enumerate(SUITS)}
_NO_TRUMP = _AT["trump"] + 4
_VOID = {suit: i for i, suit in enumerate(SUITS)}
(_SCALARS, _TRUMP_CARD, _HAND, _PICKED, _PASSED, _RECEIVED, _USED, _SEEN) = (
    _AT[name]
    for name in (
        "scalars",
        "trump_card",
        "hand",
        "picked",
        "passed",
        "received",
        "used_bids",
        "seen",
    )
)
(_BIDS, _WON, _SCORES, _DEALER, _LEADER, _VOIDS, _TRICK, _KNOWN) = (
    _AT[name]
    for name in ("bids", "tricks_won", "scores", "dealer", "leader", "voids", "trick", "known")
)


#: (game, a card block's first index) -> card name -> its index in the vector
_AT_CARD = {
    (game, base): {card: base + i for card, i in _SLOT[game].items()}
    for game in _SLOT
    for base in (_HAND, _SEEN, _KNOWN)
}


def encode(view: View, picked: Sequence[str] = (), out: Any = None) -> Any:
    """Write the observation of ``view`` into ``out`` and return it.

    ``out``: ``OBS_SIZE`` zeros that take item assignment (a list, an ``array.array``, a
    numpy array); by default a new list. ``picked``: the cards already chosen for the pass
    being decided. The decision is the view's pending request (:meth:`View.set_request`):
    ``kind`` None means none is owed.
    """
    game = view.game
    if game is None:
        raise EncodeError("the view has no game yet (no game event folded)")
    if out is None:
        out = [0.0] * OBS_SIZE
    slot = _SLOT[game]
    n = view.players
    me = view.seat
    for i in _static(view, game, n):
        out[i] = 1.0
    kind = view.kind
    decision = _DECISION.get(kind)  # type: ignore[arg-type]
    if decision is not None:
        out[decision] = 1.0
    hand = view.hand
    trick = view.trick
    if view.rounds:
        out[_SCALARS] = view.round / view.rounds
    out[_SCALARS + 1] = view.hand_size / MAX_BID
    out[_SCALARS + 2] = len(hand) / MAX_BID
    if view.bid_attempts:
        out[_SCALARS + 3] = len(view.bid_attempts) / 7
    if view.deal:
        out[_SCALARS + 4] = view.deal / 7
    if kind == "pass":
        out[_SCALARS + 5] = view.count / 3
        out[_SCALARS + 6] = len(picked) / 3
    out[_SCALARS + 7] = len(trick) / n
    if view.rules.get("passing") and view.round in (1, 3, 5):
        out[_SCALARS + 8] = 1.0
    trump = view.trump
    trump_card = view.trump_card
    if trump is not None:
        out[_TRUMP[trump]] = 1.0
    elif game == OH_HELL and view.hand_size and trump_card is None:
        out[_NO_TRUMP] = 1.0  # no card turned up: no trump this hand
    if trump_card is not None:
        out[_TRUMP_CARD + slot[trump_card]] = 1.0
    # a card block counts copies: two decks (Oh-Seven, 5+ players) may hold a card twice
    if n < 5 or game != OH_SEVEN:  # one deck: each card once, no need to add
        at_hand, at_seen = _AT_CARD[game, _HAND], _AT_CARD[game, _SEEN]
        at_known = _AT_CARD[game, _KNOWN]
        for card in hand:
            out[at_hand[card]] = 1.0
            out[at_known[card]] = 1.0  # own known cards: the hand
        for card in view.seen:
            out[at_seen[card]] = 1.0
    else:
        for card in hand:
            out[_HAND + slot[card]] += 1.0
            out[_KNOWN + slot[card]] += 1.0
        for card in view.seen:
            out[_SEEN + slot[card]] += 1.0
    for card in picked:
        out[_PICKED + slot[card]] += 1.0
    for card in view.passed:
        out[_PASSED + slot[card]] += 1.0
    for card in view.received:
        out[_RECEIVED + slot[card]] += 1.0
    for card in view.used_bids:
        out[_USED + slot[card]] += 1.0
    bids, won, scores, voids = view.bids, view.tricks_won, view.scores, view.voids
    shown = view._shown  # cards shown by bids and passes: the others' known cards come from them
    for s in range(n):
        r = (s - me) % n
        bid = bids[s]
        if bid is not None:
            out[_BIDS + 2 * r] = 1.0
            out[_BIDS + 2 * r + 1] = bid / MAX_BID
        if won[s]:
            out[_WON + r] = won[s] / MAX_BID
        if scores[s]:
            out[_SCORES + r] = scores[s] / 100
        for suit in voids[s]:
            out[_VOIDS + 4 * r + _VOID[suit]] = 1.0
        if s != me and shown[s]:
            base = _KNOWN + CARD_SLOTS * r
            for card in view.known(s):
                out[base + slot[card]] += 1.0
    if view.dealer is not None:
        out[_DEALER + (view.dealer - me) % n] = 1.0
    if view.leader is not None:
        out[_LEADER + (view.leader - me) % n] = 1.0
    for s, card in trick:
        out[_TRICK + CARD_SLOTS * ((s - me) % n) + slot[card]] = 1.0
    return out


def observation(view: View, picked: Sequence[str] = ()) -> list[float]:
    """The observation of ``view`` as a list of ``OBS_SIZE`` floats."""
    out: list[float] = encode(view, picked)
    return out


def legal_actions(view: View, picked: Sequence[str] = ()) -> list[int]:
    """The legal actions of the view's pending decision, ascending (empty: none owed)."""
    decision = _decision(view)
    if decision is None:
        return []
    legal: list[Any] = view.legal
    game = view.game
    assert game is not None
    if decision == "bid" and game == OH_HELL:
        return sorted(BID_BASE + int(b) for b in legal)
    slot = _SLOT[game]
    if decision == "pass":
        left = Counter(legal)
        left.subtract(picked)
        return sorted(slot[card] for card, copies in left.items() if copies > 0)
    return sorted({slot[card] for card in legal})


def action_mask(view: View, picked: Sequence[str] = ()) -> list[int]:
    """``ACTIONS`` ints: 1 for a legal action of the pending decision, else 0."""
    mask = [0] * ACTIONS
    for action in legal_actions(view, picked):
        mask[action] = 1
    return mask


def action_to_move(view: View, action: int, picked: Sequence[str] = ()) -> Any:
    """The wire value of ``action`` for the view's pending decision: a card name (a play, an
    Oh-Seven bid, one card of a pass) or an Oh Hell bid. Raises :class:`EncodeError` if the
    action is not legal."""
    if type(action) is not int:
        try:
            if int(action) != action:
                raise EncodeError(f"action {action!r} is not an integer")
        except (TypeError, ValueError):
            raise EncodeError(f"action {action!r} is not an integer") from None
        action = int(action)
    if action not in legal_actions(view, picked):
        raise EncodeError(
            f"action {action} is not legal for this {_decision(view)} decision "
            f"(legal: {legal_actions(view, picked)})"
        )
    game = view.game
    assert game is not None
    if action >= BID_BASE:
        return action - BID_BASE
    return _NAME[game][action]
