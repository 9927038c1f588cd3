"""Differential test of the Oh Hell engine against OpenSpiel's ``oh_hell``.

OpenSpiel plays one hand of Oh Hell with the hook on and ``miss_scores_tricks`` scoring (exact:
10 + tricks, missed: tricks). Both engines get the same deal and the same decisions; at every
step they must agree on whose turn it is and on the legal bids or plays, after every trick on
its winner and on the tricks won so far, and at the end on the scores.

The mapping between the two, read from OpenSpiel's ``oh_hell.cc``:

- cards: OpenSpiel numbers a card ``rank * num_suits + suit`` with suits ordered C, D, S, H and
  rank 0 the lowest (``"2"``); ours is ``suit * ranks + rank`` with suits C, D, H, S. Each side's
  names (``"SA"`` there, ``"AS"`` here) are checked against the mapping below.
- seats: player p is seat p on both sides; both go clockwise to p + 1.
- the deal: OpenSpiel's chance events are the number of tricks, the dealer, then the cards; the
  i-th card dealt goes to player ``i % players`` whoever deals, and the next card turned up
  is trump. Ours deals card i of a stacked deck to seat ``(dealer + 1 + i) % players`` and turns
  up card ``hand * players``, so the stacked order is built to give every seat the same hand.
- bids: OpenSpiel's bid action is ``num_cards + tricks``; bidding starts left of the dealer,
  the dealer bids last and is the one the hook restricts, and the player left of the dealer
  leads the first trick.

Where the two tables legitimately differ (not tested here, by construction):

- rules.md plays the last hand of a game without trump; OpenSpiel plays a single hand that
  always has one, so our side passes ``trump_on_last_hand=True``.
- OpenSpiel also allows 1 to 3 suits (``num_suits``); our decks always have four suits, so only
  ``num_suits=4`` is compared.
"""

from __future__ import annotations

import random

import pyspiel
import pytest
from ohseven.core.rules import OhHellGame, Phase

OS_SUITS = "CDSH"  # OpenSpiel's suit order
OUR_SUITS = "CDHS"
RANK_LABELS = "23456789TJQKA"
OPTIONS = {"hook": True, "miss_scores_tricks": True}


def to_ours(os_card: int, ranks: int) -> int:
    """Our card for OpenSpiel's card ``os_card`` in a deck of four suits of ``ranks`` ranks."""
    rank, os_suit = divmod(os_card, 4)
    return OUR_SUITS.index(OS_SUITS[os_suit]) * ranks + rank


def to_openspiel(card: int, ranks: int) -> int:
    """OpenSpiel's card for our card ``card``."""
    suit, rank = divmod(card, ranks)
    return rank * 4 + OS_SUITS.index(OUR_SUITS[suit])


