"""The one referee loop: drive one game by asking each seat's :class:`Link` for its decisions.

A :class:`Table` owns the game's referee-side state (the rules engine's game, each seat's
event feed, time bank and outstanding request, the faults) and knows nothing of processes or
sockets. Each seat is behind a link:

- an *asynchronous* link (``synchronous = False``: a bot process over ZeroMQ, the scripted
  links of the tests) is sent its request and answers later: the table waits on its
  :class:`Transport`, which hands each reply to :meth:`Table.answer` or a fault to
  :meth:`Table.fault`. All asynchronous seats to act are asked at once (simultaneous
  decisions), each with its own deadline (``move_seconds`` plus its bank), or with
  ``one_at_a_time`` one after another (each answer before the next seat is asked);
- a *synchronous* link (an SDK bot in-process, ``check-bot``'s scripted opponents) answers
  inside :meth:`Link.send`. It is asked only when no asynchronous request is outstanding, so
  in-process seats move after the remote ones, whatever their speed: the same game every run.

A seat whose link is not :meth:`~Link.usable` (dropped, not running) and a seat that faults
get a move of the table's :class:`Fallback`. The referee's matches, ``check-bot``, ``replay``
and the SDK's local games all play through this loop; only their links differ.
No I/O here, no ZeroMQ: the SDK imports it.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from .faults import Fault, FaultStatus
from .feed import EventFeed, game_event
from .game import Game
from .options import Phase
from .rules import RulesError
from .seeds import fallback_rng
from .values import Event, Move, WireChoice
from .wire import legal_to_wire

__all__ = [
    "Request",
    "Link",
    "LinkBase",
    "Transport",
    "Fallback",
    "RandomFallback",
    "Table",
    "OnMove",
    "request_message",
    "DEFAULT_MOVE_SECONDS",
    "DEFAULT_BANK_SECONDS",
]

_KIND = {phase: phase.value for phase in Phase}  # a request's kind in each phase

#: The referee's default time control (``referee.records.TimeControl``, the SDK's local
#: games): the limit of one decision and the bank of a game, in seconds.
DEFAULT_MOVE_SECONDS = 1.0
DEFAULT_BANK_SECONDS = 10.0


class Request:
    """One decision asked of a seat."""

    __slots__ = ("id", "seat", "kind", "legal", "count", "sent", "deadline", "bank_ms", "legal_set")

    def __init__(
        self,
        id: int,  # noqa: A002 - the protocol's name
        seat: int,
        kind: str,
        legal: list[WireChoice],
        count: int,
        sent: float,
        deadline: float,
        bank_ms: int = 0,
        legal_set: frozenset[WireChoice] | None = None,
    ) -> None:
        self.id = id
        self.seat = seat
        self.kind = kind
        self.legal = legal
        self.count = count
        self.sent = sent  # clock time it was sent
        self.deadline = deadline  # clock time it times out
        self.bank_ms = bank_ms  # what was left of the seat's bank when it was sent
        #: ``legal`` as a set for long lists; empty or None: ``legal`` itself is searched
        self.legal_set = legal_set

    def __repr__(self) -> str:
        return f"Request(id={self.id}, seat={self.seat}, kind={self.kind!r}, legal={self.legal})"


class Link(Protocol):
    """One seat's bot, as the table sees it."""

    #: True: :meth:`send` answers at once (:meth:`Table.answer` or :meth:`Table.fault`)
    synchronous: bool

    def usable(self) -> bool:
        """Whether to ask it at all (False: the fallback plays for it)."""

    def wake(self) -> None:
        """Called just before a request's clock starts (the referee thaws a frozen bot)."""

    def send(self, table: Table, request: Request, events: list[Event]) -> None:
        """Ask ``request``, with the seat's ``events`` since its last request."""

    def tell(self, events: list[Event]) -> None:
        """The seat's last events of the game (no request follows)."""

    def faulted(
        self, table: Table, seat: int, status: FaultStatus, request: Request | None
    ) -> None:
        """``seat`` just faulted (recorded); ``request`` is the request it no longer owes."""


class LinkBase:
    """A base for in-process links: always usable, nothing to wake, nothing to tell, and a
    fault costs them nothing. A subclass answers in :meth:`send` (``synchronous``, the
    default) and overrides what else it needs."""

    synchronous = True
    __slots__ = ()

    def usable(self) -> bool:
        return True

    def wake(self) -> None:
        return None

    def send(self, table: Table, request: Request, events: list[Event]) -> None:
        raise NotImplementedError(f"{type(self).__name__} answers no request")

    def tell(self, events: list[Event]) -> None:
        return None

    def faulted(
        self, table: Table, seat: int, status: FaultStatus, request: Request | None
    ) -> None:
        return None


