"""The rules engine against /shared/rules.md: hand-worked scenarios and random-game properties.

Decisions taken where the rules text leaves room (kept here as tests):

* with ``identical_top_bonus`` off, an identical-top re-bid scores no point unless the bids
  also sum to 7; with a sum of 7 and an identical top, each tied top bidder scores 1;
* ``hook`` together with ``simultaneous_bids`` is rejected;
* bid cards are counted as a multiset: a player holding both copies of a card (two decks)
  may bid the second copy after using the first.
"""

from __future__ import annotations

import copy
import itertools
import random
from collections import Counter

import pytest
from conftest import play_random
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ohseven.core.cards import OH_HELL_DECK, OH_SEVEN_DECK
from ohseven.core.rules import (
    IllegalMoveError,
    InvalidPositionError,
    InvalidRulesError,
    MalformedMoveError,
    OhHellGame,
    OhSevenGame,
    OutOfTurnError,
    Phase,
    Rules,
    RulesError,
    new_game,
    position_game,
)

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


# --------------------------------------------------------------------------- options


class TestRulesAndPlayers:
    @pytest.mark.parametrize(
        ("game", "options", "fragment"),
        [
            ("bridge", None, "unknown game 'bridge'"),
            ("oh-seven", {"hook": True}, "unknown rule option 'hook' for oh-seven"),
            ("oh-hell", {"passing": True}, "unknown rule option 'passing' for oh-hell"),
            ("oh-seven", {"passing": "maybe"}, "passing='maybe': expected true or false"),
            ("oh-hell", {"hand_order": "sideways"}, "hand_order='sideways': expected one of"),
            ("oh-hell", ["hook"], "rule 'hook': expected KEY=VALUE"),
            ("oh-hell", {"hook": True, "simultaneous_bids": True}, "cannot both be on"),
        ],
    )
    def test_invalid_options_raise(self, game, options, fragment):
        """Unknown games, options and values raise InvalidRulesError naming them."""
        with pytest.raises(InvalidRulesError, match=fragment.replace("(", r"\(")):
            Rules.make(game, options)

    @pytest.mark.parametrize(
        ("game", "players"),
        [("oh-seven", 1), ("oh-seven", 10), ("oh-hell", 2), ("oh-hell", 8), ("oh-seven", "3")],
    )
    def test_player_count_out_of_range_raises(self, game, players):
        """Each game has its player range: Oh-Seven 2..9, Oh Hell 3..7."""
        with pytest.raises(InvalidRulesError, match="players, not"):
            new_game(game, players, 0)

    def test_options_from_strings(self):
        """KEY=VALUE strings are parsed and every option gets its default."""
        rules = Rules.make("oh-hell", ["hook=yes", "hand_order=down-up"])
        assert rules["hook"] is True
        assert rules["hand_order"] == "down-up"
        assert rules["must_trump"] is False

    def test_rules_of_the_other_game_rejected(self):
        """An engine class refuses rules validated for the other game."""
        with pytest.raises(InvalidRulesError, match="cannot play"):
            OhSevenGame(3, 0, Rules.make("oh-hell"))

    def test_first_dealer_must_be_a_seat(self):
        """A first dealer outside the table is an invalid table."""
        with pytest.raises(InvalidRulesError, match="first dealer 4"):
            OhHellGame(4, 0, first_dealer=4)

    def test_stacked_deck_must_hold_the_deck(self):
        """A stacked deck with the wrong cards (one deck for five players) is rejected."""
        with pytest.raises(InvalidRulesError, match="stacked deck"):
            OhSevenGame(5, 0, stacked_decks=[list(range(32))])


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


# --------------------------------------------------------------------------- bad decisions


def _oh_seven_bid() -> OhSevenGame:
    return OhSevenGame(3, 0, stacked_decks=[stack_seven(TestOhSevenBidding.HANDS3)])


def _oh_seven_rebid() -> OhSevenGame:
    game = _oh_seven_bid()
    push_all(game, [(0, c7("3C")[0]), (1, c7("4C")[0]), (2, c7("0C")[0])])
    return game


def _oh_seven_play() -> OhSevenGame:
    game = _oh_seven_bid()
    push_all(game, [(0, c7("5H")[0]), (1, c7("5S")[0]), (2, c7("0C")[0])])
    game.push(1, c7("4C")[0])
    return game


