"""A bot's view of the game, built by folding the events of the wire protocol.

:class:`View` holds everything one seat may know: its hand, the bids, the current trick, the
cards seen, the passes it gave and received, and what follows from them (the suits a seat is
known to be out of, the cards known to be in another seat's hand). Applying an event is a few
dictionary and list operations.

The SDK's driver folds lazily: events are queued and folded when the bot first reads something
they decide, so a bot that reads only the request (``legal``, ``kind``, ``count``, the time
left) never pays for the view, and one that reads it pays once per decision, not per event.

Cards are strings on the wire (``"7S"``, ``"TH"``); :func:`rank` and :func:`suit` parse them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from ..core.names import OH_HELL, OH_SEVEN, RANKS, SUITS, trick_strength

__all__ = [
    "View",
    "ViewError",
    "SUITS",
    "OH_SEVEN",
    "OH_HELL",
    "rank",
    "suit",
    "card_key",
    "deck_names",
]

#: a rank's number: digits are their value, then T=10, J=11, Q=12, K=13, A=14
_RANK_VALUE = {label: i for i, label in enumerate("0123456789TJQKA")}


class ViewError(ValueError):
    """An event the view cannot apply (unknown type, or out of order)."""


def rank(card: str) -> int:
    """The rank of ``card`` as a number: ``"5H"`` -> 5, ``"TD"`` -> 10, ``"AS"`` -> 14.

    Digits are their value (an Oh-Seven card's rank is its bid), then T=10 .. A=14.
    """
    return _RANK_VALUE[card[0]]


def suit(card: str) -> str:
    """The suit letter of ``card``: ``"5H"`` -> ``"H"``."""
    return card[1]


def card_key(card: str) -> tuple[int, int]:
    """A sort key: by suit (C < D < H < S), then rank."""
    return SUITS.index(card[1]), _RANK_VALUE[card[0]]


def deck_names(game: str, players: int) -> list[str]:
    """Every card of the game's deck, twice each for a two-deck Oh-Seven table (5+ players)."""
    names = [r + s for s in SUITS for r in RANKS[game]]
    copies = 2 if game == OH_SEVEN and players >= 5 else 1
    return names * copies


class View:
    """What one seat knows about the current game; fed with :meth:`apply`.

    Attributes after a ``game`` event (all per game; ``None``/empty until known):

    - ``game`` (``"oh-seven"``/``"oh-hell"``), ``rules`` (dict), ``players``, ``seat``,
      ``rounds``, ``index`` (the game's number in the match);
    - ``round``, ``hand_size``, ``deal`` (Oh-Seven redeal counter), ``dealer`` (Oh Hell),
      ``trump`` (suit letter or ``None``), ``trump_card`` (Oh Hell), ``leader``;
    - ``hand``: own cards (names, sorted); ``legal``, ``kind``, ``count``, ``time_ms``,
      ``bank_ms``: the pending request;
    - ``trick``: the current trick as ``[(seat, card), ...]``; ``tricks``: the finished tricks
      of the round as ``(leader, cards, winner)``;
    - ``bids``: per seat, ``None`` until known; ``bid_attempts``: Oh-Seven ``bids`` events of
      this deal; ``used_bids``: own cards already used as a bid this deal;
    - ``tricks_won``, ``scores`` (game totals, including Oh-Seven re-bid bonus points);
    - ``played``: cards played this round, per seat; ``seen``: every card played this round;
    - ``passed``/``received``: the cards this seat passed / received this round;
    - ``known``: per seat, cards known to be in its hand now (from bids shown and passes);
    - ``voids``: per seat, suits it is known to be out of;
    - ``phase``: ``"pass"``, ``"bid"``, ``"play"`` or ``"over"``.
    """

    def __init__(self) -> None:
        self.game: str | None = None
        self.rules: dict[str, Any] = {}
        self.players = 0
        self.seat = 0
        self.rounds = 0
        self.index = 0
        self.scores: list[int] = []
        self.results: list[dict[str, Any]] = []
        self.last_score: dict[str, Any] | None = None
        self.game_over: dict[str, Any] | None = None
        self.legal: list[Any] = []
        self.kind: str | None = None
        self.count = 0
        self.time_ms = 0
        self.bank_ms = 0
        self._queue: list[Any] = []  # events (and request kinds) not folded yet, see ``defer``
        self._reset_round(0, 0)

    # -- folding

    def _reset_round(self, number: int, hand_size: int) -> None:
        n = self.players
        self.round = number
        self.hand_size = hand_size
        self.deal = 0
        self.dealer: int | None = None
        self.trump: str | None = None
        self.trump_card: str | None = None
        self.leader: int | None = None
        self.hand: list[str] = []
        self.trick: list[tuple[int, str]] = []
        self.tricks: list[tuple[int, list[str], int]] = []
        self.bids: list[int | None] = [None] * n
        self.bid_attempts: list[dict[str, Any]] = []
        self.used_bids: list[str] = []
        self.tricks_won = [0] * n
        self.played: list[list[str]] = [[] for _ in range(n)]
        self.seen: list[str] = []
        self.passed: list[str] = []
        self.passed_to: int | None = None
        self.received: list[str] = []
        self.received_from: int | None = None
        self._shown: list[Counter[str]] = [Counter() for _ in range(n)]
        self.voids: list[set[str]] = [set() for _ in range(n)]
        self.phase = "bid"

    def apply(self, event: Mapping[str, Any]) -> None:
        """Fold one event into the view; raises :class:`ViewError` for an unknown type."""
        kind = event.get("type")
        handler = _HANDLERS.get(kind)  # type: ignore[arg-type]
        if handler is None:
            raise ViewError(f"unknown event type {kind!r} in {dict(event)!r}")
        if self.game is None and kind != "game":
            raise ViewError(f"event {kind!r} before the game event")
        handler(self, event)

    def apply_all(self, events: Iterable[Mapping[str, Any]]) -> None:
        handlers = _HANDLERS
        for event in events:
            handler = handlers.get(event.get("type"))  # type: ignore[arg-type]
            if handler is None or self.game is None:
                self.apply(event)  # its checks, and their errors
            else:
                handler(self, event)

    def defer(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Queue ``events``: they are applied, in order, when the view is next read.

        Reading the request's fields (``legal``, ``kind``, ``count``, ``time_ms``,
        ``bank_ms``) does not fold; reading anything else folds first. Errors of
        :meth:`apply` (:class:`ViewError`) are raised by that read. The queue is bounded: past
        ``_MAX_QUEUED`` items, the events before the last ``game`` event (which resets the
        view) are dropped, and if that is not enough the queue is folded.
        """
        queue = _get(self, "_queue")  # not through an unfolded view's __getattribute__
        queue.extend(events)
        if len(queue) > _MAX_QUEUED:  # a bot that never reads the view: bound the memory
            # a game event starts the view afresh: what is queued before the last one is moot
            for i in range(len(queue) - 1, 0, -1):
                item = queue[i]
                if type(item) is not str and item.get("type") == "game":
                    del queue[:i]
                    break
            if len(queue) > _MAX_QUEUED:
                self.fold()
                return
        if queue and type(self) is not _UnfoldedView:
            self.__class__ = _UnfoldedView

    def fold(self) -> None:
        """Apply the queued events now (reading the view does it by itself)."""
        queue = self._queue
        if type(self) is _UnfoldedView:
            self.__class__ = View  # type: ignore[assignment]  # back to the plain class
        if not queue:
            return
        self._queue = []
        for item in queue:
            if type(item) is str:  # a request's kind, queued by set_request
                self.phase = item
            else:
                self.apply(item)

    def set_request(self, request: Mapping[str, Any]) -> tuple[str | None, list[Any], int]:
        """Record a request's decision: ``kind``, ``legal``, ``count`` and the time left.

        Returns ``(kind, legal, count)`` as recorded.
        """
        kind = self.kind = request.get("kind")
        legal = request.get("legal")
        # a decoded request's list is the view's own (no copy); anything else is copied
        if type(legal) is not list:
            legal = list(legal or [])
        self.legal = legal
        count = self.count = int(request.get("count") or 0)
        self.time_ms = int(request.get("time_ms") or 0)
        self.bank_ms = int(request.get("bank_ms") or 0)
        if kind in ("pass", "bid", "play"):
            queue = _get(self, "_queue")
            if queue:  # the phase follows the queued events
                queue.append(kind)
            else:
                self.phase = kind
        return kind, legal, count

    def _on_game(self, e: Mapping[str, Any]) -> None:
        self.game = e["game"]
        self.rules = dict(e.get("rules") or {})
        self.players = int(e["players"])
        self.seat = int(e["seat"])
        self.rounds = int(e.get("rounds") or 0)
        self.index = int(e.get("index") or 0)
        self.scores = [0] * self.players
        self.results = []
        self.last_score = None
        self.game_over = None
        self._reset_round(0, 0)

    def _on_round(self, e: Mapping[str, Any]) -> None:
        scores = self.scores
        self._reset_round(int(e["round"]), int(e["hand_size"]))
        self.scores = scores
        self.deal = int(e.get("deal") or 0)
        if self.game == OH_HELL:
            self.dealer = e.get("dealer")
            self.trump = e.get("trump")
            self.trump_card = e.get("trump_card")
            if self.dealer is not None:
                self.leader = (self.dealer + 1) % self.players
        self.phase = "bid"

    def _on_deal(self, e: Mapping[str, Any]) -> None:
        self.hand = sorted(e["hand"], key=card_key)

    def _on_passed(self, e: Mapping[str, Any]) -> None:
        cards = list(e["cards"])
        self.passed = cards
        self.passed_to = int(e["receiver"])
        for card in cards:
            self.hand.remove(card)
        self._shown[self.passed_to].update(cards)

    def _on_received(self, e: Mapping[str, Any]) -> None:
        cards = list(e["cards"])
        self.received = cards
        self.received_from = int(e["giver"])
        self.hand = sorted(self.hand + cards, key=card_key)

    def _on_bids(self, e: Mapping[str, Any]) -> None:
        if "cards" in e:  # Oh-Seven: one card per seat, revealed together
            cards = e["cards"]
            self.bid_attempts.append(dict(e))
            self.used_bids.append(cards[self.seat])
            for s in range(len(cards)):
                if s != self.seat:
                    # every card shown this deal was in that hand (after the pass): the union
                    # keeps two copies only when the seat showed both.
                    shown = Counter(c[s] for c in (a["cards"] for a in self.bid_attempts))
                    self._shown[s] |= shown
            for s in e.get("bonus") or ():
                self.scores[s] += 1
            if not e.get("forced"):
                self.bids = [rank(c) for c in cards]
        else:  # Oh Hell simultaneous bids
            self.bids = [int(b) for b in e["bids"]]
            self.phase = "play"

    def _on_redeal(self, e: Mapping[str, Any]) -> None:
        pass  # the round event that follows resets the deal

    def _on_bid(self, e: Mapping[str, Any]) -> None:
        self.bids[int(e["seat"])] = int(e["bid"])
        if all(b is not None for b in self.bids):
            self.phase = "play"

    def _on_trump(self, e: Mapping[str, Any]) -> None:
        self.trump = e["suit"]
        self.leader = int(e["leader"])
        self.phase = "play"

    def _on_play(self, e: Mapping[str, Any]) -> None:
        seat, card = int(e["seat"]), e["card"]
        trick = self.trick
        if trick:
            led = trick[0][1][1]
            if card[1] != led:
                self.voids[seat].add(led)
                trump = self.trump
                if trump and card[1] != trump and self.rules.get("must_trump"):
                    self.voids[seat].add(trump)  # Oh Hell must_trump: it had no trump either
        else:
            self.leader = seat
        trick.append((seat, card))
        self.played[seat].append(card)
        self.seen.append(card)
        if seat == self.seat:
            self.hand.remove(card)
        self.phase = "play"

    def _on_trick(self, e: Mapping[str, Any]) -> None:
        winner = int(e["winner"])
        self.tricks.append((int(e["leader"]), list(e["cards"]), winner))
        self.tricks_won[winner] += 1
        self.trick = []
        self.leader = winner

    def _on_score(self, e: Mapping[str, Any]) -> None:
        self.scores = list(e["totals"])
        self.last_score = dict(e)
        self.results.append(dict(e))

    def _on_game_over(self, e: Mapping[str, Any]) -> None:
        self.scores = list(e["totals"])
        self.game_over = dict(e)
        self.phase = "over"

    # -- derived knowledge

    @property
    def is_oh_seven(self) -> bool:
        return self.game == OH_SEVEN

    @property
    def two_decks(self) -> bool:
        return self.game == OH_SEVEN and self.players >= 5

    @property
    def led_suit(self) -> str | None:
        return self.trick[0][1][1] if self.trick else None

    def hand_count(self, seat: int) -> int:
        """How many cards ``seat`` holds now."""
        if seat == self.seat:
            return len(self.hand)
        return self.hand_size - len(self.played[seat])

    def known(self, seat: int) -> list[str]:
        """Cards known to be in ``seat``'s hand now: shown as bids or passed to it, not played."""
        if seat == self.seat:
            return list(self.hand)
        left = self._shown[seat] - Counter(self.played[seat])
        return sorted(left.elements(), key=card_key)

    def unseen_cards(self) -> list[str]:
        """Cards of the deck that may be in another hand: not own, not played, not turned up.

        With two decks a name appears as many times as copies remain unseen.
        """
        assert self.game is not None
        pool = Counter(deck_names(self.game, self.players))
        pool.subtract(self.hand)
        pool.subtract(self.seen)
        if self.trump_card is not None:
            pool[self.trump_card] -= 1
        return sorted((+pool).elements(), key=card_key)

    def need(self, seat: int | None = None) -> int | None:
        """Tricks still to win to make the bid (negative: over it); ``None`` before bids."""
        s = self.seat if seat is None else seat
        if not self.bids or self.bids[s] is None:
            return None
        return self.bids[s] - self.tricks_won[s]  # type: ignore[operator]

    def winning(self) -> tuple[int, str] | None:
        """The seat and card currently winning the trick, or ``None`` for an empty trick."""
        if not self.trick:
            return None
        led, trump = self.trick[0][1][1], self.trump
        best_seat, best = self.trick[0]
        strongest = trick_strength(led, rank(best), led, trump)
        for seat, card in self.trick[1:]:
            strength = trick_strength(card[1], rank(card), led, trump)
            if strength > strongest:
                best_seat, best, strongest = seat, card, strength
        return best_seat, best

    def beats(self, card: str, best: str) -> bool:
        """Whether ``card`` played now would beat ``best`` (the trick's current winner)."""
        led, trump = best[1], self.trump
        return trick_strength(card[1], rank(card), led, trump) > trick_strength(
            led, rank(best), led, trump
        )

    def __repr__(self) -> str:
        return (
            f"View({self.game}, seat {self.seat}/{self.players}, round {self.round}, "
            f"phase {self.phase}, hand {self.hand})"
        )


class _UnfoldedView(View):
    """A :class:`View` with queued events (see :meth:`View.defer`).

    The first read of an attribute the events decide folds them and turns the object back into
    a plain :class:`View`, so later reads cost what they always do.
    """

    def __getattribute__(self, name: str) -> Any:
        if name not in _READ_WITHOUT_FOLD:
            View.fold(self)
        return object.__getattribute__(self, name)


_get = object.__getattribute__

#: what a bot may read of a view with queued events without folding them: the request's
#: fields, and what the driver itself uses
_READ_WITHOUT_FOLD = frozenset(
    {"legal", "kind", "count", "time_ms", "bank_ms", "_queue", "defer", "fold", "set_request"}
)
_MAX_QUEUED = 1024

_HANDLERS = {
    "game": View._on_game,
    "round": View._on_round,
    "deal": View._on_deal,
    "passed": View._on_passed,
    "received": View._on_received,
    "bids": View._on_bids,
    "redeal": View._on_redeal,
    "bid": View._on_bid,
    "trump": View._on_trump,
    "play": View._on_play,
    "trick": View._on_trick,
    "score": View._on_score,
    "game_over": View._on_game_over,
}