def request_message(request: Request, events: list[Event]) -> Event:
    """The protocol's request message (PROTOCOL.md) asking ``request`` with the seat's
    ``events``: ``time_ms`` is all the seat has for it (the per-decision limit plus what is
    left of its bank), ``bank_ms`` what is left of its bank. The referee sends it to a bot
    process; the SDK's local games hand it to their bots."""
    return {
        "type": "request",
        "id": request.id,
        "kind": request.kind,
        "events": events,
        "legal": request.legal,
        "count": request.count,
        "time_ms": max(0, int((request.deadline - request.sent) * 1000)),
        "bank_ms": request.bank_ms,
    }


class Transport(Protocol):
    """What the table waits on while asynchronous requests are outstanding."""

    def wait(self, table: Table, timeout: float) -> None:
        """Deliver what arrives within ``timeout`` seconds (at least one reply or fault, or
        nothing when the time is up; returning earlier is allowed). ``timeout`` 0: only check
        the seats (a crash found then is a crash, not a timeout), deliver no reply."""


class Fallback(Protocol):
    def move(self, game: Game, seat: int) -> Move:
        """The legal move played for ``seat`` when its bot does not provide one."""


class RandomFallback:
    """A uniformly random legal move from a generator per seat (:func:`~.seeds.fallback_rng`
    of ``key``): the same faults in the same game give the same moves."""

    __slots__ = ("key", "rngs")

    def __init__(self, key: object) -> None:
        self.key = key
        self.rngs: dict[int, random.Random] = {}

    def move(self, game: Game, seat: int) -> Move:
        rng = self.rngs.get(seat)
        if rng is None:
            rng = self.rngs[seat] = fallback_rng(self.key, seat)
        legal = list(game.legal_moves(seat))
        return legal[rng.randrange(len(legal))]


#: ``on_move(seat, kind, move, seconds)`` before each move is played: ``seconds`` from the
#: request to its answer, None for a fallback move
OnMove = Callable[[int, str, Move, "float | None"], None]


