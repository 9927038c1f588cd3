"""The SDK runner: answers checked against the legal moves, in-process games, real matches."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from ohseven.core.rules import Rules, competition_ranks
from ohseven.referee.play.match import play_match
from ohseven.referee.records import BotSpec, MatchSpec, TimeControl
from ohseven.referee.sandbox.settings import SandboxConfig
from ohseven.sdk import Bot, BotAnswerError, Driver, local_game, local_match

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "example_bots")
UNSANDBOXED = SandboxConfig(mode="unsandboxed")


def request(kind="play", legal=("5H", "7H"), count=0, events=()):
    return {
        "type": "request",
        "id": 1,
        "kind": kind,
        "events": list(events),
        "legal": list(legal),
        "count": count,
        "time_ms": 1000,
        "bank_ms": 1000,
    }


GAME = {
    "type": "game",
    "index": 0,
    "game": "oh-seven",
    "players": 3,
    "seat": 0,
    "rounds": 7,
    "rules": {},
}


class Cheater(Bot):
    def choose_play(self, view):
        return "0C"

    def choose_pass(self, view, count):
        return view.legal[: count + 1]

    def choose_bid(self, view):
        return 3


class Crasher(Bot):
    def choose_play(self, view):
        raise RuntimeError("boom in the bot")

    def on_trick(self, view, trick):
        raise RuntimeError("boom in a hook")


class TestAnswers:
    def test_illegal_play_is_replaced(self, capsys):
        """A card not held is reported on stderr and a legal card is sent instead."""
        driver = Driver(Cheater())
        move = driver.decide(request(events=[GAME]))
        assert move in ("5H", "7H") and driver.errors == 1
        assert "choose_play returned '0C', which is not legal" in capsys.readouterr().err

    def test_wrong_pass_size_is_replaced(self, capsys):
        """A pass of the wrong size becomes a random legal pass of the right size."""
        driver = Driver(Cheater())
        move = driver.decide(request("pass", ["1C", "2C", "3C"], count=2, events=[GAME]))
        assert len(move) == 2 and set(move) <= {"1C", "2C", "3C"}
        assert "choose_pass returned" in capsys.readouterr().err

    def test_wrong_bid_type_is_replaced(self, capsys):
        """An Oh-Seven bid must be a card: a number is replaced."""
        driver = Driver(Cheater())
        assert driver.decide(request("bid", ["4H", "5S"], events=[GAME])) in ("4H", "5S")
        assert "choose_bid returned 3" in capsys.readouterr().err

    def test_exception_is_printed_and_replaced(self, capsys):
        """An exception in choose_play prints its traceback; a legal card is sent."""
        driver = Driver(Crasher())
        assert driver.decide(request(events=[GAME])) in ("5H", "7H")
        err = capsys.readouterr().err
        assert "Traceback" in err and "boom in the bot" in err

    def test_substitutes_are_reported_for_the_referee(self, capsys):
        """A substitute move comes with ``last_error`` (exception and traceback, or the illegal
        answer with where it happened); a good answer clears it."""
        driver = Driver(Crasher())
        driver.decide(request(events=[GAME]))
        assert driver.last_error.startswith("choose_play raised RuntimeError: boom in the bot")
        assert "Traceback" in driver.last_error and "game 1, round 1" in driver.last_error
        driver = Driver(Cheater())
        driver.decide(request(events=[GAME]))
        assert "choose_play returned '0C', which is not legal" in driver.last_error
        assert "trick 1" in driver.last_error

        class Good(Bot):
            def choose_play(self, view):
                return view.legal[0]

        driver.bot = Good()
        driver.decide(request())
        assert driver.last_error is None

    def test_strict_mode_raises(self):
        """Strict mode raises BotAnswerError for an illegal answer and re-raises exceptions."""
        with pytest.raises(BotAnswerError, match="not legal"):
            Driver(Cheater(), strict=True).decide(request(events=[GAME]))
        with pytest.raises(RuntimeError, match="boom in the bot"):
            Driver(Crasher(), strict=True).decide(request(events=[GAME]))

    def test_numpy_like_integers_accepted(self):
        """An Oh Hell bid given as an integer-valued non-int is sent as an int."""

        class FloatBid(Bot):
            def choose_bid(self, view):
                return 2.0

        game = dict(GAME, game="oh-hell", players=4)
        move = Driver(FloatBid(), strict=True).decide(request("bid", [0, 1, 2], events=[game]))
        assert move == 2 and type(move) is int


class TestLocalGames:
    @pytest.mark.parametrize(
        "game,players",
        [("oh-seven", n) for n in range(2, 10)] + [("oh-hell", n) for n in range(3, 8)],
    )
    def test_random_bots_finish(self, game, players):
        """Random bots finish a game in-process, strictly legal, with the hooks called."""
        over = []

        class Watcher(Bot):
            def on_game_over(self, view, event):
                over.append(event["totals"])

        result = local_game([Watcher(seed=s) for s in range(players)], game=game, seed=players)
        assert len(over) == players and all(t == list(result.totals) for t in over)

    def test_passing_rule(self):
        """With passing on, passes are asked and answered."""
        passes = []

        class Passer(Bot):
            def choose_pass(self, view, count):
                passes.append(count)
                return view.hand[:count]

        local_game([Passer(seed=s) for s in range(4)], seed=3, options={"passing": True})
        assert sorted(set(passes)) == [1, 2, 3]

    def test_local_match_rotates(self):
        """local_match totals one entry per bot class."""
        totals = local_match([Bot, Bot, Bot], games=3, seed=1)
        assert len(totals) == 3


LOCAL_BOT = """
from ohseven.sdk import Bot, run


