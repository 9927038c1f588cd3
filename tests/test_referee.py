"""The play stage's public API (ohseven.referee.play.referee.Referee) with real bot processes
over real ZeroMQ: a bot's seat beside an in-process seat, the hooks, a failed start, close."""

from __future__ import annotations

import os
import random
import sys
from typing import Any

import msgpack
import pytest
from ohseven.core.rules import OH_SEVEN, Rules, new_game
from ohseven.core.table import RandomFallback, Request, Table
from ohseven.referee.play.contestant import Contestant
from ohseven.referee.play.referee import Referee
from ohseven.referee.records import BotSpec, FaultStatus, MatchSpec, TimeControl
from ohseven.referee.sandbox.settings import SandboxConfig

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')

BOT = os.path.join(os.path.dirname(__file__), "bots", "match_bot.py")
UNSANDBOXED = SandboxConfig(mode="unsandboxed")
FAST = TimeControl(move_seconds=0.5, bank_seconds=0.5, start_seconds=5.0)


def spec_of(*bots: BotSpec) -> MatchSpec:
    return MatchSpec(
        match_id="referee",
        rules=Rules.make(OH_SEVEN, ()),
        bots=bots,
        seatings=(),
        seeds=(),
        time_control=FAST,
    )


class Human:
    """An in-process seat (as a human's would be): it answers inside ``send``."""

    synchronous = True

    def __init__(self) -> None:
        self.asked = 0
        self.told: list[dict[str, Any]] = []
        self.rng = random.Random(7)

    def usable(self) -> bool:
        return True

    def wake(self) -> None:
        pass

    def send(self, table: Table, request: Request, events: list[dict[str, Any]]) -> None:
        self.asked += 1
        legal = list(table.game.legal_moves(request.seat))
        table.answer(request, legal[self.rng.randrange(len(legal))])

    def tell(self, events: list[dict[str, Any]]) -> None:
        self.told.extend(events)

    def faulted(self, table: Table, seat: int, status: FaultStatus, request: Any) -> None:
        raise AssertionError(f"the in-process seat faulted: {status}")


class TestReferee:
    def test_a_bot_and_an_in_process_seat_play_a_game(self):
        """A bot process in seat 1 and an in-process link in seat 0 play a whole game; the
        ``on_frame`` hook sees every frame the bot sent after its hello (one per move)."""
        frames: list[tuple[str, dict[str, Any]]] = []

        def on_frame(bot: Contestant, frame: bytes) -> None:
            frames.append((bot.spec.name, msgpack.unpackb(frame)))

        spec = spec_of(BotSpec("bot", (sys.executable, BOT, "random")))
        human = Human()
        with Referee(spec, UNSANDBOXED, on_frame=on_frame) as referee:
            (bot,) = referee.bots
            referee.start()
            assert bot.active and bot.ever_ready and bot.take_carried() == []
            referee.prepare([bot], 11)
            game = new_game(spec.rules, 2, 11)
            moves: list[int] = []
            table = referee.play(
                0,
                game,
                [human, referee.link(bot)],
                [None, bot],
                RandomFallback("t"),
                on_move=lambda seat, kind, move, took: moves.append(seat),
            )
            assert referee.table is None  # between games
        assert game.is_over and table.faults == []
        assert human.asked == moves.count(0) > 0
        assert [frame["type"] for _, frame in frames] == ["move"] * moves.count(1)
        assert {name for name, _ in frames} == {"bot"}
        assert human.told[-1]["type"] == "game_over"  # told the game's end
        assert not bot.active  # closed

    def test_a_bot_that_does_not_start(self):
        """A bot that exits before its hello is not active; why is carried once (taken), its
        output is kept, the ``env`` hook reaches its environment, and close is idempotent."""
        script = "import os, sys; print('seen', os.environ['PROBE']); sys.exit(3)"
        spec = spec_of(BotSpec("quitter", (sys.executable, "-c", script)))
        referee = Referee(spec, UNSANDBOXED, max_restarts=0, env={"PROBE": "42"})
        try:
            (bot,) = referee.bots
            referee.start()
            assert not bot.active and not bot.ever_ready
            ((status, detail),) = bot.take_carried()
            assert status is FaultStatus.NO_START and "code 3" in detail
            assert bot.take_carried() == []
        finally:
            logs = referee.close()
        assert "seen 42" in logs["quitter"] and "seen 42" in bot.output()
        assert referee.close() is logs

    def test_prepare_renews_a_process_that_saw_the_deal(self):
        """A bot whose process has been shown a deal gets a fresh process for it (no fault,
        no restart spent); a dropped bot is not started again."""
        spec = spec_of(BotSpec("bot", (sys.executable, BOT, "random")))
        with Referee(spec, UNSANDBOXED, max_restarts=0) as referee:
            (bot,) = referee.bots
            referee.start()
            referee.prepare([bot], 5)
            assert bot.launches == 1
            referee.prepare([bot], 6)
            assert bot.launches == 1  # a new deal: the same process
            referee.prepare([bot], 5)
            assert bot.launches == 2 and bot.active and bot.restarts == 0
            assert bot.take_carried() == []

    def test_foresee_starts_the_renewal_during_the_game_before(self):
        """``foresee`` starts a spare only for a bot whose process saw the next deal, in its
        own new directory; the spare is shown nothing (its hello answered, its routing id not
        a bot's) until ``prepare`` swaps it in: a renewal, not a restart."""
        spec = spec_of(BotSpec("bot", (sys.executable, BOT, "random")))
        with Referee(spec, UNSANDBOXED, max_restarts=0) as referee:
            (bot,) = referee.bots
            referee.start()
            referee.prepare([bot], 5)
            first, old_dir = bot.process, bot.socket_dir
            referee.foresee([bot], 6)  # a deal it has not seen: nothing to start
            assert referee.spares == {}
            referee.foresee([bot], 5)
            spare = referee.spares[bot.index]
            assert spare.process is not None and spare.process is not first
            assert spare.socket_dir != old_dir  # new, holding only its endpoint
            assert os.listdir(spare.socket_dir) == [os.path.basename(spare.endpoint)]
            while spare.routing_id is None:  # its hello, handled as the game's loop would
                referee.wait(None, 0.05)  # type: ignore[arg-type]
            assert spare.routing_id not in referee.by_rid and bot.launches == 1
            referee.prepare([bot], 5)
            assert bot.process is spare.process and bot.routing_id == spare.routing_id
            assert bot.launches == 2 and bot.active and bot.restarts == 0
            assert bot.seen == {5} and referee.spares == {} and not os.path.exists(old_dir)
            assert bot.take_carried() == [] and first.poll() is not None

    def test_a_spare_that_dies_is_replaced_by_the_usual_start(self):
        """A spare whose process is gone before the swap is discarded without a fault; the
        bot gets a process started the usual way, with the same launch number."""
        spec = spec_of(BotSpec("bot", (sys.executable, BOT, "random")))
        with Referee(spec, UNSANDBOXED, max_restarts=0) as referee:
            (bot,) = referee.bots
            referee.start()
            referee.prepare([bot], 5)
            referee.foresee([bot], 5)
            spare = referee.spares[bot.index]
            assert spare.process is not None
            spare.process.kill()
            referee.prepare([bot], 5)
            assert bot.process is not spare.process and bot.active
            assert bot.launches == 2 and bot.restarts == 0 and bot.take_carried() == []
            assert referee.spares == {}