def _oh_seven_pass() -> OhSevenGame:
    game = OhSevenGame(3, 0, {"passing": True})
    finish_round_without_rebid(game, random.Random(0))
    return game


def _oh_hell_bid() -> OhHellGame:
    return OhHellGame(3, 0, hand_sizes=(3,), first_dealer=0)


def _over() -> OhSevenGame:
    return play_random(new_game("oh-seven", 2, 0), random.Random(0))


BAD_MOVES = [
    ("oh7 bid not in hand", _oh_seven_bid, 0, c7("7S")[0], IllegalMoveError, "not in hand"),
    ("oh7 bid not a card", _oh_seven_bid, 0, 99, IllegalMoveError, "not in hand"),
    ("oh7 bid reused", _oh_seven_rebid, 0, c7("3C")[0], IllegalMoveError, "already used"),
    ("oh7 bid bool", _oh_seven_bid, 0, True, MalformedMoveError, "must be a card"),
    ("oh7 bid name", _oh_seven_bid, 0, "5H", MalformedMoveError, "must be a card"),
    ("oh7 play out of turn", _oh_seven_play, 0, c7("5H")[0], OutOfTurnError, "no play"),
    ("oh7 play not in hand", _oh_seven_play, 2, c7("7S")[0], IllegalMoveError, "not in hand"),
    ("oh7 play revoke", _oh_seven_play, 2, c7("7D")[0], IllegalMoveError, "must follow C"),
    ("oh7 play negative", _oh_seven_play, 2, -1, IllegalMoveError, "not a card"),
    ("oh7 play tuple", _oh_seven_play, 2, (1,), MalformedMoveError, "must be a card"),
    ("oh7 pass count", _oh_seven_pass, 0, (), IllegalMoveError, "this round passes 1"),
    ("oh7 pass not held", _oh_seven_pass, 0, (99,), IllegalMoveError, "not all in hand"),
    ("oh7 pass bool", _oh_seven_pass, 0, (True,), MalformedMoveError, "a pass must be"),
    ("oh7 pass int", _oh_seven_pass, 0, 3, MalformedMoveError, "a pass must be"),
    ("oh7 over", _over, 0, 0, OutOfTurnError, "the game is over"),
    ("ohh bid out of turn", _oh_hell_bid, 2, 0, OutOfTurnError, "no bid"),
    ("ohh bid range", _oh_hell_bid, 1, 4, IllegalMoveError, "out of range"),
    ("ohh bid float", _oh_hell_bid, 1, 1.0, MalformedMoveError, "number of tricks"),
]


class TestBadDecisions:
    @pytest.mark.parametrize(
        ("make", "seat", "move", "error", "fragment"),
        [case[1:] for case in BAD_MOVES],
        ids=[case[0] for case in BAD_MOVES],
    )
    def test_bad_decision_raises_precisely_and_changes_nothing(
        self, make, seat, move, error, fragment
    ):
        """Each bad decision raises its exact exception naming the seat; the state is kept."""
        game = make()
        before = snapshot(game)
        with pytest.raises(error, match=fragment) as caught:
            game.push(seat, move)
        assert type(caught.value) is error
        assert f"seat {seat}:" in str(caught.value)
        assert caught.value.state == game.describe()
        assert not game.is_legal(seat, move)
        assert snapshot(game) == before

    def test_pass_given_as_list_is_recorded_as_tuple(self):
        """A pass may be any sequence of cards; the move log keeps an immutable copy."""
        game = _oh_seven_pass()
        cards = [game.hands[0][0]]
        game.push(0, cards)
        cards.append(0)
        assert game.moves[-1] == (0, "pass", (game.moves[-1][2][0],))


# --------------------------------------------------------------------------- positions


