"""Protocol fuzzing: whatever a bot sends, the referee's decoding and validation never raise,
always classify the frame (a well-shaped message or a fault status), and never accept a move
the engine would refuse."""

from __future__ import annotations

import random
import time

import msgpack
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from ohseven.core.rules import Game, Phase, Rules, new_game
from ohseven.core.table import Request
from ohseven.referee.play.connection import (
    MAX_FRAME,
    MAX_SECRET,
    Accepted,
    Connection,
    Hello,
    Invalid,
    MoveCodec,
    MoveReply,
    decode,
)
from ohseven.referee.records import FaultStatus

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# msgpack values: every type the format has, nested (binary and ext included)
ints = st.integers(min_value=-(2**63), max_value=2**64 - 1)
scalars = (
    st.none()
    | st.booleans()
    | ints
    | st.floats(allow_nan=True)
    | st.text(max_size=20)
    | st.binary(max_size=20)
    | st.builds(msgpack.ExtType, st.integers(0, 127), st.binary(max_size=8))
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(st.text(max_size=8) | ints | st.binary(max_size=4), inner, max_size=5)
    ),
    max_leaves=20,
)
card_like = st.sampled_from(["0C", "7S", "5H", "AS", "TH", "2C", "QD", "8C", "ZZ", "", "7s"])
wire_moves = (
    card_like
    | st.integers(-3, 20)
    | st.lists(card_like, max_size=4)
    | st.booleans()
    | st.none()
    | values
)


def packb(value: object) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


def classified(result: object) -> bool:
    return type(result) in (Hello, MoveReply) or (
        type(result) is Invalid and isinstance(result.status, FaultStatus)
    )


class TestDecode:
    @FUZZ
    @given(st.binary(max_size=300))
    def test_arbitrary_bytes(self, frame):
        """Any bytes decode to a message or a malformed fault, without raising."""
        result = decode(frame)
        assert classified(result)
        if type(result) is Invalid:
            assert result.status is FaultStatus.MALFORMED and result.detail

    @FUZZ
    @given(values)
    def test_arbitrary_msgpack(self, value):
        """Any msgpack value decodes to a message or a malformed fault."""
        result = decode(packb(value))
        assert classified(result)
        if type(value) is not dict:
            assert type(result) is Invalid and result.status is FaultStatus.MALFORMED

    @FUZZ
    @given(
        st.fixed_dictionaries(
            {"type": st.sampled_from(["move", "hello"]) | values},
            optional={
                "id": st.integers(-2, 2**40) | values,
                "move": wire_moves,
                "protocol": st.integers(0, 3) | values,
                "secret": st.text(max_size=300) | values,
                "bot": st.text(max_size=80) | values,
                "extra": values,
            },
        )
    )
    def test_mutated_messages(self, message):
        """Valid messages with fields dropped, added or replaced are classified exactly."""
        result = decode(packb(message))
        assert classified(result)
        if type(result) is MoveReply:
            assert message["type"] == "move" and type(message["id"]) is int
            assert message["id"] > 0 and result.id == message["id"]
        if type(result) is Hello:
            assert message["type"] == "hello"
            assert type(message["secret"]) is str and len(message["secret"]) <= MAX_SECRET
            label = message.get("bot", "")
            good = type(message.get("protocol")) is int and type(label) is str and len(label) <= 64
            # a readable secret with a bad protocol or label: answered, naming the problem
            assert (result.problem is None) is good

    @FUZZ
    @given(st.integers(1, 2**31), wire_moves, st.data())
    def test_byte_mutations(self, ident, move, data):
        """A valid frame with bytes flipped, cut or inserted never raises."""
        frame = bytearray(packb({"type": "move", "id": ident, "move": move}))
        for _ in range(data.draw(st.integers(1, 4))):
            action = data.draw(st.sampled_from(["flip", "cut", "insert"]))
            at = data.draw(st.integers(0, max(0, len(frame) - 1)))
            if action == "flip" and frame:
                frame[at] ^= data.draw(st.integers(1, 255))
            elif action == "cut":
                del frame[at:]
            else:
                frame[at:at] = data.draw(st.binary(min_size=1, max_size=8))
        assert classified(decode(bytes(frame)))

    def test_deep_and_huge(self):
        """Deep nesting and oversized frames are malformed, quickly."""
        deep = b"\x81\xa4type" + b"\x91" * 100_000 + b"\xc0"
        huge = packb({"type": "move", "id": 1, "move": "x" * (MAX_FRAME + 1)})
        for frame in (deep, huge):
            started = time.monotonic()
            result = decode(frame)
            assert type(result) is Invalid and result.status is FaultStatus.MALFORMED
            assert time.monotonic() - started < 0.5


