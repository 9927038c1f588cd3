"""The engine's speed machinery: tables built once and shared by every game (all immutable),
the shuffle and the seeded generator.

Its names are the engine's own (``game``, ``oh_seven``, ``oh_hell``, ``wire``, ``positions``
import them), not the package's API: ``PASS``/``PLAY``/``BID``/``OVER`` (the phases as plain
globals), ``unique``, ``seat_of_move``, ``BID_RANGE``, ``seat_tables``, ``deck_tables``
(``DeckTables``), ``shuffle`` and ``seeded``."""

from __future__ import annotations

import _random
import random
from collections.abc import Iterable

from .cards import Deck
from .names import trick_strength
from .options import Phase
from .values import MoveRecord

# Phase members as plain globals for the hot path: ``Phase.PLAY`` is a slow enum lookup.
PASS, PLAY, BID, OVER = Phase.PASS, Phase.PLAY, Phase.BID, Phase.OVER


def unique(cards: Iterable[int]) -> tuple[int, ...]:
    """``cards`` without repeats, in order."""
    return tuple(dict.fromkeys(cards))


def seat_of_move(move: MoveRecord) -> int:
    """The seat that made a recorded move."""
    return move[0]


# -- tables built once and shared by every game (all are immutable)

#: ``BID_RANGE[k]`` is ``(0, 1, ..., k)``: the Oh Hell bids of a hand of ``k`` cards.
BID_RANGE = tuple(tuple(range(k + 1)) for k in range(54))
_SEAT_TABLES: dict[int, tuple[tuple[tuple[int], ...], tuple[tuple[int], ...], tuple[int, ...]]] = {}


def seat_tables(
    players: int,
) -> tuple[tuple[tuple[int], ...], tuple[tuple[int], ...], tuple[int, ...]]:
    """The usual values of ``to_act``: ``(seat,)`` and ``((seat + 1) % players,)`` per seat, and
    every seat."""
    tables = _SEAT_TABLES.get(players)
    if tables is None:
        tables = _SEAT_TABLES[players] = (
            tuple((s,) for s in range(players)),
            tuple(((s + 1) % players,) for s in range(players)),
            tuple(range(players)),
        )
    return tables


class DeckTables:
    """Tables for every deck of one shape, built once: see :func:`deck_tables`."""

    __slots__ = ("suit_of", "suit_start", "trick_keys", "cards")

    def __init__(self, deck: Deck) -> None:
        ranks, size = deck.ranks, deck.size
        #: the suit of each card
        self.suit_of = tuple(card // ranks for card in range(size))
        #: the first card of each suit, and the deck size: suit ``s`` is
        #: ``range(suit_start[s], suit_start[s + 1])``
        self.suit_start = tuple(suit * ranks for suit in range(deck.suits + 1))
        #: trick keys by trump (or None) then led suit: each card's
        #: :func:`~.names.trick_strength`; the first card of a trick with the highest key
        #: takes it (a later identical card, two decks, does not beat the first)
        self.trick_keys = {
            trump: tuple(
                tuple(
                    trick_strength(suit, card % ranks, led, trump)
                    for card, suit in enumerate(self.suit_of)
                )
                for led in range(deck.suits)
            )
            for trump in (None, *range(deck.suits))
        }
        #: the cards in order, to copy and shuffle
        self.cards = list(range(size))


_DECK_TABLES: dict[tuple[int, int], DeckTables] = {}


def deck_tables(deck: Deck) -> DeckTables:
    """The tables of ``deck``'s shape (they depend on nothing else)."""
    key = (deck.ranks, deck.suits)
    tables = _DECK_TABLES.get(key)
    if tables is None:
        tables = _DECK_TABLES[key] = DeckTables(deck)
    return tables


def trick_keys(deck: Deck, trump: int | None, led: int) -> tuple[int, ...]:
    """Each card's :func:`~.names.trick_strength` in a trick of ``deck`` led in suit ``led``
    under ``trump`` (None: no trump), by card: the card with the highest key takes it."""
    return deck_tables(deck).trick_keys[trump][led]


_SHUFFLE_STEPS: dict[int, tuple[tuple[int, int], ...]] = {}


def shuffle(rng: random.Random, cards: list[int]) -> None:
    """``rng.shuffle(cards)``: the same draws in the same order, so the same result and state.

    ``random.Random.shuffle`` swaps ``cards[i]`` with ``cards[_randbelow(i + 1)]`` for ``i``
    from the top down, and ``_randbelow(n)`` draws ``getrandbits(n.bit_length())`` until the
    draw is below ``n``; this does exactly that with the bit lengths looked up.
    """
    steps = _SHUFFLE_STEPS.get(len(cards))
    if steps is None:
        steps = _SHUFFLE_STEPS[len(cards)] = tuple(
            (i, (i + 1).bit_length()) for i in reversed(range(1, len(cards)))
        )
    getrandbits = rng.getrandbits
    for i, bits in steps:
        j = getrandbits(bits)
        while j > i:
            j = getrandbits(bits)
        cards[i], cards[j] = cards[j], cards[i]


_new_random = random.Random.__new__
_seed_random = _random.Random.seed


def seeded(seed: int) -> random.Random:
    """``random.Random(seed)``, the same state, seeded directly for an int (``Random.seed`` does
    the same, through a Python method)."""
    if type(seed) is not int:
        return random.Random(seed)
    rng = _new_random(random.Random)
    _seed_random(rng, seed)
    rng.gauss_next = None  # type: ignore[attr-defined]  # what Random.seed resets
    return rng
