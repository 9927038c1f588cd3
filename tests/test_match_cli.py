"""``ohseven-referee match``, run as a real command."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest
from ohseven.referee.cli.match import game_seeds, rotating_seatings

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')

BOT = os.path.join(os.path.dirname(__file__), "bots", "match_bot.py")


def referee(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ohseven.referee.cli", "match", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


class TestJson:
    def test_one_json_object(self, tmp_path):
        """--json prints one object: per bot points, wins, faults, and every game."""
        out = referee(
            "--json", "--games", "3", "--seed", "5", "--sandbox", "unsandboxed",
            "--move-timeout", "0.3", "--bank", "0.2", "--replays", str(tmp_path),
            BOT, BOT, f"{sys.executable} {BOT} illegal",
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        summary = json.loads(out.stdout)
        names = [bot["name"] for bot in summary["bots"]]
        assert names == ["match", "match#2", "match#3"]
        assert len(summary["games"]) == 3
        for g, game in enumerate(summary["games"]):
            assert game["seats"] == [names[(s + g) % 3] for s in range(3)]
            assert os.path.exists(game["replay"])
        for bot in summary["bots"]:
            assert bot["points"] == sum(
                game["totals"][game["seats"].index(bot["name"])] for game in summary["games"]
            )
        assert summary["bots"][2]["faults"] == {"illegal": 1}  # one process per match
        assert summary["bots"][0]["faults"] == {}
        assert sum(bot["wins"] for bot in summary["bots"]) >= 3

    def test_same_seed_same_deals(self):
        """The same --seed plays the same deals and results."""
        args = ["--json", "--games", "2", "--seed", "9", "--sandbox", "unsandboxed", BOT, BOT]
        first, second = referee(*args), referee(*args)
        strip = [
            [{k: v for k, v in g.items() if k != "seconds"} for g in json.loads(o.stdout)["games"]]
            for o in (first, second)
        ]
        assert strip[0] == strip[1]

    def test_without_a_seed_a_random_one_is_drawn_and_printed(self):
        """No --seed: a random 128-bit seed, printed on stderr and in the JSON, that replays
        the same deals when given back."""
        args = ["--json", "--games", "2", "--sandbox", "unsandboxed", BOT, BOT]
        first, second = referee(*args), referee(*args)
        seeds = [json.loads(run.stdout)["seed"] for run in (first, second)]
        assert seeds[0] != seeds[1] and all(seed.bit_length() == 128 for seed in seeds)
        assert f"--seed {seeds[0]}" in first.stderr
        again = referee("--seed", str(seeds[0]), *args)
        deals = [[g["seed"] for g in json.loads(run.stdout)["games"]] for run in (first, again)]
        assert deals[0] == deals[1]


class TestTable:
    def test_table(self):
        """Without --json a table lists each bot with its points and faults."""
        out = referee(
            "--games", "1", "--game", "oh-hell", "--rule", "hand_order=down",
            "--sandbox", "unsandboxed", BOT, BOT, f"{sys.executable} {BOT} garbage",
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        assert "match#3" in out.stdout and "malformed 1" in out.stdout
        assert "bid accuracy" in out.stdout


class TestBadInput:
    @pytest.mark.parametrize(
        ("args", "message"),
        [
            (["no/such/bot.py", BOT], "no such file"),
            (["--rule", "nonsense=1", BOT, BOT], "unknown rule option"),
            (["--rule", "passing", BOT, BOT], "KEY=VALUE"),
            ([BOT], "2 to 9 players"),
            (["--game", "oh-hell", BOT, BOT], "3 to 7 players"),
            (["--games", "0", BOT, BOT], "--games"),
            (["--move-timeout", "0", BOT, BOT], "--move-timeout"),
            (["'unterminated", BOT], "quotation"),
            (["no-such-command-xyz --flag", BOT], "not found"),
        ],
    )
    def test_one_line_error(self, args, message):
        """Bad input gives exit 2 and a one-line error, never a traceback."""
        out = referee(*args)
        assert out.returncode == 2
        assert message in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
        assert "Traceback" not in out.stderr


class TestHelpers:
    def test_seatings_rotate(self):
        """In game g seat s holds bot (s + g) mod n."""
        assert rotating_seatings(3, 4) == ((0, 1, 2), (1, 2, 0), (2, 0, 1), (0, 1, 2))

    def test_seeds(self):
        """Seeds are derived from the match seed: stable, distinct per game and per seed."""
        assert game_seeds(1, 3) == game_seeds(1, 3)
        assert len(set(game_seeds(1, 50))) == 50
        assert set(game_seeds(1, 5)).isdisjoint(game_seeds(2, 5))


class TestExtraPath:
    def test_a_library_outside_the_bot_folder_is_shown(self, tmp_path):
        """A bot importing a module from a folder outside its own starts only when that folder
        is given with --extra-path (in the default bwrap sandbox)."""
        shared = tempfile.mkdtemp(prefix="ohseven-extra-")
        try:
            os.chmod(shared, 0o755)
            lib = os.path.join(shared, "lib")
            mine = os.path.join(shared, "mine")
            os.mkdir(lib, 0o755)
            os.mkdir(mine, 0o755)
            with open(os.path.join(lib, "helper_mod.py"), "w") as handle:
                handle.write("from ohseven.example_bots.random_bot import RandomBot, run\n")
            with open(os.path.join(mine, "bot.py"), "w") as handle:
                handle.write(
                    f"import sys\nsys.path.insert(0, {lib!r})\nimport helper_mod\n"
                    "helper_mod.run(helper_mod.RandomBot)\n"
                )
            os.chmod(os.path.join(lib, "helper_mod.py"), 0o644)
            os.chmod(os.path.join(mine, "bot.py"), 0o644)
            bot = os.path.join(mine, "bot.py")
            args = ["--json", "--games", "1", "--seed", str(2**130), BOT, BOT, bot]
            hidden = json.loads(referee(*args).stdout)
            assert hidden["bots"][2]["faults"] == {"no_start": 1}
            shown = referee("--extra-path", lib, *args)
            assert shown.returncode == 0, shown.stderr
            assert json.loads(shown.stdout)["bots"][2]["faults"] == {}
        finally:
            shutil.rmtree(shared)

    @pytest.mark.parametrize("which", ["relative", "missing", "bot"])
    def test_bad_extra_paths_are_one_line_errors(self, which):
        """--extra-path must be absolute, exist and not show a bot's own folder to the others."""
        path = {"relative": "lib", "missing": "/no/such/dir", "bot": os.path.dirname(BOT)}[which]
        out = referee("--extra-path", path, BOT, BOT)
        assert out.returncode == 2 and "--extra-path" in out.stderr, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1


