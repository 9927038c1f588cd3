"""Oh Hell's rules (core/oh_hell.py) against /shared/rules.md, in hand-worked scenarios: the
hands of each round, the bids (the hook, simultaneous bids) and the play."""

from __future__ import annotations

import random

import pytest
from conftest import play_random
from game_helpers import HELL, SUITS, ch, events_of, push_all, snapshot, stack_hell
from ohseven.core.rules import (
    IllegalMoveError,
    MalformedMoveError,
    OhHellGame,
    OutOfTurnError,
    Phase,
    new_game,
)

# --------------------------------------------------------------------------- Oh Hell


class TestOhHellStructure:
    @pytest.mark.parametrize(("players", "hands"), [(3, 15), (4, 13), (5, 10), (6, 8), (7, 7)])
    def test_hands_per_player_count(self, players, hands):
        """Hand k deals k cards to everyone, 1 up to the number set by the player count."""
        game = play_random(new_game("oh-hell", players, players), random.Random(players))
        sizes = [event["hand_size"] for event in events_of(game, "round")]
        assert sizes == list(range(1, hands + 1))
        assert len(events_of(game, "score")) == hands

    @pytest.mark.parametrize(
        ("order", "sizes"),
        [
            ("up", [*range(1, 14)]),
            ("down", [*range(13, 0, -1)]),
            ("up-down", [*range(1, 14), *range(12, 0, -1)]),
            ("down-up", [*range(13, 0, -1), *range(2, 14)]),
        ],
    )
    def test_hand_orders(self, order, sizes):
        """The four hand orders with 4 players (13 hands at most)."""
        game = play_random(new_game("oh-hell", 4, 1, {"hand_order": order}), random.Random(1))
        assert [event["hand_size"] for event in events_of(game, "round")] == sizes

    def test_dealer_rotates_left(self):
        """The deal passes to the left after each hand."""
        game = play_random(OhHellGame(4, 2, first_dealer=2), random.Random(2))
        assert [e["dealer"] for e in events_of(game, "round")] == [(2 + i) % 4 for i in range(13)]

    def test_first_dealer_drawn_from_seed(self):
        """Without first_dealer the seed decides the first dealer, the same for the same seed."""
        dealers = {OhHellGame(5, seed).dealer for seed in range(40)}
        assert dealers == set(range(5))
        assert OhHellGame(5, 9).dealer == OhHellGame(5, 9).dealer

    def test_deal_from_dealers_left_and_turn_up(self):
        """Card i goes to seat (dealer + 1 + i) % n; the next card is turned up as trump."""
        order = ch("2C 3C 4C 5C 9H") + [c for c in range(52) if c not in ch("2C 3C 4C 5C 9H")]
        game = OhHellGame(4, 0, first_dealer=1, stacked_decks=[order])
        assert game.hands == [ch("4C"), ch("5C"), ch("2C"), ch("3C")]
        assert game.trump_card == HELL.parse("9H")
        assert game.trump == SUITS.index("H")
        round_event = events_of(game, "round")[0]
        assert (round_event["trump_card"], round_event["trump"]) == ("9H", "H")
        assert all(game.trump_card not in hand for hand in game.hands)

    def test_last_hand_without_trump(self):
        """Every hand but the last has a trump; the last is played without."""
        game = play_random(new_game("oh-hell", 3, 4), random.Random(4))
        trumps = [event["trump"] for event in events_of(game, "round")]
        assert None not in trumps[:-1]
        assert trumps[-1] is None

    def test_no_trump_when_no_card_left(self):
        """4 players, 13 cards each: all 52 dealt, no card to turn, no trump."""
        game = new_game("oh-hell", 4, 0, {"hand_order": "down"})
        assert game.hand_size == 13
        assert game.trump is None and game.trump_card is None
        play_random(game, random.Random(0), stop=lambda g: g.round == 1)
        assert game.hand_size == 12 and game.trump is not None

    def test_trump_on_last_hand_table_override(self):
        """The trump_on_last_hand table option turns a card up on the last hand too."""
        game = OhHellGame(3, 0, hand_sizes=(2,), trump_on_last_hand=True)
        assert game.trump is not None
        assert OhHellGame(3, 0, hand_sizes=(2,)).trump is None


