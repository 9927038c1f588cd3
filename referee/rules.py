"""The authoritative rules engine for Oh-Seven and Oh Hell.

No I/O happens here. A :class:`Game` is a deterministic function of its rules, options,
number of players, seed and the players' decisions. It asks for one decision at a time, or one
simultaneous set (Oh-Seven passes and bids, Oh Hell ``simultaneous_bids``): :attr:`Game.to_act`
names the seats that owe a decision, :meth:`Game.legal_moves` lists what each may choose and
:meth:`Game.push` applies one. A bad decision raises a precise exception and changes nothing.

Moves are small ints: a card for an Oh-Seven bid and for every play, a number of tricks for an
Oh Hell bid, and a tuple of cards for a pass. Every step is recorded in :attr:`Game.events`;
an event with a ``"to"`` key is private to that seat, every other event is public.
"""

from __future__ import annotations

import _random
import enum
import itertools
import random
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import attrs

from .cards import OH_HELL_DECK, OH_SEVEN_DECK, Deck, oh_hell_deck

__all__ = [
    "OH_SEVEN",
    "OH_HELL",
    "GAMES",
    "Phase",
    "Rules",
    "Game",
    "OhSevenGame",
    "OhHellGame",
    "GameResult",
    "new_game",
    "competition_ranks",
    "RulesError",
    "InvalidRulesError",
    "IllegalMoveError",
    "OutOfTurnError",
    "MalformedMoveError",
    "PASS_SCHEDULE",
    "OH_HELL_HANDS",
    "InvalidPositionError",
    "position_game",
]

OH_SEVEN = "oh-seven"
OH_HELL = "oh-hell"
GAMES = (OH_SEVEN, OH_HELL)

#: Oh-Seven card pass per round: (cards passed, +1 for left / -1 for right).
PASS_SCHEDULE = ((0, 0), (1, 1), (2, -1), (3, 1), (2, -1), (1, 1), (0, 0))
OH_SEVEN_ROUNDS = 7
OH_SEVEN_HAND = 7
OH_SEVEN_MAX_ATTEMPTS = 7
#: Oh Hell: number of hands (and the largest hand) by number of players.
OH_HELL_HANDS = {3: 15, 4: 13, 5: 10, 6: 8, 7: 7}
HAND_ORDERS = ("up", "down", "up-down", "down-up")


class Phase(enum.StrEnum):
    PASS = "pass"
    BID = "bid"
    PLAY = "play"
    OVER = "over"


# --------------------------------------------------------------------------- exceptions


class RulesError(Exception):
    """Base of every error the rules engine raises on purpose."""


class InvalidRulesError(RulesError, ValueError):
    """A game, option, option value or player count the rules do not allow."""


class IllegalMoveError(RulesError, ValueError):
    """A well-formed decision that the rules forbid in this state."""

    def __init__(self, message: str, *, seat: int, move: object, game: Game) -> None:
        super().__init__(f"seat {seat}: {message} [{game.describe()}]")
        self.seat = seat
        self.move = move
        self.state = game.describe()


class OutOfTurnError(IllegalMoveError):
    """A decision from a seat that does not owe one now."""


class MalformedMoveError(RulesError, TypeError):
    """A decision of the wrong type or shape for the decision asked for."""

    def __init__(self, message: str, *, seat: int, move: object, game: Game) -> None:
        super().__init__(f"seat {seat}: {message} [{game.describe()}]")
        self.seat = seat
        self.move = move
        self.state = game.describe()


# --------------------------------------------------------------------------- rules and options

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}

#: option -> (default, allowed values or None for a boolean), per game.
OPTIONS: dict[str, dict[str, tuple[Any, tuple[str, ...] | None]]] = {
    OH_SEVEN: {
        "passing": (False, None),
        "identical_top_bonus": (True, None),
    },
    OH_HELL: {
        "hand_order": ("up", HAND_ORDERS),
        "hook": (False, None),
        "simultaneous_bids": (False, None),
        "must_trump": (False, None),
        "miss_scores_tricks": (False, None),
        "zero_bid_bonus": (False, None),
    },
}
PLAYER_RANGE = {OH_SEVEN: (2, 9), OH_HELL: (3, 7)}


