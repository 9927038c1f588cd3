"""The link of a bot process to its seat at a table (:class:`BotLink`, a
:class:`~ohseven.core.table.Link`): how a table's requests reach a bot's process and how its
faults count, the seat's side of :class:`~ohseven.referee.play.referee.Referee`'s transport.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import zmq
from ohseven.core.table import Request, Table
from ohseven.core.values import Event
from ohseven.referee.play.connection import Connection, events_message
from ohseven.referee.play.contestant import Contestant
from ohseven.referee.records import FaultStatus
from ohseven.referee.sandbox.process import BotProcess

__all__ = ["BotLink", "Transport", "SEND_MORE", "NOBLOCK"]

#: the flags of a request's two frames (routing id, then the message) on the ROUTER socket
SEND_MORE = int(zmq.SNDMORE | zmq.NOBLOCK)
NOBLOCK = int(zmq.NOBLOCK)


class Transport(Protocol):
    """What a link uses of its :class:`~ohseven.referee.play.referee.Referee` (which
    implements it): the table being played, its socket's send, the bookkeeping it leaves
    for after the requests are out, and the count of a bot's faults."""

    @property
    def table(self) -> Table | None: ...

    @property
    def to_rest(self) -> list[BotProcess]: ...

    @property
    def asked(self) -> list[Connection]: ...

    @property
    def send_frame(self) -> Callable[..., object]: ...

    def send_to(self, rid: bytes | None, frame: bytes) -> None: ...

    def count_fault(self, bot: Contestant, status: FaultStatus) -> None: ...


class BotLink:
    """The link of a bot process to its seat (:class:`~ohseven.core.table.Link`): requests
    go out on the referee's socket, replies come back through :meth:`Referee.wait`; a fault
    counts towards the bot's ``drop_after_faults``. Made by :meth:`Referee.link`."""

    synchronous = False
    __slots__ = ("referee", "bot")

    def __init__(self, referee: Transport, bot: Contestant) -> None:
        self.referee = referee
        self.bot = bot

    def usable(self) -> bool:
        return self.bot.active

    def wake(self) -> None:
        process = self.bot.process
        if process is not None:
            resting = self.referee.to_rest
            again = process in resting  # asked again before it came to rest: never frozen
            if resting:  # those that answered stop before this one runs: one bot at a time
                for other in resting:
                    if other is not process:
                        other.freeze()
                resting.clear()
            if not again:
                process.thaw()

    def send(self, table: Table, request: Request, events: list[Event]) -> None:
        bot = self.bot
        connection = bot.connection
        assert connection is not None
        frame = connection.request(request, events)
        self.referee.asked.append(connection)
        rid = bot.routing_id
        assert rid is not None
        send = self.referee.send_frame
        try:  # as ``Referee.send_to``, inline on the hot path
            send(rid, SEND_MORE)
            send(frame, NOBLOCK)
        except zmq.ZMQError:
            pass  # a peer that is gone or has a full queue loses the frame and will time out

    def tell(self, events: list[Event]) -> None:
        self.referee.send_to(self.bot.routing_id, events_message(events))

    def faulted(
        self, table: Table, seat: int, status: FaultStatus, request: Request | None
    ) -> None:
        bot = self.bot
        if bot.connection is not None:
            bot.connection.expire()
        if request is not None and bot.process is not None:
            bot.process.freeze()  # it owes no decision any more
        self.referee.count_fault(bot, status)
