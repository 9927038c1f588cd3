"""One bot of a table as the referee runs it (:class:`Contestant`): its spec, its current
process and connection, and its record in the match. :class:`~.referee.Referee` owns and
changes them; everyone else reads them."""

from __future__ import annotations

import attrs
from ohseven.referee.play.connection import Connection, State
from ohseven.referee.records import BotSpec, FaultStatus
from ohseven.referee.sandbox.process import BotProcess

__all__ = ["Contestant"]


@attrs.define(eq=False)
class Contestant:
    """One bot of the table as the referee runs it: its spec, its current process and
    connection, and its record in the match. Only its :class:`~.referee.Referee` changes it;
    for everyone else: ``index`` (in ``spec.bots``), ``spec``, ``restarts``, ``launches``,
    ``faults`` (counted towards dropping it), ``dropped``, ``ever_ready`` (it said hello in
    this match), :attr:`active`, :meth:`output`, :meth:`take_carried`."""

    index: int
    spec: BotSpec
    process: BotProcess | None = None
    connection: Connection | None = None
    routing_id: bytes | None = None
    restarts: int = 0
    launches: int = 0  # processes started in this match (restarts and fresh deals included)
    seen: set[int] = attrs.Factory(set)  # the deals (seeds) its current process has been shown
    faults: int = 0
    dropped: bool = False
    ever_ready: bool = False  # it said hello at least once in this match
    carry: list[tuple[FaultStatus, str]] = attrs.Factory(list)  # faults for its next game
    logs: list[str] = attrs.Factory(list)
    socket_dir: str = ""  # private to this bot; its endpoint is in it
    bound: str | None = None  # the endpoint bound for its current process
    accepted: int = 0  # connections accepted on it
    #: a process started ahead for the bot's next game (:meth:`~.referee.Referee.foresee`),
    #: told nothing of any game until it is swapped into the bot
    spare: bool = False

    @property
    def endpoint(self) -> str:
        return f"ipc://{self.socket_dir}/referee-{self.launches}"  # one per process

    @property
    def active(self) -> bool:
        connection = self.connection
        return (
            not self.dropped
            and connection is not None
            and connection.state is not State.AWAITING_HELLO
            and connection.state is not State.CLOSED
        )

    def output(self) -> str:
        """Its own output so far (stdout and stderr of every process it had in this match)."""
        logs = [*self.logs, self.process.log() if self.process is not None else ""]
        return "\n".join(log for log in logs if log)

    def take_carried(self) -> list[tuple[FaultStatus, str]]:
        """The faults it had while none of its games was being played (a failed start, a
        crash between games), which would open its next game's faults; they are taken: that
        game will not record them."""
        carried = list(self.carry)
        self.carry.clear()
        return carried