class Table:
    """One hand played side by side on both engines."""

    def __init__(self, players: int, ranks: int, hand: int, dealer: int, rng: random.Random):
        self.players, self.ranks, self.hand, self.rng = players, ranks, hand, rng
        self.num_cards = 4 * ranks
        game = pyspiel.load_game(
            "oh_hell",
            {
                "players": players,
                "num_suits": 4,
                "num_cards_per_suit": ranks,
                "num_tricks_fixed": hand,
            },
        )
        self.theirs = game.new_initial_state()
        assert self.theirs.legal_actions() == [hand]
        self.theirs.apply_action(hand)
        self.theirs.apply_action(dealer)
        dealt = rng.sample(range(self.num_cards), players * hand + 1)
        for card in dealt:
            self.theirs.apply_action(card)
        # Seat s holds OpenSpiel's cards dealt at positions s, s + n, ...; our stacked deck
        # gives position i to seat (dealer + 1 + i) % n, so fill each position from that seat.
        hands = [
            [to_ours(c, ranks) for c in dealt[s : players * hand : players]] for s in range(players)
        ]
        order = [hands[(dealer + 1 + i) % players].pop() for i in range(players * hand)]
        trump = to_ours(dealt[-1], ranks)
        rest = [c for c in range(self.num_cards) if c not in order and c != trump]
        rng.shuffle(rest)
        self.ours = OhHellGame(
            players,
            0,
            OPTIONS,
            ranks=ranks,
            hand_sizes=(hand,),
            first_dealer=dealer,
            trump_on_last_hand=True,
            stacked_decks=[order + [trump] + rest],
        )
        self.trump_card = trump

    def tricks_won(self) -> list[int]:
        """OpenSpiel's tricks won so far, read from its state string."""
        line = next(x for x in str(self.theirs).splitlines() if x.startswith("Tricks Won:"))
        return [int(x) for x in line.split(":")[1].split()]

    def step(self) -> None:
        """Check both engines agree on the next decision, then make one at random."""
        ours, theirs = self.ours, self.theirs
        seat = theirs.current_player()
        assert ours.to_act == (seat,), (ours.to_act, seat, str(theirs))
        legal = theirs.legal_actions()
        if ours.phase is Phase.BID:
            assert sorted(ours.legal_moves(seat)) == [a - self.num_cards for a in legal]
            action = self.rng.choice(legal)
            ours.push(seat, action - self.num_cards)
            theirs.apply_action(action)
            return
        assert ours.phase is Phase.PLAY
        assert sorted(to_openspiel(c, self.ranks) for c in ours.legal_moves(seat)) == legal
        action = self.rng.choice(legal)
        tricks_before = sum(ours.tricks_won)
        ours.push(seat, to_ours(action, self.ranks))
        theirs.apply_action(action)
        if sum(ours.tricks_won) > tricks_before:
            winner = next(e for e in reversed(ours.events) if e["type"] == "trick")["winner"]
            assert self.tricks_won() == ours.tricks_won
            if not theirs.is_terminal():
                assert theirs.current_player() == winner == ours.to_act[0]

    def play(self) -> None:
        """Play the hand out and compare the final scores."""
        assert self.ours.trump == self.trump_card // self.ranks
        while not self.theirs.is_terminal():
            assert not self.ours.is_over
            self.step()
        assert self.ours.is_over
        assert list(self.ours.result().totals) == [int(r) for r in self.theirs.returns()]


def tables(players: int, count: int):
    """``count`` random hands for ``players``: deck sizes, hand sizes and dealers vary."""
    rng = random.Random(1000 + players)
    for _ in range(count):
        ranks = rng.randint(max(2, -(-(players + 1) // 4)), 13)
        hand = rng.randint(1, (4 * ranks - 1) // players)
        yield players, ranks, hand, rng.randrange(players), random.Random(rng.getrandbits(64))


class TestCardMapping:
    def test_names_agree(self):
        """Every OpenSpiel card name maps to our card of the same suit and rank."""
        for ranks in (2, 8, 13):
            game = pyspiel.load_game("oh_hell", {"players": 3, "num_cards_per_suit": ranks})
            state = game.new_initial_state()
            state.apply_action(1)
            state.apply_action(0)
            ours = OhHellGame(3, 0, ranks=ranks, hand_sizes=(1,))
            for os_card in range(4 * ranks):
                suit, rank = state.action_to_string(os_card)  # e.g. "SA"
                card = to_ours(os_card, ranks)
                # OpenSpiel's deck keeps the lowest ranks, ours the highest: same order.
                label = RANK_LABELS[13 - ranks + RANK_LABELS.index(rank)]
                assert ours.card_name(card) == label + suit
                assert to_openspiel(card, ranks) == os_card


class TestSameHands:
    @pytest.mark.parametrize("players", [3, 4, 5, 6, 7])
    def test_random_hands_agree(self, players):
        """Random hands: same turns, legal bids and plays, trick winners and scores."""
        for table in tables(players, 400):
            Table(*table).play()

    def test_hook_binds_the_dealer(self):
        """Hands where the hook must forbid a bid for the dealer are among those compared."""
        forbidden = 0
        for table in tables(4, 80):
            t = Table(*table)
            while t.theirs.current_player() != t.ours.dealer:
                t.step()
            forbidden += len(t.ours.legal_moves(t.ours.dealer)) == t.hand
            t.play()
        assert forbidden > 0
