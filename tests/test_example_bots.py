"""The example bots: names, strength (Monte Carlo beats heuristic), time budget, the C bot."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest
from ohseven.core.rules import Rules
from ohseven.example_bots import heuristic_bot, montecarlo_bot, random_bot
from ohseven.referee.play.match import play_match
from ohseven.referee.records import BotSpec, MatchSpec, TimeControl
from ohseven.referee.sandbox.settings import SandboxConfig
from ohseven.sdk import View, local_game, local_match

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
C_BOT_DIR = os.path.join(ROOT, "example_bots", "c_bot")
NODE_BOT_DIR = os.path.join(ROOT, "example_bots", "node_bot")


class TestNames:
    @pytest.mark.parametrize("module", [random_bot, heuristic_bot, montecarlo_bot])
    def test_bot_name(self, module):
        """Each example bot module has a BOT_NAME that its class sends in hello."""
        assert module.BOT_CLASS.name == module.BOT_NAME


class TestStrength:
    def test_heuristic_beats_random(self):
        """The heuristic bot outscores random bots by a wide margin (Oh-Seven, 4 players)."""
        totals = local_match(
            [heuristic_bot.HeuristicBot, functools.partial(random_bot.RandomBot, seed=1)] * 2,
            games=12,
            seed=100,
        )
        assert min(totals[0::2]) > max(totals[1::2]) + 12 * 5

    @pytest.mark.parametrize(
        "game,games,samples,margin",
        [("oh-seven", 8, 10, 3.0), ("oh-hell", 6, 20, 10.0)],
    )
    def test_montecarlo_beats_heuristic(self, game, games, samples, margin):
        """Two Monte Carlo bots against two heuristic bots, seats rotating: MC scores more,
        by at least ``margin`` points per game on average."""
        mc = functools.partial(
            montecarlo_bot.MonteCarloBot, seed=5, budget_s=60.0, max_samples=samples
        )
        totals = local_match(
            [mc, heuristic_bot.HeuristicBot] * 2, games=games, game=game, seed=2000
        )
        mc_mean = sum(totals[0::2]) / 2 / games
        heuristic_mean = sum(totals[1::2]) / 2 / games
        print(f"{game}: MC {mc_mean:.1f} vs heuristic {heuristic_mean:.1f} per game")
        assert mc_mean > heuristic_mean + margin


class TestTimeBudget:
    def test_decisions_stay_within_budget(self):
        """With a 30 ms budget no decision takes much longer (one sample may overrun)."""
        worst = []

        class Timed(montecarlo_bot.MonteCarloBot):
            def choose_play(self, view: View) -> str:
                start = time.perf_counter()
                try:
                    return super().choose_play(view)
                finally:
                    worst.append(time.perf_counter() - start)

            choose_bid_inner = montecarlo_bot.MonteCarloBot.choose_bid

            def choose_bid(self, view: View):
                start = time.perf_counter()
                try:
                    return self.choose_bid_inner(view)
                finally:
                    worst.append(time.perf_counter() - start)

        bots = [Timed(seed=1, budget_s=0.03, max_samples=10_000)]
        bots += [heuristic_bot.HeuristicBot() for _ in range(5)]
        local_game(bots, game="oh-seven", seed=3)
        assert len(worst) >= 7 * 7
        assert max(worst) < 0.03 + 0.1

    def test_budget_never_exceeds_a_third_of_the_referee_time(self):
        """The per-decision budget is capped by the request's time_ms."""
        bot = montecarlo_bot.MonteCarloBot(budget_s=5.0)
        view = View()
        view.time_ms = 300
        assert bot.budget(view) == pytest.approx(0.1)


@pytest.fixture(scope="module")
def c_bot(tmp_path_factory):
    """The C bot built with its Makefile in a scratch copy of its folder."""
    build = tmp_path_factory.mktemp("c_bot")
    for name in ("c_bot.c", "Makefile"):
        shutil.copy(os.path.join(C_BOT_DIR, name), build / name)
    subprocess.run(["make", "-C", str(build)], check=True, capture_output=True)
    return str(build / "c_bot")


