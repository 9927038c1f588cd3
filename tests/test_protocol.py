"""The referee side of the wire protocol: decoding, the connection state machine, moves, events."""

from __future__ import annotations

import random

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.core.rules import Phase, new_game
from ohseven.core.table import Request, request_message
from ohseven.referee.play.connection import (
    MAX_DEPTH,
    MAX_ERROR,
    MAX_FRAME,
    Accepted,
    Connection,
    Hello,
    Invalid,
    Late,
    MoveCodec,
    MoveReply,
    ProtocolStateError,
    State,
    decode,
)
from ohseven.referee.records import FaultStatus


def pack(message: object) -> bytes:
    return msgpack.packb(message, use_bin_type=True)


def move(ident: int, value: object) -> bytes:
    return pack({"type": "move", "id": ident, "move": value})


HELLO = {"type": "hello", "protocol": 1, "secret": "s3cret", "bot": "test 1.0"}

plain = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=20,
)


class TestDecode:
    def test_hello(self):
        """A well-formed hello decodes to a Hello with its fields."""
        assert decode(pack(HELLO)) == Hello(1, "s3cret", "test 1.0")

    def test_move(self):
        """A well-formed move decodes to its id and raw wire move."""
        assert decode(move(7, ["3H", "7C"])) == MoveReply(7, ["3H", "7C"])

    def test_unknown_keys_are_ignored(self):
        """Extra keys do not make a message malformed (forward compatibility)."""
        assert decode(pack({**HELLO, "extra": [1, {"a": None}]})) == Hello(1, "s3cret", "test 1.0")

    @pytest.mark.parametrize(
        ("hello", "problem"),
        [
            ({**HELLO, "bot": "x" * 65}, "at most 64 characters (65 characters)"),
            ({**HELLO, "bot": 7}, "at most 64 characters (int)"),
            ({**HELLO, "protocol": True}, "protocol True is not an integer"),
            ({**HELLO, "protocol": "1"}, "protocol '1' is not an integer"),
        ],
    )
    def test_a_hello_wrong_in_one_field_names_the_problem(self, hello, problem):
        """A hello with a readable secret but a bad label or protocol is a Hello with the
        problem (so the referee can answer it); the connection refuses it."""
        result = decode(pack(hello))
        assert type(result) is Hello and problem in result.problem
        connection = Connection("bot", "s3cret")
        assert connection.hello(result) is None
        assert connection.state is State.AWAITING_HELLO

    @pytest.mark.parametrize(
        "frame",
        [
            b"",
            b"\xc1garbage",
            pack([1, 2, 3]),
            pack("move"),
            pack({"type": "move", "id": 1}) + b"\x00",  # trailing bytes
            pack({"type": "nonsense"}),
            pack({"type": "move", "id": True, "move": "3H"}),  # bool is not an int
            pack({"type": "move", "id": 0, "move": "3H"}),
            pack({"type": "move", "id": -4, "move": "3H"}),
            pack({"type": "move", "id": 1.0, "move": "3H"}),
            pack({"type": "move", "id": "1", "move": "3H"}),
            pack({"type": "move", "id": 1}),
            pack({"type": "move", "id": 1, "move": b"3H"}),  # bin, not str
            pack({b"type": "move", "id": 1, "move": "3H"}),  # bin key
            pack({1: "move"}),  # non-string key
            pack({"type": "move", "id": 1, "move": msgpack.ExtType(3, b"xy")}),
            pack({"type": "hello", "protocol": 1, "secret": 5}),
            pack({"type": "move", "id": 1, "move": list(range(65))}),  # list too long
            b"\xdd\xff\xff\xff\xff",  # array header claiming 4 G items
        ],
    )
    def test_malformed(self, frame):
        """Every frame that is not a well-shaped message is classified malformed."""
        result = decode(frame)
        assert type(result) is Invalid
        assert result.status is FaultStatus.MALFORMED

    def test_too_large(self):
        """A frame over 64 KiB is malformed even if it is valid msgpack."""
        frame = pack({"type": "move", "id": 1, "move": "x" * MAX_FRAME})
        assert decode(frame).status is FaultStatus.MALFORMED

    def test_nesting_limit(self):
        """Nesting up to MAX_DEPTH levels is accepted, one more is malformed."""

        def nested(depth: int) -> dict:
            value: object = "3H"
            for _ in range(depth - 1):
                value = [value]
            return {"type": "move", "id": 1, "move": value}

        assert type(decode(pack(nested(MAX_DEPTH)))) is MoveReply
        assert decode(pack(nested(MAX_DEPTH + 1))).status is FaultStatus.MALFORMED

    def test_very_deep_nesting(self):
        """Thousands of nested arrays in 64 KiB neither raise nor recurse."""
        frame = b"\x81\xa4move" + b"\x91" * 60000 + b"\xc0"
        assert decode(frame).status is FaultStatus.MALFORMED

    @settings(max_examples=300, deadline=None)
    @given(st.binary(max_size=300))
    def test_any_bytes(self, frame):
        """Arbitrary bytes never raise: they decode to a message or an Invalid."""
        assert type(decode(frame)) in (Hello, MoveReply, Invalid)

    @settings(max_examples=300, deadline=None)
    @given(plain, st.sampled_from(["move", "hello", "x"]))
    def test_any_structure(self, value, kind):
        """Arbitrary msgpack values in any field never raise."""
        frame = pack({"type": kind, "id": value, "move": value, "secret": value, "bot": value})
        assert type(decode(frame)) in (Hello, MoveReply, Invalid)


