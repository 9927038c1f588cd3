"""Cards as small ints and their names."""

from __future__ import annotations

import pytest
from ohseven.core.cards import OH_HELL_DECK, OH_SEVEN_DECK, UnknownCardError, oh_hell_deck


class TestDecks:
    def test_oh_seven_names_and_order(self):
        """Oh-Seven: ranks 0..7 by suit C < D < H < S; a card is suit * 8 + rank."""
        assert OH_SEVEN_DECK.size == 32
        assert OH_SEVEN_DECK.names[:3] == ("0C", "1C", "2C")
        assert OH_SEVEN_DECK.name(31) == "7S"
        card = OH_SEVEN_DECK.parse("5H")
        assert (OH_SEVEN_DECK.suit(card), OH_SEVEN_DECK.rank(card)) == (2, 5)

    def test_oh_hell_names_ace_high(self):
        """Oh Hell: 2 low to A high, T for ten; 52 cards."""
        assert OH_HELL_DECK.size == 52
        assert OH_HELL_DECK.parse("2C") == 0
        assert OH_HELL_DECK.parse("AS") == 51
        assert OH_HELL_DECK.rank(OH_HELL_DECK.parse("TH")) == 8
        assert OH_HELL_DECK.rank(OH_HELL_DECK.parse("AH")) > OH_HELL_DECK.rank(
            OH_HELL_DECK.parse("KH")
        )

    def test_names_round_trip(self):
        """Every card's name parses back to the card, and names are unique."""
        for deck in (OH_SEVEN_DECK, OH_HELL_DECK, oh_hell_deck(5)):
            assert [deck.parse(deck.name(c)) for c in range(deck.size)] == list(range(deck.size))
            assert len(set(deck.names)) == deck.size

    def test_short_oh_hell_deck_keeps_the_highest_ranks(self):
        """A short Oh Hell deck keeps the top ranks of each suit."""
        deck = oh_hell_deck(3)
        assert deck.names[:3] == ("QC", "KC", "AC")
        assert deck.size == 12
        assert oh_hell_deck(13) is OH_HELL_DECK
        with pytest.raises(ValueError, match="1..13 ranks"):
            oh_hell_deck(14)

    @pytest.mark.parametrize("name", ["8S", "7s", "AS", "", 7, True, None, ["7S"], "7SS"])
    def test_unknown_cards_raise(self, name):
        """Anything not a card name of the deck raises UnknownCardError naming it."""
        with pytest.raises(UnknownCardError, match="is not a card of the oh-seven deck") as caught:
            OH_SEVEN_DECK.parse(name)
        assert caught.value.name == name
        assert isinstance(caught.value, ValueError)
