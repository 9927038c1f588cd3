"""The SDK's in-process games (ohseven.sdk.local): the referee's loop and its clock."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest
from ohseven.core.rules import OH_HELL, OH_SEVEN, new_game
from ohseven.core.table import LinkBase, Request, Table
from ohseven.referee.play.connection import Connection, Hello
from ohseven.referee.records import TimeControl
from ohseven.sdk import Bot, View
from ohseven.sdk.local import local_game

FIELDS = ("kind", "legal", "count", "time_ms", "bank_ms")


class Recorder(Bot):
    """A random bot noting the request fields of every decision it is asked."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.requests: list[dict[str, Any]] = []

    def _note(self, view: View) -> None:
        self.requests.append({name: getattr(view, name) for name in FIELDS})

    def choose_pass(self, view: View, count: int) -> list[str]:
        self._note(view)
        return super().choose_pass(view, count)

    def choose_bid(self, view: View) -> str | int:
        self._note(view)
        return super().choose_bid(view)

    def choose_play(self, view: View) -> str:
        self._note(view)
        return super().choose_play(view)


def referee_requests(game_name: str, players: int, seed: int, clock: TimeControl) -> list:
    """Seat 0's requests as the referee frames them (``Connection.request``) for the same
    game and time control, every seat answering its first legal move."""
    connection = Connection("bot", "secret")
    assert connection.hello(Hello(1, "secret", "")) is not None
    frames: list[dict[str, Any]] = []

    class Framed(LinkBase):
        def send(self, table: Table, request: Request, events: list) -> None:
            if request.seat == 0:
                frames.append(msgpack.unpackb(connection.request(request, events)))
                connection.expire()
            table.answer(request, table.game.legal_moves(request.seat)[0])

    game = new_game(game_name, players, seed)
    links = [Framed() for _ in range(players)]
    Table(game, links, move_seconds=clock.move_seconds, bank_seconds=clock.bank_seconds).run()
    return [{name: frame[name] for name in FIELDS} for frame in frames]


class TestClock:
    @pytest.mark.parametrize(("game", "players"), [(OH_SEVEN, 4), (OH_HELL, 3)])
    def test_a_local_bot_is_asked_as_the_referee_asks_it(self, game, players):
        """By default a local game tells its bots the referee's default clock, bank included:
        the first request is the one the referee sends for the same game and time control."""
        bots = [Recorder(seed=s) for s in range(players)]
        local_game(bots, game=game, seed=9)
        (first, *_) = bots[0].requests
        (expected, *_) = referee_requests(game, players, 9, TimeControl())
        assert {k: first[k] for k in FIELDS if k != "time_ms"} == {
            k: expected[k] for k in FIELDS if k != "time_ms"
        }
        assert abs(first["time_ms"] - expected["time_ms"]) <= 1  # float rounding of the clock
        clock = TimeControl()
        assert first["bank_ms"] == round(clock.bank_seconds * 1000)
        assert abs(first["time_ms"] - (clock.move_seconds + clock.bank_seconds) * 1000) <= 1

    def test_the_time_control_is_the_callers(self):
        """``move_seconds`` and ``bank_seconds`` set the clock a local game tells its bots;
        the bank never grows over a game."""
        bots = [Recorder(seed=s) for s in range(3)]
        local_game(bots, game=OH_HELL, seed=2, move_seconds=0.5, bank_seconds=2.0)
        requests = bots[1].requests
        assert requests[0]["bank_ms"] == 2000 and abs(requests[0]["time_ms"] - 2500) <= 1
        banks = [r["bank_ms"] for r in requests]
        assert banks == sorted(banks, reverse=True)
        assert all(r["time_ms"] - r["bank_ms"] <= 501 for r in requests)
