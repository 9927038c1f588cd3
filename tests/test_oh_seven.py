"""Oh-Seven's rules (core/oh_seven.py) against /shared/rules.md, in hand-worked scenarios: the
deal, the bids and re-bids, the play, the scoring and the passing.

Decisions taken where the rules text leaves room (kept here as tests):

* with ``identical_top_bonus`` off, an identical-top re-bid scores no point unless the bids
  also sum to 7; with a sum of 7 and an identical top, each tied top bidder scores 1;
* bid cards are counted as a multiset: a player holding both copies of a card (two decks)
  may bid the second copy after using the first."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from conftest import play_random
from game_helpers import (
    SUITS,
    c7,
    events_of,
    finish_round_without_rebid,
    push_all,
    snapshot,
    stack_seven,
)
from ohseven.core.rules import (
    IllegalMoveError,
    InvalidRulesError,
    OhSevenGame,
    OutOfTurnError,
    Phase,
    RulesError,
    new_game,
)

# --------------------------------------------------------------------------- Oh-Seven


class TestOhSevenDeal:
    def test_card_i_goes_to_seat_i_mod_n(self):
        """The deal hands out the deck order round the table from seat 0."""
        order = list(range(32))
        game = OhSevenGame(3, 0, stacked_decks=[order])
        for seat in range(3):
            assert game.hands[seat] == [c for c in range(21) if c % 3 == seat]

    def test_two_decks_from_five_players(self):
        """Five players use 64 cards; four players still use one 32-card deck."""
        game = OhSevenGame(5, 0, stacked_decks=[list(range(32)) * 2])
        assert sum(len(hand) for hand in game.hands) == 35
        with pytest.raises(InvalidRulesError):
            OhSevenGame(4, 0, stacked_decks=[list(range(32)) * 2])

    def test_nine_players_deal_63_of_64(self):
        """Nine players get seven cards each from two decks; only the last card is unused."""
        order = list(range(32)) * 2
        game = OhSevenGame(9, 0, stacked_decks=[order])
        dealt = Counter(card for hand in game.hands for card in hand)
        assert sum(dealt.values()) == 63
        assert Counter(order) - dealt == Counter([order[-1]])
        assert all(len(hand) == 7 for hand in game.hands)


class TestOhSevenBidding:
    HANDS3 = [  # noqa: RUF012
        "5H 3C 0D 1D 2D 4D 6D",
        "5S 4C 0H 1H 2H 3H 4H",
        "0C 1C 2C 5C 6C 7C 7D",
    ]

    def game3(self, **options) -> OhSevenGame:
        return OhSevenGame(3, 0, options, stacked_decks=[stack_seven(self.HANDS3)])

    def test_top_bid_sets_trump_and_leader(self):
        """Equal ranks are broken by suit (S > H): 5S is top, spades trump, its bidder leads."""
        game = self.game3()
        push_all(game, [(0, c7("5H")[0]), (1, c7("5S")[0]), (2, c7("0C")[0])])
        assert game.phase is Phase.PLAY
        assert game.trump == SUITS.index("S")
        assert game.to_act == (1,)
        assert game.bids == [5, 5, 0]
        assert events_of(game, "trump")[-1] == {"type": "trump", "suit": "S", "leader": 1}

    def test_simultaneous_moves_are_recorded_in_seat_order(self):
        """A complete simultaneous set is logged by seat, whatever order the bids arrived in."""
        game = self.game3()
        push_all(game, [(2, c7("0C")[0]), (0, c7("5H")[0]), (1, c7("5S")[0])])
        assert [seat for seat, _, _ in game.moves] == [0, 1, 2]

    def test_bids_revealed_together(self):
        """No bid is revealed until every player has chosen, and nobody chooses twice."""
        game = self.game3()
        game.push(0, c7("5H")[0])
        assert not events_of(game, "bids")
        assert game.to_act == (1, 2)
        with pytest.raises(OutOfTurnError):
            game.push(0, c7("3C")[0])

    def test_bid_cards_stay_in_hand(self):
        """Bid cards go back into the hands and are played normally."""
        game = self.game3()
        push_all(game, [(0, c7("5H")[0]), (1, c7("5S")[0]), (2, c7("0C")[0])])
        assert all(len(hand) == 7 for hand in game.hands)
        assert c7("5S")[0] in game.legal_moves(1)

    def test_sum_seven_forces_rebid_and_scores_top_bidder(self):
        """Bids 3+4+0 = 7: the top bidder (4C) scores 1 at once and everyone bids again."""
        game = self.game3()
        push_all(game, [(0, c7("3C")[0]), (1, c7("4C")[0]), (2, c7("0C")[0])])
        event = events_of(game, "bids")[-1]
        assert event["forced"] == "sum_seven"
        assert event["bonus"] == [1]
        assert game.scores == [0, 1, 0]
        assert game.phase is Phase.BID
        assert game.to_act == (0, 1, 2)
        assert game.trump is None

    def test_bid_card_never_reused(self):
        """After a forced re-bid a player's used bid card is no longer a legal bid."""
        game = self.game3()
        push_all(game, [(0, c7("3C")[0]), (1, c7("4C")[0]), (2, c7("0C")[0])])
        assert c7("3C")[0] not in game.legal_moves(0)
        assert len(game.legal_moves(0)) == 6
        with pytest.raises(IllegalMoveError, match="already used as a bid"):
            game.push(0, c7("3C")[0])

    def test_rebid_replaces_old_bids_and_keeps_bonus(self):
        """The accepted re-bid decides trump and bids; the round score keeps the bonus."""
        game = self.game3()
        push_all(game, [(0, c7("3C")[0]), (1, c7("4C")[0]), (2, c7("0C")[0])])
        push_all(game, [(0, c7("6D")[0]), (1, c7("0H")[0]), (2, c7("7D")[0])])
        assert game.bids == [6, 0, 7]
        assert game.trump == SUITS.index("D")
        assert game.to_act == (2,)
        play_random(game, random.Random(1), stop=lambda g: g.round > 0)
        score = events_of(game, "score")[0]
        assert score["bonus"] == [0, 1, 0]
        assert score["totals"] == [score["points"][s] + score["bonus"][s] for s in range(3)]

    HANDS5 = [  # noqa: RUF012
        "7S 3S 0C 1C 2C 3C 4C",
        "7S 1D 0D 2D 3D 4D 5D",
        "6S 0C 1C 2C 3C 4C 5C",
        "0D 1D 2D 3D 4D 5D 6D",
        "1S 6C 7C 6D 7D 0S 2S",
    ]

    @pytest.mark.parametrize(("bonus_on", "expected"), [(True, [1, 1, 0, 0, 0]), (False, [0] * 5)])
    def test_identical_top_cards(self, bonus_on, expected):
        """Two players bid the same top card (7S twice): forced re-bid; each scores 1 if on."""
        game = OhSevenGame(
            5, 0, {"identical_top_bonus": bonus_on}, stacked_decks=[stack_seven(self.HANDS5)]
        )
        push_all(game, list(enumerate(c7("7S 7S 0C 0D 0S"))))
        event = events_of(game, "bids")[-1]
        assert event["forced"] == "identical_top"
        assert event["top"] == [0, 1]
        assert game.scores == expected
        assert game.phase is Phase.BID

    @pytest.mark.parametrize("bonus_on", [True, False])
    def test_identical_top_with_sum_seven_scores_each(self, bonus_on):
        """Bids 3S 3S 1C 0D 0S sum to 7 with an identical top: each tied top bidder scores 1."""
        hands = list(self.HANDS5)
        hands[1] = "3S 1D 0D 2D 3D 4D 5D"
        game = OhSevenGame(
            5, 0, {"identical_top_bonus": bonus_on}, stacked_decks=[stack_seven(hands)]
        )
        push_all(game, list(enumerate(c7("3S 3S 1C 0D 0S"))))
        assert events_of(game, "bids")[-1]["forced"] == "sum_seven_identical_top"
        assert game.scores == [1, 1, 0, 0, 0]

    def test_second_copy_may_be_bid(self):
        """Bid cards count as a multiset: both copies of 0C may be bid, never a third time."""
        hands = [
            "0C 0C 1C 2C 3C 4C 5C",
            "7D 6D 5D 4D 3D 2D 1D",
            "0H 0H 1H 2H 3H 4H 5H",
            "0S 0S 1S 2S 3S 4S 5S",
            "0D 0D 1D 6C 7C 6H 7H",
        ]
        game = OhSevenGame(5, 0, stacked_decks=[stack_seven(hands)])
        zero_clubs = c7("0C")[0]
        push_all(game, list(enumerate(c7("0C 7D 0H 0S 0D"))))  # sum 7
        assert zero_clubs in game.legal_moves(0)
        push_all(game, list(enumerate(c7("0C 6D 0H 0S 1D"))))  # sum 7 again
        assert [e["forced"] for e in events_of(game, "bids")] == ["sum_seven", "sum_seven"]
        assert zero_clubs not in game.legal_moves(0)
        assert len(game.legal_moves(0)) == 5
        with pytest.raises(IllegalMoveError, match="already used as a bid"):
            game.push(0, zero_clubs)

    def test_seven_attempts_exhaust_cards_then_redeal_keeps_bonuses(self):
        """Seven sums of 7 use every card; the round is dealt again and the bonuses stay."""
        hands = ["0C 1C 2C 3C 4C 5C 6C", "7D 6D 5D 4D 3D 2D 1D"]
        second = ["7S 6S 5S 4S 3S 2S 1S", "7H 6H 5H 4H 3H 2H 1H"]
        game = OhSevenGame(2, 0, stacked_decks=[stack_seven(hands), stack_seven(second)])
        for attempt in range(7):
            assert game.legal_moves(0) == tuple(c7(hands[0])[attempt:])
            game.push(0, c7(hands[0])[attempt])
            game.push(1, c7(hands[1])[attempt])
            if attempt < 6:
                assert events_of(game, "bids")[-1]["forced"] == "sum_seven"
        # tops: 7D 6D 5D 4D (seat 1), then 4C 5C 6C (seat 0)
        assert game.scores == [3, 4]
        assert events_of(game, "redeal") == [{"type": "redeal", "round": 0}]
        assert game.round == 0 and game.phase is Phase.BID
        assert game.hands == [sorted(c7(second[0])), sorted(c7(second[1]))]
        assert len(game.legal_moves(0)) == 7
        push_all(game, [(0, c7("7S")[0]), (1, c7("1H")[0])])
        play_random(game, random.Random(0), stop=lambda g: g.round > 0)
        score = events_of(game, "score")[0]
        assert score["points"] == [9, -1]
        assert score["bonus"] == [3, 4]
        assert score["totals"] == [12, 3]