class Table:
    """The referee side of one game: ask the seats' links until the game is over."""

    def __init__(
        self,
        game: Game,
        links: Sequence[Link],
        *,
        index: int = 0,
        move_seconds: float = 1.0,
        bank_seconds: float = 0.0,
        fallback: Fallback | None = None,
        transport: Transport | None = None,
        clock: Callable[[], float] = time.monotonic,
        first_id: int = 1,
        on_move: OnMove | None = None,
        one_at_a_time: bool = False,
    ) -> None:
        if len(links) != game.players:
            raise ValueError(f"{len(links)} links for a game of {game.players} players")
        self.game = game
        self.index = index
        self.links = list(links)
        self.move_seconds = move_seconds
        self.banks = [float(bank_seconds)] * game.players
        self.fallback: Fallback = fallback if fallback is not None else RandomFallback(index)
        self.transport = transport
        self.clock = clock
        self.next_id = first_id  # the id of the next request (the caller reads it back)
        self.on_move = on_move
        #: ask simultaneous decisions (Oh-Seven's passes and bids) one seat after another, so
        #: that no two bots compute at once (the referee freezes a bot that owes no decision:
        #: then no bot can time another's work)
        self.one_at_a_time = one_at_a_time
        self.outstanding: dict[int, Request] = {}
        self.faults: list[Fault] = []
        #: the moves played at this table (a fault names the move it cost, counted from 1)
        self.played = 0
        #: set to end :meth:`run` before the game is over (``replay`` asks one decision)
        self.stopped = False
        self.feeds = [
            EventFeed(game, seat, prefix=[game_event(game, index, seat)])
            for seat in range(game.players)
        ]
        self._sync = [bool(link.synchronous) for link in self.links]

    # -- what links and transports call

    def answer(self, request: Request, move: Move, error: str | None = None) -> None:
        """``request``'s answer ``move`` (engine form) came in: charge any overtime to the bank
        and play it; ``error`` is the bot's own report that the move is a substitute."""
        seat = request.seat
        if self.outstanding.get(seat) is not request:
            return  # expired meanwhile: the links reject late replies, this is a safety net
        del self.outstanding[seat]
        if error is not None:  # recorded, not counted towards dropping the bot
            self.faults.append(self._located(seat, FaultStatus.BOT_ERROR, error))
        took = self.clock() - request.sent
        over = took - self.move_seconds
        if over > 0:
            banks = self.banks
            banks[seat] = max(0.0, banks[seat] - over)
        if self.on_move is not None:
            self.on_move(seat, request.kind, move, took)
        try:
            self.game.push(seat, move)
        except RulesError as error:  # a link that did not check the legal list
            self.faults.append(self._located(seat, FaultStatus.ILLEGAL, str(error)))
            self._fall_back(seat)
            return
        self.played += 1

    def _located(self, seat: int, status: FaultStatus, detail: str) -> Fault:
        """A fault of ``seat`` with the move it costs (if it owes one), its round and trick."""
        game = self.game
        move = game.move_number(seat, self.played)
        if move is None:
            return Fault(seat, status, detail)
        trick = sum(game.tricks_won) + 1 if game.phase is Phase.PLAY else None
        return Fault(seat, status, detail, move, game.round + 1, trick)

    def fault(self, seat: int, status: FaultStatus, detail: str) -> None:
        """Record a fault of ``seat``; if it owed a decision, the fallback plays it."""
        self.faults.append(self._located(seat, status, detail))
        request = self.outstanding.pop(seat, None)
        self.links[seat].faulted(self, seat, status, request)
        game = self.game
        if request is not None and not game.is_over and seat in game.to_act:
            self._fall_back(seat)

    def _fall_back(self, seat: int) -> None:
        game = self.game
        move = self.fallback.move(game, seat)
        if self.on_move is not None:
            self.on_move(seat, game.phase.value, move, None)
        game.push(seat, move)
        self.played += 1

    # -- the loop

    def _request(self, seat: int) -> Request:
        game = self.game
        legal, count = legal_to_wire(game, seat)
        bank = self.banks[seat]
        now = self.clock()
        request = Request(
            self.next_id,
            seat,
            _KIND[game.phase],
            legal,
            count,
            now,
            now + self.move_seconds + bank,
            int(bank * 1000),
        )
        self.next_id += 1
        self.outstanding[seat] = request
        return request

    def run(self) -> None:
        """Play until the game is over (or :attr:`stopped`)."""
        # The hot path: a reply is handled, then the next request goes out at once; the
        # transport's bookkeeping (process checks, timeouts) comes after the sends.
        game = self.game
        outstanding = self.outstanding
        links, feeds, sync = self.links, self.feeds, self._sync
        has_sync = any(sync)
        clock = self.clock
        request_for = self._request
        one_at_a_time = self.one_at_a_time
        while not game.is_over and not self.stopped:
            acted = False
            for seat in game.to_act:
                if seat in outstanding or sync[seat]:
                    continue
                if one_at_a_time and outstanding:
                    break
                link = links[seat]
                if not link.usable():
                    self._fall_back(seat)
                    acted = True
                    break
                link.wake()  # before the clock starts: thawing is the referee's time
                link.send(self, request_for(seat), feeds[seat].take())
            if acted:
                continue
            if not outstanding:
                if has_sync:
                    self._ask_synchronous()
                continue
            now = clock()
            if len(outstanding) == 1:
                first = next(iter(outstanding.values())).deadline
            else:
                first = min(r.deadline for r in outstanding.values())
            transport = self.transport
            if transport is None:
                raise RuntimeError("asynchronous links need a transport to wait on")
            if now < first:
                transport.wait(self, first - now)
                continue
            transport.wait(self, 0.0)
            for seat, request in list(outstanding.items()):
                if now >= request.deadline and outstanding.get(seat) is request:
                    self.banks[seat] = 0.0
                    self.fault(
                        seat,
                        FaultStatus.TIMEOUT,
                        f"no reply to request {request.id} ({request.kind}) "
                        f"within {(request.deadline - request.sent) * 1000:.0f} ms",
                    )

    def _ask_synchronous(self) -> None:
        """Ask the first in-process seat to act (it answers at once)."""
        for seat in self.game.to_act:
            if not self._sync[seat]:
                continue
            link = self.links[seat]
            if not link.usable():
                self._fall_back(seat)
                return
            request = self._request(seat)
            link.send(self, request, self.feeds[seat].take())
            if self.outstanding.get(seat) is request:  # a link that neither answered nor faulted
                self.fault(seat, FaultStatus.PROTOCOL, f"no answer to request {request.id}")
            return

    def finish(self) -> None:
        """Tell every usable seat the game's last events (its result)."""
        for seat, link in enumerate(self.links):
            events = self.feeds[seat].take()
            if events and link.usable():
                link.tell(events)
