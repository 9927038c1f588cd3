"""The example bots: names, strength (Monte Carlo beats heuristic), time budget, the C, Node.js,
Java and Go bots (docs/BOTS.md's commands for them run verbatim)."""

from __future__ import annotations

import functools
import json
import os
import re
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
JAVA_BOT_DIR = os.path.join(ROOT, "example_bots", "java_bot")
GO_BOT_DIR = os.path.join(ROOT, "example_bots", "go_bot")
BOTS_MD = os.path.join(ROOT, "docs", "BOTS.md")


def doc_block(containing: str) -> str:
    """The one ```sh block of docs/BOTS.md that contains ``containing``."""
    with open(BOTS_MD, encoding="utf-8") as handle:
        blocks = re.findall(r"```sh\n(.*?)```", handle.read(), re.DOTALL)
    (block,) = [block for block in blocks if containing in block]
    return block


def run_shell(script: str, cwd: str) -> subprocess.CompletedProcess:
    """``script`` run by bash as an author would type it: ``ohseven-referee`` is the one
    installed next to this Python."""
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


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


@pytest.fixture(scope="module")
def java_work(tmp_path_factory) -> str:
    """A folder holding a copy of example_bots/java_bot (its sources and Makefile only),
    built with the docs' ``make`` (javac and jar); the docs' commands run from it."""
    if shutil.which("javac") is None or shutil.which("jar") is None:
        pytest.fail("no JDK here: javac and jar are needed (Debian: default-jdk-headless)")
    work = tmp_path_factory.mktemp("java")
    shutil.copytree(
        JAVA_BOT_DIR,
        work / "example_bots" / "java_bot",
        ignore=shutil.ignore_patterns("classes", "*.jar"),
    )
    shutil.copy(os.path.join(ROOT, "example_bots", "random_bot.py"), work / "example_bots")
    built = run_shell("make -C example_bots/java_bot", str(work))
    assert built.returncode == 0, built.stdout + built.stderr
    return str(work)


def java_command() -> str:
    """The small-reservation java command of docs/BOTS.md, with the example's jar."""
    script = doc_block("java_bot.jar").replace("\\\n", "")
    (flags,) = re.findall(r'^JAVA="(.*)"$', script, re.MULTILINE)
    return " ".join(flags.split()) + " -jar example_bots/java_bot/java_bot.jar"