def request_for(game, seat: int, ident: int) -> Request:
    codec = MoveCodec(game)
    legal, count = codec.legal_to_wire(seat)
    return Request(
        id=ident,
        seat=seat,
        kind=game.phase.value,
        legal=legal,
        count=count,
        sent=0.0,
        deadline=1.0,
        bank_ms=0,
        legal_set=frozenset(legal) if count == 0 else frozenset(),
    )


class TestConnection:
    def make(self) -> Connection:
        connection = Connection("bot", "s3cret")
        assert connection.hello(Hello(1, "s3cret", "label")) is not None
        return connection

    def test_hello_welcome(self):
        """A hello with the right secret gets a welcome naming the bot and makes it READY."""
        connection = Connection("mybot", "s3cret")
        answer = connection.hello(Hello(1, "s3cret", "label"))
        assert msgpack.unpackb(answer) == {"type": "welcome", "protocol": 1, "name": "mybot"}
        assert connection.state is State.READY
        assert connection.label == "label"

    @pytest.mark.parametrize("hello", [Hello(1, "wrong", ""), Hello(2, "s3cret", "")])
    def test_hello_refused(self, hello):
        """A wrong secret or protocol version is refused and the state does not change."""
        connection = Connection("bot", "s3cret")
        assert connection.hello(hello) is None
        assert connection.state is State.AWAITING_HELLO

    def test_second_hello_is_protocol_fault(self):
        """A hello on a READY connection is a protocol fault."""
        result = self.make().receive(Hello(1, "s3cret", ""), None)
        assert result.status is FaultStatus.PROTOCOL

    def test_request_reply_cycle(self):
        """A request makes it AWAITING_MOVE; the right reply is Accepted and converted."""
        game = new_game("oh-seven", 3, 1)
        connection = self.make()
        request = request_for(game, 0, 5)
        frame = connection.request(request, [])
        sent = msgpack.unpackb(frame)
        assert sent["id"] == 5 and sent["kind"] == "bid" and sent["legal"] == request.legal
        assert connection.state is State.AWAITING_MOVE
        result = connection.receive(MoveReply(5, request.legal[0]), MoveCodec(game))
        assert type(result) is Accepted
        assert result.move == game.deck.parse(request.legal[0])
        connection.answered()
        assert connection.state is State.READY
        again = connection.receive(MoveReply(5, request.legal[0]), MoveCodec(game))
        assert again == Late(5)

    def test_the_request_frame_is_the_core_message(self):
        """The frame a bot process is sent is the core's request message (the one the SDK's
        local games hand their bots), packed: one builder for both."""
        game = new_game("oh-seven", 3, 1)
        request = request_for(game, 0, 5)
        events = [{"type": "game", "game": "oh-seven"}]
        frame = self.make().request(request, events)
        assert msgpack.unpackb(frame) == request_message(request, events)
        assert frame == msgpack.packb(request_message(request, events), use_bin_type=True)

    def test_late_reply_discarded(self):
        """A reply to an expired request is Late, and the state stays READY."""
        game = new_game("oh-seven", 3, 1)
        connection = self.make()
        connection.request(request_for(game, 0, 9), [])
        connection.expire()
        assert connection.receive(MoveReply(9, "0C"), MoveCodec(game)) == Late(9)
        assert connection.state is State.READY

    def test_unknown_id_while_awaiting(self):
        """A reply to an id never sent is a protocol fault."""
        game = new_game("oh-seven", 3, 1)
        connection = self.make()
        connection.request(request_for(game, 0, 9), [])
        result = connection.receive(MoveReply(10, "0C"), MoveCodec(game))
        assert result.status is FaultStatus.PROTOCOL

    def test_unsolicited_move(self):
        """A move when nothing is asked is a protocol fault."""
        result = self.make().receive(MoveReply(1, "0C"), None)
        assert result.status is FaultStatus.PROTOCOL

    def test_closed_ignores_everything(self):
        """A closed connection ignores every message."""
        connection = self.make()
        connection.close()
        assert connection.receive(MoveReply(1, "0C"), None) is None
        assert connection.receive(Invalid(FaultStatus.MALFORMED, "x"), None) is None

    def test_referee_misuse_raises(self):
        """Requesting on a connection that is not READY is the referee's error."""
        game = new_game("oh-seven", 3, 1)
        connection = Connection("bot", "s")
        with pytest.raises(ProtocolStateError, match="awaiting_hello"):
            connection.request(request_for(game, 0, 1), [])