class Local(Bot):
    name = "mine"

    def choose_bid(self, view):
        if {mode!r} == "raise":
            raise ValueError("my own bug in the bid")
        return view.legal[0]

    def choose_play(self, view):
        if {mode!r} == "illegal" and view.round == 2 and len(view.tricks) == 1:
            return "XX"
        return view.legal[0]


if __name__ == "__main__":
    run(Local)
"""


class TestLocalMode:
    def local(self, tmp_path, mode: str, *args: str) -> subprocess.CompletedProcess:
        path = tmp_path / f"{mode}_bot.py"
        path.write_text(LOCAL_BOT.format(mode=mode))
        return subprocess.run(
            [sys.executable, str(path), "--local", *args],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    def test_an_exception_in_the_bot_shows_its_traceback(self, tmp_path):
        """A ValueError raised by the bot's code is shown with its traceback and the view, not
        as a usage error."""
        out = self.local(tmp_path, "raise", "--against", "heuristic")
        assert out.returncode == 1
        assert "Traceback" in out.stderr and "ValueError: my own bug in the bid" in out.stderr
        assert "in choose_bid of this view" in out.stderr and "round 1" in out.stderr
        assert "usage:" not in out.stderr

    def test_an_illegal_answer_names_the_round_the_trick_and_the_view(self, tmp_path):
        """An illegal answer says the round and trick and shows the bot's hand and the table."""
        out = self.local(tmp_path, "illegal")
        assert out.returncode == 1 and "Traceback" not in out.stderr
        assert "returned 'XX', which is not legal" in out.stderr
        assert "round 3, trick 2" in out.stderr and "hand [" in out.stderr

    def test_bad_options_are_still_usage_errors(self, tmp_path):
        """A table size the game cannot have is a usage error (exit 2)."""
        out = self.local(tmp_path, "fine", "--players", "12")
        assert out.returncode == 2 and "2 to 9 players" in out.stderr


class TestLazyView:
    @pytest.mark.parametrize(
        ("game", "players", "options"),
        [("oh-seven", 4, {"passing": True}), ("oh-seven", 6, None), ("oh-hell", 4, None)],
    )
    def test_queued_events_play_like_eager_folding(self, game, players, options):
        """A bot without hooks (events queued) plays exactly as one with a hook (folded eagerly)."""
        from ohseven.example_bots.heuristic_bot import HeuristicBot

        moves: dict[str, list] = {"lazy": [], "eager": []}

        def recording(kind, hook):
            class Recording(HeuristicBot):
                def choose_play(self, view):
                    card = super().choose_play(view)
                    moves[kind].append((view.seat, view.round, list(view.hand), card))
                    return card

            if hook:
                Recording.on_event = lambda self, view, event: None
            return Recording

        results = {}
        for kind in moves:
            bot_class = recording(kind, hook=kind == "eager")
            bots = [bot_class(seed=s) for s in range(players)]
            results[kind] = local_game(bots, game=game, seed=5, options=options).totals
            assert Driver(bots[0])._lazy is (kind == "lazy")
        assert moves["lazy"] == moves["eager"] and results["lazy"] == results["eager"]
        assert len(moves["lazy"]) > 20


