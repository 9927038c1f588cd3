"""A game started from a position (core/positions.py): it plays out from there, and a
position that cannot happen is refused with the reason."""

from __future__ import annotations

import pytest
from game_helpers import HELL, SUITS, c7, ch, push_all
from ohseven.core.rules import InvalidPositionError, Phase, Rules, position_game

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