def games_at_every_kind(seed: int) -> list:
    """Games stopped at a decision of each kind: Oh-Seven bid (a card), pass and play, Oh Hell
    bid (a number)."""
    stops = []
    for name, options, phases in (
        ("oh-seven", {"passing": True}, (Phase.BID, Phase.PASS, Phase.PLAY)),
        ("oh-hell", {}, (Phase.BID,)),
    ):
        for phase in phases:
            game = new_game(name, 3, seed, options)
            rng = random.Random(seed)
            while not game.is_over and game.phase is not phase:
                seat = game.to_act[0]
                game.push(seat, rng.choice(list(game.legal_moves(seat))))
            if not game.is_over:
                stops.append(game)
    return stops


class TestAccept:
    """``Connection.accept``: the referee's one-step path for the usual reply."""

    def awaiting(self, game, ident: int = 7):
        connection = Connection("bot", "s3cret")
        connection.hello(Hello(1, "s3cret", ""))
        request = request_for(game, game.to_act[0], ident)
        connection.request(request, [])
        return connection, request

    def test_usual_reply_is_accepted(self):
        """A legal card answering the pending id is played; a repeat of it is then late."""
        game = new_game("oh-seven", 3, 1)
        connection, request = self.awaiting(game)
        codec = MoveCodec(game)
        answer = connection.accept(move(7, request.legal[0]), codec)
        assert answer == (request, game.deck.parse(request.legal[0]))
        assert connection.state is State.READY and connection.pending is None
        assert connection.accept(move(7, request.legal[0]), codec) is None
        assert connection.receive(decode(move(7, request.legal[0])), codec) == Late(7)

    def test_numeric_bid_is_accepted(self):
        """An Oh Hell bid (a number of tricks) in the legal list is accepted as that number."""
        game = new_game("oh-hell", 3, 1)
        connection, request = self.awaiting(game)
        assert connection.accept(move(7, request.legal[-1]), MoveCodec(game)) == (
            request,
            request.legal[-1],
        )

    @pytest.mark.parametrize(
        "frame",
        [
            move(7, "ZZ"),  # not a card
            move(8, "0C"),  # another id
            pack({"type": "move", "id": True, "move": "0C"}),  # a bool is no id
            pack({"type": "move", "id": 7.0, "move": "0C"}),
            pack({"type": "move", "id": 7, "move": "0C", "extra": 1}),
            pack({"type": "move", "id": 7}),
            pack(["move", 7, "0C"]),
            b"\xc1",
            b"",
        ],
    )
    def test_anything_else_is_left_to_the_full_path(self, frame):
        """Every other frame returns None and leaves the request pending."""
        game = new_game("oh-seven", 3, 1)
        connection, request = self.awaiting(game)
        assert connection.accept(frame, MoveCodec(game)) is None
        assert connection.pending is request and connection.state is State.AWAITING_MOVE

    @settings(max_examples=150, deadline=None)
    @given(
        st.integers(0, 2**16),
        st.data(),
    )
    def test_agrees_with_decode_and_receive(self, seed, data):
        """What accept takes, decode + receive accept with the same move; it changes nothing
        when it declines."""
        for game in games_at_every_kind(seed):
            connection, request = self.awaiting(game)
            codec = MoveCodec(game)
            value = data.draw(
                st.sampled_from(request.legal)
                | st.sampled_from(list(game.deck.names))
                | st.lists(st.sampled_from(list(game.deck.names)), max_size=3)
                | st.integers(-2, 12)
                | plain
            )
            message = data.draw(
                st.sampled_from(
                    [
                        {"type": "move", "id": 7, "move": value},
                        {"type": "move", "id": data.draw(st.integers(0, 9)), "move": value},
                        {"type": "move", "id": 7, "move": value, "bot": value},
                        {"type": data.draw(st.text(max_size=5)), "id": 7, "move": value},
                    ]
                )
            )
            frame = pack(message)
            full = connection.receive(decode(frame), codec)
            answer = connection.accept(frame, codec)
            if answer is None:
                assert connection.pending is request
            else:
                assert type(full) is Accepted and answer == (full.request, full.move)
                assert connection.pending is None and connection.state is State.READY