class TestJavaBot:
    def test_the_docs_commands_pass_check_bot(self, java_work):
        """docs/BOTS.md's Java block, run verbatim: both commands (small reservations at the
        default memory_mb; the JVM's defaults at --memory-mb 4096) pass every check of
        check-bot in the default sandbox, as deterministic (seeded by OHSEVEN_SEED)."""
        proc = run_shell(doc_block("java_bot.jar"), java_work)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, out[-4000:]
        assert proc.stdout.count("OK: 26 of 26 checks passed") == 2, out[-4000:]
        assert proc.stdout.count("deterministic under a fixed seed: yes") == 2, out[-4000:]
        assert "sandbox bwrap" in proc.stdout

    def test_the_jvm_defaults_do_not_start_at_the_default_memory(self, java_work):
        """Why the docs give the flags: the same bot with the JVM's defaults fails at the
        default memory_mb (so the check above can fail), with the JVM's own reason shown."""
        proc = run_shell(
            "ohseven-referee check-bot --game oh-hell --max-failures 1 --seed 1 "
            '"java -jar example_bots/java_bot/java_bot.jar"',
            java_work,
        )
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "no_start" in proc.stdout and "Error occurred during initialization of VM" in (
            proc.stdout
        )

    @pytest.mark.parametrize("game", ["oh-seven", "oh-hell"])
    def test_plays_a_match_in_the_default_sandbox(self, java_work, game):
        """``match`` with the docs' java command against two random bots: no fault."""
        proc = run_shell(
            f"ohseven-referee match --json --game {game} --games 2 --seed 11 "
            f'"{java_command()}" example_bots/random_bot.py example_bots/random_bot.py',
            java_work,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        bots = {bot["name"]: bot for bot in json.loads(proc.stdout)["bots"]}
        assert bots["java"]["faults"] == {}, proc.stdout
        assert len(json.loads(proc.stdout)["games"]) == 2

    def test_answers_the_largest_request(self, java_work, tmp_path):
        """``replay --at`` the last move of a 9-player Oh-Seven game with the card pass sends the
        Java bot the whole game's events at once (hundreds of them, a message well over the
        255 bytes of a short ZMTP frame); it answers a legal move."""
        replays = tmp_path / "replays"
        random_bot = "example_bots/random_bot.py"
        played = run_shell(
            f"ohseven-referee match --games 1 --seed 5 --rule passing=true --replays {replays} "
            f'"{java_command()}" ' + " ".join([random_bot] * 8),
            java_work,
        )
        assert played.returncode == 0, played.stdout + played.stderr
        (replay,) = sorted(replays.glob("*.json"))
        moves = len(json.loads(replay.read_text())["moves"])
        asked = run_shell(
            f'ohseven-referee replay {replay} --json --at {moves} --bot "{java_command()}"',
            java_work,
        )
        assert asked.returncode == 0, asked.stdout + asked.stderr
        answer = json.loads(asked.stdout)
        assert answer["events"] > 300 and answer["accepted"] and not answer["fault"], answer

    def test_without_environment(self, java_work):
        """Started by hand, the Java bot explains what it needs and exits 2."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("OHSEVEN_")}
        jar = os.path.join(java_work, "example_bots", "java_bot", "java_bot.jar")
        proc = subprocess.run(["java", "-jar", jar], capture_output=True, text=True, env=env)
        assert proc.returncode == 2 and "OHSEVEN_ENDPOINT" in proc.stderr


@pytest.fixture(scope="module")
def go_work(tmp_path_factory) -> str:
    """A folder holding a copy of example_bots/go_bot (its sources and Makefile only) and the
    random bot; docs/BOTS.md's Go block (its ``make`` included) runs from it."""
    if shutil.which("go") is None:
        pytest.fail("no Go here: the go command is needed (Debian: golang-go)")
    work = tmp_path_factory.mktemp("go")
    shutil.copytree(
        GO_BOT_DIR, work / "example_bots" / "go_bot", ignore=shutil.ignore_patterns("go_bot")
    )
    shutil.copy(os.path.join(ROOT, "example_bots", "random_bot.py"), work / "example_bots")
    return str(work)


@pytest.fixture
def go_built(go_work) -> str:
    """``go_work`` with the bot built (by the docs' block, or here by its Makefile)."""
    built = run_shell("make -C example_bots/go_bot", go_work)
    assert built.returncode == 0, built.stdout + built.stderr
    return go_work


def go_command() -> str:
    """The check-bot command of docs/BOTS.md's Go block: the bot with its environment."""
    (command,) = re.findall(r'^ohseven-referee check-bot "(.*)"$', doc_block("go_bot"), re.M)
    return command


class TestGoBot:
    def test_the_docs_block_builds_and_passes_check_bot(self, go_work):
        """docs/BOTS.md's Go block, run verbatim from a fresh copy (no binary, no build cache):
        make builds the bot offline with the standard library, and the documented command
        passes every check of check-bot in the default sandbox, deterministically."""
        proc = run_shell(doc_block("go_bot"), go_work)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, out[-4000:]
        assert os.access(os.path.join(go_work, "example_bots", "go_bot", "go_bot"), os.X_OK)
        assert "OK: 26 of 26 checks passed" in proc.stdout, out[-4000:]
        assert "deterministic under a fixed seed: yes" in proc.stdout, out[-4000:]
        assert "sandbox bwrap" in proc.stdout
        # the build leaves nothing but the binary in the bot's folder (the sandbox copies it)
        sources = set(os.listdir(GO_BOT_DIR)) - {"go_bot"}
        assert set(os.listdir(os.path.join(go_work, "example_bots", "go_bot"))) == sources | {
            "go_bot"
        }

    def test_the_runtime_does_not_start_below_its_reservation(self, go_built):
        """Why the docs speak of the runtime's 700 MB: the same command at --memory-mb 512 does
        not start, with the Go runtime's own reason shown (so the check above can fail)."""
        proc = run_shell(
            f'ohseven-referee check-bot --memory-mb 512 --max-failures 1 --seed 1 "{go_command()}"',
            go_built,
        )
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "no_start" in proc.stdout and "fatal error" in proc.stdout, proc.stdout

    @pytest.mark.parametrize("game", ["oh-seven", "oh-hell"])
    def test_plays_a_match_in_the_default_sandbox(self, go_built, game):
        """``match`` with the docs' command against two random bots: no fault."""
        proc = run_shell(
            f"ohseven-referee match --json --game {game} --games 2 --seed 11 "
            f'"{go_command()}" example_bots/random_bot.py example_bots/random_bot.py',
            go_built,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        report = json.loads(proc.stdout)
        (go,) = [bot for bot in report["bots"] if not bot["name"].startswith("random")]
        assert go["faults"] == {}, proc.stdout
        assert len(report["games"]) == 2

    def test_answers_the_largest_request(self, go_built, tmp_path):
        """``replay --at`` the last move of a 9-player Oh-Seven game with the card pass sends the
        Go bot the whole game's events at once (hundreds of them, a message well over the 255
        bytes of a short ZMTP frame, arrays over 15 items); it answers a legal move."""
        replays = tmp_path / "replays"
        played = run_shell(
            f"ohseven-referee match --games 1 --seed 5 --rule passing=true --replays {replays} "
            f'"{go_command()}" ' + " ".join(["example_bots/random_bot.py"] * 8),
            go_built,
        )
        assert played.returncode == 0, played.stdout + played.stderr
        (replay,) = sorted(replays.glob("*.json"))
        moves = len(json.loads(replay.read_text())["moves"])
        asked = run_shell(
            f'ohseven-referee replay {replay} --json --at {moves} --bot "{go_command()}"',
            go_built,
        )
        assert asked.returncode == 0, asked.stdout + asked.stderr
        answer = json.loads(asked.stdout)
        assert answer["events"] > 300 and answer["accepted"] and not answer["fault"], answer

    def test_without_environment(self, go_built):
        """Started by hand, the Go bot explains what it needs and exits 2."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("OHSEVEN_")}
        binary = os.path.join(go_built, "example_bots", "go_bot", "go_bot")
        proc = subprocess.run([binary], capture_output=True, text=True, env=env)
        assert proc.returncode == 2 and "OHSEVEN_ENDPOINT" in proc.stderr


class TestNodeDocs:
    def test_the_docs_command_passes_check_bot(self, node_bot):
        """docs/BOTS.md's Node.js check-bot command, verbatim from the repository's root (its
        npm ci is CI's and the node_bot fixture's precondition)."""
        block = doc_block("node_bot/bot.js")
        commands = [line for line in block.splitlines() if line.startswith("ohseven-referee")]
        assert commands
        proc = run_shell("\n".join(commands), ROOT)
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
        assert "OK: 26 of 26 checks passed" in proc.stdout