def _coerce_option(game: str, key: str, value: object) -> object:
    default, allowed = OPTIONS[game][key]
    if allowed is None:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise InvalidRulesError(f"rule option {key}={value!r}: expected true or false")
    if value not in allowed:
        raise InvalidRulesError(
            f"rule option {key}={value!r}: expected one of {', '.join(allowed)}"
        )
    return value


@attrs.frozen
class Rules:
    """A game and its rule options, validated; every option is present with its value."""

    game: str
    options: tuple[tuple[str, object], ...]

    @classmethod
    def make(cls, game: str, options: Mapping[str, object] | Iterable[str] | None = None) -> Rules:
        """Validate ``options`` (a mapping, or ``KEY=VALUE`` strings) for ``game``."""
        if game not in OPTIONS:
            raise InvalidRulesError(f"unknown game {game!r}: expected one of {', '.join(GAMES)}")
        given: dict[str, object] = {}
        if options is not None:
            if isinstance(options, Mapping):
                given.update(options)
            else:
                for item in options:
                    key, sep, value = str(item).partition("=")
                    if not sep:
                        raise InvalidRulesError(f"rule {item!r}: expected KEY=VALUE")
                    given[key.strip()] = value.strip()
        known = OPTIONS[game]
        for key in given:
            if key not in known:
                raise InvalidRulesError(
                    f"unknown rule option {key!r} for {game}: expected one of {', '.join(known)}"
                )
        values: dict[str, object] = {key: default for key, (default, _) in known.items()}
        for key, raw in given.items():
            values[key] = _coerce_option(game, key, raw)
        if game == OH_HELL and values["hook"] and values["simultaneous_bids"]:
            raise InvalidRulesError(
                "rule options hook and simultaneous_bids cannot both be on: "
                "the hook restricts the last bidder, and simultaneous bids have none"
            )
        return cls(game, tuple(sorted(values.items())))

    def __getitem__(self, key: str) -> Any:
        for name, value in self.options:
            if name == key:
                return value
        raise KeyError(key)

    def as_dict(self) -> dict[str, object]:
        return dict(self.options)

    def check_players(self, players: int) -> None:
        low, high = PLAYER_RANGE[self.game]
        if not isinstance(players, int) or not low <= players <= high:
            raise InvalidRulesError(
                f"{self.game} is played by {low} to {high} players, not {players}"
            )


@attrs.frozen
class GameResult:
    """Final totals and ranks (1 is best; equal totals share a rank)."""

    totals: tuple[int, ...]
    ranks: tuple[int, ...]


def competition_ranks(totals: Sequence[int]) -> tuple[int, ...]:
    """Standard competition ranking of ``totals``, highest first: (10, 7, 10) -> (1, 3, 1)."""
    return tuple(1 + sum(1 for other in totals if other > total) for total in totals)


# --------------------------------------------------------------------------- the engine


# Phase members as plain globals for the hot path: ``Phase.PLAY`` is a slow enum lookup.
_PASS, _PLAY, _BID, _OVER = Phase.PASS, Phase.PLAY, Phase.BID, Phase.OVER


def _unique(cards: Iterable[int]) -> tuple[int, ...]:
    """``cards`` without repeats, in order."""
    return tuple(dict.fromkeys(cards))


def _seat_of_move(move: tuple[int, str, Any]) -> int:
    return move[0]


# -- tables built once and shared by every game (all are immutable)

#: ``_BID_RANGE[k]`` is ``(0, 1, ..., k)``: the Oh Hell bids of a hand of ``k`` cards.
_BID_RANGE = tuple(tuple(range(k + 1)) for k in range(54))
_SEAT_TABLES: dict[int, tuple[tuple[tuple[int], ...], tuple[tuple[int], ...], tuple[int, ...]]] = {}


def _seat_tables(
    players: int,
) -> tuple[tuple[tuple[int], ...], tuple[tuple[int], ...], tuple[int, ...]]:
    """The usual values of ``to_act``: ``(seat,)`` and ``((seat + 1) % players,)`` per seat, and
    every seat."""
    tables = _SEAT_TABLES.get(players)
    if tables is None:
        tables = _SEAT_TABLES[players] = (
            tuple((s,) for s in range(players)),
            tuple(((s + 1) % players,) for s in range(players)),
            tuple(range(players)),
        )
    return tables