LAST_WORDS = os.path.join(os.path.dirname(__file__), "bots", "last_words_bot.py")


class TestFaultOutput:
    @pytest.mark.parametrize(
        ("mode", "status", "words"),
        [("start", "no_start", "no module named 'mylib'"), ("play", "crash", "the card I")],
    )
    def test_json_and_text_show_the_bots_last_output(self, mode, status, words):
        """A bot that fails has the end of its own output in --json and in the text report."""
        args = ["--games", "1", "--seed", str(2**130), BOT, BOT, f"{LAST_WORDS} {mode}"]
        data = json.loads(referee("--json", *args).stdout)
        row = data["bots"][2]
        assert row["faults"] == {status: 1}
        if status == "no_start":  # the fallback's seat: nothing credited to the bot
            assert (row["games"], row["points"], row["wins"], row["fallback_games"]) == (0, 0, 0, 1)
            assert row["avg_rank"] is None
        assert words in row["output_tail"]
        assert len(row["output_tail"].splitlines()) <= 21  # bounded: the "noise" is cut
        assert data["bots"][0]["output_tail"] == ""
        text = referee(*args)
        # a bot that never started: its seats were the fallback's, the match says so (exit 1)
        assert text.returncode == (1 if status == "no_start" else 0), text.stderr
        if status == "no_start":
            assert "did not start (no_start)" in text.stderr
            (row,) = [r for r in text.stdout.splitlines() if r.startswith("│") and "last_" in r]
            assert [cell.strip() for cell in row.split("│")[2:6]] == ["-"] * 4  # points...
        assert f"{status}" in text.stdout and "exited with code" in text.stdout
        assert words in text.stdout
        if mode == "start":
            assert "noise 49" in text.stdout and "noise 0\n" not in text.stdout


class TestLimits:
    def test_the_limits_a_tournament_sets_apply(self, tmp_path):
        """``--memory-mb`` bounds the bot as a tournament's ``sandbox.memory_mb`` would (its
        processes' memory together: a 300 MB bot fails at 200, with the hint, and plays at the
        default), and
        ``--stage-mb`` its copied files (refused, the flag named)."""
        hog = tmp_path / "hog_bot.py"
        with open(BOT) as source:  # the sandbox shows a bot only its own folder
            hog.write_text(
                "held = bytearray(300 << 20)\n"
                "for i in range(0, len(held), 4096):\n    held[i] = 1\n" + source.read()
            )
        common = ("--json", "--games", "1", "--seed", "3", "--move-timeout", "5")
        killed = referee(*common, "--memory-mb", "200", str(hog), BOT)
        assert killed.returncode == 1, killed.stderr  # it never started: nothing is its own
        assert json.loads(killed.stdout)["bots"][0]["faults"] == {"no_start": 1}
        assert "MemoryError" in killed.stdout, killed.stdout
        text = referee(*common[1:], "--memory-mb", "200", str(hog), BOT)
        assert "hint: the sandbox limits a bot's memory" in text.stdout + text.stderr
        played = referee(*common, str(hog), BOT)
        assert played.returncode == 0, played.stderr
        assert json.loads(played.stdout)["bots"][0]["faults"] == {}
        (tmp_path / "weights.bin").write_bytes(b"x" * (2 << 20))
        refused = referee(*common, "--stage-mb", "1", str(hog), BOT)
        assert refused.returncode == 2 and "--stage-mb" in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr

    def test_the_staging_total_a_tournament_sets_applies(self, tmp_path):
        """``--stage-total-mb`` bounds the files of all the bots together, as
        ``staging.total_mb``: two bots of 2 MB each are refused at 3 (the flag named, nothing
        played) and play at 5."""
        bots = []
        for name in ("a", "b"):
            folder = tmp_path / name
            folder.mkdir()
            shutil.copy(BOT, folder / f"{name}_bot.py")
            (folder / "weights.bin").write_bytes(b"x" * (2 << 20))
            bots.append(str(folder / f"{name}_bot.py"))
        common = ("--json", "--games", "1", "--seed", "3", "--move-timeout", "5")
        refused = referee(*common, "--stage-total-mb", "3", *bots)
        assert refused.returncode == 2 and "--stage-total-mb" in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr and refused.stdout == ""
        played = referee(*common, "--stage-total-mb", "5", *bots)
        assert played.returncode == 0, played.stderr
        assert all(bot["faults"] == {} for bot in json.loads(played.stdout)["bots"])

    @pytest.mark.parametrize(
        "flag", ["--memory-mb", "--cpus", "--stage-mb", "--stage-total-mb", "--processes"]
    )
    def test_absurd_limits_are_one_line_errors(self, flag):
        out = referee(flag, "100000000000000000000", BOT, BOT)
        assert out.returncode == 2 and f"argument {flag}: expected 1 to" in out.stderr
        assert "Traceback" not in out.stderr
