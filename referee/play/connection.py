"""The referee side of the wire protocol (see ``PROTOCOL.md``): framing, validation, state.

Nothing a bot sends can raise out of this module. :func:`decode` turns every inbound frame into
either a well-shaped message (:class:`Hello`, :class:`MoveReply`) or an :class:`Invalid` that
names the fault (``malformed`` for anything that is not a msgpack map of the right shape and
types). A :class:`Connection` holds the state of one authenticated bot (``AWAITING_HELLO`` ->
``READY`` <-> ``AWAITING_MOVE`` -> ``CLOSED``) and classifies each message against it: the
move of the pending request (:class:`Accepted`), a late reply to an expired request
(:class:`Late`, discarded; past ``EXTRA_BUDGET`` per request a ``protocol`` fault), or a
fault (``protocol``, ``illegal``, ``malformed``).

:class:`MoveCodec` converts between the engine's int moves and their wire form (card names,
trick counts, lists of card names) and classifies a bad answer (``malformed``, ``illegal``);
:class:`Request` is the one referee loop's (``core.table``), re-exported here.
"""

from __future__ import annotations

import enum
import functools
from collections import Counter
from typing import Any, cast

import attrs
import msgpack
from ohseven.core.cards import Deck
from ohseven.core.names import PROTOCOL_VERSION
from ohseven.core.rules import OH_HELL, Game
from ohseven.core.table import Request, request_message
from ohseven.core.values import Event, Move, WireChoice, WireMove
from ohseven.core.wire import legal_to_wire, move_to_wire
from ohseven.referee.records import FaultStatus

__all__ = [
    "PROTOCOL_VERSION",
    "MAX_FRAME",
    "MAX_DEPTH",
    "MAX_TRANSPORT_FRAME",
    "EXTRA_BUDGET",
    "State",
    "Hello",
    "MoveReply",
    "Invalid",
    "Accepted",
    "Late",
    "Request",
    "Connection",
    "MoveCodec",
    "ProtocolStateError",
    "decode",
    "encode",
    "welcome",
    "error_message",
    "events_message",
    "shutdown_message",
]

#: Largest message a bot may send; larger ones are ``malformed``.
MAX_FRAME = 64 * 1024
#: Larger frames make ZeroMQ drop the connection before the referee sees them.
MAX_TRANSPORT_FRAME = 1024 * 1024
#: Deepest nesting of maps and lists in a message (the top-level map is level 1).
MAX_DEPTH = 8
MAX_LIST = 64  # longest list (or map) in an inbound message
MAX_LABEL = 64  # longest ``bot`` label in a hello
MAX_SECRET = 256
#: Late or repeated replies a bot may send per request without a fault; each one beyond is a
#: ``protocol`` fault (so a flood of them gets the bot dropped instead of slowing the table).
EXTRA_BUDGET = 2
MAX_ERROR = 4000  # longest ``error`` of a move kept with its ``bot_error`` fault

# msgpack >= 1.0 already decodes str as str, lists as lists and only str/bytes map keys
_UNPACK_LIMITS = {
    "max_str_len": MAX_FRAME,
    "max_bin_len": 0,
    "max_array_len": MAX_LIST,
    "max_map_len": MAX_LIST,
    "max_ext_len": 0,
}
_unpack = functools.partial(msgpack.unpackb, **_UNPACK_LIMITS)
_PLAIN = (str, int, float, type(None), bool)
_SCALAR_TYPES = frozenset(_PLAIN)  # exact types msgpack decodes scalars to


class State(enum.Enum):
    AWAITING_HELLO = "awaiting_hello"
    READY = "ready"
    AWAITING_MOVE = "awaiting_move"
    CLOSED = "closed"


class ProtocolStateError(RuntimeError):
    """The referee (not a bot) used a :class:`Connection` in a state that does not allow it."""

    def __init__(self, action: str, connection: Connection) -> None:
        super().__init__(
            f"{action} on the connection of {connection.name!r} in state {connection.state.value}"
        )
        self.state = connection.state


# --------------------------------------------------------------------------- inbound messages


@attrs.frozen
class Hello:
    protocol: int
    secret: str
    bot: str
    #: why this hello (with a readable secret) is refused: a bad ``protocol`` or ``bot`` label
    problem: str | None = None


