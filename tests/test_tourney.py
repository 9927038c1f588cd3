"""The tourney command end to end: real referee processes, real bot processes, real SQLite."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from conftest import FIXED_BOT_SOURCE
from ohseven.referee.config import load_config
from ohseven.referee.ratings import rate_games
from ohseven.referee.schedule import build_schedule
from ohseven.referee.store import Store
from ohseven.referee.tourney import LEADERBOARD_NAME, run_tournament

CONFIG = """
name: fixed
game: oh-seven
table_size: {size}
bots:
  - {{name: low, file: low.py}}
  - {{name: high, file: high.py}}
  - {{name: hash, file: hash.py}}
  - {{name: hash2, file: hash.py}}
schedule: {{type: round-robin, games_per_table: {games}}}
time_control: {{move_seconds: 5, bank_seconds: 20, start_seconds: 20}}
sandbox: {{mode: unsandboxed}}
seed: 3
replays: false
output: {output}
"""


@pytest.fixture
def tmp_path():
    """A folder the bots can read: when the referee is root they run as another uid, and
    pytest's own temporary folders are private to root."""
    folder = Path(tempfile.mkdtemp(prefix="ohseven-tourney-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def write_tournament(folder: Path, *, size: int = 3, games: int = 1, output: str = "out") -> Path:
    folder.chmod(0o755)
    for style in ("low", "high", "hash"):
        (folder / f"{style}.py").write_text(FIXED_BOT_SOURCE.format(style=style))
    path = folder / "t.yaml"
    path.write_text(CONFIG.format(size=size, games=games, output=output))
    return path


def referee(*args: str, cwd: Path | None = None, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "ohseven.referee.cli", "tourney", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **kwargs,
    )


def finish(process: subprocess.Popen, timeout: float = 120) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


def stored_games(folder: Path) -> int:
    """Games in a tournament's database, read-only (the referee may be writing it)."""
    path = folder / "tournament.sqlite"
    if not path.exists():
        return 0
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    try:
        return db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    except sqlite3.OperationalError:  # created but no table yet
        return 0
    finally:
        db.close()


def board(folder: Path) -> dict:
    """The leaderboard of a finished tournament, checking that no bot faulted."""
    document = json.loads((folder / LEADERBOARD_NAME).read_text())
    faults = {bot["name"]: bot["faults"] for bot in document["bots"] if bot["faults"]}
    assert not faults, faults
    return document


class TestWorkers:
    def test_one_and_two_workers_give_the_same_leaderboard(self, tmp_path: Path) -> None:
        """The leaderboard does not depend on the number of worker processes."""
        config = write_tournament(tmp_path)
        boards = []
        for workers in (1, 2):
            code, out, err = finish(
                referee(str(config), "--workers", str(workers), "--quiet", "--fresh")
            )
            assert code == 0, err
            boards.append(board(tmp_path / "out"))
        assert boards[0] == boards[1]
        assert boards[0]["complete"] and boards[0]["games_played"] == 12
        assert sum(bot["games"] for bot in boards[0]["bots"]) == 12 * 3

    def test_leaderboard_matches_ratings_recomputed_from_the_store(self, tmp_path: Path) -> None:
        """leaderboard.json is TrueSkill over the stored games in canonical order."""
        config = load_config(write_tournament(tmp_path, size=2))
        outcome = run_tournament(config, workers=2)
        assert outcome.complete and not outcome.interrupted
        assert board(Path(config.output)) == outcome.leaderboard  # and no bot faulted
        with Store.open(config.output, create=False) as store:
            stored = store.games()
            assert [game.canonical_index for game in stored] == list(range(outcome.games))
            ratings = rate_games(config.game, config.bot_names, [g.record for g in stored])
        expected = {row.name: round(row.mu, 6) for row in ratings.table()}
        assert {bot["name"]: bot["mu"] for bot in outcome.leaderboard["bots"]} == expected

    def test_run_publishes_the_site_with_the_same_leaderboard(self, tmp_path: Path) -> None:
        """The finished run leaves the static site and a versioned leaderboard.json behind."""
        config = load_config(write_tournament(tmp_path, size=2))
        outcome = run_tournament(config, workers=1)
        output = Path(config.output)
        for name in ("index.html", "leaderboard.csv", "leaderboard.md", "games.html"):
            assert (output / name).is_file(), name
        document = board(output)
        assert document["format"] == "ohseven-leaderboard" and document["version"] == 1
        assert document == outcome.leaderboard

    def test_rerun_of_a_finished_tournament_plays_nothing(self, tmp_path: Path) -> None:
        """A second run of a finished tournament plays no game and keeps the leaderboard."""
        config = load_config(write_tournament(tmp_path, size=4))
        first = run_tournament(config, workers=1)
        second = run_tournament(config, workers=2)
        assert first.played_games == 4 and second.played_games == 0
        assert first.leaderboard == second.leaderboard == board(Path(config.output))


class TestResume:
    @pytest.mark.timeout(240)
    def test_sigkill_at_random_moments_then_resume_gives_the_same_leaderboard(
        self, tmp_path: Path
    ) -> None:
        """SIGKILL of the referee at random moments, then a rerun: the same final leaderboard."""
        reference_dir = tmp_path / "ref"
        reference_dir.mkdir()
        config = write_tournament(reference_dir, size=2, games=4)
        code, _, err = finish(referee(str(config), "--workers", "2", "--quiet"))
        assert code == 0, err
        reference = board(reference_dir / "out")

        killed_dir = tmp_path / "killed"
        killed_dir.mkdir()
        config = write_tournament(killed_dir, size=2, games=4)
        rng = random.Random(11)
        kept = []  # games in the database after each kill
        for _ in range(6):
            process = referee(str(config), "--workers", "2", "--quiet")
            # kill at a random moment after a random number of new games (0 to 4)
            target = (kept[-1] if kept else 0) + rng.randint(0, 4)
            while process.poll() is None and stored_games(killed_dir / "out") < target:
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, 0.05))
            if process.poll() is not None:
                break
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            kept.append(stored_games(killed_dir / "out"))
        assert any(0 < games < reference["games_total"] for games in kept), kept
        code, _, err = finish(referee(str(config), "--workers", "2", "--quiet"))
        assert code == 0, err
        assert board(killed_dir / "out") == reference
        with Store.open(killed_dir / "out", create=False) as store:
            assert set(store.match_status().values()) == {"done"}
            assert store.game_count() == reference["games_total"]

    def test_ctrl_c_stops_cleanly_and_tells_how_to_resume(self, tmp_path: Path) -> None:
        """SIGINT: exit 130, a consistent database, a resume hint; the rerun completes."""
        config = write_tournament(tmp_path, games=40)
        process = referee(str(config), "--workers", "2", "--quiet")
        deadline = time.monotonic() + 60
        while stored_games(tmp_path / "out") == 0 and time.monotonic() < deadline:
            time.sleep(0.05)  # interrupt once the run is under way, not before it starts
        process.send_signal(signal.SIGINT)
        code, _, err = finish(process, timeout=60)
        assert code == 130, err
        assert 0 < stored_games(tmp_path / "out") < board(tmp_path / "out")["games_total"]
        assert "Resume with: ohseven-referee tourney" in err
        with Store.open(tmp_path / "out", create=False) as store:
            statuses = set(store.match_status().values())
        assert statuses <= {"done", "running", "pending"}
        code, _, err = finish(referee(str(config), "--quiet"))
        assert code == 0, err
        assert board(tmp_path / "out")["complete"]