class TestNotedReplies:
    """``Connection.expect``: the usual replies noted once the request is out, taken by lookup."""

    def pair(self, game):
        """Two connections awaiting the same request, the second with its replies noted."""
        plain, _ = TestAccept().awaiting(game)
        noted, request = TestAccept().awaiting(game)
        noted.expect(MoveCodec(game))
        return plain, noted, request

    def test_every_usual_reply_is_noted(self):
        """Each legal card (or Oh Hell bid), packed as the SDK packs it, is noted with its move."""
        for game in games_at_every_kind(3):
            _, noted, request = self.pair(game)
            if request.kind == "pass":
                assert noted.replies is None  # a pass takes the unpacking path
                continue
            assert noted.replies is not None and len(noted.replies) == len(set(request.legal))
            codec = MoveCodec(game)
            for value in request.legal:
                frame = move(7, value)
                assert noted.replies[frame] == codec.move_from_wire(request, value)

    @settings(max_examples=150, deadline=None)
    @given(st.integers(0, 2**16), st.data())
    def test_agrees_with_the_unpacking_path(self, seed, data):
        """With or without noted replies, accept takes the same frames with the same moves and
        leaves the same state."""
        for game in games_at_every_kind(seed):
            unnoted, noted, noted_request = self.pair(game)
            request = noted_request
            value = data.draw(
                st.sampled_from(request.legal)
                | st.sampled_from(list(game.deck.names))
                | st.integers(-2, 12)
                | plain
            )
            ident = data.draw(st.sampled_from([7, 7, 6, 8]))
            frame = data.draw(
                st.sampled_from(
                    [
                        pack({"type": "move", "id": ident, "move": value}),
                        pack({"move": value, "type": "move", "id": ident}),
                        pack({"type": "move", "id": ident, "move": value, "error": "x"}),
                    ]
                )
            )
            codec = MoveCodec(game)
            expected, answer = unnoted.accept(frame, codec), noted.accept(frame, codec)
            assert (expected is None) is (answer is None)
            if answer is not None:
                assert answer == (noted_request, expected[1])
            assert (unnoted.pending is None) is (noted.pending is None)
            assert unnoted.state is noted.state

    def test_noted_replies_end_with_their_request(self):
        """Once answered, expired or replaced, the request's noted replies are gone: a repeated
        frame is not taken again."""
        game = new_game("oh-seven", 3, 1)
        codec = MoveCodec(game)
        _, connection, request = self.pair(game)
        frame = move(7, request.legal[0])
        assert connection.accept(frame, codec) == (request, codec.index[request.legal[0]])
        assert connection.replies is None and connection.accept(frame, codec) is None
        _, connection, request = self.pair(game)
        connection.expire()
        assert connection.replies is None and connection.accept(frame, codec) is None
        _, connection, request = self.pair(game)
        connection.answered()
        connection.request(request_for(game, game.to_act[0], 8), [])
        assert connection.replies is None and connection.accept(frame, codec) is None