def bot_command(name, *args):
    return (sys.executable, os.path.join(EXAMPLES, f"{name}_bot.py"), *args)


def match_spec(game, players, names, games=1):
    bots = tuple(BotSpec(f"{name}{i}", bot_command(name)) for i, name in enumerate(names))
    return MatchSpec(
        match_id=f"sdk-{game}-{players}",
        rules=Rules.make(game, None),
        bots=bots,
        seatings=tuple(tuple((s + g) % players for s in range(players)) for g in range(games)),
        seeds=tuple(7 + g for g in range(games)),
        time_control=TimeControl(move_seconds=1.0, bank_seconds=5.0, start_seconds=10.0),
        fallback_seed=1,
    )


@pytest.mark.slow  # real referee processes
class TestRealReferee:
    @pytest.mark.parametrize(
        "game,players",
        [("oh-seven", n) for n in range(2, 10)] + [("oh-hell", n) for n in range(3, 8)],
    )
    def test_example_bots_play_without_faults(self, game, players):
        """Random and heuristic bots over the wire: full games, no fault, nothing on stderr."""
        names = ["random" if i % 2 else "heuristic" for i in range(players)]
        result = play_match(match_spec(game, players, names, games=2), sandbox=UNSANDBOXED)
        assert len(result.games) == 2
        for record in result.games:
            assert record.faults == ()
            assert record.ranks == competition_ranks(record.totals)
        assert not any("ohseven-sdk" in log for log in result.logs.values())

    def test_montecarlo_over_the_wire(self):
        """The Monte Carlo bot plays a full game under the referee within its time."""
        spec = match_spec("oh-seven", 3, ["montecarlo", "heuristic", "random"])
        spec = MatchSpec(
            match_id=spec.match_id,
            rules=spec.rules,
            bots=(BotSpec("mc", bot_command("montecarlo", "--budget", "0.02")),) + spec.bots[1:],
            seatings=spec.seatings,
            seeds=spec.seeds,
            time_control=spec.time_control,
            fallback_seed=1,
        )
        (record,) = play_match(spec, sandbox=UNSANDBOXED).games
        assert record.faults == ()


class TestCommandLine:
    def test_help(self):
        """--help explains how the bot is run."""
        out = subprocess.run(
            bot_command("random", "--help"), capture_output=True, text=True, check=True
        ).stdout
        assert "OHSEVEN_ENDPOINT" in out and "--local" in out

    def test_no_environment_is_a_clear_error(self):
        """Without the referee's environment, the bot says what is missing (no traceback)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("OHSEVEN_")}
        proc = subprocess.run(bot_command("random"), capture_output=True, text=True, env=env)
        assert proc.returncode == 2
        assert "OHSEVEN_ENDPOINT" in proc.stderr and "Traceback" not in proc.stderr

    def test_local_play(self):
        """--local plays in-process games and prints one total per seat."""
        proc = subprocess.run(
            bot_command(
                "heuristic", "--local", "--games", "2", "--players", "3", "--against", "random"
            ),
            capture_output=True,
            text=True,
            check=True,
        )
        lines = proc.stdout.strip().splitlines()
        assert len(lines) == 3 and "heuristic (you)" in lines[0]

    def test_sigterm_exits(self, tmp_path):
        """SIGTERM ends a waiting bot promptly."""
        env = dict(os.environ, OHSEVEN_ENDPOINT=f"ipc://{tmp_path}/nobody", OHSEVEN_SECRET="x")
        proc = subprocess.Popen(bot_command("random"), env=env, stderr=subprocess.PIPE)
        import time

        time.sleep(1.0)
        proc.terminate()
        assert proc.wait(timeout=5) == 0