class TestPositionGame:
    def test_oh_seven_position_plays_out_one_round(self):
        """A position mid-trick continues with the next seat and scores the round alone."""
        rules = Rules.make("oh-seven")
        game = position_game(
            rules,
            3,
            hands=[c7("7S 1C"), c7("2S 3C"), c7("0H")],
            trump=3,
            leader=2,
            trick=c7("5H"),
            bids=[2, 3, 1],
            tricks_won=[2, 1, 2],
        )
        assert game.phase is Phase.PLAY and game.to_act == (0,)
        assert game.hand_size == 7
        assert sorted(game.legal_moves(0)) == sorted(c7("7S 1C"))  # void in hearts
        push_all(game, [(0, c7("7S")[0]), (1, c7("2S")[0])])  # seat 0 trumps, wins
        assert game.to_act == (0,)
        push_all(game, [(0, c7("1C")[0]), (1, c7("3C")[0]), (2, c7("0H")[0])])
        assert game.is_over
        assert game.tricks_won == [3, 2, 2]
        assert game.scores == [-1, -1, -1]
        assert list(game.result().totals) == [-1, -1, -1]

    def test_oh_hell_position_scores_with_hand_size(self):
        """Oh Hell: the hand size (tricks played + left) decides the zero-bid bonus."""
        rules = Rules.make("oh-hell", {"zero_bid_bonus": True, "must_trump": True})
        game = position_game(
            rules,
            3,
            hands=[ch("2H"), ch("AS"), ch("KD")],
            trump=SUITS.index("S"),
            leader=2,
            trick=[],
            bids=[0, 2, 1],
            tricks_won=[0, 1, 1],
        )
        assert game.hand_size == 3
        game.push(2, HELL.parse("KD"))
        assert game.legal_moves(0) == tuple(ch("2H"))  # void, no trump: anything
        push_all(game, [(0, HELL.parse("2H")), (1, HELL.parse("AS"))])
        assert game.scores == [8, 12, 11]

    @pytest.mark.parametrize(
        ("change", "fragment"),
        [
            ({"hands": [c7("7S 1C"), c7("2S"), c7("0H")]}, "seat 1 holds 1 cards"),
            ({"leader": 3}, "leader 3"),
            ({"trump": 4}, "trump 4"),
            ({"bids": [2, 3, 8]}, "bids"),
            ({"tricks_won": [2, 1, 1]}, "7 tricks"),
            ({"hands": [c7("7S 7S"), c7("2S 3C"), c7("0H")]}, "more than 1"),
            ({"trick": c7("5H 4H 3H")}, "fewer than 3"),
        ],
    )
    def test_impossible_positions_raise(self, change, fragment):
        """Positions no round can reach raise InvalidPositionError saying why."""
        args = {
            "hands": [c7("7S 1C"), c7("2S 3C"), c7("0H")],
            "trump": 3,
            "leader": 2,
            "trick": c7("5H"),
            "bids": [2, 3, 1],
            "tricks_won": [2, 1, 2],
        }
        args.update(change)
        with pytest.raises(InvalidPositionError, match=fragment):
            position_game(Rules.make("oh-seven"), 3, **args)


# --------------------------------------------------------------------------- properties