class TestBotErrorReport:
    """A move with the SDK's ``error`` key: played, and the report kept for a bot_error."""

    def test_error_key_takes_the_full_path_and_is_accepted_with_the_report(self):
        """The hot path declines a move with an extra key; the full path accepts the same move
        and carries the bot's report with it."""
        game = new_game("oh-seven", 3, 1)
        connection, request = TestAccept().awaiting(game)
        codec = MoveCodec(game)
        frame = pack({"type": "move", "id": 7, "move": request.legal[0], "error": "KeyError: x"})
        assert connection.accept(frame, codec) is None
        assert connection.state is State.AWAITING_MOVE
        result = connection.receive(decode(frame), codec)
        assert type(result) is Accepted and result.error == "KeyError: x"
        assert result.move == game.deck.parse(request.legal[0])

    @pytest.mark.parametrize("report", [7, None, "", "   ", ["x"]])
    def test_a_non_text_or_empty_error_is_ignored(self, report):
        """An ``error`` that is not a non-empty string reports nothing (the move still counts)."""
        message = decode(pack({"type": "move", "id": 3, "move": "5H", "error": report}))
        assert message == MoveReply(3, "5H")

    def test_a_long_report_is_bounded(self):
        """A report is kept to MAX_ERROR characters."""
        message = decode(pack({"type": "move", "id": 3, "move": "5H", "error": "e" * 9000}))
        assert type(message) is MoveReply and len(message.error) == MAX_ERROR


class TestMoveCodec:
    @settings(max_examples=30, deadline=None)
    @given(
        st.sampled_from(
            [("oh-seven", 2, {}), ("oh-seven", 6, {"passing": True}), ("oh-hell", 4, {})]
            + [("oh-hell", 3, {"simultaneous_bids": True, "hand_order": "down"})]
        ),
        st.integers(0, 2**32),
    )
    def test_wire_round_trip(self, table, seed):
        """Every move a random game makes survives to_wire -> from_wire against its request."""
        name, players, options = table
        game = new_game(name, players, seed, options)
        codec = MoveCodec(game)
        rng = random.Random(seed)
        ident = 0
        while not game.is_over:
            for seat in game.to_act:
                ident += 1
                request = request_for(game, seat, ident)
                choice = rng.choice(list(game.legal_moves(seat)))
                sent = codec.move_to_wire(request.kind, choice)
                back = codec.move_from_wire(request, sent)
                assert back == (tuple(sorted(choice)) if request.kind == "pass" else choice)
                game.push(seat, back)
                break

    def test_kinds_of_fault(self):
        """Wrong types are malformed; right types that are not legal are illegal."""
        game = new_game("oh-seven", 3, 4, {"passing": True})
        codec = MoveCodec(game)
        bid = request_for(game, 0, 1)
        hand = bid.legal
        outside = next(n for n in game.deck.names if n not in hand)
        assert codec.move_from_wire(bid, 3).status is FaultStatus.MALFORMED
        assert codec.move_from_wire(bid, outside).status is FaultStatus.ILLEGAL
        assert codec.move_from_wire(bid, "ZZ").status is FaultStatus.ILLEGAL
        while game.phase is not Phase.PASS:
            for seat in game.to_act:
                game.push(seat, game.legal_moves(seat)[0])
                break
        passing = request_for(game, 0, 2)
        assert passing.kind == "pass" and passing.count == 1
        assert codec.move_from_wire(passing, passing.legal[0]).status is FaultStatus.MALFORMED
        assert codec.move_from_wire(passing, passing.legal[:2]).status is FaultStatus.ILLEGAL
        elsewhere = next(n for n in game.deck.names if n not in passing.legal)
        assert codec.move_from_wire(passing, [elsewhere]).status is FaultStatus.ILLEGAL
        hell = new_game("oh-hell", 3, 1)
        seat = hell.to_act[0]
        request = request_for(hell, seat, 3)
        assert request.legal == [0, 1]
        assert MoveCodec(hell).move_from_wire(request, True).status is FaultStatus.MALFORMED
        assert MoveCodec(hell).move_from_wire(request, 2).status is FaultStatus.ILLEGAL