class _DeckTables:
    """Tables for every deck of one shape, built once: see :func:`_deck_tables`."""

    __slots__ = ("suit_of", "suit_start", "trick_keys", "cards")

    def __init__(self, deck: Deck) -> None:
        ranks, size = deck.ranks, deck.size
        #: the suit of each card
        self.suit_of = tuple(card // ranks for card in range(size))
        #: the first card of each suit, and the deck size: suit ``s`` is
        #: ``range(suit_start[s], suit_start[s + 1])``
        self.suit_start = tuple(suit * ranks for suit in range(deck.suits + 1))
        #: trick keys by trump (or None) then led suit: the first card of a trick with the
        #: highest key takes it. A trump scores ``2 * size + card``, a card of the led suit
        #: ``size + card`` and any other card ``card``; a later identical card (two decks)
        #: does not beat the first.
        self.trick_keys = {
            trump: tuple(
                tuple(
                    card + (2 * size if suit == trump else size if suit == led else 0)
                    for card, suit in enumerate(self.suit_of)
                )
                for led in range(deck.suits)
            )
            for trump in (None, *range(deck.suits))
        }
        #: the cards in order, to copy and shuffle
        self.cards = list(range(size))


_DECK_TABLES: dict[tuple[int, int], _DeckTables] = {}


def _deck_tables(deck: Deck) -> _DeckTables:
    """The tables of ``deck``'s shape (they depend on nothing else)."""
    key = (deck.ranks, deck.suits)
    tables = _DECK_TABLES.get(key)
    if tables is None:
        tables = _DECK_TABLES[key] = _DeckTables(deck)
    return tables


_SHUFFLE_STEPS: dict[int, tuple[tuple[int, int], ...]] = {}


def _shuffle(rng: random.Random, cards: list[int]) -> None:
    """``rng.shuffle(cards)``: the same draws in the same order, so the same result and state.

    ``random.Random.shuffle`` swaps ``cards[i]`` with ``cards[_randbelow(i + 1)]`` for ``i``
    from the top down, and ``_randbelow(n)`` draws ``getrandbits(n.bit_length())`` until the
    draw is below ``n``; this does exactly that with the bit lengths looked up.
    """
    steps = _SHUFFLE_STEPS.get(len(cards))
    if steps is None:
        steps = _SHUFFLE_STEPS[len(cards)] = tuple(
            (i, (i + 1).bit_length()) for i in reversed(range(1, len(cards)))
        )
    getrandbits = rng.getrandbits
    for i, bits in steps:
        j = getrandbits(bits)
        while j > i:
            j = getrandbits(bits)
        cards[i], cards[j] = cards[j], cards[i]


_new_random = random.Random.__new__
_seed_random = _random.Random.seed


def _seeded(seed: Any) -> random.Random:
    """``random.Random(seed)``, the same state, seeded directly for an int (``Random.seed`` does
    the same, through a Python method)."""
    if type(seed) is not int:
        return random.Random(seed)
    rng = _new_random(random.Random)
    _seed_random(rng, seed)
    rng.gauss_next = None  # type: ignore[attr-defined]  # what Random.seed resets
    return rng


# -- the journal: moves and events, built only when read
#
# The hot path records compact ``(maker, ...)`` tuples in ``Game._log``, and nothing at all
# for a play: the record of a complete trick stands for its plays. ``maker(record, names,
# moves, events)`` appends a record's moves and event dicts to the two lists. Nothing is built
# until ``Game.moves`` or ``Game.events`` is first read; from then on every record is built at
# once (``_EagerLog``) and every play is appended as it happens, so a list obtained from either
# is always up to date. A record holds only values that never change afterwards (copies, or
# lists the game has stopped using).

_Record = tuple[Any, ...]
_Moves = list[tuple[int, str, Any]]
_Events = list[dict[str, Any]]


def _play_event(names: Sequence[str], seat: int, card: int) -> dict[str, Any]:
    return {"type": "play", "seat": seat, "card": names[card]}


def _trick_event(
    names: Sequence[str], leader: int, trick: list[int], winner: int
) -> dict[str, Any]:
    return {"type": "trick", "leader": leader, "cards": [names[c] for c in trick], "winner": winner}


def _rec_event(record: _Record, names: Sequence[str], moves: _Moves, events: _Events) -> None:
    """``(_rec_event, event)``: an event already a dict."""
    events.append(record[1])


def _rec_decision(record: _Record, names: Sequence[str], moves: _Moves, events: _Events) -> None:
    """``(_rec_decision, seat, kind, move)``: a decision other than a play; its events follow."""
    moves.append(record[1:])


def _rec_trick(record: _Record, names: Sequence[str], moves: _Moves, events: _Events) -> None:
    """``(_rec_trick, leader, trick, winner, recorded)``: a complete trick, and the plays to it
    from ``trick[recorded]`` on (the earlier ones were recorded as they happened)."""
    _, leader, trick, winner, recorded = record
    n = len(trick)
    for i in range(recorded, n):
        seat = (leader + i) % n
        moves.append((seat, "play", trick[i]))
        events.append(_play_event(names, seat, trick[i]))
    events.append(_trick_event(names, leader, trick, winner))


def _rec_deal(record: _Record, names: Sequence[str], moves: _Moves, events: _Events) -> None:
    """``(_rec_deal, round_event, hands)``: a ``round`` event and a private ``deal`` per seat."""
    _, round_event, hands = record
    events.append(round_event)
    for seat, hand in enumerate(hands):
        events.append({"type": "deal", "to": seat, "hand": [names[c] for c in hand]})


def _rec_hell_deal(record: _Record, names: Sequence[str], moves: _Moves, events: _Events) -> None:
    """``(_rec_hell_deal, round, hand_size, dealer, trump_card, deck, first, players)``: an Oh
    Hell deal, from the dealt deck as ``OhHellGame._deal`` reads it."""
    _, number, size, dealer, trump_card, deck, first, n = record
    round_event = {
        "type": "round",
        "round": number,
        "hand_size": size,
        "dealer": dealer,
        "trump_card": None if trump_card is None else names[trump_card],
        "trump": None if trump_card is None else "CDHS"[trump_card // (len(names) // 4)],
    }
    hands = [sorted(deck[(s - first) % n : size * n : n]) for s in range(n)]
    _rec_deal((_rec_deal, round_event, hands), names, moves, events)


def _rec_hell_bid(record: _Record, names: Sequence[str], moves: _Moves, events: _Events) -> None:
    """``(_rec_hell_bid, seat, bid)``: an Oh Hell bid in turn."""
    _, seat, bid = record
    moves.append((seat, "bid", bid))
    events.append({"type": "bid", "seat": seat, "bid": bid})


def _rec_hell_score(record: _Record, names: Sequence[str], moves: _Moves, events: _Events) -> None:
    """``(_rec_hell_score, round, bids, tricks, points, totals)``."""
    _, number, bids, tricks, points, totals = record
    events.append(
        {
            "type": "score",
            "round": number,
            "bids": list(bids),
            "tricks": list(tricks),
            "points": list(points),
            "totals": list(totals),
        }
    )


def _rec_game_over(record: _Record, names: Sequence[str], moves: _Moves, events: _Events) -> None:
    """``(_rec_game_over, totals)``."""
    totals = record[1]
    events.append(
        {"type": "game_over", "totals": list(totals), "ranks": list(competition_ranks(totals))}
    )


def _seat_of_record(record: _Record) -> int:
    return record[1]


class _EagerLog:
    """The log once the moves or events have been read: each record is built at once."""

    __slots__ = ("moves", "events", "names")

    def __init__(self, moves: _Moves, events: _Events, names: Sequence[str]) -> None:
        self.moves = moves
        self.events = events
        self.names = names

    def append(self, record: _Record) -> None:
        record[0](record, self.names, self.moves, self.events)

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is _EagerLog
            and self.moves == other.moves
            and self.events == other.events
            and self.names == other.names
        )

    __hash__ = None  # type: ignore[assignment]


class Game:
    """State shared by both rulesets: hands, tricks, scores and the event log.

    Every hand is kept sorted. :attr:`moves` and :attr:`events` are built when first read (see
    ``_EagerLog``), so a game nobody reads them from, a Monte Carlo playout say, never builds
    them.
    """

    deck: Deck
    #: the rounds of the whole game (Oh-Seven's 7; Oh Hell's hand sizes)
    rounds: int

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
        self.rng = _seeded(seed)
        self._stacked = [list(order) for order in stacked_decks] if stacked_decks else []
        #: keyword arguments that changed the table (``stacked_decks``, and for Oh Hell
        #: ``ranks``, ``hand_sizes``, ``first_dealer``, ``trump_on_last_hand``): a replay
        #: needs them to deal the same cards again.
        self.table: dict[str, Any] = (
            {"stacked_decks": [list(order) for order in self._stacked]} if self._stacked else {}
        )
        # the journal (see ``_EagerLog``): built lists, records not yet built, whether every
        # record and play is built at once, and how many plays of the current trick are built
        self._moves: _Moves = []
        self._events: _Events = []
        self._log: list[_Record] | _EagerLog = []
        self._eager = False
        self._trick_recorded = 0
        self.scores = [0] * players
        self.phase = _BID
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
        tables = _deck_tables(deck)
        self._suit_of = tables.suit_of
        self._suit_start = tables.suit_start
        self._trick_keys = tables.trick_keys
        self._cards = tables.cards
        self._solo, self._next, self._everyone = _seat_tables(players)
        self._dedupe = tuple if self.copies == 1 else _unique
        # the legal plays or bids last listed, and for which seat (-1: none listed since the
        # last decision)
        self._legal_seat = -1
        self._legal: Sequence[Any] = ()

    # -- introspection

    @property
    def moves(self) -> list[tuple[int, str, Any]]:
        """Every decision so far, ``(seat, kind, move)`` in order (a simultaneous set in seat
        order); the same list, kept up to date, on every read."""
        if not self._eager:
            self._build_journal()
        return self._moves

    @property
    def events(self) -> list[dict[str, Any]]:
        """Every event so far, in order; the same list, kept up to date, on every read."""
        if not self._eager:
            self._build_journal()
        return self._events

    def _build_journal(self) -> None:
        """Build the moves and events recorded so far, and every later one as it happens."""
        moves, events, names = self._moves, self._events, self._names
        for record in cast(list, self._log):
            record[0](record, names, moves, events)
        trick, leader, n = self.trick, self.leader, self.players
        for i in range(self._trick_recorded, len(trick)):
            seat = (leader + i) % n
            moves.append((seat, "play", trick[i]))
            events.append(_play_event(names, seat, trick[i]))
        self._trick_recorded = len(trick)
        self._log = _EagerLog(moves, events, names)
        self._eager = True

    @property
    def trick_seats(self) -> list[int]:
        """The seats that played the cards of the current trick, in order."""
        n = self.players
        return [(self.leader + i) % n for i in range(len(self.trick))]

    def describe(self) -> str:
        return (
            f"{self.rules.game}, {self.players} players, seed {self.seed}, round {self.round}, "
            f"phase {self.phase.value}, to act {list(self.to_act)}"
        )

    def card_name(self, card: int) -> str:
        return self._names[card]

    def result(self) -> GameResult:
        if self.phase is not _OVER:
            raise RulesError(f"the game is not over [{self.describe()}]")
        totals = tuple(self.scores)
        return GameResult(totals, competition_ranks(totals))

    # -- decisions

    def legal_moves(self, seat: int) -> Sequence[Any] | Iterable[Any]:
        """What ``seat`` may choose now (empty when it owes no decision)."""
        phase = self.phase
        if phase is _PLAY:
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
        if phase is _BID:
            bids = self._legal_bids(seat)
            self._legal_seat = seat
            self._legal = bids
            return bids
        if phase is _PASS:
            return self._legal_passes(seat)
        return ()

    def is_legal(self, seat: int, move: Any) -> bool:
        try:
            self._check(seat, move)
        except RulesError:
            return False
        return True

    def push(self, seat: int, move: Any) -> None:
        """Apply ``seat``'s decision; raises and changes nothing if it is not legal."""
        phase = self.phase
        if phase is _PLAY and type(move) is int and seat in self.to_act:
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
                # ``_DeckTables``)
                keys = self._trick_keys[self.trump][suit_of[trick[0]]]
                leader = self.leader
                winner = (leader + trick.index(max(trick, key=keys.__getitem__))) % self.players
                self.tricks_won[winner] += 1
                if self._eager:
                    self._events.append(_trick_event(self._names, leader, trick, winner))
                else:
                    self._log.append((_rec_trick, leader, trick, winner, self._trick_recorded))
                    self._trick_recorded = 0
                self.trick = []
                self.leader = winner
                if self.hands[winner]:
                    self.to_act = self._solo[winner]
                else:
                    self._end_round()
                return
        if phase is _BID and seat in self.to_act:
            # as ``_check`` does for a bid, unless the bid is one just listed for the seat
            if not (seat == self._legal_seat and type(move) is int and move in self._legal):
                self._check_bid(seat, move)
            self._legal_seat = -1
            self._bid(seat, move)
            return
        kind = self._check(seat, move)
        self._legal_seat = -1
        # a legal play or bid always takes a branch above
        if kind == "bid":
            self._bid(seat, move)
        else:
            move = tuple(move)
            self._log.append((_rec_decision, seat, kind, move))
            self._pass(seat, tuple(sorted(move)))

    def _check(self, seat: int, move: Any) -> str:
        phase = self.phase
        if seat not in self.to_act:
            if phase is _OVER:
                raise OutOfTurnError("the game is over", seat=seat, move=move, game=self)
            raise OutOfTurnError(
                f"no {phase.value} decision is owed by this seat", seat=seat, move=move, game=self
            )
        if phase is _PLAY:
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
        if phase is _BID:
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
        return f"play {name}: must follow {'CDHS'[self.trick[0] // self._ranks]}" + (
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

    def _emit(self, event: dict[str, Any]) -> None:
        """Record an event that is already a dict."""
        self._log.append((_rec_event, event))

    def _canonical_moves(self) -> None:
        """Record a complete simultaneous set in seat order, whatever order it arrived in."""
        n = self.players
        if self._eager:
            self._moves[-n:] = sorted(self._moves[-n:], key=_seat_of_move)
        else:
            # the set's decision records are the last records: nothing else was recorded
            # while the set was incomplete
            log = cast(list, self._log)
            log[-n:] = sorted(log[-n:], key=_seat_of_record)

    def _shuffled(self, cards: list[int]) -> list[int]:
        if self._stacked:
            order = list(self._stacked.pop(0))
            if sorted(order) != sorted(cards):
                raise InvalidRulesError("a stacked deck must hold exactly the cards of the deck")
            return order
        _shuffle(self.rng, cards)
        return cards

    def _finish(self) -> None:
        self.phase = _OVER
        self.is_over = True
        self.to_act = ()
        self._log.append((_rec_game_over, tuple(self.scores)))

    # -- ruleset hooks
    def pass_count(self) -> int:
        """Cards each player passes now (0 outside a card pass, and in a game without one)."""
        return 0

    def _legal_bids(self, seat: int) -> Sequence[Any]:
        raise NotImplementedError

    def _legal_passes(self, seat: int) -> Iterable[Any]:
        return ()

    def _check_bid(self, seat: int, move: Any) -> None:
        raise NotImplementedError

    def _check_pass(self, seat: int, move: Any) -> None:
        raise MalformedMoveError("no pass is owed", seat=seat, move=move, game=self)

    def _bid(self, seat: int, move: Any) -> None:
        raise NotImplementedError

    def _pass(self, seat: int, cards: tuple[int, ...]) -> None:
        raise NotImplementedError

    def _end_round(self) -> None:
        raise NotImplementedError


class OhSevenGame(Game):
    """Oh-Seven: 7 rounds of 7 cards, card bids with forced re-bids, optional card pass.

    Readings taken where the rules leave room: with ``identical_top_bonus`` off, a re-bid
    forced only by an identical top card scores no point; when the bids also sum to 7, each
    tied top bidder scores 1 (whatever the option). Bid cards are counted as a multiset: a
    player holding both copies of a card (two decks) may bid the second after the first.
    """

    deck = OH_SEVEN_DECK

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
        self._dedupe = tuple if self.copies == 1 else _unique
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
        self._log.append((_rec_deal, round_event, tuple(map(tuple, self.hands))))
        count, _ = PASS_SCHEDULE[self.round]
        self.phase = _PASS if self._passing and count else _BID
        self.to_act = self._everyone

    def pass_count(self) -> int:
        return PASS_SCHEDULE[self.round][0] if self.phase is _PASS else 0

    def pass_target(self, seat: int) -> int:
        return (seat + PASS_SCHEDULE[self.round][1]) % self.players

    def _legal_passes(self, seat: int) -> Iterable[tuple[int, ...]]:
        return dict.fromkeys(itertools.combinations(self.hands[seat], self.pass_count()))

    def _check_pass(self, seat: int, move: Any) -> None:
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
        self.phase = _BID
        self.to_act = self._everyone

    # -- bidding

    def _legal_bids(self, seat: int) -> tuple[int, ...]:
        unused = Counter(self.hands[seat])
        unused.subtract(self.used_bids[seat])
        return tuple(card for card in sorted(unused) if unused[card] > 0)

    def _check_bid(self, seat: int, move: Any) -> None:
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
        self._log.append((_rec_decision, seat, "bid", card))
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
        self._emit({"type": "trump", "suit": "CDHS"[self.trump], "leader": self.leader})
        self.phase = _PLAY
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


def oh_hell_hand_sizes(players: int, order: str = "up") -> tuple[int, ...]:
    top = OH_HELL_HANDS[players]
    up = tuple(range(1, top + 1))
    down = up[::-1]
    return {"up": up, "down": down, "up-down": up + down[1:], "down-up": down + up[1:]}[order]


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
_HELL_OPTIONS: dict[int, tuple[Rules, tuple[bool, bool, bool, bool, bool, str]]] = {}


def _hell_options(rules: Rules) -> tuple[bool, bool, bool, bool, bool, str]:
    """``must_trump``, ``hook``, ``simultaneous_bids``, ``miss_scores_tricks``,
    ``zero_bid_bonus`` and ``hand_order`` of ``rules``, looked up once per rules object."""
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
        ) = _hell_options(rules)
        sizes = tuple(hand_sizes or oh_hell_hand_sizes(players, order))
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
            _shuffle(self.rng, deck)
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
            (_rec_hell_deal, self.round, k, self.dealer, self.trump_card, deck, first, n)
        )
        self.phase = _BID
        self.to_act = self._everyone if self._simultaneous else self._solo[first]

    def _legal_bids(self, seat: int) -> tuple[int, ...]:
        k = self.hand_size
        bids = _BID_RANGE[k] if k < len(_BID_RANGE) else tuple(range(k + 1))
        if self._hook and seat == self.dealer:
            forbidden = k - sum(b for b in self.bids if b is not None)
            if 0 <= forbidden <= k:
                return bids[:forbidden] + bids[forbidden + 1 :]
        return bids

    def _check_bid(self, seat: int, move: Any) -> None:
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
            self._log.append((_rec_decision, seat, "bid", bid))
            self.to_act = tuple(s for s in self.to_act if s != seat)
            if self.to_act:
                return
            self._canonical_moves()
            self._emit({"type": "bids", "bids": list(self.bids)})
        else:
            self._log.append((_rec_hell_bid, seat, bid))
            if seat != self.dealer:
                self.to_act = self._next[seat]
                return
        self.phase = _PLAY
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
                _rec_hell_score,
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