class TestOhHellBidding:
    def test_sequential_bidding_from_dealers_left(self):
        """Bids go clockwise from the dealer's left, the dealer last; others are out of turn."""
        game = OhHellGame(4, 0, first_dealer=1)
        order = []
        while game.phase is Phase.BID:
            (seat,) = game.to_act
            wrong = (seat + 1) % 4
            with pytest.raises(OutOfTurnError):
                game.push(wrong, 0)
            order.append(seat)
            game.push(seat, 0)
        assert order == [2, 3, 0, 1]
        assert [e["seat"] for e in events_of(game, "bid")] == [2, 3, 0, 1]
        assert game.to_act == (2,)  # left of the dealer leads

    def test_bid_range(self):
        """Bids run 0..hand size; others are illegal, non-ints and bools malformed."""
        game = OhHellGame(3, 0, hand_sizes=(4,), first_dealer=2)
        assert game.legal_moves(0) == (0, 1, 2, 3, 4)
        with pytest.raises(IllegalMoveError, match="out of range 0..4"):
            game.push(0, 5)
        with pytest.raises(IllegalMoveError, match="out of range"):
            game.push(0, -1)
        for bad in (True, "1", 1.0, None):
            with pytest.raises(MalformedMoveError):
                game.push(0, bad)

    def test_hook_restricts_the_dealer(self):
        """With hook on, the dealer may not make the bids total the number of tricks."""
        game = OhHellGame(4, 0, {"hook": True}, hand_sizes=(3,), first_dealer=3)
        push_all(game, [(0, 1), (1, 0)])
        assert game.legal_moves(2) == (0, 1, 2, 3)  # not the dealer: unrestricted
        game.push(2, 1)
        assert game.legal_moves(3) == (0, 2, 3)
        before = snapshot(game)
        with pytest.raises(IllegalMoveError, match="hook"):
            game.push(3, 1)
        assert snapshot(game) == before

    def test_hook_free_when_total_already_exceeds(self):
        """When the others already bid more than the tricks, the dealer is unrestricted."""
        game = OhHellGame(3, 0, {"hook": True}, hand_sizes=(2,), first_dealer=2)
        push_all(game, [(0, 2), (1, 1)])
        assert game.legal_moves(2) == (0, 1, 2)

    def test_no_hook_by_default(self):
        """Without hook the dealer may bid anything."""
        game = OhHellGame(3, 0, hand_sizes=(2,), first_dealer=2)
        push_all(game, [(0, 1), (1, 0)])
        assert game.legal_moves(2) == (0, 1, 2)

    def test_simultaneous_bids(self):
        """Everyone bids at once; the bids are revealed together after the last one."""
        game = OhHellGame(4, 0, {"simultaneous_bids": True}, hand_sizes=(2,), first_dealer=0)
        assert game.to_act == (0, 1, 2, 3)
        push_all(game, [(3, 1), (0, 2), (2, 0)])
        assert not events_of(game, "bids") and not events_of(game, "bid")
        with pytest.raises(OutOfTurnError):
            game.push(3, 0)
        game.push(1, 1)
        assert events_of(game, "bids") == [{"type": "bids", "bids": [2, 1, 0, 1]}]
        assert game.phase is Phase.PLAY and game.to_act == (1,)


class TestOhHellPlay:
    HANDS = ["4D 9S QC", "AH KC 2D", "3H 3D 5C"]  # noqa: RUF012
    BIDS = [(1, 1), (2, 0), (0, 1)]  # noqa: RUF012

    def game(self, **options) -> OhHellGame:
        """3 players, dealer 0, spades trump (2S turned), 3 cards each; bids 1, 0, 1."""
        game = OhHellGame(
            3,
            0,
            options,
            hand_sizes=(3, 3),
            first_dealer=0,
            stacked_decks=[stack_hell(self.HANDS, 0, "2S")],
        )
        assert [sorted(h) for h in game.hands] == [sorted(ch(h)) for h in self.HANDS]
        push_all(game, self.BIDS)
        return game

    def test_follow_suit(self):
        """AH led: seat 2 holds 3H and must play it."""
        game = self.game()
        game.push(1, HELL.parse("AH"))
        assert game.legal_moves(2) == tuple(ch("3H"))
        with pytest.raises(IllegalMoveError, match="must follow H"):
            game.push(2, HELL.parse("3D"))

    def test_ace_high_and_trump_beats_led_suit(self):
        """AH beats 3H; a void seat's 9S (trump) beats both."""
        game = self.game()
        push_all(game, [(1, HELL.parse("AH")), (2, HELL.parse("3H")), (0, HELL.parse("4D"))])
        assert events_of(game, "trick")[-1]["winner"] == 1
        game = self.game()
        push_all(game, [(1, HELL.parse("AH")), (2, HELL.parse("3H")), (0, HELL.parse("9S"))])
        assert events_of(game, "trick")[-1]["winner"] == 0
        assert game.to_act == (0,)

    def test_must_trump(self):
        """With must_trump a void seat holding a trump must play one; without, anything."""
        game = self.game()
        push_all(game, [(1, HELL.parse("AH")), (2, HELL.parse("3H"))])
        assert sorted(game.legal_moves(0)) == sorted(ch("4D 9S QC"))
        game = self.game(must_trump=True)
        push_all(game, [(1, HELL.parse("AH")), (2, HELL.parse("3H"))])
        assert game.legal_moves(0) == tuple(ch("9S"))
        with pytest.raises(IllegalMoveError, match="or trump"):
            game.push(0, HELL.parse("4D"))

    SCRIPT = "AH 3H 9S QC KC 5C 2D 3D 4D"  # tricks: seat 0, seat 1, seat 0

    @pytest.mark.parametrize(
        ("options", "points"),
        [
            ({}, [0, 11, 10]),
            ({"miss_scores_tricks": True}, [2, 11, 10]),
            ({"zero_bid_bonus": True}, [0, 11, 8]),
            ({"miss_scores_tricks": True, "zero_bid_bonus": True}, [2, 11, 8]),
        ],
    )
    def test_scoring(self, options, points):
        """Made: 10 + tricks (zero_bid_bonus: a made 0 scores 5 + hand size); missed: 0 or
        (miss_scores_tricks) the tricks won."""
        game = self.game(**options)
        for card in ch(self.SCRIPT):
            game.push(game.to_act[0], card)
        score = events_of(game, "score")[0]
        assert score["tricks"] == [2, 1, 0]
        assert score["bids"] == [1, 1, 0]
        assert score["points"] == points
