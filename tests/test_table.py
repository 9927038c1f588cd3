"""The one referee loop (``core.table``) on the scripted in-process transport and a fake clock:
timeouts and banks, malformed and illegal answers, a seat that dies, simultaneous decisions."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.core.faults import FaultStatus
from ohseven.core.game import Game
from ohseven.core.rules import OH_HELL, OH_SEVEN, new_game
from ohseven.core.scripted import FakeClock, Reply, ScriptedLink, ScriptedTransport, first_legal
from ohseven.core.table import LinkBase, RandomFallback, Request, Table, request_message

MOVE, BANK = 1.0, 0.5


def table_of(game: Game, scripts: dict[int, Any], **kwargs: Any) -> tuple[Table, list[Any]]:
    """A table of ``game`` with scripted seats (``first_legal`` where ``scripts`` says none)."""
    transport = ScriptedTransport(FakeClock())
    links = [ScriptedLink(transport, scripts.get(s, first_legal)) for s in range(game.players)]
    table = Table(
        game,
        links,
        move_seconds=MOVE,
        bank_seconds=BANK,
        transport=transport,
        clock=transport.clock,
        fallback=RandomFallback("test"),
        **kwargs,
    )
    return table, links


def nth(n: int, bad: Reply) -> Any:
    """A script answering legally except ``bad`` at its ``n``-th request (from 0)."""
    count = [0]

    def script(request: Request, game: Game) -> Reply:
        count[0] += 1
        return bad if count[0] - 1 == n else first_legal(request, game)

    return script


def statuses(table: Table) -> list[tuple[int, FaultStatus]]:
    return [(f.seat, f.status) for f in table.faults]


class TestWellBehaved:
    def test_a_game_of_legal_answers_has_no_faults(self):
        """Seats answering legally play the game to its end without a fault or a fallback."""
        moves: list[Any] = []
        table, links = table_of(new_game(OH_SEVEN, 3, 5), {}, on_move=lambda *a: moves.append(a))
        table.run()
        table.finish()
        assert table.game.is_over and table.faults == []
        assert all(seconds is not None for *_, seconds in moves)
        assert all(link.events[-1]["type"] == "game_over" for link in links)

    def test_request_ids_count_from_first_id(self):
        """Request ids are consecutive from ``first_id``; ``next_id`` is read back after."""
        table, links = table_of(new_game(OH_HELL, 3, 2), {}, first_id=100)
        table.run()
        ids = sorted(r.id for link in links for r in link.requests)
        assert ids == list(range(100, 100 + len(ids))) and table.next_id == 100 + len(ids)

    def test_each_seat_gets_its_game_event_first(self):
        """The first events of a seat open with its game event (index, seat, players)."""
        table, links = table_of(new_game(OH_HELL, 4, 1), {}, index=3)
        table.run()
        for seat, link in enumerate(links):
            first = link.events[0]
            assert first["type"] == "game" and first["seat"] == seat and first["index"] == 3


class TestTimeouts:
    def test_a_silent_seat_times_out_after_move_plus_bank(self):
        """No reply: a timeout at move time plus bank, the bank is spent, a fallback plays."""
        table, links = table_of(new_game(OH_HELL, 3, 4), {0: nth(0, Reply.silent())})
        table.run()
        (fault,) = table.faults
        assert (fault.seat, fault.status) == (0, FaultStatus.TIMEOUT)
        assert f"within {(MOVE + BANK) * 1000:.0f} ms" in fault.detail
        first, second = links[0].requests[:2]
        assert first.deadline - first.sent == MOVE + BANK and first.bank_ms == 500
        assert second.deadline - second.sent == MOVE and second.bank_ms == 0
        assert links[0].faults == [(FaultStatus.TIMEOUT, first)]
        assert table.game.is_over

    def test_overtime_is_charged_to_the_bank(self):
        """A reply 0.2 s past the move time is accepted and costs the bank 0.2 s."""
        table, links = table_of(new_game(OH_HELL, 3, 4), {1: nth(0, Reply.move(0, MOVE + 0.2))})
        table.run()
        assert table.faults == [] and table.game.is_over
        assert links[1].requests[1].bank_ms in (299, 300)  # 0.5 - 0.2 s, rounded down

    def test_a_reply_after_the_deadline_is_not_accepted(self):
        """A reply later than move time plus bank is a timeout; the late reply is discarded."""
        late = Reply.move(0, MOVE + BANK + 0.1)
        table, links = table_of(new_game(OH_HELL, 3, 4), {2: nth(0, late)})
        table.run()
        assert statuses(table) == [(2, FaultStatus.TIMEOUT)] and table.game.is_over


class TestBadAnswers:
    @pytest.mark.parametrize(
        ("reply", "status"),
        [
            (Reply.garbage(), FaultStatus.MALFORMED),
            (Reply.move(True), FaultStatus.MALFORMED),  # a bool is not an Oh Hell bid
            (Reply.move(99), FaultStatus.ILLEGAL),
            (Reply.move("ZZ"), FaultStatus.MALFORMED),
        ],
    )
    def test_a_bad_bid_is_a_closed_fault_and_the_game_goes_on(self, reply, status):
        """Malformed and illegal bids are recorded with their status; a fallback bid plays."""
        moves: list[Any] = []
        table, links = table_of(
            new_game(OH_HELL, 3, 4), {1: nth(0, reply)}, on_move=lambda *a: moves.append(a)
        )
        table.run()
        assert statuses(table) == [(1, status)] and table.game.is_over
        assert [m for m in moves if m[0] == 1][0][3] is None  # the fallback's move

    def test_a_card_not_held_is_illegal(self):
        """A card of the deck not among the legal plays is ``illegal``."""

        def script(request: Request, game: Game) -> Reply:
            if request.kind == "play":
                held = {game.deck.names[c] for c in game.hands[request.seat]}
                other = next(n for n in game.deck.names if n not in held)
                return Reply.move(other)
            return first_legal(request, game)

        table, _ = table_of(new_game(OH_SEVEN, 2, 3), {0: script})
        table.run()
        assert {s for _, s in statuses(table)} == {FaultStatus.ILLEGAL}
        assert {seat for seat, _ in statuses(table)} == {0} and table.game.is_over

    def test_a_bad_pass_is_illegal(self):
        """A pass of the wrong number of cards is ``illegal``."""

        def script(request: Request, game: Game) -> Reply:
            if request.kind == "pass":
                return Reply.move(request.legal[: request.count + 1])
            return first_legal(request, game)

        game = new_game(OH_SEVEN, 4, 3, {"passing": True})
        table, _ = table_of(game, {2: script})
        table.run()
        assert (2, FaultStatus.ILLEGAL) in statuses(table) and table.game.is_over

    def test_a_substitute_move_stands_as_a_bot_error(self):
        """A move the bot reports as a substitute is played and recorded ``bot_error``."""
        reply = Reply.move(0, error="choose_bid raised")
        table, links = table_of(new_game(OH_HELL, 3, 4), {0: nth(0, reply)})
        table.run()
        assert statuses(table) == [(0, FaultStatus.BOT_ERROR)]
        assert links[0].faults == []  # informational: not a fault of the link


class TestDeath:
    def test_a_seat_that_dies_mid_game_is_never_asked_again(self):
        """A crash at its 5th request: one ``crash`` fault, fallbacks to the end of the game."""
        table, links = table_of(new_game(OH_SEVEN, 3, 8), {1: nth(4, Reply.die(0.3))})
        moves: list[Any] = []
        table.on_move = lambda *a: moves.append(a)
        table.run()
        assert statuses(table) == [(1, FaultStatus.CRASH)] and table.game.is_over
        assert len(links[1].requests) == 5
        seat_moves = [m for m in moves if m[0] == 1]
        assert all(m[3] is None for m in seat_moves[4:]) and len(seat_moves) > 5

    def test_an_unusable_seat_is_played_by_the_fallback(self):
        """A seat that is not usable from the start is never sent a request."""
        game = new_game(OH_HELL, 3, 6)
        table, links = table_of(game, {})
        links[0].dead = True
        table.run()
        assert links[0].requests == [] and game.is_over and table.faults == []


class TestSimultaneous:
    def test_every_seat_is_asked_before_any_reply(self):
        """Simultaneous bids: all seats' requests go out at the same clock time."""
        game = new_game(OH_HELL, 4, 1, {"simultaneous_bids": True})
        table, links = table_of(game, {s: nth(0, Reply.move(0, 0.1 * (s + 1))) for s in range(4)})
        table.run()
        assert {link.requests[0].sent for link in links} == {0.0}
        assert table.faults == [] and game.is_over

    def test_one_silent_seat_does_not_hold_the_others_up(self):
        """One seat times out; the others' bids are accepted in time, nobody else faults."""
        game = new_game(OH_SEVEN, 3, 2)
        table, links = table_of(game, {0: nth(0, Reply.silent()), 1: nth(0, Reply.garbage(0.2))})
        table.run()
        assert sorted(statuses(table)) == [(0, FaultStatus.TIMEOUT), (1, FaultStatus.MALFORMED)]
        assert links[0].requests[0].sent == links[1].requests[0].sent == links[2].requests[0].sent
        assert game.is_over

    def test_one_at_a_time_asks_each_seat_after_the_last_answer(self):
        """``one_at_a_time``: no two requests are ever outstanding (each seat is asked once
        the previous one answered), and no seat is told another's bid before the set is
        complete."""
        game = new_game(OH_SEVEN, 4, 3)
        outstanding: list[int] = []
        told_bids: list[int] = []

        def script(request: Request, game: Game) -> Reply:
            outstanding.append(len(table.outstanding))
            if request.kind == "bid":
                events = links[request.seat].events
                last_round = max(i for i, e in enumerate(events) if e["type"] == "round")
                told_bids.append(sum(e["type"] == "bid" for e in events[last_round:]))
            return attrs.evolve(first_legal(request, game), delay=0.1)

        table, links = table_of(game, dict.fromkeys(range(4), script), one_at_a_time=True)
        table.run()
        assert game.is_over and table.faults == []
        assert outstanding and set(outstanding) == {1}
        assert told_bids and set(told_bids) == {0}
        first = [link.requests[0].sent for link in links]  # the first passes
        assert len(set(first)) == 4
        at_once, _ = table_of(new_game(OH_SEVEN, 4, 3), {})
        at_once.run()
        assert len({link.requests[0].sent for link in at_once.links}) == 1


