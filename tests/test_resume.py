"""Resuming a tournament (``tourney`` on an existing output) whose configuration was edited:
real referee processes, real bot processes, real SQLite. A key written out at its default is
the same tournament; a changed key is named, as is a bot whose program changed."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import FIXED_BOT_SOURCE
from ohseven.referee.plan.digests import changed_keys, strip_defaults
from ohseven.referee.plan.loader import load_config_text

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')

ROUND_ROBIN = """\
name: fixed
game: oh-seven
table_size: 2
bots:
  - {name: low, file: low.py}
  - {name: high, file: high.py}
schedule: {type: round-robin, games_per_table: 2}
time_control: {move_seconds: 5, bank_seconds: 20, start_seconds: 20}
sandbox: {mode: unsandboxed}
output: out
"""

GAUNTLET = """\
name: gauntlet
game: oh-seven
table_size: 2
bots:
  - {name: low, file: low.py}
  - {name: high, file: high.py}
  - {name: hash, file: hash.py}
schedule:
  type: gauntlet
  candidates: [high]
  repeats: 2
  stop: {margin: 1.0, min_games: 2}
time_control: {move_seconds: 5, bank_seconds: 20, start_seconds: 20}
sandbox: {mode: unsandboxed}
output: out
"""


@pytest.fixture
def folder():
    """A folder the bots can read (when the referee is root they run as another uid)."""
    path = Path(tempfile.mkdtemp(prefix="ohseven-resume-"))
    path.chmod(0o755)
    for style in ("low", "high", "hash"):
        (path / f"{style}.py").write_text(FIXED_BOT_SOURCE.format(style=style))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def tourney(config: Path) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "ohseven.referee.cli", "tourney", str(config), "--quiet"],
        cwd=config.parent,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return done.returncode, done.stderr


def started(folder: Path, text: str) -> Path:
    config = folder / "t.yaml"
    config.write_text(text)
    code, err = tourney(config)
    assert code == 0, err
    return config


class TestEditedConfiguration:
    def test_a_default_written_out_resumes_the_same_tournament(self, folder: Path) -> None:
        config = started(folder, ROUND_ROBIN)
        config.write_text(
            ROUND_ROBIN.replace(
                "output: out\n",
                "output: out\nrules: {passing: false}\nratings: {fault_ranks_last: true}\n",
            ).replace("games_per_table: 2", "games_per_table: 2, repeats: 1")
        )
        code, err = tourney(config)
        assert code == 0, err  # was: "holds another tournament (config digest ...)"

    def test_a_changed_round_robin_key_is_named(self, folder: Path) -> None:
        config = started(folder, ROUND_ROBIN)
        config.write_text(
            ROUND_ROBIN.replace("games_per_table: 2", "games_per_table: 3").replace(
                "move_seconds: 5", "move_seconds: 4"
            )
        )
        code, err = tourney(config)
        assert code == 1
        assert "key `schedule.games_per_table` was 2, now 3" in err
        assert "key `time_control.move_seconds` was 5, now 4" in err
        assert "config digest" not in err

    def test_a_changed_gauntlet_key_is_named(self, folder: Path) -> None:
        config = started(folder, GAUNTLET)
        config.write_text(GAUNTLET.replace("margin: 1.0", "margin: 2.5"))
        code, err = tourney(config)
        assert code == 1
        assert "key `schedule.stop.margin` was 1.0, now 2.5" in err
        assert "config digest" not in err

    def test_a_changed_bot_program_is_named_with_its_line(self, folder: Path) -> None:
        config = started(folder, ROUND_ROBIN)
        with (folder / "high.py").open("a") as file:
            file.write("# edited\n")
        code, err = tourney(config)
        assert code == 1
        assert f"{config}:6: key `bots[1]` (high): this bot's program" in err


class TestDefaults:
    def test_keys_at_their_default_do_not_change_the_digest(self, folder: Path) -> None:
        plain = load_config_text(ROUND_ROBIN, base_dir=folder)
        written = load_config_text(
            ROUND_ROBIN + "rules: {passing: false, identical_top_bonus: true}\nreplays: false\n",
            base_dir=folder,
        )
        changed = load_config_text(ROUND_ROBIN + "rules: {passing: true}\n", base_dir=folder)
        assert written.digest == plain.digest != changed.digest
        assert changed_keys(plain.document, written.document, written.defaults) == []
        assert changed_keys(plain.document, changed.document, changed.defaults) == [
            ("rules.passing", None, True)
        ]

    def test_a_value_of_another_type_is_not_a_default(self) -> None:
        defaults = {"rules.passing": False, "schedule.repeats": 1}
        data = {"rules": {"passing": 0}, "schedule": {"repeats": 1.0}}
        assert strip_defaults(data, defaults) == {"rules": {"passing": 0}}


class TestFresh:
    def test_a_wrong_cluster_address_discards_nothing(self, folder: Path) -> None:
        """`--fresh --cluster` with an address no scheduler listens on: the error, and the
        tournament's games still there (they were discarded before the run failed)."""
        config = started(folder, ROUND_ROBIN)
        games = sqlite3.connect(folder / "out" / "tournament.sqlite")
        try:
            before = games.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        finally:
            games.close()
        assert before > 0
        done = subprocess.run(
            [sys.executable, "-m", "ohseven.referee.cli", "tourney", str(config), "--quiet"]
            + ["--fresh", "--cluster", "tcp://127.0.0.1:9"],
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 1
        assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in done.stderr
        assert (folder / "out" / "leaderboard.csv").exists()
        games = sqlite3.connect(folder / "out" / "tournament.sqlite")
        try:
            assert games.execute("SELECT COUNT(*) FROM games").fetchone()[0] == before
        finally:
            games.close()


class TestSecretFile:
    """A tournament without `seed` keeps its random secret in `secret.key`."""

    def test_another_tournaments_secret_is_named_not_seed(self, folder: Path) -> None:
        config = started(folder, ROUND_ROBIN)
        other = folder / "other"
        other.mkdir()
        shutil.copy(config, other / "t.yaml")
        for bot in ("low.py", "high.py"):
            shutil.copy(folder / bot, other / bot)
        code, err = tourney(other / "t.yaml")
        assert code == 0, err
        shutil.copy(other / "out" / "secret.key", folder / "out" / "secret.key")
        code, err = tourney(config)
        assert code == 1
        assert f"{folder / 'out' / 'secret.key'} is not the one drawn when it started" in err
        assert "key `seed` was changed" not in err

    @pytest.mark.parametrize("content", [b"\xff\xfe\x00binary", b"not hex at all\n"])
    def test_a_damaged_secret_is_said_so_plainly(self, folder: Path, content: bytes) -> None:
        config = started(folder, ROUND_ROBIN)
        (folder / "out" / "secret.key").write_bytes(content)
        code, err = tourney(config)
        assert code == 1
        assert f"the tournament secret {folder / 'out' / 'secret.key'} is damaged" in err
        assert "codec" not in err and "Traceback" not in err