class TestOhSevenPlay:
    HANDS = TestOhSevenBidding.HANDS5

    def played_to(self) -> OhSevenGame:
        """5 players, bids 7S 1D 0C 0D 0S (sum 8): spades trump, seat 0 leads."""
        hands = [
            "7S 2H 0C 1C 2C 3C 4C",
            "5H 1D 0D 2D 3D 4D 5D",
            "5H 0C 1C 2C 3C 4C 5C",
            "0D 1D 2D 3D 4D 5D 6D",
            "6C 7C 6D 7D 0S 1S 2S",
        ]
        game = OhSevenGame(5, 0, stacked_decks=[stack_seven(hands)])
        push_all(game, list(enumerate(c7("7S 1D 0C 0D 0S"))))
        assert game.trump == SUITS.index("S") and game.to_act == (0,)
        return game

    def test_identical_cards_first_played_wins(self):
        """2H led, then 5H and the identical 5H: the first 5H played (seat 1) wins."""
        game = self.played_to()
        push_all(game, list(enumerate(c7("2H 5H 5H 6D 6C"))))
        assert events_of(game, "trick")[-1]["winner"] == 1
        assert game.to_act == (1,)
        assert game.tricks_won == [0, 1, 0, 0, 0]

    def test_trump_beats_led_suit(self):
        """The lowest trump (0S) beats the highest card of the led suit."""
        game = self.played_to()
        push_all(game, list(enumerate(c7("2H 5H 5H 6D 0S"))))
        assert events_of(game, "trick")[-1]["winner"] == 4

    def test_must_follow_suit(self):
        """Holding a heart, seat 1 may only play hearts; a diamond is refused, nothing changes."""
        game = self.played_to()
        game.push(0, c7("2H")[0])
        assert game.legal_moves(1) == tuple(c7("5H"))
        before = snapshot(game)
        with pytest.raises(IllegalMoveError, match="must follow H"):
            game.push(1, c7("1D")[0])
        assert snapshot(game) == before

    def test_void_player_may_play_anything(self):
        """Without a heart, seat 3 may play any card of its hand."""
        game = self.played_to()
        push_all(game, list(enumerate(c7("2H 5H 5H"))))
        assert sorted(game.legal_moves(3)) == sorted(set(game.hands[3]))

    def test_leader_may_play_anything(self):
        """The leader's first card is free, trump included."""
        game = self.played_to()
        assert sorted(game.legal_moves(0)) == sorted(set(game.hands[0]))