def new_game(
    game: str | Rules,
    players: int,
    seed: int,
    options: Mapping[str, object] | Iterable[str] | None = None,
    **table: Any,
) -> Game:
    """Start a game of ``game`` (a name or validated :class:`Rules`)."""
    rules = game if isinstance(game, Rules) else Rules.make(game, options)
    cls = OhSevenGame if rules.game == OH_SEVEN else OhHellGame
    return cls(players, seed, rules, **table)


# --------------------------------------------------------------------------- positions


class InvalidPositionError(RulesError, ValueError):
    """A position for :func:`position_game` that no round of the game can reach."""


def position_game(
    rules: Rules,
    players: int,
    *,
    hands: Sequence[Sequence[int]],
    trump: int | None,
    leader: int,
    trick: Sequence[int],
    bids: Sequence[int],
    tricks_won: Sequence[int],
    seed: int = 0,
) -> Game:
    """A game in the PLAY phase at a position inside one round, for Monte Carlo playouts.

    ``hands[s]`` are the cards seat ``s`` still holds, ``trump`` the trump suit (0..3, or
    ``None``), ``trick`` the cards already played in the current trick in order, starting from
    ``leader`` (so the seat to act is ``(leader + len(trick)) % players``), ``bids`` the
    round's bids (Oh-Seven: the ranks 0..7 of the accepted bid cards; Oh Hell: tricks) and
    ``tricks_won`` the tricks each seat has taken so far in the round. The hand size is implied:
    tricks played (``sum(tricks_won)``) plus tricks left (the leader's cards, plus one when it
    has already played to the current trick). The game ends (phase OVER) after the round's last
    trick, and its ``scores`` are that round's points only (no re-bid bonus). Its event log
    starts at the position. Raises :class:`InvalidPositionError` for an impossible position.
    """

    def bad(message: str) -> InvalidPositionError:
        return InvalidPositionError(f"position for {rules.game} with {players} players: {message}")

    rules.check_players(players)
    n = players
    if len(hands) != n or len(bids) != n or len(tricks_won) != n:
        raise bad("hands, bids and tricks_won need one entry per seat")
    if type(leader) is not int or not 0 <= leader < n:
        raise bad(f"leader {leader!r} is not a seat")
    if len(trick) >= n:
        raise bad(f"a trick in progress holds fewer than {n} cards, not {len(trick)}")
    if trump is not None and (type(trump) is not int or not 0 <= trump < 4):
        raise bad(f"trump {trump!r} is not a suit 0..3 or None")
    if any(type(t) is not int or t < 0 for t in tricks_won):
        raise bad(f"tricks_won {list(tricks_won)!r} must be counts")
    played = sum(tricks_won)
    left = len(hands[leader]) + (1 if trick else 0)
    size = played + left
    if left < 1:
        raise bad("no trick is left to play")
    in_trick = {(leader + i) % n for i in range(len(trick))}
    for seat in range(n):
        expected = left - (1 if seat in in_trick else 0)
        if len(hands[seat]) != expected:
            raise bad(f"seat {seat} holds {len(hands[seat])} cards, expected {expected}")
    if rules.game == OH_SEVEN:
        if size != OH_SEVEN_HAND:
            raise bad(f"an Oh-Seven round has {OH_SEVEN_HAND} tricks, not {size}")
        game: Game = OhSevenGame(n, seed, rules)
        copies = 1 if n <= 4 else 2
        top_bid = 7
    else:
        if size * n > OH_HELL_DECK.size:
            raise bad(f"hands of {size} cards do not fit {n} players")
        game = OhHellGame(n, seed, rules, hand_sizes=(size,), first_dealer=(leader - 1) % n)
        copies = 1
        top_bid = size
    if any(type(b) is not int or not 0 <= b <= top_bid for b in bids):
        raise bad(f"bids {list(bids)!r} must be 0..{top_bid}")
    cards = [c for hand in hands for c in hand] + list(trick)
    if any(type(c) is not int or not 0 <= c < game.deck.size for c in cards):
        raise bad("every card must be a card of the deck")
    counts = Counter(cards)
    if max(counts.values()) > copies:
        raise bad(f"a card appears more than {copies} time(s)")
    # a fresh log: nothing has read the events of the deal the position replaces
    game._moves = []
    game._events = []
    game._log = []
    game._eager = False
    # the cards already in the trick were played before the position: no moves or events
    game._trick_recorded = len(trick)
    game.scores = [0] * n
    game.round = 0
    game.rounds = 1
    game.hand_size = size
    game.hands = [sorted(hand) for hand in hands]
    game.trump = trump
    game.leader = leader
    game.trick = list(trick)
    game.tricks_won = list(tricks_won)
    game.bids = list(bids)
    game.phase = _PLAY
    game.to_act = ((leader + len(trick)) % n,)
    return game