class TestSynchronousSeats:
    def test_in_process_seats_move_after_the_remote_ones(self):
        """A synchronous seat is asked only when no remote request is outstanding."""
        game = new_game(OH_SEVEN, 3, 2)
        transport = ScriptedTransport(FakeClock())
        order: list[tuple[int, int]] = []

        class Local(LinkBase):
            def send(self, table: Table, request: Request, events: list) -> None:
                order.append((request.seat, len(table.outstanding)))
                table.answer(request, game.legal_moves(request.seat)[0])

        remote = ScriptedLink(transport, lambda r, g: Reply.move(r.legal[0], 0.5))
        table = Table(game, [Local(), remote, Local()], transport=transport, clock=transport.clock)
        table.run()
        assert game.is_over and table.faults == []
        assert order and all(outstanding == 1 for _, outstanding in order)  # only its own


class TestLinkBase:
    def test_the_base_is_an_in_process_seat_that_owes_nothing(self):
        """A LinkBase is synchronous and usable, needs no wake, is told nothing, a fault costs
        it nothing; a subclass that answers nothing fails loudly when asked."""
        link = LinkBase()
        game = new_game(OH_SEVEN, 2, 1)
        table = Table(game, [link, LinkBase()])
        assert link.synchronous and link.usable()
        assert link.wake() is None and link.tell([{"type": "x"}]) is None
        assert link.faulted(table, 0, FaultStatus.TIMEOUT, None) is None
        with pytest.raises(NotImplementedError, match="LinkBase answers no request"):
            table.run()

    def test_a_subclass_plays_a_whole_game(self):
        """Defining ``send`` is enough for a seat of the loop."""

        class First(LinkBase):
            def send(self, table: Table, request: Request, events: list) -> None:
                table.answer(request, table.game.legal_moves(request.seat)[0])

        game = new_game(OH_HELL, 3, 4)
        table = Table(game, [First(), First(), First()])
        table.run()
        assert game.is_over and table.faults == []