class TestOhSevenScoring:
    HANDS = ["7S 6S 5S 4S 3S 2S 1S", "7H 6H 5H 4H 3H 1H 0H"]  # noqa: RUF012

    @pytest.mark.parametrize(
        ("bids", "points"),
        [("6S 0H", [-1, 2]), ("7S 1H", [9, -1]), ("7S 3H", [9, -3]), ("4S 1H", [-3, -1])],
    )
    def test_made_bid_scores_bid_plus_two_else_loses_difference(self, bids, points):
        """Seat 0 takes all 7 tricks: made bids score bid + 2, misses lose |bid - tricks|."""
        game = OhSevenGame(2, 0, stacked_decks=[stack_seven(self.HANDS)])
        push_all(game, list(enumerate(c7(bids))))
        play_random(game, random.Random(3), stop=lambda g: g.round > 0)
        score = events_of(game, "score")[0]
        assert score["tricks"] == [7, 0]
        assert score["points"] == points
        assert game.scores == points

    def test_seven_rounds_then_over(self):
        """A game is 7 rounds; the result ranks equal totals equally."""
        game = play_random(new_game("oh-seven", 4, 11), random.Random(11))
        assert len(events_of(game, "score")) == 7
        totals = list(game.result().totals)
        assert totals == events_of(game, "score")[-1]["totals"]
        expected = [1 + sum(other > mine for other in totals) for mine in totals]
        assert list(game.result().ranks) == expected

    def test_result_before_the_end_raises(self):
        """A game that is not over has no result."""
        with pytest.raises(RulesError, match="not over"):
            new_game("oh-seven", 3, 0).result()


