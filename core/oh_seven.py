"""Oh-Seven: 7 rounds of 7 cards, card bids with forced re-bids, an optional card pass."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .cards import OH_SEVEN_DECK
from .game import Game
from .journal import rec_deal, rec_decision
from .names import OH_SEVEN, SUITS
from .options import (
    OH_SEVEN_HAND,
    OH_SEVEN_MAX_ATTEMPTS,
    OH_SEVEN_ROUNDS,
    PASS_SCHEDULE,
    IllegalMoveError,
    InvalidRulesError,
    MalformedMoveError,
    Rules,
)
from .precomputed import BID, PASS, PLAY, unique


class OhSevenGame(Game):
    """Oh-Seven: 7 rounds of 7 cards, card bids with forced re-bids, optional card pass.

    Readings taken where the rules leave room: with ``identical_top_bonus`` off, a re-bid
    forced only by an identical top card scores no point; when the bids also sum to 7, each
    tied top bidder scores 1 (whatever the option). Bid cards are counted as a multiset: a
    player holding both copies of a card (two decks) may bid the second after the first.
    """

    deck = OH_SEVEN_DECK
    _simultaneous = True  # every seat passes and bids at once

    def __init__(
        self,
        players: int,
        seed: int,
        options: Mapping[str, object] | Iterable[str] | Rules | None = None,
        *,
        stacked_decks: Iterable[Sequence[int]] = (),
    ) -> None:
        rules = options if isinstance(options, Rules) else Rules.make(OH_SEVEN, options)
        if rules.game != OH_SEVEN:
            raise InvalidRulesError(f"rules for {rules.game} cannot play {OH_SEVEN}")
        super().__init__(rules, players, seed, stacked_decks=stacked_decks)
        self.copies = 1 if players <= 4 else 2
        self._dedupe = tuple if self.copies == 1 else unique
        self.rounds = OH_SEVEN_ROUNDS
        self.hand_size = OH_SEVEN_HAND
        self._passing = bool(rules["passing"])
        self._identical_bonus = bool(rules["identical_top_bonus"])
        self.bonus = [0] * players  # re-bid bonus points scored in this round
        self.used_bids: list[list[int]] = [[] for _ in range(players)]
        self.attempt = 0
        self.deal_number = 0
        self.pending: dict[int, Any] = {}
        self.top_seat: int | None = None
        self._deal()

    # -- dealing and passing

    def _deal(self) -> None:
        n = self.players
        deck = self._shuffled(list(range(32)) * self.copies)
        self.hands = [sorted(deck[s : n * OH_SEVEN_HAND : n]) for s in range(n)]
        self.used_bids = [[] for _ in range(n)]
        self.attempt = 0
        self.pending = {}
        self.trump = None
        self.tricks_won = [0] * n
        self.bids = [None] * n
        round_event = {
            "type": "round",
            "round": self.round,
            "deal": self.deal_number,
            "hand_size": 7,
        }
        self._log.append((rec_deal, round_event, tuple(map(tuple, self.hands))))
        count, _ = PASS_SCHEDULE[self.round]
        self.phase = PASS if self._passing and count else BID
        self.to_act = self._everyone

    def pass_count(self) -> int:
        return PASS_SCHEDULE[self.round][0] if self.phase is PASS else 0

    def pass_target(self, seat: int) -> int:
        return (seat + PASS_SCHEDULE[self.round][1]) % self.players

    def _legal_passes(self, seat: int) -> Iterable[tuple[int, ...]]:
        return dict.fromkeys(itertools.combinations(self.hands[seat], self.pass_count()))

    def _check_pass(self, seat: int, move: object) -> None:
        count = self.pass_count()
        if not isinstance(move, (tuple, list)) or any(type(c) is not int for c in move):
            raise MalformedMoveError(
                f"a pass must be a list of {count} cards, not {move!r}",
                seat=seat,
                move=move,
                game=self,
            )
        if len(move) != count:
            raise IllegalMoveError(
                f"pass of {len(move)} cards: this round passes {count}",
                seat=seat,
                move=move,
                game=self,
            )
        if Counter(move) - Counter(self.hands[seat]):
            raise IllegalMoveError(
                f"pass {[self._safe_name(c) for c in move]}: not all in hand",
                seat=seat,
                move=move,
                game=self,
            )

    def _safe_name(self, card: int) -> str:
        return self._names[card] if 0 <= card < self.deck.size else str(card)

    def _pass(self, seat: int, cards: tuple[int, ...]) -> None:
        self.pending[seat] = cards
        self.to_act = tuple(s for s in self.to_act if s != seat)
        if self.to_act:
            return
        self._canonical_moves()
        names = self._names
        for giver, given in self.pending.items():
            for card in given:
                self.hands[giver].remove(card)
        for giver, given in sorted(self.pending.items()):
            receiver = self.pass_target(giver)
            self.hands[receiver].extend(given)
            shown = [names[c] for c in given]
            self._emit({"type": "passed", "to": giver, "receiver": receiver, "cards": shown})
            self._emit({"type": "received", "to": receiver, "giver": giver, "cards": shown})
        for hand in self.hands:
            hand.sort()
        self.pending = {}
        self.phase = BID
        self.to_act = self._everyone

    # -- bidding

    def _legal_bids(self, seat: int) -> tuple[int, ...]:
        unused = Counter(self.hands[seat])
        unused.subtract(self.used_bids[seat])
        return tuple(card for card in sorted(unused) if unused[card] > 0)

    def _check_bid(self, seat: int, move: object) -> None:
        if type(move) is not int:
            raise MalformedMoveError(
                f"an Oh-Seven bid must be a card, not {move!r}", seat=seat, move=move, game=self
            )
        if move not in self._legal_bids(seat):
            why = "not in hand" if move not in self.hands[seat] else "already used as a bid"
            raise IllegalMoveError(
                f"bid {self._safe_name(move)}: {why}", seat=seat, move=move, game=self
            )

    def _bid(self, seat: int, card: int) -> None:
        self._log.append((rec_decision, seat, "bid", card))
        self.pending[seat] = card
        self.to_act = tuple(s for s in self.to_act if s != seat)
        if self.to_act:
            return
        self._canonical_moves()
        n = self.players
        cards = [self.pending[s] for s in range(n)]
        self.pending = {}
        ranks = [c % 8 for c in cards]
        # top bid by rank, then suit: a card's rank * 4 + suit orders them.
        keys = [(c % 8) * 4 + c // 8 for c in cards]
        top_key = max(keys)
        top_seats = [s for s in range(n) if keys[s] == top_key]
        total = sum(ranks)
        identical = len(top_seats) > 1
        forced = total == 7 or identical
        reason = None
        bonus_seats: list[int] = []
        if forced:
            reason = "sum_seven" if total == 7 else "identical_top"
            if total == 7 and identical:
                reason = "sum_seven_identical_top"
            if total == 7 or self._identical_bonus:
                bonus_seats = top_seats
            for s in bonus_seats:
                self.bonus[s] += 1
                self.scores[s] += 1
        self.attempt += 1
        self._emit(
            {
                "type": "bids",
                "attempt": self.attempt,
                "cards": [self._names[c] for c in cards],
                "top": top_seats,
                "sum": total,
                "forced": reason,
                "bonus": bonus_seats,
            }
        )
        if forced:
            for s in range(n):
                self.used_bids[s].append(cards[s])
            if self.attempt >= OH_SEVEN_MAX_ATTEMPTS:
                self.deal_number += 1
                self._emit({"type": "redeal", "round": self.round})
                self._deal()
            else:
                self.to_act = self._everyone
            return
        self.bids = list(ranks)
        self.top_seat = top_seats[0]
        self.trump = cards[self.top_seat] // 8
        self.leader = self.top_seat
        self._emit({"type": "trump", "suit": SUITS[self.trump], "leader": self.leader})
        self.phase = PLAY
        self.to_act = self._solo[self.leader]

    # -- scoring

    def _end_round(self) -> None:
        points = []
        for s in range(self.players):
            bid, won = self.bids[s], self.tricks_won[s]
            assert bid is not None
            points.append(bid + 2 if bid == won else -abs(bid - won))
        for s in range(self.players):
            self.scores[s] += points[s]
        self._emit(
            {
                "type": "score",
                "round": self.round,
                "bids": list(self.bids),
                "tricks": list(self.tricks_won),
                "points": points,
                "bonus": list(self.bonus),
                "totals": list(self.scores),
            }
        )
        self.bonus = [0] * self.players
        self.round += 1
        self.deal_number = 0
        if self.round >= self.rounds:
            self._finish()
        else:
            self._deal()