class TestRequestMessage:
    def test_the_clock_of_a_request(self):
        """``time_ms`` is all a seat has (the limit plus its bank), ``bank_ms`` its bank."""
        clock = FakeClock(100.0)
        game = new_game(OH_SEVEN, 3, 2)
        seen: list[dict[str, Any]] = []

        class Slow(LinkBase):
            def send(self, table: Table, request: Request, events: list) -> None:
                seen.append(request_message(request, events))
                clock.now += 1.5  # 0.5 s over the limit: drawn from the bank
                table.answer(request, table.game.legal_moves(request.seat)[0])

        table = Table(game, [Slow(), Slow(), Slow()], move_seconds=1.0, bank_seconds=10.0,
                      clock=clock)  # fmt: skip
        table.run()
        first, *_ = seen
        assert first["type"] == "request" and first["id"] == 1 and first["count"] == 0
        assert (first["time_ms"], first["bank_ms"]) == (11000, 10000)
        assert first["events"][0]["type"] == "game"
        again = [m for m in seen if m["id"] > 3][0]  # a seat's second request (3 seats)
        assert (again["time_ms"], again["bank_ms"]) == (10500, 9500)


@settings(max_examples=40, deadline=None)
@given(
    game=st.sampled_from([OH_SEVEN, OH_HELL]),
    players=st.integers(3, 5),
    seed=st.integers(0, 1000),
    bad=st.lists(
        st.tuples(
            st.integers(0, 4),
            st.integers(0, 30),
            st.sampled_from(["silent", "garbage", "die", "illegal", "slow", "substitute"]),
        ),
        max_size=6,
    ),
    simultaneous=st.booleans(),
)
def test_any_mix_of_faults_ends_the_game_with_closed_statuses(
    game, players, seed, bad, simultaneous
):
    """Whatever the seats do, the game ends, faults are closed statuses of the faulty seats
    only, and no seat is asked twice at once; a fault in a decision names that decision's
    number in the game's moves (from 1, simultaneous sets in seat order), round and trick."""
    replies = {
        "silent": Reply.silent(),
        "garbage": Reply.garbage(0.1),
        "die": Reply.die(0.1),
        "illegal": Reply.move("not a card"),
        "slow": Reply.move(None, MOVE + 0.1),
        "substitute": Reply.move(None, 0.0, "choose_play raised"),
    }
    plan: dict[int, dict[int, Reply]] = {}
    for seat, n, kind in bad:
        plan.setdefault(seat % players, {})[n] = replies[kind]

    def script_of(seat: int) -> Any:
        count = [0]

        def script(request: Request, g: Game) -> Reply:
            count[0] += 1
            reply = plan.get(seat, {}).get(count[0] - 1)
            if reply is None:
                return first_legal(request, g)
            if reply.action == "move" and reply.value is None:  # slow but legal
                return Reply.move(first_legal(request, g).value, reply.delay, reply.error)
            return reply

        return script

    options = {"simultaneous_bids": simultaneous} if game == OH_HELL else None
    table, links = table_of(
        new_game(game, players, seed, options), {s: script_of(s) for s in range(players)}
    )
    positions = []  # (round, trick) before each move, as the table's loop sees them
    table.on_move = lambda seat, kind, move, seconds: positions.append(
        (table.game.round + 1, sum(table.game.tricks_won) + 1 if kind == "play" else None)
    )
    table.run()
    moves = table.game.moves
    assert table.played == len(moves)
    for fault in table.faults:
        if fault.move is not None:
            assert moves[fault.move - 1][0] == fault.seat, (fault, moves[fault.move - 1])
            assert (fault.round, fault.trick) == positions[fault.move - 1]
        else:
            assert fault.status in (FaultStatus.CRASH, FaultStatus.DROPPED, FaultStatus.PROTOCOL)
    assert table.game.is_over and not table.outstanding
    assert all(isinstance(f.status, FaultStatus) for f in table.faults)
    assert {f.seat for f in table.faults} <= set(plan)
    for link in links:
        ids = [r.id for r in link.requests]
        assert len(ids) == len(set(ids))