class TestOhSevenPassing:
    def test_no_pass_by_default(self):
        """Without the passing option, every round starts with bidding."""
        game = new_game("oh-seven", 3, 5)
        play_random(game, random.Random(5), stop=lambda g: g.round == 1)
        assert game.phase is Phase.BID

    def test_pass_counts_and_directions_all_rounds(self):
        """Rounds pass 0, 1 left, 2 right, 3 left, 2 right, 1 left, 0 cards."""
        expected = {1: (1, +1), 2: (2, -1), 3: (3, +1), 4: (2, -1), 5: (1, +1)}
        rng = random.Random(7)
        game = new_game("oh-seven", 4, 7, {"passing": True})
        seen: dict[int, tuple[int, int]] = {}
        while not game.is_over:
            if game.phase is Phase.PASS:
                count = {len(m) for m in game.legal_moves(0)}
                assert len(count) == 1
                before = [list(hand) for hand in game.hands]
                chosen = {s: rng.choice(list(game.legal_moves(s))) for s in game.to_act}
                for seat, cards in chosen.items():
                    game.push(seat, cards)
                direction = None
                for seat in range(4):
                    for step in (+1, -1):
                        target = (seat + step) % 4
                        after = Counter(before[target]) - Counter(chosen[target])
                        if Counter(game.hands[target]) == after + Counter(chosen[seat]):
                            direction = step
                seen[game.round] = (count.pop(), direction)
            else:
                for seat in game.to_act:
                    game.push(seat, rng.choice(list(game.legal_moves(seat))))
        assert seen == expected

    def test_two_player_pass_is_a_swap(self):
        """With 2 players left and right are the same opponent: the passed cards trade places."""
        first = ["0C 1C 2C 3C 4C 5C 6C", "7D 6D 5D 4D 3D 2D 1D"]
        second = ["7S 6S 5S 4S 3S 2S 1S", "7H 6H 5H 4H 3H 2H 1H"]
        game = OhSevenGame(
            2, 0, {"passing": True}, stacked_decks=[stack_seven(first), stack_seven(second)]
        )
        finish_round_without_rebid(game, random.Random(0))
        assert game.phase is Phase.PASS and game.round == 1
        game.push(0, tuple(c7("7S")))
        assert game.hands[1] == sorted(c7(second[1]))  # not received before both chose
        assert not events_of(game, "received")
        game.push(1, tuple(c7("1H")))
        assert game.hands[0] == sorted(c7("6S 5S 4S 3S 2S 1S 1H"))
        assert game.hands[1] == sorted(c7("7H 6H 5H 4H 3H 2H 7S"))
        assert game.phase is Phase.BID
        received = [e for e in events_of(game, "received") if e["to"] == 0]
        assert received == [{"type": "received", "to": 0, "giver": 1, "cards": ["1H"]}]

    def test_redeal_repeats_the_pass(self):
        """A redeal after seven forced attempts deals again and passes again."""
        first = ["0C 1C 2C 3C 4C 5C 6C", "7D 6D 5D 4D 3D 2D 1D"]
        rounds = [stack_seven(first)] * 3
        game = OhSevenGame(2, 0, {"passing": True}, stacked_decks=rounds)
        finish_round_without_rebid(game, random.Random(0))
        # round 1 dealt from the same order: pass 1C <-> 7D, then seven sums of 7 are still
        # possible (pairs 0+7, 1+6, ...) so the round must be dealt and passed again.
        game.push(0, tuple(c7("0C")))
        game.push(1, tuple(c7("7D")))
        mine, theirs = sorted(game.hands[0]), sorted(game.hands[1])
        for attempt in range(7):
            a = mine[attempt]
            b = next(c for c in theirs if c % 8 == 7 - a % 8)
            theirs.remove(b)
            game.push(0, a)
            game.push(1, b)
        assert events_of(game, "redeal")
        assert game.phase is Phase.PASS and game.round == 1
