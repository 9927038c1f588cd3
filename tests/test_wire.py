"""``ohseven.core.wire``: the wire form of moves and of a request's legal list."""

from __future__ import annotations

import json
import random

import pytest
from conftest import play_random
from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.core.cards import UnknownCardError
from ohseven.core.rules import Phase, new_game
from ohseven.core.wire import WireMoveError, legal_to_wire, move_from_wire, move_to_wire


def finished(game: str = "oh-seven", players: int = 4, seed: int = 3, options=None):
    return play_random(new_game(game, players, seed, options), random.Random(seed))


class TestWireMoves:
    def test_oh_seven_moves_use_card_names(self):
        """Oh-Seven bids and plays are card names; passes are lists of names."""
        game = new_game("oh-seven", 3, 0)
        card = game.deck.parse("7S")
        assert move_to_wire(game, "bid", card) == "7S"
        assert move_to_wire(game, "play", card) == "7S"
        assert move_to_wire(game, "pass", (card, game.deck.parse("0C"))) == ["7S", "0C"]
        assert move_from_wire(game, "bid", "7S") == card
        assert move_from_wire(game, "pass", ["7S", "0C"]) == (card, game.deck.parse("0C"))

    def test_oh_hell_bid_is_an_int(self):
        """Oh Hell bids stay numbers; its cards use the Oh Hell names."""
        game = new_game("oh-hell", 3, 0)
        assert move_to_wire(game, "bid", 2) == 2
        assert move_from_wire(game, "bid", 2) == 2
        assert move_from_wire(game, "play", "TH") == game.deck.parse("TH")
        assert move_to_wire(game, "play", game.deck.parse("AS")) == "AS"

    @pytest.mark.parametrize(
        ("game", "kind", "value", "error", "fragment"),
        [
            ("oh-hell", "bid", True, WireMoveError, "integer number of tricks"),
            ("oh-hell", "bid", "2", WireMoveError, "integer number of tricks"),
            ("oh-hell", "bid", 2.0, WireMoveError, "integer number of tricks"),
            ("oh-seven", "play", 5, WireMoveError, "card name"),
            ("oh-seven", "bid", None, WireMoveError, "card name"),
            ("oh-seven", "play", "8S", UnknownCardError, "'8S' is not a card of the oh-seven"),
            ("oh-hell", "play", "7s", UnknownCardError, "'7s' is not a card of the oh-hell"),
            ("oh-seven", "pass", "7S", WireMoveError, "list of card names"),
            ("oh-seven", "pass", ["7S", "XX"], UnknownCardError, "'XX'"),
            ("oh-seven", "pass", ["7S", 3], WireMoveError, "card name"),
            ("oh-seven", "trump", "7S", WireMoveError, "unknown move kind"),
        ],
    )
    def test_bad_wire_values_raise_precisely(self, game, kind, value, error, fragment):
        """Wrong types, unknown cards and kinds raise their own ValueError subclass."""
        players = 3
        with pytest.raises(error, match=fragment) as caught:
            move_from_wire(new_game(game, players, 0), kind, value)
        assert isinstance(caught.value, ValueError)

    @settings(max_examples=20, deadline=None)
    @given(seed=st.integers(0, 2**32 - 1), passing=st.booleans())
    def test_every_recorded_move_round_trips(self, seed, passing):
        """Every move of a random game converts to wire form and back unchanged."""
        game = finished("oh-seven", 5, seed, {"passing": passing})
        for _seat, kind, move in game.moves:
            wire = move_to_wire(game, kind, move)
            json.dumps(wire)
            assert move_from_wire(game, kind, wire) == move


class TestLegalToWire:
    @settings(max_examples=20, deadline=None)
    @given(seed=st.integers(0, 2**32 - 1), game=st.sampled_from(["oh-seven", "oh-hell"]))
    def test_the_legal_list_is_the_engine_moves_in_wire_form(self, seed, game):
        """Every request's legal list converts back to the engine's legal moves (a pass: the
        hand, with the number of cards to pass)."""
        engine = new_game(game, 4, seed, ["passing=true"] if game == "oh-seven" else None)
        rng = random.Random(seed)
        while not engine.is_over:
            seat = engine.to_act[0]
            kind = engine.phase.value
            legal, count = legal_to_wire(engine, seat)
            if engine.phase is Phase.PASS:
                assert legal == [engine.deck.names[c] for c in engine.hands[seat]]
                assert count == engine.pass_count() > 0
            else:
                moves = list(engine.legal_moves(seat))
                assert [move_from_wire(engine, kind, w) for w in legal] == moves and count == 0
            engine.push(seat, rng.choice(list(engine.legal_moves(seat))))