class TestCommandLine:
    def test_bad_config_lists_every_error_and_runs_nothing(self, tmp_path: Path) -> None:
        """A config with mistakes: exit 2, each error with its line, no output directory."""
        path = tmp_path / "bad.yaml"
        path.write_text("name: x\ngame: oh-seven\ntable_size: 3\nbots:\n  - {name: a}\nfoo: 1\n")
        code, _, err = finish(referee(str(path)))
        assert code == 2
        assert "bad.yaml:5: key `bots[0]`" in err and "bad.yaml:6: key `foo`" in err
        assert "Traceback" not in err
        assert not (tmp_path / "out").exists()

    def test_a_bot_that_never_starts_is_named_with_the_reason(self, tmp_path: Path) -> None:
        """A bot that exits at once: the run completes and a warning names it and says why."""
        config = write_tournament(tmp_path, size=4)
        (tmp_path / "high.py").write_text("import sys\nsys.exit('no luck today')\n")
        code, _, err = finish(referee(str(config), "--quiet"))
        assert code == 0, err
        assert "warning: bot high did not start in 4 game(s)" in err  # 4 rotations
        assert "exited with code 1 before hello" in err

    def test_other_tournament_in_the_output_is_refused(self, tmp_path: Path) -> None:
        """A changed config over an existing database: a clear error, --fresh overrides it."""
        config = write_tournament(tmp_path, size=4)
        assert finish(referee(str(config), "--quiet"))[0] == 0
        config.write_text(config.read_text().replace("seed: 3", "seed: 4"))
        code, _, err = finish(referee(str(config), "--quiet"))
        assert code == 1 and "holds another tournament" in err and "--fresh" in err
        code, _, err = finish(referee(str(config), "--quiet", "--fresh"))
        assert code == 0, err

    def test_check_shows_the_schedule_size(self, tmp_path: Path) -> None:
        """--check validates and prints the number of matches and games without running."""
        config = write_tournament(tmp_path, size=2, games=4)
        code, out, err = finish(referee(str(config), "--check"))
        assert code == 0, err
        matches = len(build_schedule(load_config(config)))
        assert f"{matches} matches, {matches * 8} games" in out
        assert not (tmp_path / "out").exists()

    def test_demo_configuration_is_valid(self, tmp_path: Path) -> None:
        """--demo --check: the embedded quickstart validates with the installed example bots."""
        code, out, err = finish(referee("--demo", "--check", cwd=tmp_path))
        assert code == 0, err
        assert "quickstart" in out
