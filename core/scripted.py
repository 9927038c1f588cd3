"""A scripted in-process transport for :class:`~ohseven.core.table.Table`, on a fake clock:
the referee loop's fault handling tested without processes or sockets.

Each :class:`ScriptedLink` is an asynchronous seat whose answers come from a script: a
function of the request (and the game) returning a :class:`Reply` (a move after a delay,
garbage, silence, death). :class:`ScriptedTransport` delivers them in time order, moving its
:class:`FakeClock` forward instead of sleeping. Answers are checked as the referee's protocol
checks them (the wire codec, the request's legal list), with the same closed fault statuses.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import attrs

from .cards import UnknownCardError
from .faults import FaultStatus
from .game import Game
from .table import Request, Table
from .values import Event
from .wire import move_from_wire

__all__ = ["FakeClock", "Reply", "ScriptedLink", "ScriptedTransport", "Script"]


class FakeClock:
    """A clock that moves only when told."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@attrs.frozen
class Reply:
    """What a scripted seat does with one request: after ``delay`` seconds, ``action``:
    ``"move"`` answers ``value`` (wire form, checked), ``"garbage"`` sends a malformed
    message, ``"die"`` ends its process (a crash), ``"silent"`` never answers."""

    action: str
    delay: float = 0.0
    value: object = None
    error: str | None = None  # the bot's own report that its move is a substitute

    @classmethod
    def move(cls, value: object, delay: float = 0.0, error: str | None = None) -> Reply:
        return cls("move", delay, value, error)

    @classmethod
    def garbage(cls, delay: float = 0.0) -> Reply:
        return cls("garbage", delay)

    @classmethod
    def die(cls, delay: float = 0.0) -> Reply:
        return cls("die", delay)

    @classmethod
    def silent(cls) -> Reply:
        return cls("silent")


#: a seat's script: the reply to each request, given the request and the game
Script = Callable[[Request, Game], Reply]


def first_legal(request: Request, game: Game) -> Reply:
    """The script of a well-behaved seat: the first legal move at once."""
    if request.kind == "pass":
        return Reply.move(request.legal[: request.count])
    return Reply.move(request.legal[0])


class ScriptedLink:
    """An asynchronous seat answering from ``script``."""

    synchronous = False

    def __init__(self, transport: ScriptedTransport, script: Script = first_legal) -> None:
        self.transport = transport
        self.script = script
        self.dead = False
        self.requests: list[Request] = []  # every request it was sent
        self.events: list[Event] = []  # every event it was sent
        self.faults: list[tuple[FaultStatus, Request | None]] = []  # ``faulted`` calls

    def usable(self) -> bool:
        return not self.dead

    def wake(self) -> None:
        pass

    def send(self, table: Table, request: Request, events: list[Event]) -> None:
        self.requests.append(request)
        self.events.extend(events)
        reply = self.script(request, table.game)
        if reply.action != "silent":
            self.transport.schedule(self.transport.clock.now + reply.delay, self, request, reply)

    def tell(self, events: list[Event]) -> None:
        self.events.extend(events)

    def faulted(
        self, table: Table, seat: int, status: FaultStatus, request: Request | None
    ) -> None:
        self.faults.append((status, request))


class ScriptedTransport:
    """Delivers the scripted links' replies in time order on ``clock``."""

    def __init__(self, clock: FakeClock | None = None) -> None:
        self.clock = clock or FakeClock()
        self.pending: list[tuple[float, int, ScriptedLink, Request, Reply]] = []
        self.sequence = 0
        self.waits: list[float] = []  # every timeout waited on

    def schedule(self, at: float, link: ScriptedLink, request: Request, reply: Reply) -> None:
        self.sequence += 1
        self.pending.append((at, self.sequence, link, request, reply))

    def wait(self, table: Table, timeout: float) -> None:
        self.waits.append(timeout)
        clock = self.clock
        horizon = clock.now + max(0.0, timeout)
        due = sorted(p for p in self.pending if p[0] <= horizon)
        if timeout <= 0:  # only the checks: a death that happened is found, no reply read
            due = [p for p in due if p[4].action == "die"]
        if not due:
            clock.now = horizon
            return
        at, _, link, request, reply = due[0]
        self.pending.remove(due[0])
        clock.now = max(clock.now, at)
        self._deliver(table, link, request, reply)

    def _deliver(self, table: Table, link: ScriptedLink, request: Request, reply: Reply) -> None:
        seat = request.seat
        if link.dead:
            return
        if reply.action == "die":
            link.dead = True
            table.fault(seat, FaultStatus.CRASH, "exited with code 1")
            return
        if table.outstanding.get(seat) is not request:
            return  # late: the referee's connection discards it
        if reply.action == "garbage":
            table.fault(seat, FaultStatus.MALFORMED, "not a msgpack message")
            return
        try:
            move = move_from_wire(table.game, request.kind, reply.value)
        except UnknownCardError as error:  # a string, not a card held: as the protocol says
            table.fault(seat, FaultStatus.ILLEGAL, str(error))
            return
        except ValueError as error:
            table.fault(seat, FaultStatus.MALFORMED, str(error))
            return
        value = reply.value
        if isinstance(value, list | tuple):  # a pass (``move_from_wire`` checked its shape)
            legal = len(value) == request.count and not Counter(value) - Counter(request.legal)
        else:
            legal = value in request.legal
        if not legal:
            table.fault(seat, FaultStatus.ILLEGAL, f"{request.kind} {value!r} is not legal")
            return
        table.answer(request, move, reply.error)
