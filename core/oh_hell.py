"""Oh Hell: hands of 1, 2, 3, ... cards, a turned-up trump, and bids of a number of tricks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from .cards import OH_HELL_DECK, Deck, oh_hell_deck
from .game import Game
from .journal import rec_decision, rec_hell_bid, rec_hell_deal, rec_hell_score
from .names import OH_HELL
from .options import OH_HELL_HANDS, IllegalMoveError, InvalidRulesError, MalformedMoveError, Rules
from .precomputed import BID, BID_RANGE, PLAY, shuffle


def oh_hell_hand_sizes(players: int, order: str = "up", max_hand: int = 0) -> tuple[int, ...]:
    """The hand sizes of a game, in order; with ``max_hand`` the larger hands are left out."""
    top = OH_HELL_HANDS[players]
    up = tuple(range(1, top + 1))
    down = up[::-1]
    sizes = {"up": up, "down": down, "up-down": up + down[1:], "down-up": down + up[1:]}[order]
    return tuple(k for k in sizes if k <= max_hand) if max_hand else sizes


_OH_HELL_DECKS: dict[int, Deck] = {13: OH_HELL_DECK}


def _oh_hell_deck(ranks: int) -> Deck:
    """``oh_hell_deck(ranks)``, built once per size: decks are frozen, games share them."""
    deck = _OH_HELL_DECKS.get(ranks) if type(ranks) is int else None
    if deck is None:
        deck = oh_hell_deck(ranks)
        if type(ranks) is int:
            _OH_HELL_DECKS[ranks] = deck
    return deck


#: id(rules) -> (rules, its Oh Hell options as read by the engine); holding the rules keeps
#: the id from being reused while the entry lives.
_HELL_OPTIONS: dict[int, tuple[Rules, tuple[bool, bool, bool, bool, bool, str, int]]] = {}


def _hell_options(rules: Rules) -> tuple[bool, bool, bool, bool, bool, str, int]:
    """``must_trump``, ``hook``, ``simultaneous_bids``, ``miss_scores_tricks``,
    ``zero_bid_bonus``, ``hand_order`` and ``max_hand`` of ``rules``, looked up once per rules
    object."""
    entry = _HELL_OPTIONS.get(id(rules))
    if entry is None or entry[0] is not rules:
        if len(_HELL_OPTIONS) >= 256:
            _HELL_OPTIONS.clear()
        values = rules.as_dict()
        entry = _HELL_OPTIONS[id(rules)] = (
            rules,
            (
                bool(values["must_trump"]),
                bool(values["hook"]),
                bool(values["simultaneous_bids"]),
                bool(values["miss_scores_tricks"]),
                bool(values["zero_bid_bonus"]),
                str(values["hand_order"]),
                int(rules["max_hand"]),
            ),
        )
    return entry[1]


class OhHellGame(Game):
    """Oh Hell: hands of 1, 2, 3, ... cards, a turned-up trump, and bids of a number of tricks.

    The keyword-only ``ranks``, ``hand_sizes``, ``first_dealer`` and ``trump_on_last_hand``
    change the table, not the rules: they let tests and benchmarks play a single hand of a
    smaller deck exactly as OpenSpiel's ``oh_hell`` does.
    """

    def __init__(
        self,
        players: int,
        seed: int,
        options: Mapping[str, object] | Iterable[str] | Rules | None = None,
        *,
        stacked_decks: Iterable[Sequence[int]] = (),
        ranks: int = 13,
        hand_sizes: Sequence[int] | None = None,
        first_dealer: int | None = None,
        trump_on_last_hand: bool = False,
    ) -> None:
        self.deck = deck = _oh_hell_deck(ranks)
        rules = options if isinstance(options, Rules) else Rules.make(OH_HELL, options)
        if rules.game != OH_HELL:
            raise InvalidRulesError(f"rules for {rules.game} cannot play {OH_HELL}")
        super().__init__(rules, players, seed, stacked_decks=stacked_decks)
        (
            self._must_trump,
            self._hook,
            self._simultaneous,
            self._miss_scores,
            self._zero_bonus,
            order,
            max_hand,
        ) = _hell_options(rules)
        sizes = tuple(hand_sizes or oh_hell_hand_sizes(players, order, max_hand))
        for k in sizes:
            if type(k) is not int or not k >= 1 or k * players > deck.size:
                raise InvalidRulesError(f"hand sizes {sizes} do not fit {players} players")
        if first_dealer is not None and (
            type(first_dealer) is not int or not 0 <= first_dealer < players
        ):
            raise InvalidRulesError(f"first dealer {first_dealer!r} is not a seat of {players}")
        if ranks != 13:
            self.table["ranks"] = ranks
        if hand_sizes:
            self.table["hand_sizes"] = list(sizes)
        if first_dealer is not None:
            self.table["first_dealer"] = first_dealer
        if trump_on_last_hand:
            self.table["trump_on_last_hand"] = True
        self.hand_sizes = sizes
        self.rounds = len(sizes)
        self._trump_on_last = trump_on_last_hand
        self.dealer = self.rng.randrange(players) if first_dealer is None else first_dealer
        self.trump_card: int | None = None
        self._deal()

    def _deal(self) -> None:
        n = self.players
        k = self.hand_sizes[self.round]
        self.hand_size = k
        deck = self._cards[:]
        if self._stacked:
            deck = self._shuffled(deck)
        else:
            shuffle(self.rng, deck)
        first = (self.dealer + 1) % n
        dealt = k * n
        # card i goes to seat (first + i) % n
        self.hands = hands = [deck[(s - first) % n : dealt : n] for s in range(n)]
        for hand in hands:
            hand.sort()
        if dealt < len(deck) and (self.round != self.rounds - 1 or self._trump_on_last):
            self.trump_card = deck[dealt]
            self.trump = self._suit_of[deck[dealt]]
        else:
            self.trump_card = None
            self.trump = None
        self.tricks_won = [0] * n
        self.bids = [None] * n
        self.leader = first
        self._log.append(
            (rec_hell_deal, self.round, k, self.dealer, self.trump_card, deck, first, n)
        )
        self.phase = BID
        self.to_act = self._everyone if self._simultaneous else self._solo[first]

    def _legal_bids(self, seat: int) -> tuple[int, ...]:
        k = self.hand_size
        bids = BID_RANGE[k] if k < len(BID_RANGE) else tuple(range(k + 1))
        if self._hook and seat == self.dealer:
            forbidden = k - sum(b for b in self.bids if b is not None)
            if 0 <= forbidden <= k:
                return bids[:forbidden] + bids[forbidden + 1 :]
        return bids

    def _check_bid(self, seat: int, move: object) -> None:
        if type(move) is not int:
            raise MalformedMoveError(
                f"an Oh Hell bid must be a number of tricks, not {move!r}",
                seat=seat,
                move=move,
                game=self,
            )
        k = self.hand_size
        # Same test as ``move in self._legal_bids(seat)``, without building the tuple.
        if not 0 <= move <= k or (
            self._hook
            and seat == self.dealer
            and move == k - sum(b for b in self.bids if b is not None)
        ):
            if 0 <= move <= self.hand_size:
                why = f"the hook forbids bids totalling {self.hand_size}"
            else:
                why = f"out of range 0..{self.hand_size}"
            raise IllegalMoveError(f"bid {move}: {why}", seat=seat, move=move, game=self)

    def _bid(self, seat: int, bid: int) -> None:
        self.bids[seat] = bid
        if self._simultaneous:
            self._log.append((rec_decision, seat, "bid", bid))
            self.to_act = tuple(s for s in self.to_act if s != seat)
            if self.to_act:
                return
            self._canonical_moves()
            self._emit({"type": "bids", "bids": list(self.bids)})
        else:
            self._log.append((rec_hell_bid, seat, bid))
            if seat != self.dealer:
                self.to_act = self._next[seat]
                return
        self.phase = PLAY
        self.to_act = self._solo[self.leader]

    def _end_round(self) -> None:
        points = []
        k = self.hand_size
        zero_bonus = self._zero_bonus
        miss_scores = self._miss_scores
        for bid, won in zip(self.bids, self.tricks_won, strict=True):
            if bid == won:
                points.append(5 + k if bid == 0 and zero_bonus else 10 + won)
            else:
                points.append(won if miss_scores else 0)
        scores = self.scores
        for s in range(self.players):
            scores[s] += points[s]
        self._log.append(
            (
                rec_hell_score,
                self.round,
                tuple(self.bids),
                tuple(self.tricks_won),
                points,
                tuple(scores),
            )
        )
        self.round += 1
        self.dealer = (self.dealer + 1) % self.players
        if self.round >= self.rounds:
            self._finish()
        else:
            self._deal()