@attrs.frozen
class MoveReply:
    id: int
    move: Any  # the wire move, checked against the request by the connection
    error: str | None = None  # what the bot says its move covers up (a ``bot_error``)


@attrs.frozen
class Invalid:
    """A fault caused by one inbound frame."""

    status: FaultStatus
    detail: str


def _shape_error(value: Any) -> str | None:
    """Why ``value`` (a decoded message) is not plain nested data, or None."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if type(item) is dict:
            if depth > MAX_DEPTH:
                return f"nested deeper than {MAX_DEPTH} levels"
            for key, sub in item.items():
                if type(key) is not str:
                    return f"map key {key!r} is not a string"
                stack.append((sub, depth + 1))
        elif type(item) is list:
            if depth > MAX_DEPTH:
                return f"nested deeper than {MAX_DEPTH} levels"
            stack.extend((sub, depth + 1) for sub in item)
        elif not isinstance(item, _PLAIN):
            return (
                f"value of type {type(item).__name__} (binary or extension types are not allowed)"
            )
    return None


def _text(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def decode(frame: bytes) -> Hello | MoveReply | Invalid:
    """Classify one inbound frame; never raises for any input."""
    if len(frame) > MAX_FRAME:
        return Invalid(
            FaultStatus.MALFORMED, f"a message of {len(frame)} bytes (limit {MAX_FRAME})"
        )
    try:
        message = _unpack(frame)
    except Exception as exc:  # msgpack raises many types (ValueError, StackError, ExtraData...)
        return Invalid(FaultStatus.MALFORMED, f"not a msgpack message: {type(exc).__name__}")
    if type(message) is not dict:
        return Invalid(FaultStatus.MALFORMED, f"not a map: {_text(message)}")
    for key, value in message.items():  # the usual flat map needs no walk
        if type(key) is not str or type(value) not in _SCALAR_TYPES:
            why = _shape_error(message)
            if why:
                return Invalid(FaultStatus.MALFORMED, why)
            break
    kind = message.get("type")
    if kind == "move":
        ident = message.get("id")
        if type(ident) is not int or ident <= 0:
            return Invalid(
                FaultStatus.MALFORMED, f"move id {_text(ident)} is not a positive integer"
            )
        if "move" not in message:
            return Invalid(FaultStatus.MALFORMED, "move message without a 'move' key")
        report = message.get("error")
        if type(report) is str and report.strip():
            return MoveReply(ident, message["move"], report[:MAX_ERROR])
        return MoveReply(ident, message["move"])
    if kind == "hello":
        version = message.get("protocol")
        secret = message.get("secret")
        label = message.get("bot", "")
        if type(secret) is not str or len(secret) > MAX_SECRET:
            return Invalid(FaultStatus.MALFORMED, "hello secret is not a short string")
        # the secret says who it is: a hello wrong otherwise is answered, not dropped
        if type(version) is not int:
            why = f"hello protocol {_text(version)} is not an integer (this referee speaks 1)"
            return Hello(0, secret, "", why)
        if type(label) is not str or len(label) > MAX_LABEL:
            size = f"{len(label)} characters" if type(label) is str else type(label).__name__
            why = f"hello bot label is not a string of at most {MAX_LABEL} characters ({size})"
            return Hello(version, secret, "", why)
        return Hello(version, secret, label)
    return Invalid(FaultStatus.MALFORMED, f"unknown message type {_text(kind)}")


# --------------------------------------------------------------------------- outbound messages

_packer = msgpack.Packer(use_bin_type=True)
#: the usual reply ``{type: "move", id, move}`` packed in that order (as the SDK packs it),
#: up to its id, and the key between its id and its move
_REPLY_HEAD = b"\x83" + _packer.pack("type") + _packer.pack("move") + _packer.pack("id")
_MOVE_KEY = _packer.pack("move")


def encode(message: dict[str, Any]) -> bytes:
    return _packer.pack(message)


def welcome(name: str) -> bytes:
    return encode({"type": "welcome", "protocol": PROTOCOL_VERSION, "name": name})


def error_message(reason: str) -> bytes:
    return encode({"type": "error", "reason": reason})


def events_message(events: list[Event]) -> bytes:
    return encode({"type": "events", "events": events})


def shutdown_message() -> bytes:
    return encode({"type": "shutdown"})


# --------------------------------------------------------------------------- moves and events


class MoveCodec:
    """Moves of one game between the engine's ints and the wire (card names, trick counts)."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.deck: Deck = game.deck
        self.names = game.deck.names
        self.index = game.deck.index
        self.numeric_bids = game.rules.game == OH_HELL

    def kind(self) -> str:
        return self.game.phase.value

    def legal_to_wire(self, seat: int) -> tuple[list[WireChoice], int]:
        """The ``legal`` list and ``count`` of a request to ``seat`` now."""
        return legal_to_wire(self.game, seat)

    def move_to_wire(self, kind: str, move: Move) -> WireMove:
        return move_to_wire(self.game, kind, move)

    def move_from_wire(self, request: Request, wire: object) -> Move | Invalid:
        """The engine move for ``wire`` in answer to ``request``, or why it is not one."""
        kind = request.kind
        if kind == "pass":
            if type(wire) is not list or any(type(c) is not str for c in wire):
                return Invalid(
                    FaultStatus.MALFORMED, f"a pass must be a list of card names, not {_text(wire)}"
                )
            if len(wire) != request.count:
                return Invalid(
                    FaultStatus.ILLEGAL, f"pass of {len(wire)} cards, {request.count} asked"
                )
            if Counter(wire) - Counter(request.legal):
                return Invalid(FaultStatus.ILLEGAL, f"pass {_text(wire)}: not all in hand")
            index = self.index
            return tuple(sorted(index[c] for c in wire))
        if kind == "bid" and self.numeric_bids:
            if type(wire) is not int:
                return Invalid(
                    FaultStatus.MALFORMED, f"an Oh Hell bid must be an integer, not {_text(wire)}"
                )
            if wire not in (request.legal_set or request.legal):
                return Invalid(FaultStatus.ILLEGAL, f"bid {wire} is not one of {request.legal}")
            return wire
        if type(wire) is not str:
            return Invalid(
                FaultStatus.MALFORMED, f"a {kind} must be a card name, not {_text(wire)}"
            )
        if wire not in (request.legal_set or request.legal):
            return Invalid(
                FaultStatus.ILLEGAL, f"{kind} {_text(wire)} is not one of {request.legal}"
            )
        return self.index[wire]


