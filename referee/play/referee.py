"""The bot processes of one table, and the transport a :class:`~ohseven.core.table.Table` waits on.

The public API of the play stage (``play_match``, ``check-bot``, ``replay`` and the competition
server drive it; nothing else reaches into it):

- :class:`Referee` (a context manager): ``Referee(spec, sandbox)`` owns the table's bots
  (:class:`Contestant`, one per ``spec.bots``), one ZeroMQ ``ROUTER`` socket and a private
  directory. :meth:`Referee.start` starts bot processes and waits (bounded) for their hellos;
  :meth:`Referee.prepare` readies the bots of a game (a fresh process for one that has seen the
  deal, a restart within budget for one that crashed); :meth:`Referee.play` plays a game on the
  one loop (``core.table.Table``) with :meth:`Referee.link` in the bots' seats and any other
  :class:`~ohseven.core.table.Link` (in-process opponents, a human) in the others, and returns
  the table (its faults); :meth:`Referee.close` shuts everything down and returns the logs.
- Hooks instead of overrides: ``env`` (added to every bot's environment), ``on_frame`` (each
  frame a bot sends after its hello, before it is handled: ``replay`` reads the raw answer),
  and the table's own ``on_move`` and ``stopped`` (:attr:`Referee.table`).

A bot's first message must be a hello with its secret: that binds the ZeroMQ routing id to the
bot, and frames from any other peer are dropped (at most ``STRANGER_FRAMES`` per connection,
at most ``MAX_CONNECTIONS`` connections per bot). Every decision is a request with a
match-unique id, the referee measures time itself, and every fault (see ``FaultStatus``) is
recorded and answered with a seeded random legal move so the game goes on. Everything is
bounded in time: a bot that hangs, floods, crashes or lies cannot hang the table.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence

import attrs
import zmq
from ohseven.core import seeds
from ohseven.core.rules import Game
from ohseven.core.table import Fallback, Link, OnMove, Request, Table
from ohseven.core.values import Move
from ohseven.referee.fault_report import exit_text
from ohseven.referee.play.connection import (
    MAX_TRANSPORT_FRAME,
    Accepted,
    Connection,
    Hello,
    Invalid,
    Late,
    MoveCodec,
    State,
    decode,
    error_message,
    shutdown_message,
)
from ohseven.referee.play.contestant import Contestant
from ohseven.referee.play.descriptors import (
    FD_RESERVE,
    bot_capacity,
    open_descriptors,
    raise_fd_limit,
    start_groups,
)
from ohseven.referee.play.link import NOBLOCK, SEND_MORE, BotLink
from ohseven.referee.play.strangers import STRANGER_FRAMES, Strangers
from ohseven.referee.records import BotSpec, Fault, FaultStatus, MatchSpec
from ohseven.referee.sandbox.process import BotProcess
from ohseven.referee.sandbox.settings import BotStartError, SandboxConfig

__all__ = [
    "Referee",
    "BotLink",
    "OnFrame",
    "DEFAULT_DROP_AFTER_FAULTS",
    "MAX_CONNECTIONS",
    "STRANGER_FRAMES",
    "SHUTDOWN_SECONDS",
]

#: A bot with this many faults in a match is dropped from it (fallback moves play for it).
DEFAULT_DROP_AFTER_FAULTS = 10
SHUTDOWN_SECONDS = 2.0
_PROCESS_CHECK_SECONDS = 0.05
#: the longest a receive blocks: the loop then checks the processes and the deadlines
_WAIT_MS = round(_PROCESS_CHECK_SECONDS * 1000)
# the options as their enum members: pyzmq converts a plain int to one on every call
_RCVTIMEO, _RCVMORE = zmq.SocketOption.RCVTIMEO, zmq.SocketOption.RCVMORE

#: Connections a bot may open to its endpoint (before its hello: the endpoint's file is removed
#: at the hello); one more and it is faulted ``protocol`` and killed.
MAX_CONNECTIONS = 4
#: ``on_frame(bot, frame)``: a frame ``bot`` sent after its hello, before it is handled
OnFrame = Callable[[Contestant, bytes], None]


class Referee:
    """The bot processes of one table (``spec.bots``, in :attr:`bots`) and the transport its
    games wait on. ``spec``'s seatings and seeds are not read here (a caller plays what it
    wants with :meth:`play`); its time control, match id and ``fallback_seed`` are.

    ``max_restarts``: restarts of a crashed bot in the match (then it is dropped);
    ``drop_after_faults``: faults after which a bot is dropped (fallback moves play for it);
    ``env``: added to every bot's environment; ``on_frame``: called with each frame a bot
    sends after its hello, before it is handled. Use it as a context manager, or call
    :meth:`close`.
    """

    def __init__(
        self,
        spec: MatchSpec,
        sandbox: SandboxConfig,
        *,
        max_restarts: int = 2,
        drop_after_faults: int = DEFAULT_DROP_AFTER_FAULTS,
        env: Mapping[str, str] | None = None,
        on_frame: OnFrame | None = None,
    ) -> None:
        self.spec = spec
        self.config = sandbox
        self.max_restarts = max_restarts
        self.drop_after_faults = drop_after_faults
        self.bots = [Contestant(i, b) for i, b in enumerate(spec.bots)]
        self.by_rid: dict[bytes, Contestant] = {}
        self.by_endpoint: dict[bytes, Contestant] = {}
        self.strangers = Strangers()  # the routing ids with no accepted hello
        raise_fd_limit(
            open_descriptors()
            + FD_RESERVE
            + 2 * sum(bot_capacity(self._sandbox_for(b)) for b in spec.bots)  # spares too
        )
        self.next_id = 1
        #: the table of the game being played (None between games)
        self.table: Table | None = None
        self.seat_of: dict[int, int] = {}  # bot index -> seat in the game being played
        self.codec: MoveCodec | None = None
        self.bots_at: list[Contestant | None] = []
        self.env = dict(env or {})  # added to every bot's environment
        self.on_frame = on_frame
        self.logs: dict[str, str] | None = None  # by bot name, once closed
        self.last_check = 0.0
        #: seconds the loop spent killing bots: the tables' clock stands still meanwhile
        self.stalled = 0.0
        #: the bookkeeping of a decision that waits until the next requests are out
        #: (:meth:`_settle`): the processes that answered and come to rest (frozen before
        #: another bot is woken, :meth:`BotLink.wake`), and the connections just asked
        self.to_rest: list[BotProcess] = []
        self.asked: list[Connection] = []  # their replies are to be noted (``expect``)
        # One ROUTER socket bound once per bot, each endpoint in a directory of its own that
        # the sandbox hands to that bot's uid; the parent can be traversed, not listed.
        self.socket_dir = tempfile.mkdtemp(prefix="ohseven-")
        os.chmod(self.socket_dir, 0o711)
        self.context = zmq.Context()
        sock = self.context.socket(zmq.ROUTER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.MAXMSGSIZE, MAX_TRANSPORT_FRAME)
        sock.setsockopt(zmq.RCVHWM, 1000)
        sock.setsockopt(zmq.SNDHWM, 1000)
        self.socket = sock
        # pyzmq's ``Socket.send`` only adds draft-socket options to the backend's: this is the
        # backend's, a call less for the two frames of every request
        self.send_frame = super(zmq.Socket, sock).send
        # every accepted connection, by endpoint: how the referee counts a bot's connections
        self.monitor = sock.get_monitor_socket(zmq.EVENT_ACCEPTED)
        self.receive_timeout_ms = -1  # the socket's RCVTIMEO, set only when it changes
        #: processes started ahead for the next game (:meth:`foresee`), by bot index
        self.spares: dict[int, Contestant] = {}

    def _bind(self, bot: Contestant) -> None:
        """A new private directory and endpoint for ``bot``'s next process.

        The directory is the one place of the host a sandboxed bot is shown that outlives its
        process: a process must find nothing its predecessor left there (a file, the endpoint's
        times), or a fresh process per rotation would still know the deal (duplicate play).
        """
        self._unbind(bot)
        if bot.socket_dir:
            shutil.rmtree(bot.socket_dir, ignore_errors=True)
        bot.socket_dir = os.path.join(self.socket_dir, secrets.token_hex(8))
        os.mkdir(bot.socket_dir, 0o700)
        bot.accepted = 0
        self.socket.bind(bot.endpoint)
        bot.bound = bot.endpoint
        self.by_endpoint[bot.endpoint.encode()] = bot

    def _unbind(self, bot: Contestant) -> None:
        """Close ``bot``'s endpoint and every connection accepted on it."""
        if bot.bound is None:
            return
        with contextlib.suppress(zmq.ZMQError):
            self.socket.unbind(bot.bound)
        self.by_endpoint.pop(bot.bound.encode(), None)
        with contextlib.suppress(OSError):
            os.unlink(bot.bound[len("ipc://") :])
        bot.bound = None

    def _watch(self) -> None:
        """Count the connections accepted on each endpoint; fault and kill a bot past
        ``MAX_CONNECTIONS``."""
        monitor = self.monitor
        while True:
            try:
                parts = monitor.recv_multipart(NOBLOCK)
            except zmq.Again:
                return
            if len(parts) != 2:
                continue
            bot = self.by_endpoint.get(parts[1])
            if bot is None:
                continue
            bot.accepted += 1
            if bot.accepted > MAX_CONNECTIONS and bot.process is not None:
                self._lose(
                    bot,
                    FaultStatus.PROTOCOL,
                    f"opened {bot.accepted} connections to its endpoint "
                    f"(at most {MAX_CONNECTIONS})",
                )

    # -- processes

    def _sandbox_for(self, spec: BotSpec) -> SandboxConfig:
        config = self.config
        if spec.ponder is not None and spec.ponder != config.ponder:
            config = attrs.evolve(config, ponder=spec.ponder)
        if not spec.limits:
            return config
        limits = attrs.evolve(config.limits, **dict(spec.limits))  # type: ignore[arg-type]
        return attrs.evolve(config, limits=limits)

    def _bot_seed(self, bot: Contestant) -> int:
        return seeds.bot_seed(self.spec.fallback_seed, self.spec.match_id, bot.index, bot.launches)

    def _id_jump(self, bot: Contestant) -> int:
        return seeds.id_jump(self.spec.fallback_seed, self.spec.match_id, bot.index, bot.launches)

    def start(self, bots: Sequence[Contestant] | None = None) -> None:
        """Start a process for each of ``bots`` (default: all) and wait (bounded) for their
        hellos. A bot that does not start is not :attr:`~Contestant.active`; why is carried to
        its next game (``no_start``; :meth:`Contestant.take_carried`)."""
        chosen = list(self.bots if bots is None else bots)
        needs = [(bot.spec.name, bot_capacity(self._sandbox_for(bot.spec))) for bot in chosen]
        for group in start_groups(needs):
            self._launch_batch([chosen[index] for index in group])

    def _launch_batch(self, bots: list[Contestant]) -> None:
        self._await_hellos([bot for bot in bots if self._spawn(bot)])

    def _spawn(self, bot: Contestant) -> bool:
        """Start a new process for ``bot`` in a new private directory and endpoint (its hello
        is awaited by the caller); False if it could not be started."""
        bot.launches += 1
        bot.seen.clear()
        if bot.launches > 1 and not bot.spare:  # a spare's jump is taken when it is swapped in
            self.next_id += self._id_jump(bot)
        secret = secrets.token_hex(16)
        bot.connection = Connection(bot.spec.name, secret)
        self._bind(bot)
        env = {
            "OHSEVEN_ENDPOINT": bot.endpoint,
            "OHSEVEN_SECRET": secret,
            "OHSEVEN_NAME": bot.spec.name,
            # a seed for the bot's own randomness: the same match replays the same games
            "OHSEVEN_SEED": str(self._bot_seed(bot)),
            **self.env,
        }
        bot.process = BotProcess(
            list(bot.spec.command),
            name=bot.spec.name,
            bot_dir=bot.spec.directory,
            socket_dir=bot.socket_dir,
            env=env,
            config=self._sandbox_for(bot.spec),
        )
        try:
            bot.process.start()
        except BotStartError as error:
            self._lose(bot, FaultStatus.NO_START, str(error))
            return False
        return True

    def _await_hellos(self, waiting: list[Contestant]) -> None:
        """Wait (bounded by the start time) for the hellos of ``waiting``'s new processes."""
        deadline = self.clock() + self.spec.time_control.start_seconds
        while True:
            waiting = [
                b for b in waiting if b.connection and b.connection.state is State.AWAITING_HELLO
            ]
            for bot in waiting:
                code = bot.process.poll() if bot.process else None
                if code is not None:
                    hint = bot.process.hint() if bot.process else ""
                    why = f"{exit_text(code)} before hello{hint}"
                    self._lose(bot, FaultStatus.NO_START, why)
            waiting = [b for b in waiting if b.connection is not None]
            self._watch()
            waiting = [b for b in waiting if b.connection is not None]
            now = self.clock()
            if not waiting or now >= deadline:
                break
            self._pump(deadline - now)
        for bot in waiting:
            self._lose(
                bot,
                FaultStatus.NO_START,
                f"no hello within {self.spec.time_control.start_seconds:g} s",
            )

    def _lose(self, bot: Contestant, status: FaultStatus, detail: str) -> None:
        """``bot``'s process is gone (crash or failed start): close and kill it, record why.

        A crash (or an exit before hello) is a ``limit`` fault when the kernel enforced one of
        the bot's limits. A spare is discarded instead (its bot is then started the usual way,
        where the same failure is its fault)."""
        if bot.spare:
            self._discard(bot)
            return
        if status in (FaultStatus.CRASH, FaultStatus.NO_START) and bot.process is not None:
            limit = bot.process.limit_hit()
            if limit is not None:
                status, detail = FaultStatus.LIMIT, f"{limit}; {detail}"
        self._disconnect(bot)
        self._fault(bot, status, detail)

    def _disconnect(self, bot: Contestant) -> None:
        """Close ``bot``'s connection, forget its routing id, and kill its process."""
        if bot.connection is not None:
            bot.connection.close()
        bot.connection = None
        if bot.routing_id is not None:
            self.by_rid.pop(bot.routing_id, None)
            bot.routing_id = None
        self._stop(bot)

    def clock(self) -> float:
        """The tables' clock: monotonic time less the time spent killing bots.

        A kill waits for the bot's processes to die, which a hostile bot can make take seconds
        (many children sharing much memory); the seats that owe a move meanwhile must not pay
        for it, neither in their bank nor by a reply left unread past its deadline."""
        return time.monotonic() - self.stalled

    def _stop(self, bot: Contestant) -> None:
        if bot.process is not None:
            started = time.monotonic()
            bot.process.kill()
            self.stalled += time.monotonic() - started
            bot.logs.append(bot.process.log())
            bot.process = None
        self._unbind(bot)

    def _fault(self, bot: Contestant, status: FaultStatus, detail: str) -> None:
        """A fault of ``bot``: the table's (and its link's) business during a game of it, else
        carried to its next game. A spare's is not a fault: it is discarded (see :meth:`_lose`)."""
        if bot.spare:
            self._discard(bot)
            return
        state = self.table
        seat = self.seat_of.get(bot.index) if state is not None else None
        if state is None or seat is None:
            bot.carry.append((status, detail))
            self.count_fault(bot, status)
        else:
            state.fault(seat, status, detail)  # the link's ``faulted`` counts it

    def count_fault(self, bot: Contestant, status: FaultStatus) -> None:
        """Count a fault of ``bot`` in the match; drop it at ``drop_after_faults``."""
        if status is FaultStatus.DROPPED:
            return
        bot.faults += 1
        if not bot.dropped and bot.faults >= self.drop_after_faults:
            self._drop(bot, f"{bot.faults} faults in the match")

    def _drop(self, bot: Contestant, why: str) -> None:
        bot.dropped = True
        if bot.connection is not None:
            bot.connection.close()
        if bot.routing_id is not None:
            self.by_rid.pop(bot.routing_id, None)
        self._stop(bot)
        self._fault(bot, FaultStatus.DROPPED, why)

    def _check_processes(self) -> None:
        self.last_check = time.monotonic()
        self._watch()
        for bot in self.bots:
            if bot.process is not None and bot.active:
                code = bot.process.poll()
                if code is not None:
                    self._lose(bot, FaultStatus.CRASH, exit_text(code))
                    continue
                limit = bot.process.limit_hit()  # a process of the bot was killed for it
                if limit is not None:
                    self._lose(bot, FaultStatus.LIMIT, limit)
        for spare in list(self.spares.values()):
            process = spare.process
            if process is not None and (process.poll() is not None or process.limit_hit()):
                self._discard(spare)

    # -- messages

    def _pump(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds (at most ``_WAIT_MS``) for a message and handle it
        (one message per call).

        A blocking receive with a timeout wakes as soon as the frame is there, where a poll
        followed by a receive costs a second call; callers loop anyway, so one is enough. The
        cap keeps the timeout the same from one decision to the next, so it is rarely set.
        """
        sock = self.socket
        timeout_ms = min(_WAIT_MS, max(0, int(timeout * 1000 + 0.999)))
        if timeout_ms != self.receive_timeout_ms:
            sock.setsockopt(_RCVTIMEO, timeout_ms)
            self.receive_timeout_ms = timeout_ms
        try:
            frames = [sock.recv()]
        except zmq.Again:
            return
        if frames[0] not in self.by_rid:
            self._stranger(frames[0])
            return
        # A ROUTER delivers the routing id and at least one frame, all parts at once. The frame
        # is read as a zmq.Frame, whose ``more`` says whether parts follow without a read of
        # the socket option (which costs more than reading the frame).
        frame = sock.recv(NOBLOCK, copy=False)
        frames.append(frame.bytes)
        if frame.more:
            while sock.getsockopt(_RCVMORE):
                frames.append(sock.recv(NOBLOCK))
        self._handle(frames)

    def _stranger(self, rid: bytes) -> None:
        """A frame of a routing id with no accepted hello (read by :class:`Strangers`): a hello
        is answered, and a frame beyond ``STRANGER_FRAMES`` is a ``protocol`` fault of the bot
        whose process opened the connection."""
        sock = self.socket
        parts = [sock.recv(NOBLOCK, copy=False)]
        while sock.getsockopt(_RCVMORE):
            parts.append(sock.recv(NOBLOCK, copy=False))
        read = self.strangers.read(rid, parts, self.bots)
        if isinstance(read, Hello):
            self._hello(rid, read)
        elif read is not None and read.process is not None and not read.dropped:
            self._fault(
                read,
                FaultStatus.PROTOCOL,
                f"{self.strangers.count(rid)} frames on a connection that said no accepted "
                f"hello (at most {STRANGER_FRAMES})",
            )

    def _handle(self, frames: list[bytes]) -> None:
        rid = frames[0]
        bot = self.by_rid.get(rid)
        state = self.table
        codec = self.codec
        connection = bot.connection if bot is not None else None
        if self.on_frame is not None and bot is not None and len(frames) == 2:
            self.on_frame(bot, frames[1])
        if connection is not None and codec is not None and len(frames) == 2:
            answer = connection.accept(frames[1], codec)
            if answer is not None:  # the usual case: the legal move asked for
                self._apply(state, *answer)
                return
        message = decode(frames[1]) if len(frames) == 2 else None
        if message is None:
            message = Invalid(FaultStatus.MALFORMED, f"a message of {len(frames) - 1} frames")
        if bot is None or connection is None:
            if bot is None and type(message) is Hello:
                self._hello(rid, message)
            return  # unauthenticated frames are dropped
        result = connection.receive(message, codec)
        if result is None or isinstance(result, Late):
            return
        if isinstance(result, Accepted):
            connection.answered()
            assert state is not None  # a move is accepted only during a game
            self._apply(state, result.request, result.move, result.error)
            return
        self._fault(bot, result.status, result.detail)

    def _apply(
        self, state: Table | None, request: Request, move: Move, error: str | None = None
    ) -> None:
        """Hand the accepted ``move`` answering ``request`` to the table."""
        assert state is not None  # a move is accepted only during a game
        bot = self.bots_at[request.seat]
        process = bot.process if bot is not None else None
        if process is not None:  # its reply is in: it owes no decision until the next request
            self.to_rest.append(process)  # frozen before another bot is woken
        state.answer(request, move, error)

    def _hello(self, rid: bytes, hello: Hello) -> None:
        for bot in [*self.bots, *self.spares.values()]:
            connection = bot.connection
            if (
                connection is not None
                and connection.state is State.AWAITING_HELLO
                and connection.secret == hello.secret
            ):
                answer = connection.hello(hello)
                if answer is None:
                    reason = hello.problem or f"unsupported protocol {hello.protocol}"
                    self.send_to(rid, error_message(reason))
                    if hello.problem is not None:
                        self._fault(bot, FaultStatus.PROTOCOL, f"hello refused: {reason}")
                    return
                bot.routing_id = rid
                self.strangers.forget(rid)
                if bot.bound is not None:  # no connection can be opened to it any more
                    with contextlib.suppress(OSError):
                        os.unlink(bot.bound[len("ipc://") :])
                self.send_to(rid, answer)
                if bot.process is not None:  # it owes nothing until its first request
                    bot.process.freeze()
                if bot.spare:  # its frames are a stranger's until it is swapped in
                    return
                bot.ever_ready = True
                self.by_rid[rid] = bot
                return
        self.send_to(rid, error_message("unknown secret"))

    def send_to(self, rid: bytes | None, frame: bytes) -> None:
        """Send ``frame`` to the connection ``rid`` (nothing when None)."""
        # a peer that is gone or has a full queue loses the frame and will time out
        if rid is None:  # no connection yet (or any more)
            return
        try:
            send = self.send_frame
            send(rid, SEND_MORE)
            send(frame, NOBLOCK)
        except zmq.ZMQError:
            pass

    # -- games

    def prepare(self, seats: Sequence[Contestant], seed: int) -> None:
        """Ready the bots of a game of deal ``seed`` (before :meth:`play`): a fresh process
        for each whose process has seen the deal (:meth:`renew`), a restart for each that is
        not running (within ``max_restarts``, else it is dropped; one that never started is
        not restarted)."""
        self.table = None
        self.renew(seats, seed)
        self._restart(seats)
        for bot in seats:
            if bot.process is not None:
                bot.seen.add(seed)

    def _restart(self, seats: Sequence[Contestant]) -> None:
        """Restart crashed bots of this game within budget; mark the others dropped."""
        restart = []
        for bot in seats:
            if bot.dropped or bot.active:
                continue
            if not bot.ever_ready:  # it never started: restarting it would only cost time
                if not any(status is FaultStatus.NO_START for status, _ in bot.carry):
                    bot.carry.append((FaultStatus.NO_START, "it never said hello in this match"))
                continue
            if bot.restarts >= self.max_restarts:
                self._drop(bot, f"not running and out of restarts ({self.max_restarts})")
                continue
            bot.restarts += 1
            restart.append(bot)
        if restart:
            self.start(restart)

    def renew(self, seats: Sequence[Contestant], seed: int) -> None:
        """Give a fresh process (and scratch) to every bot whose process has seen this deal.

        Duplicate play deals the same cards to every rotation of a table: a process that
        remembered the last rotation would know every other hand. So no process is ever shown a
        deal twice; a renewal is not a restart (no fault, no budget spent).
        """
        stale = [bot for bot in seats if seed in bot.seen and bot.process is not None]
        spares, self.spares = self.spares, {}
        swapped, fresh = [], []
        for bot in stale:
            if bot.active:
                self.send_to(bot.routing_id, shutdown_message())
            self._disconnect(bot)
            spare = spares.pop(bot.index, None)
            alive = spare is not None and spare.process is not None and spare.process.poll() is None
            if spare is not None and alive and not bot.dropped:
                self._swap(bot, spare)
                swapped.append(bot)
            else:
                fresh.append(bot)
        for spare in spares.values():  # not needed after all (its bot crashed or was dropped)
            self._discard(spare)
        self._await_hellos(swapped)
        if fresh:
            self.start(fresh)

    # -- spares: the next game's fresh processes, started while this one is played

    def foresee(self, seats: Sequence[Contestant], seed: int) -> None:
        """The bots and the deal of the next game, told before this one is played: a spare
        process is started now for each bot whose process has seen that deal, so that its
        start-up overlaps this game, and :meth:`prepare` swaps it in. A spare has its own new
        directory and endpoint, is shown nothing of any game until it is swapped in (its
        frames meanwhile are a stranger's), and rests frozen after its hello. One that fails
        is discarded: its bot is then started the usual way (and faulted as usual)."""
        ahead = [
            bot
            for bot in seats
            if seed in bot.seen and bot.active and bot.process is not None
            if bot.index not in self.spares
        ]
        needs = [(bot.spec.name, bot_capacity(self._sandbox_for(bot.spec))) for bot in ahead]
        if len(start_groups(needs)) > 1:
            return  # not all can be waiting for their hellos at once: started as they are due
        for bot in ahead:
            spare = Contestant(bot.index, bot.spec, launches=bot.launches, spare=True)
            self.spares[bot.index] = spare
            self._spawn(spare)

    def _swap(self, bot: Contestant, spare: Contestant) -> None:
        """Give ``bot`` (disconnected) the process, connection and endpoint of its spare."""
        if bot.socket_dir:
            shutil.rmtree(bot.socket_dir, ignore_errors=True)
        for name in ("process", "connection", "socket_dir", "bound", "accepted", "launches"):
            setattr(bot, name, getattr(spare, name))
        bot.seen.clear()
        bot.logs.extend(spare.logs)
        self.next_id += self._id_jump(bot)
        if bot.bound is not None:
            self.by_endpoint[bot.bound.encode()] = bot
        rid = bot.routing_id = spare.routing_id
        if rid is not None:  # its hello is in
            bot.ever_ready = True
            self.by_rid[rid] = bot
            self.strangers.forget(rid)

    def _discard(self, spare: Contestant) -> None:
        """Kill a spare and keep its output in its bot's logs."""
        if self.spares.get(spare.index) is spare:
            del self.spares[spare.index]
        if spare.connection is not None:
            spare.connection.close()
        spare.connection = None
        self._stop(spare)
        shutil.rmtree(spare.socket_dir, ignore_errors=True)
        self.bots[spare.index].logs.extend(spare.logs)
        spare.logs.clear()

    def link(self, bot: Contestant) -> BotLink:
        """The link of ``bot``'s process to its seat (for :meth:`play`)."""
        return BotLink(self, bot)

    def play(
        self,
        index: int,
        game: Game,
        links: Sequence[Link],
        bots_at: Sequence[Contestant | None],
        fallback: Fallback,
        *,
        on_move: OnMove | None = None,
        finish: bool = True,
    ) -> Table:
        """Play ``game`` (game ``index`` of the match, sent in its game event) on the one loop
        and return its table (``faults``; the game is ``game``, played on).

        ``links``: one per seat, :meth:`link` of the bot in each of the referee's seats, any
        :class:`~ohseven.core.table.Link` elsewhere (an in-process opponent, a human);
        ``bots_at``: the referee's bot in each seat (None: a seat not of this referee). The
        bots' carried faults open the game's faults. ``on_move`` is the table's; set
        ``referee.table.stopped`` in it to end the game early. With ``finish`` the seats are
        told the game's end."""
        clock = self.spec.time_control
        state = Table(
            game,
            links,
            index=index,
            move_seconds=clock.move_seconds,
            bank_seconds=clock.bank_seconds,
            fallback=fallback,
            transport=self,
            clock=self.clock,
            first_id=self.next_id,
            on_move=on_move,
            one_at_a_time=not self.config.ponder,
        )
        self.seat_of = {bot.index: seat for seat, bot in enumerate(bots_at) if bot is not None}
        self.bots_at = list(bots_at)
        for seat, bot in enumerate(bots_at):
            if bot is None:
                continue
            carried = [status for status, _ in bot.carry]
            for status, detail in bot.carry:
                state.faults.append(Fault(seat, status, detail))
            bot.carry.clear()
            if bot.dropped and FaultStatus.DROPPED not in carried:
                state.faults.append(Fault(seat, FaultStatus.DROPPED, "dropped"))
        self.codec = MoveCodec(game)
        self.table = state
        try:
            state.run()
            self._settle()  # the last answers: at rest while the game is wrapped up
            self._check_processes()  # a process killed since the last check: this game's fault
            if finish:
                state.finish()
        finally:
            self.next_id = state.next_id
            self.table = None
            self.codec = None
            self.seat_of = {}
        return state

    def wait(self, table: Table, timeout: float) -> None:
        """The table's transport: check the processes now and then, and handle a message
        arriving within ``timeout`` (0: only the checks)."""
        self._settle()
        if time.monotonic() >= self.last_check + _PROCESS_CHECK_SECONDS:
            self._check_processes()
        if timeout > 0:
            self._pump(timeout)

    def _settle(self) -> None:
        """What a decision leaves for after the next requests are out (the table waits on the
        transport only then): the usual replies to them are noted, and the bots that answered
        come to rest (frozen, if no other bot was woken since)."""
        asked, resting = self.asked, self.to_rest
        if asked:
            codec = self.codec
            if codec is not None:
                for connection in asked:
                    connection.expect(codec)
            asked.clear()
        if resting:
            for process in resting:
                process.freeze()
            resting.clear()

    # -- the end

    def __enter__(self) -> Referee:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> dict[str, str]:
        """Shut every bot down (bounded), kill what is left, return the logs by bot name (the
        same logs again when called again)."""
        if self.logs is not None:
            return self.logs
        self._settle()
        for spare in list(self.spares.values()):
            self._discard(spare)
        for bot in self.bots:
            if bot.active and bot.process is not None:
                bot.process.thaw()
                self.send_to(bot.routing_id, shutdown_message())
        deadline = time.monotonic() + SHUTDOWN_SECONDS
        for bot in self.bots:  # each returns as soon as its bot exits
            if bot.process is not None:
                bot.process.wait(max(0.0, deadline - time.monotonic()))
        for bot in self.bots:
            self._stop(bot)
            if bot.connection is not None:
                bot.connection.close()  # no longer active
        with contextlib.suppress(zmq.ZMQError):
            self.socket.disable_monitor()
        self.monitor.close(0)
        self.socket.close(0)
        self.context.term()
        shutil.rmtree(self.socket_dir, ignore_errors=True)
        self.logs = {bot.spec.name: "\n".join(log for log in bot.logs if log) for bot in self.bots}
        return self.logs
