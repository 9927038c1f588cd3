"""State and play shared by both rulesets: hands, tricks, scores and the event log."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from typing import Any, cast

from .cards import Deck
from .journal import (
    EagerLog,
    EventList,
    JournalRecord,
    MoveList,
    play_event,
    rec_decision,
    rec_event,
    rec_game_over,
    rec_trick,
    seat_of_record,
    trick_event,
)
from .names import OH_HELL, SUITS
from .options import (
    GameResult,
    IllegalMoveError,
    InvalidRulesError,
    MalformedMoveError,
    OutOfTurnError,
    Rules,
    RulesError,
    competition_ranks,
)
from .precomputed import (
    BID,
    OVER,
    PASS,
    PLAY,
    deck_tables,
    seat_of_move,
    seat_tables,
    seeded,
    shuffle,
    unique,
)
from .values import Event, Move, MoveRecord


class Game:
    """State shared by both rulesets: hands, tricks, scores and the event log.

    Every hand is kept sorted. :attr:`moves` and :attr:`events` are built when first read (see
    ``EagerLog``), so a game nobody reads them from, a Monte Carlo playout say, never builds
    them.
    """

    deck: Deck
    #: the rounds of the whole game (Oh-Seven's 7; Oh Hell's hand sizes)
    rounds: int
    #: whether the seats decide a bid (and a pass) at once, recorded in seat order
    _simultaneous: bool = False

    def __init__(
        self,
        rules: Rules,
        players: int,
        seed: int,
        *,
        stacked_decks: Iterable[Sequence[int]] = (),
    ) -> None:
        rules.check_players(players)
        self.rules = rules
        self.players = players
        self.seed = seed
        self.rng = seeded(seed)
        self._stacked = [list(order) for order in stacked_decks] if stacked_decks else []
        #: keyword arguments that changed the table (``stacked_decks``, and for Oh Hell
        #: ``ranks``, ``hand_sizes``, ``first_dealer``, ``trump_on_last_hand``): a replay
        #: needs them to deal the same cards again.
        self.table: dict[str, Any] = (
            {"stacked_decks": [list(order) for order in self._stacked]} if self._stacked else {}
        )
        # the journal (see ``EagerLog``): built lists, records not yet built, whether every
        # record and play is built at once, and how many plays of the current trick are built
        self._moves: MoveList = []
        self._events: EventList = []
        self._log: list[JournalRecord] | EagerLog = []
        self._eager = False
        self._trick_recorded = 0
        self.scores = [0] * players
        self.phase = BID
        #: whether the game is over (phase OVER), kept in step with ``phase``
        self.is_over = False
        self.to_act: tuple[int, ...] = ()
        self.round = 0
        self.hand_size = 0
        self.hands: list[list[int]] = []
        self.trump: int | None = None
        self.leader = 0
        self.trick: list[int] = []
        self.tricks_won = [0] * players
        self.bids: list[int | None] = [None] * players
        deck = self.deck
        self._names = deck.names
        self._ranks = deck.ranks
        tables = deck_tables(deck)
        self._suit_of = tables.suit_of
        self._suit_start = tables.suit_start
        self._trick_keys = tables.trick_keys
        self._cards = tables.cards
        self._solo, self._next, self._everyone = seat_tables(players)
        self._dedupe = tuple if self.copies == 1 else unique
        # the legal plays or bids last listed, and for which seat (-1: none listed since the
        # last decision)
        self._legal_seat = -1
        self._legal: Sequence[Move] = ()

    # -- introspection

    @property
    def moves(self) -> list[MoveRecord]:
        """Every decision so far, ``(seat, kind, move)`` in order (a simultaneous set in seat
        order); the same list, kept up to date, on every read."""
        if not self._eager:
            self._build_journal()
        return self._moves

    @property
    def events(self) -> list[Event]:
        """Every event so far, in order; the same list, kept up to date, on every read."""
        if not self._eager:
            self._build_journal()
        return self._events

    def _build_journal(self) -> None:
        """Build the moves and events recorded so far, and every later one as it happens."""
        moves, events, names = self._moves, self._events, self._names
        for record in cast("list[JournalRecord]", self._log):
            record[0](record, names, moves, events)
        trick, leader, n = self.trick, self.leader, self.players
        for i in range(self._trick_recorded, len(trick)):
            seat = (leader + i) % n
            moves.append((seat, "play", trick[i]))
            events.append(play_event(names, seat, trick[i]))
        self._trick_recorded = len(trick)
        self._log = EagerLog(moves, events, names)
        self._eager = True

    def move_number(self, seat: int, played: int) -> int | None:
        """The number (from 1) that ``seat``'s pending decision will have in :attr:`moves`
        once ``played`` moves have been made (a simultaneous set is recorded in seat order,
        whatever order it arrives in); None when ``seat`` owes no decision."""
        to_act = self.to_act
        if seat not in to_act:
            return None
        if self.phase is PLAY or not self._simultaneous:
            return played + 1
        return played - (self.players - len(to_act)) + seat + 1

    @property
    def trick_seats(self) -> list[int]:
        """The seats that played the cards of the current trick, in order."""
        n = self.players
        return [(self.leader + i) % n for i in range(len(self.trick))]

    def describe(self) -> str:
        return (
            f"{self.rules.game}, {self.players} players, seed {self.seed}, round {self.round + 1}, "
            f"phase {self.phase.value}, to act {list(self.to_act)}"
        )

    def card_name(self, card: int) -> str:
        return self._names[card]

    def result(self) -> GameResult:
        if self.phase is not OVER:
            raise RulesError(f"the game is not over [{self.describe()}]")
        totals = tuple(self.scores)
        return GameResult(totals, competition_ranks(totals))

    # -- decisions

    def legal_moves(self, seat: int) -> Sequence[Move] | Iterable[Move]:
        """What ``seat`` may choose now (empty when it owes no decision)."""
        phase = self.phase
        if phase is PLAY:
            if seat not in self.to_act:
                return ()
            hand = self.hands[seat]
            trick = self.trick
            if trick:
                # a hand is sorted, so the cards of a suit are a slice of it
                start = self._suit_start
                led = self._suit_of[trick[0]]
                low = bisect_left(hand, start[led])
                high = bisect_left(hand, start[led + 1], low)
                if low == high and self.trump is not None and self._must_trump:
                    low = bisect_left(hand, start[self.trump])
                    high = bisect_left(hand, start[self.trump + 1], low)
                legal = self._dedupe(hand[low:high] if low < high else hand)
            else:
                legal = self._dedupe(hand)
            # kept for ``push``: only an accepted decision changes the state
            self._legal_seat = seat
            self._legal = legal
            return legal
        if seat not in self.to_act:
            return ()
        if phase is BID:
            bids = self._legal_bids(seat)
            self._legal_seat = seat
            self._legal = bids
            return bids
        if phase is PASS:
            return self._legal_passes(seat)
        return ()

    def is_legal(self, seat: int, move: object) -> bool:
        try:
            self._check(seat, move)
        except RulesError:
            return False
        return True

    def push(self, seat: int, move: Move) -> None:
        """Apply ``seat``'s decision; raises and changes nothing if it is not legal."""
        phase = self.phase
        if phase is PLAY and type(move) is int and seat in self.to_act:
            # the common case, a legal play, checked as in ``_check`` without its dispatch
            hand = self.hands[seat]
            trick = self.trick
            suit_of = self._suit_of
            if (
                move in self._legal
                if seat == self._legal_seat
                else move in hand
                and (not trick or suit_of[move] == suit_of[trick[0]] or self._may_play(hand, move))
            ):
                self._legal_seat = -1
                hand.remove(move)
                trick.append(move)
                if self._eager:
                    self._moves.append((seat, "play", move))
                    self._events.append({"type": "play", "seat": seat, "card": self._names[move]})
                if len(trick) < self.players:
                    self.to_act = self._next[seat]
                    return
                # the trick is complete: the first card with the highest key takes it (see
                # ``DeckTables``)
                keys = self._trick_keys[self.trump][suit_of[trick[0]]]
                leader = self.leader
                winner = (leader + trick.index(max(trick, key=keys.__getitem__))) % self.players
                self.tricks_won[winner] += 1
                if self._eager:
                    self._events.append(trick_event(self._names, leader, trick, winner))
                else:
                    self._log.append((rec_trick, leader, trick, winner, self._trick_recorded))
                    self._trick_recorded = 0
                self.trick = []
                self.leader = winner
                if self.hands[winner]:
                    self.to_act = self._solo[winner]
                else:
                    self._end_round()
                return
        if phase is BID and seat in self.to_act:
            # as ``_check`` does for a bid, unless the bid is one just listed for the seat
            if not (seat == self._legal_seat and type(move) is int and move in self._legal):
                self._check_bid(seat, move)
            self._legal_seat = -1
            self._bid(seat, cast(int, move))  # checked: a bid is a card or a number
            return
        kind = self._check(seat, move)
        self._legal_seat = -1
        # a legal play or bid always takes a branch above
        if kind == "bid":
            self._bid(seat, cast(int, move))
        else:
            cards = tuple(cast(tuple[int, ...], move))  # checked: a pass is a card sequence
            self._log.append((rec_decision, seat, kind, cards))
            self._pass(seat, tuple(sorted(cards)))

    def _check(self, seat: int, move: object) -> str:
        phase = self.phase
        if seat not in self.to_act:
            if phase is OVER:
                raise OutOfTurnError("the game is over", seat=seat, move=move, game=self)
            raise OutOfTurnError(
                f"no {phase.value} decision is owed by this seat", seat=seat, move=move, game=self
            )
        if phase is PLAY:
            if type(move) is not int:
                raise MalformedMoveError(
                    f"a play must be a card, not {move!r}", seat=seat, move=move, game=self
                )
            # Same test as ``move in self.legal_moves(seat)``, without building the tuple.
            hand = self.hands[seat]
            if move in hand and (not self.trick or self._may_play(hand, move)):
                return "play"
            raise IllegalMoveError(
                self._why_illegal_play(seat, move), seat=seat, move=move, game=self
            )
        if phase is BID:
            self._check_bid(seat, move)
            return "bid"
        self._check_pass(seat, move)
        return "pass"

    def _why_illegal_play(self, seat: int, card: int) -> str:
        if not 0 <= card < self.deck.size:
            return f"play {card} is not a card"
        name = self._names[card]
        if card not in self.hands[seat]:
            return f"play {name}: not in hand"
        return f"play {name}: must follow {SUITS[self.trick[0] // self._ranks]}" + (
            " or trump" if self.rules.game == OH_HELL and self.rules["must_trump"] else ""
        )

    # -- tricks (shared)

    def _may_play(self, hand: list[int], card: int) -> bool:
        """Whether ``card``, from ``hand``, may go to the current (started) trick."""
        suit_of = self._suit_of
        suit = suit_of[card]
        led = suit_of[self.trick[0]]
        if suit == led:
            return True
        for c in hand:
            if suit_of[c] == led:
                return False
        trump = self.trump
        if trump is None or not self._must_trump or suit == trump:
            return True
        return all(suit_of[c] != trump for c in hand)

    _must_trump = False
    #: copies of each card in play (two for Oh-Seven with 5 or more players)
    copies = 1

    def _emit(self, event: Event) -> None:
        """Record an event that is already a dict."""
        self._log.append((rec_event, event))

    def _canonical_moves(self) -> None:
        """Record a complete simultaneous set in seat order, whatever order it arrived in."""
        n = self.players
        if self._eager:
            self._moves[-n:] = sorted(self._moves[-n:], key=seat_of_move)
        else:
            # the set's decision records are the last records: nothing else was recorded
            # while the set was incomplete
            log = cast("list[JournalRecord]", self._log)
            log[-n:] = sorted(log[-n:], key=seat_of_record)

    def _shuffled(self, cards: list[int]) -> list[int]:
        if self._stacked:
            order = list(self._stacked.pop(0))
            if sorted(order) != sorted(cards):
                raise InvalidRulesError("a stacked deck must hold exactly the cards of the deck")
            return order
        shuffle(self.rng, cards)
        return cards

    def _finish(self) -> None:
        self.phase = OVER
        self.is_over = True
        self.to_act = ()
        self._log.append((rec_game_over, tuple(self.scores)))

    # -- ruleset hooks
    def pass_count(self) -> int:
        """Cards each player passes now (0 outside a card pass, and in a game without one)."""
        return 0

    def _legal_bids(self, seat: int) -> Sequence[Move]:
        raise NotImplementedError

    def _legal_passes(self, seat: int) -> Iterable[Move]:
        return ()

    def _check_bid(self, seat: int, move: object) -> None:
        raise NotImplementedError

    def _check_pass(self, seat: int, move: object) -> None:
        raise MalformedMoveError("no pass is owed", seat=seat, move=move, game=self)

    def _bid(self, seat: int, move: int) -> None:
        raise NotImplementedError

    def _pass(self, seat: int, cards: tuple[int, ...]) -> None:
        raise NotImplementedError

    def _end_round(self) -> None:
        raise NotImplementedError
