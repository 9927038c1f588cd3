"""Cards as small ints, and their names on the wire and in replays.

A card is ``suit * ranks + rank``; suits are ordered Clubs < Diamonds < Hearts < Spades, so
the suit order that breaks Oh-Seven bid ties is the numeric one. Oh-Seven cards are named by
their rank digit and suit letter (``"0C"`` .. ``"7S"``); Oh Hell cards by the usual rank
letter (``"2C"`` .. ``"AS"``, ``T`` for ten).
"""

from __future__ import annotations

import attrs

from .names import OH_HELL_RANKS, OH_SEVEN_RANKS, SUITS

__all__ = ["SUITS", "Deck", "OH_SEVEN_DECK", "OH_HELL_DECK", "UnknownCardError"]


class UnknownCardError(ValueError):
    """A card name that does not belong to the deck in use."""

    def __init__(self, name: object, deck: Deck) -> None:
        super().__init__(f"{name!r} is not a card of the {deck.label} deck")
        self.name = name


@attrs.frozen
class Deck:
    """The cards of one game: ``suits`` x ``ranks``, with ``rank_labels`` for their names."""

    label: str
    ranks: int
    rank_labels: str
    suits: int = 4
    names: tuple[str, ...] = attrs.field(init=False)
    index: dict[str, int] = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        names = tuple(
            self.rank_labels[card % self.ranks] + SUITS[card // self.ranks]
            for card in range(self.size)
        )
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "index", {name: card for card, name in enumerate(names)})

    @property
    def size(self) -> int:
        return self.suits * self.ranks

    def suit(self, card: int) -> int:
        return card // self.ranks

    def rank(self, card: int) -> int:
        return card % self.ranks

    def name(self, card: int) -> str:
        return self.names[card]

    def parse(self, name: object) -> int:
        """The card called ``name``; raises :class:`UnknownCardError` for anything else."""
        try:
            return self.index[name]  # type: ignore[index]
        except (KeyError, TypeError):
            raise UnknownCardError(name, self) from None


OH_SEVEN_DECK = Deck("oh-seven", 8, OH_SEVEN_RANKS)
OH_HELL_DECK = Deck("oh-hell", 13, OH_HELL_RANKS)


def oh_hell_deck(ranks: int = 13) -> Deck:
    """An Oh Hell deck of the ``ranks`` highest ranks of each suit (13: the full deck)."""
    if ranks == 13:
        return OH_HELL_DECK
    if not 1 <= ranks <= 13:
        raise ValueError(f"an Oh Hell deck has 1..13 ranks per suit, not {ranks}")
    return Deck(f"oh-hell-{ranks * 4}", ranks, OH_HELL_RANKS[13 - ranks :])