def expected_legal_plays(game) -> set[int]:
    hand = game.hands[game.to_act[0]]
    if not game.trick:
        return set(hand)
    ranks = game.deck.ranks
    led = game.trick[0] // ranks
    follow = {c for c in hand if c // ranks == led}
    if follow:
        return follow
    if game.rules.game == "oh-hell" and game.rules["must_trump"] and game.trump is not None:
        trumps = {c for c in hand if c // ranks == game.trump}
        if trumps:
            return trumps
    return set(hand)


def trick_winner(cards: list[int], leader: int, trump: int | None, ranks: int, n: int) -> int:
    def strength(card: int) -> tuple[int, int]:
        suit = card // ranks
        tier = 2 if suit == trump else 1 if suit == cards[0] // ranks else 0
        return (tier, card % ranks)

    best = max(range(len(cards)), key=lambda i: (strength(cards[i]), -i))
    return (leader + best) % n


def play_and_audit(game, rng: random.Random) -> None:
    """Play at random while checking every decision's legal set, then audit the event log."""
    n = game.players
    seven = game.rules.game == "oh-seven"
    used: list[Counter] = [Counter() for _ in range(n)]
    seen = 0
    while not game.is_over:
        for event in game.events[seen:]:
            if event["type"] == "round":
                used = [Counter() for _ in range(n)]
            elif event["type"] == "bids" and seven and event["forced"]:
                for s, name in enumerate(event["cards"]):
                    used[s][SEVEN.parse(name)] += 1
        seen = len(game.events)
        if game.phase is Phase.PLAY:
            (seat,) = game.to_act
            assert seat == (game.leader + len(game.trick)) % n
            assert set(game.legal_moves(seat)) == expected_legal_plays(game)
        elif game.phase is Phase.BID and seven:
            for seat in game.to_act:
                unused = +(Counter(game.hands[seat]) - used[seat])
                assert set(game.legal_moves(seat)) == set(unused)
        elif game.phase is Phase.BID:
            seat = game.to_act[0]
            legal = set(range(game.hand_size + 1))
            if game.rules["hook"] and seat == game.dealer:
                legal.discard(game.hand_size - sum(b for b in game.bids if b is not None))
            assert set(game.legal_moves(seat)) == legal
        for seat in game.to_act:
            game.push(seat, rng.choice(list(game.legal_moves(seat))))
    audit_events(game)


def audit_events(game) -> None:
    """Recompute deals, tricks, trumps, bids and scores from the event log alone."""
    n, deck = game.players, game.deck
    seven = game.rules.game == "oh-seven"
    copies = (1 if n <= 4 else 2) if seven else 1
    totals = [0] * n
    hands: list[Counter] = []
    tricks: list[dict] = []
    trump = leader = None
    rounds = 0
    for event in game.events:
        kind = event["type"]
        if kind == "round":
            hands, tricks = [Counter() for _ in range(n)], []
            size = event["hand_size"]
            if not seven:
                trump = None if event["trump"] is None else SUITS.index(event["trump"])
                leader = (event["dealer"] + 1) % n
                assert (event["trump_card"] is None) == (event["trump"] is None)
                last = event["round"] == game.rounds - 1
                assert (event["trump"] is None) == (last or size * n == deck.size)
        elif kind == "deal":
            hands[event["to"]] = Counter(deck.parse(name) for name in event["hand"])
            assert len(event["hand"]) == size
            if event["to"] == n - 1:
                dealt = sum(hands, Counter())
                assert max(dealt.values()) <= copies
        elif kind == "passed":
            hands[event["to"]] -= Counter(deck.parse(name) for name in event["cards"])
        elif kind == "received":
            hands[event["to"]] += Counter(deck.parse(name) for name in event["cards"])
        elif kind == "bids" and seven:
            cards = [deck.parse(name) for name in event["cards"]]
            keys = [(c % 8) * 4 + c // 8 for c in cards]
            top = [s for s in range(n) if keys[s] == max(keys)]
            total = sum(c % 8 for c in cards)
            assert event["top"] == top and event["sum"] == total
            forced = total == 7 or len(top) > 1
            assert bool(event["forced"]) == forced
            bonus = top if forced and (total == 7 or game.rules["identical_top_bonus"]) else []
            assert event["bonus"] == bonus
            for s in bonus:
                totals[s] += 1
            if not forced:
                trump, leader = cards[top[0]] // 8, top[0]
        elif kind == "trick":
            cards = [deck.parse(name) for name in event["cards"]]
            assert event["leader"] == leader
            winner = trick_winner(cards, leader, trump, deck.ranks, n)
            assert event["winner"] == winner
            tricks.append(event)
            for i, card in enumerate(cards):
                hands[(leader + i) % n][card] -= 1
            leader = winner
        elif kind == "score":
            rounds += 1
            assert len(tricks) == size
            assert all(not +hand for hand in hands), "every card held was played"
            assert all(min(hand.values(), default=0) >= 0 for hand in hands)
            won = [sum(t["winner"] == s for t in tricks) for s in range(n)]
            assert event["tricks"] == won and sum(won) == size
            for s in range(n):
                bid, got = event["bids"][s], won[s]
                if seven:
                    points = bid + 2 if bid == got else -abs(bid - got)
                elif bid == got:
                    zero = game.rules["zero_bid_bonus"] and bid == 0
                    points = 5 + size if zero else 10 + got
                else:
                    points = got if game.rules["miss_scores_tricks"] else 0
                assert event["points"][s] == points
                totals[s] += points
            assert event["totals"] == totals
    assert rounds == game.rounds
    assert list(game.result().totals) == totals
    assert game.events[-1] == {
        "type": "game_over",
        "totals": totals,
        "ranks": [1 + sum(t > mine for t in totals) for mine in totals],
    }


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


class TestProperties:
    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(config=configs, seed=seeds)
    def test_random_games_follow_the_rules(self, config, seed):
        """Random games: legal sets, tricks, trumps, bonuses and scores all recomputed."""
        game, players, options = config
        play_and_audit(new_game(game, players, seed, options), random.Random(seed))

    @pytest.mark.parametrize(
        ("game", "players", "options"),
        [
            *(("oh-seven", n, {"passing": p}) for n in range(2, 10) for p in (False, True)),
            *(
                ("oh-hell", n, {"hand_order": o, b: True, "must_trump": True})
                for n, o, b in itertools.product(
                    range(3, 8), ["up", "down-up"], ["hook", "simultaneous_bids"]
                )
            ),
        ],
    )
    def test_every_player_count(self, game, players, options):
        """One audited random game for every player count and the main option switches."""
        play_and_audit(new_game(game, players, players, options), random.Random(players))

    @settings(max_examples=40, deadline=None)
    @given(config=configs, seed=seeds)
    def test_same_seed_same_game(self, config, seed):
        """The same seed and the same decisions give the same events."""
        game, players, options = config
        first = play_random(new_game(game, players, seed, options), random.Random(seed))
        second = play_random(new_game(game, players, seed, options), random.Random(seed))
        assert first.events == second.events
        assert first.moves == second.moves

    @settings(max_examples=40, deadline=None)
    @given(config=configs, seed=seeds)
    def test_moves_replay_to_the_same_game(self, config, seed):
        """Pushing the recorded moves into a fresh game reproduces it exactly."""
        game, players, options = config
        first = play_random(new_game(game, players, seed, options), random.Random(seed))
        again = new_game(game, players, seed, options)
        for seat, _kind, move in first.moves:
            again.push(seat, move)
        assert again.events == first.events
        assert again.result() == first.result()


class TestJournal:
    """``moves`` and ``events`` are built when first read: reading never changes what they hold."""

    @settings(max_examples=60, deadline=None)
    @given(config=configs, seed=seeds, reads=st.lists(st.integers(0, 400), max_size=6))
    def test_reading_any_time_gives_the_same_log(self, config, seed, reads):
        """Moves and events read during the game, or only at its end, are the same lists."""
        game, players, options = config
        read, unread = (new_game(game, players, seed, options) for _ in range(2))
        rng, held, step = random.Random(seed), None, 0
        while not read.is_over:
            if step in reads:
                # either list read first builds both
                assert isinstance(read.moves if step % 2 else read.events, list)
                held = held or (read.moves, read.events)
            for seat in read.to_act:
                move = rng.choice(list(read.legal_moves(seat)))
                read.push(seat, move)
                unread.push(seat, move)
            step += 1
        assert read.moves == unread.moves
        assert read.events == unread.events
        if held is not None:
            assert held[0] is read.moves and held[1] is read.events

    @pytest.mark.parametrize("read_first", [False, True])
    def test_position_logs_only_plays_after_it(self, read_first):
        """A position's trick in progress was played before it: only later plays are logged."""
        rules = Rules.make("oh-hell")
        game = position_game(
            rules,
            3,
            hands=[ch("2C 3C"), ch("4C"), ch("5C")],
            trump=None,
            leader=1,
            trick=ch("6C 7C"),
            bids=[1, 1, 0],
            tricks_won=[0, 0, 0],
        )
        if read_first:
            assert game.events == [] and game.moves == []
        game.push(0, ch("2C")[0])
        assert game.moves == [(0, "play", ch("2C")[0])]
        assert [e["type"] for e in game.events] == ["play", "trick"]
        assert game.events[1]["cards"] == ["6C", "7C", "2C"]

    @settings(max_examples=30, deadline=None)
    @given(players=st.integers(3, 7), seed=seeds)
    def test_deal_is_the_standard_shuffle(self, players, seed):
        """The deal is ``random.Random(seed)``'s ``randrange`` then ``shuffle``, state included."""
        game = OhHellGame(players, seed)
        rng = random.Random(seed)
        dealer = rng.randrange(players)
        deck = list(range(HELL.size))
        rng.shuffle(deck)
        first, k = (dealer + 1) % players, 1  # the first hand of hand_order "up" is one card
        assert game.dealer == dealer
        assert game.hands == [
            sorted(deck[(s - first) % players : k * players : players]) for s in range(players)
        ]
        assert game.rng.getstate() == rng.getstate()