class TestCBot:
    @pytest.mark.parametrize(
        "game,players,options",
        [("oh-seven", 3, None), ("oh-seven", 6, {"passing": True}), ("oh-hell", 4, None)],
    )
    def test_plays_a_real_match(self, c_bot, game, players, options):
        """The C bot plays full games under the referee with no fault."""
        bots = (BotSpec("c", (c_bot,)),) + tuple(
            BotSpec(f"r{i}", (sys.executable, os.path.join(ROOT, "example_bots", "random_bot.py")))
            for i in range(1, players)
        )
        spec = MatchSpec(
            match_id="c-bot",
            rules=Rules.make(game, options),
            bots=bots,
            seatings=(tuple(range(players)), tuple(reversed(range(players)))),
            seeds=(3, 4),
            time_control=TimeControl(move_seconds=1.0, bank_seconds=5.0, start_seconds=10.0),
            fallback_seed=1,
        )
        result = play_match(spec, sandbox=SandboxConfig(mode="unsandboxed"))
        assert len(result.games) == 2
        assert all(record.faults == () for record in result.games)

    def test_without_environment(self, c_bot):
        """Started by hand, the C bot explains what it needs and exits 2."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("OHSEVEN_")}
        proc = subprocess.run([c_bot], capture_output=True, text=True, env=env)
        assert proc.returncode == 2 and "OHSEVEN_ENDPOINT" in proc.stderr


@pytest.fixture(scope="module")
def node_bot() -> str:
    """The Node.js bot's script, its packages installed as the README says (npm ci)."""
    if shutil.which("node") is None:
        pytest.fail("node is not installed (Debian/Ubuntu: apt-get install nodejs npm)")
    modules = os.path.join(NODE_BOT_DIR, "node_modules")
    if not all(os.path.isdir(os.path.join(modules, p)) for p in ("zeromq", "@msgpack/msgpack")):
        pytest.fail("the Node.js bot's packages are missing: npm ci --prefix example_bots/node_bot")
    return os.path.join(NODE_BOT_DIR, "bot.js")


class TestNodeBot:
    @pytest.mark.parametrize("game,players", [("oh-seven", 3), ("oh-hell", 4)])
    def test_plays_a_real_match_in_the_default_sandbox(self, node_bot, game, players):
        """The Node.js bot (npm zeromq + @msgpack/msgpack) plays full games under bubblewrap,
        as whatever uid the referee gives it, with no fault."""
        bots = (BotSpec("node", ("node", node_bot)),) + tuple(
            BotSpec(f"r{i}", (sys.executable, os.path.join(ROOT, "example_bots", "random_bot.py")))
            for i in range(1, players)
        )
        spec = MatchSpec(
            match_id="node-bot",
            rules=Rules.make(game),
            bots=bots,
            seatings=(tuple(range(players)), tuple(reversed(range(players)))),
            seeds=(5, 6),
            time_control=TimeControl(move_seconds=2.0, bank_seconds=10.0, start_seconds=20.0),
            fallback_seed=1,
        )
        result = play_match(spec, sandbox=SandboxConfig())
        assert len(result.games) == 2
        assert all(record.faults == () for record in result.games), result.logs["node"]

    def test_without_environment(self, node_bot):
        """Started by hand, the Node.js bot explains what it needs and exits 2."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("OHSEVEN_")}
        proc = subprocess.run(["node", node_bot], capture_output=True, text=True, env=env)
        assert proc.returncode == 2 and "OHSEVEN_ENDPOINT" in proc.stderr


class TestCBotSandboxed:
    def test_plays_in_the_default_sandbox(self, c_bot):
        """The compiled C bot (libzmq, msgpack-c from /usr/lib) plays under bubblewrap."""
        bots = (BotSpec("c", (c_bot,)),) + tuple(
            BotSpec(f"r{i}", (sys.executable, os.path.join(ROOT, "example_bots", "random_bot.py")))
            for i in range(1, 3)
        )
        spec = MatchSpec(
            match_id="c-bot-bwrap",
            rules=Rules.make("oh-seven"),
            bots=bots,
            seatings=((0, 1, 2),),
            seeds=(7,),
            time_control=TimeControl(move_seconds=2.0, bank_seconds=10.0, start_seconds=20.0),
            fallback_seed=1,
        )
        result = play_match(spec, sandbox=SandboxConfig())
        assert result.games[0].faults == (), result.logs["c"]


class TestReproducibility:
    def test_sdk_bots_replay_the_same_match_from_the_referee_seed(self):
        """Random SDK bots seeded by OHSEVEN_SEED play the same moves when a match is rerun."""
        random_file = os.path.join(ROOT, "example_bots", "random_bot.py")
        spec = MatchSpec(
            match_id="repro",
            rules=Rules.make("oh-seven", {"passing": True}),
            bots=tuple(BotSpec(f"r{i}", (sys.executable, random_file)) for i in range(3)),
            seatings=((0, 1, 2), (1, 2, 0)),
            seeds=(11, 11),
            fallback_seed=5,
        )
        runs = []
        for _ in range(2):
            with tempfile.TemporaryDirectory() as replays:
                result = play_match(
                    spec, sandbox=SandboxConfig(mode="unsandboxed"), replay_dir=replays
                )
                runs.append([(r.totals, r.faults) for r in result.games])
                moves = []
                for name in sorted(os.listdir(replays)):
                    with open(os.path.join(replays, name)) as handle:
                        moves.append(json.load(handle)["moves"])
                runs[-1].append(moves)
        assert runs[0] == runs[1]
        assert runs[0][-1] and all(runs[0][-1])