# --------------------------------------------------------------------------- connection state


@attrs.frozen
class Accepted:
    request: Request
    move: Move  # the engine move
    error: str | None = None  # the bot's own report that this move is a substitute


@attrs.frozen
class Late:
    id: int


class Connection:
    """The protocol state of one bot process: hello, then requests and moves, then closed."""

    def __init__(self, name: str, secret: str) -> None:
        self.name = name
        self.secret = secret
        self.state = State.AWAITING_HELLO
        self.label = ""
        self.pending: Request | None = None
        #: the exact frames of the usual replies to ``pending``, and their engine moves
        self.replies: dict[bytes, Any] | None = None
        self.expired: set[int] = set()
        self.extra = 0  # late or repeated replies since the last request was sent

    def hello(self, message: Hello) -> bytes | None:
        """Answer a hello in ``AWAITING_HELLO``: a welcome (now ``READY``), or None if refused."""
        if self.state is not State.AWAITING_HELLO:
            raise ProtocolStateError("hello", self)
        if message.secret != self.secret or message.protocol != PROTOCOL_VERSION:
            return None
        if message.problem is not None:
            return None
        self.label = message.bot
        self.state = State.READY
        return welcome(self.name)

    def request(self, request: Request, events: list[Event]) -> bytes:
        """The frame asking ``request``; the connection then awaits its move."""
        if self.state is not State.READY:
            raise ProtocolStateError("request", self)
        self.pending = request
        self.replies = None
        self.state = State.AWAITING_MOVE
        self.extra = 0
        return encode(request_message(request, events))

    def expect(self, codec: MoveCodec) -> None:
        """Note the exact frame of each usual reply to the pending request, so that
        :meth:`accept` takes one by a lookup: ``{type: "move", id, move}``, packed in that order
        (as the SDK packs it), for each legal card or Oh Hell bid. The referee calls it once the
        request is out, while the bot decides: off the decision's path."""
        pending = self.pending
        if pending is None or pending.kind == "pass":
            self.replies = None
            return
        pack = _packer.pack
        head = _REPLY_HEAD + pack(pending.id) + _MOVE_KEY
        if pending.kind == "bid" and codec.numeric_bids:
            self.replies = {head + pack(bid): bid for bid in pending.legal}
        else:
            index = codec.index
            cards = cast(list[str], pending.legal)  # a play or an Oh-Seven bid: card names
            self.replies = {head + pack(card): index[card] for card in cards}

    def accept(self, frame: bytes, codec: MoveCodec) -> tuple[Request, Move] | None:
        """The usual reply in one step: ``(request, engine move)`` when ``frame`` is exactly
        ``{type: "move", id, move}`` answering the pending request with a legal card (or Oh
        Hell bid); the request is then answered. None for anything else, with nothing changed:
        :func:`decode` and :meth:`receive` classify that frame. After :meth:`expect`, the
        frames it noted are taken without unpacking.

        The referee's hot path: a lookup, else one unpack and a few checks, no intermediate
        messages. What it accepts, :func:`decode` and :meth:`receive` accept too, with the same
        move.
        """
        pending = self.pending
        if pending is None:
            return None
        replies = self.replies
        if replies is not None:
            noted = replies.get(frame)
            if noted is not None:
                self.expired.add(pending.id)
                self.pending = self.replies = None
                self.state = State.READY
                return pending, noted
        if len(frame) > MAX_FRAME:
            return None
        try:
            message = _unpack(frame)
        except Exception:  # noqa: BLE001 - the full path names the fault
            return None
        if type(message) is not dict or len(message) != 3 or message.get("type") != "move":
            return None
        ident = message.get("id")
        if type(ident) is not int or ident != pending.id:
            return None
        wire = message.get("move")
        kind = pending.kind
        if kind == "play" or (kind == "bid" and not codec.numeric_bids):
            if type(wire) is not str or wire not in (pending.legal_set or pending.legal):
                return None
            move = codec.index[wire]
        elif kind == "bid":
            if type(wire) is not int or wire not in (pending.legal_set or pending.legal):
                return None
            move = wire
        else:  # a pass: rare, checked by the full path
            return None
        self.expired.add(ident)
        self.pending = self.replies = None
        self.state = State.READY
        return pending, move

    def expire(self) -> Request | None:
        """Give up on the pending request (timeout or fault); a later reply to it is late."""
        request = self.pending
        if request is not None:
            self.expired.add(request.id)
            self.pending = self.replies = None
            self.state = State.READY
        return request

    def answered(self) -> None:
        """The pending request got its move; a repeated reply to it is late."""
        request = self.pending
        if request is not None:
            self.expired.add(request.id)
        self.pending = self.replies = None
        self.state = State.READY

    def close(self) -> None:
        self.expire()
        self.state = State.CLOSED

    def receive(
        self, message: Hello | MoveReply | Invalid, codec: MoveCodec | None
    ) -> Accepted | Late | Invalid | None:
        """Classify an inbound message of this bot; None when closed (ignored)."""
        state = self.state
        if state is State.CLOSED:
            return None
        if type(message) is Invalid:
            return message
        if type(message) is Hello:
            return Invalid(FaultStatus.PROTOCOL, "a second hello")
        assert type(message) is MoveReply
        pending = self.pending
        if pending is not None and message.id == pending.id:
            if codec is None:  # cannot happen: requests are only sent during a game
                return Invalid(FaultStatus.PROTOCOL, "a move outside a game")
            move = codec.move_from_wire(pending, message.move)
            if isinstance(move, Invalid):
                return move
            return Accepted(pending, move, message.error)
        if message.id in self.expired:
            self.extra += 1
            if self.extra > EXTRA_BUDGET:
                return Invalid(
                    FaultStatus.PROTOCOL,
                    f"{self.extra} late or repeated replies since the last request "
                    f"(at most {EXTRA_BUDGET})",
                )
            return Late(message.id)
        if pending is None:
            return Invalid(FaultStatus.PROTOCOL, f"an unsolicited move (id {message.id})")
        return Invalid(
            FaultStatus.PROTOCOL, f"a move for unknown id {message.id} (asked {pending.id})"
        )