# --------------------------------------------------------------------------- against a game

GAME_OPTIONS = [
    ("oh-seven", {}),
    ("oh-seven", {"passing": True}),
    ("oh-hell", {}),
    ("oh-hell", {"hook": True, "must_trump": True}),
    ("oh-hell", {"simultaneous_bids": True}),
]


def advanced_game(which: int, players: int, seed: int, steps: int) -> Game:
    name, options = GAME_OPTIONS[which]
    rules = Rules.make(name, options)
    low, high = (2, 9) if name == "oh-seven" else (3, 7)
    game = new_game(rules, max(low, min(high, players)), seed)
    rng = random.Random(seed)
    for _ in range(steps):
        if game.is_over:
            break
        seat = game.to_act[0]
        game.push(seat, rng.choice(list(game.legal_moves(seat))))
    return game


@st.composite
def positions(draw):
    game = advanced_game(
        draw(st.integers(0, len(GAME_OPTIONS) - 1)),
        draw(st.integers(2, 9)),
        draw(st.integers(0, 2**32)),
        draw(st.integers(0, 400)),
    )
    assume(not game.is_over)
    return game


def ask(game: Game, ident: int) -> tuple[Connection, MoveCodec, Request]:
    """A connection awaiting the move of ``game.to_act[0]`` for request ``ident``."""
    codec = MoveCodec(game)
    seat = game.to_act[0]
    legal, count = codec.legal_to_wire(seat)
    now = time.monotonic()
    request = Request(
        ident,
        seat,
        game.phase.value,
        legal,
        count,
        now,
        now + 1,
        legal_set=frozenset(legal) if count == 0 else frozenset(),
    )
    connection = Connection("fuzz", "s")
    connection.hello(Hello(1, "s", "fuzz"))
    connection.request(request, [])
    return connection, codec, request


class TestValidation:
    @FUZZ
    @given(positions(), wire_moves, st.integers(1, 5), st.data())
    def test_accepted_moves_are_legal(self, game, move, ident, data):
        """A move is accepted only when the engine finds it legal, and then it applies."""
        connection, codec, request = ask(game, ident)
        if data.draw(st.booleans()):  # half the time, a move drawn from the real choices
            legal = list(game.legal_moves(request.seat))
            move = codec.move_to_wire(request.kind, data.draw(st.sampled_from(legal)))
            if request.kind == "pass":
                move = list(data.draw(st.permutations(move)))
        reply_id = data.draw(st.sampled_from([ident, ident, ident + 1, 10**12]))
        message = decode(packb({"type": "move", "id": reply_id, "move": move}))
        legal = reply_id == ident and engine_accepts(game, request, move)
        result = connection.receive(message, codec)
        assert type(result) in (Accepted, Invalid)
        assert (type(result) is Accepted) == legal, (request.legal, move, result)
        if type(result) is Accepted:
            assert result.request is request
            game.push(request.seat, result.move)
        elif reply_id != ident and type(message) is MoveReply:
            assert result.status is FaultStatus.PROTOCOL

    @FUZZ
    @given(positions(), st.data())
    def test_every_legal_move_is_accepted(self, game, data):
        """Every legal move, in wire form, is accepted (the referee never refuses a good one)."""
        connection, codec, request = ask(game, 7)
        legal = list(game.legal_moves(request.seat))
        move = data.draw(st.sampled_from(legal))
        result = connection.receive(
            decode(
                packb({"type": "move", "id": 7, "move": codec.move_to_wire(request.kind, move)})
            ),
            codec,
        )
        assert type(result) is Accepted
        expected = tuple(sorted(move)) if request.kind == "pass" else move
        got = tuple(sorted(result.move)) if request.kind == "pass" else result.move
        assert got == expected


def engine_accepts(game: Game, request: Request, move: object) -> bool:
    """Whether the wire ``move`` names a move the engine finds legal for the request's seat."""
    names = game.deck.index
    try:
        if request.kind == "pass":
            engine = tuple(names[c] for c in move)  # type: ignore[union-attr]
        elif request.kind == "bid" and game.rules.game == "oh-hell":
            if type(move) is not int:
                return False
            engine = move
        else:
            engine = names[move]  # type: ignore[index]
    except (KeyError, TypeError):
        return False
    return game.phase is not Phase.OVER and game.is_legal(request.seat, engine)
