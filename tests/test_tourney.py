"""The tourney command end to end: real referee processes, real bot processes, real SQLite."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import FIXED_BOT_SOURCE
from ohseven.referee.plan.loader import example_bots_dir, load_config
from ohseven.referee.plan.schedule import SchedulePlan, build_schedule, draw_wave
from ohseven.referee.results.board import LEADERBOARD_NAME
from ohseven.referee.results.ratings import order_free, rate_games
from ohseven.referee.results.store import Store
from ohseven.referee.tournament.run import run_tournament, tournament_secret
from tourney_files import (
    LEAGUE_BOTS,
    board,
    league_games,
    stored_games,
    write_league,
    write_tournament,
)

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')


def holding_bot_source(hold: Path) -> str:
    """The bot `high` of ``FIXED_BOT_SOURCE``, waiting before each of its bids and plays while
    the file ``hold`` exists (one file: staging copies a bot in a shared folder alone)."""
    head = "    def pick(self, view, options):\n"
    source = FIXED_BOT_SOURCE.format(style="high")
    assert source.count(head) == 1
    wait = (
        f"        while __import__('os').path.exists({str(hold)!r}):  # held by the test\n"
        "            __import__('time').sleep(0.01)\n"
    )
    return source.replace(head, head + wait)


@pytest.fixture
def tmp_path():
    """A folder the bots can read: when the referee is root they run as another uid, and
    pytest's own temporary folders are private to root."""
    folder = Path(tempfile.mkdtemp(prefix="ohseven-tourney-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


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
        """leaderboard.json is the order-free TrueSkill of the stored games, with the sequential
        TrueSkill in canonical order beside it."""
        config = load_config(write_tournament(tmp_path, size=2))
        outcome = run_tournament(config, workers=2)
        assert outcome.complete and not outcome.interrupted
        assert board(Path(config.output)) == outcome.leaderboard  # and no bot faulted
        with Store.open(config.output, create=False) as store:
            stored = store.games()
            assert [game.canonical_index for game in stored] == list(range(outcome.games))
            ratings = rate_games(config.game, config.bot_names, [g.record for g in stored])
            free = order_free([g.record for g in stored], config.bot_names, game=config.game)
        expected = {row.name: round(row.mu, 6) for row in ratings.table()}
        bots = outcome.leaderboard["bots"]
        assert {bot["name"]: bot["sequential_mu"] for bot in bots} == expected
        assert {bot["name"]: bot["mu"] for bot in bots} == {
            name: round(mu, 6) for name, (mu, _) in free.items()
        }

    def test_run_publishes_the_site_with_the_same_leaderboard(self, tmp_path: Path) -> None:
        """The finished run leaves the static site and a versioned leaderboard.json behind."""
        config = load_config(write_tournament(tmp_path, size=2))
        outcome = run_tournament(config, workers=1)
        output = Path(config.output)
        for name in ("index.html", "leaderboard.csv", "leaderboard.md", "games.html"):
            assert (output / name).is_file(), name
        document = board(output)
        assert document["format"] == "ohseven-leaderboard" and document["version"] == 3
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

    @pytest.mark.timeout(240)
    def test_resume_reuses_the_random_secret(self, tmp_path: Path) -> None:
        """Without `seed:`, a kill and a resume deal the rest from the secret drawn at the start
        (the run ends as one that was given the same secret file); a database whose secret is
        gone is refused."""
        runs = {}
        for name in ("ref", "killed"):
            (tmp_path / name).mkdir()
            runs[name] = write_tournament(tmp_path / name, size=2, games=4)
            runs[name].write_text(runs[name].read_text().replace("seed: 3\n", ""))
        code, _, err = finish(referee(str(runs["ref"]), "--quiet"))
        assert code == 0, err
        reference = board(tmp_path / "ref" / "out")
        (tmp_path / "killed" / "out").mkdir()
        shutil.copy(tmp_path / "ref" / "out" / "secret.key", tmp_path / "killed" / "out")
        process = referee(str(runs["killed"]), "--quiet")
        while process.poll() is None and stored_games(tmp_path / "killed" / "out") < 3:
            time.sleep(0.02)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        assert 0 < stored_games(tmp_path / "killed" / "out") < reference["games_total"]
        code, _, err = finish(referee(str(runs["killed"]), "--quiet"))
        assert code == 0, err
        assert board(tmp_path / "killed" / "out") == reference
        (tmp_path / "killed" / "out" / "secret.key").unlink()
        code, _, err = finish(referee(str(runs["killed"]), "--quiet"))
        assert code == 1 and "secret.key is missing" in err

    @pytest.mark.parametrize(
        ("sent", "status", "words"),
        [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "stopped by SIGTERM")],
    )
    def test_ctrl_c_stops_cleanly_and_tells_how_to_resume(
        self, tmp_path: Path, sent: int, status: int, words: str
    ) -> None:
        """SIGINT (Ctrl-C) and SIGTERM (a service manager): exit 130 / 143, a consistent
        database, a message saying which and how to resume; the rerun completes. The run is
        held mid-game (the bot `high` waits while a gate file exists) from its first stored
        game until it exits: on a busy machine it cannot finish before the signal is handled."""
        config = write_tournament(tmp_path, games=4)
        gate = Path(tempfile.mkdtemp(prefix="ohseven-gate-"))  # outside the bots' folders
        gate.chmod(0o755)
        hold = gate / "hold"
        (tmp_path / "high.py").write_text(holding_bot_source(hold))
        try:
            process = referee(str(config), "--workers", "2", "--quiet")
            deadline = time.monotonic() + 120
            while stored_games(tmp_path / "out") == 0 and time.monotonic() < deadline:
                time.sleep(0.05)  # interrupt once the run is under way, not before it starts
            assert process.poll() is None, "the run ended before its first game was seen"
            hold.touch()
            process.send_signal(sent)
            code, _, err = finish(process, timeout=120)
        finally:
            hold.unlink(missing_ok=True)
            shutil.rmtree(gate, ignore_errors=True)
        assert code == status, err
        assert words in err
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

    @pytest.mark.parametrize("check", [False, True])
    def test_a_bot_that_cannot_start_is_refused_with_its_output(
        self, tmp_path: Path, check: bool
    ) -> None:
        """A bot that exits at once: run and --check refuse (exit 2) before playing anything,
        naming its file:line and key, the reason and its own last output; nothing is rated."""
        config = write_tournament(tmp_path, size=4)
        (tmp_path / "high.py").write_text("import sys\nsys.exit('no luck today')\n")
        code, _, err = finish(referee(str(config), "--check" if check else "--quiet"))
        assert code == 2, err
        assert f"{config}:7: key `bots[1].file` (high): exited with code 1 before hello" in err
        assert "| no luck today" in err and "Traceback" not in err
        assert not (tmp_path / "out" / "tournament.sqlite").exists()

    def test_other_tournament_in_the_output_is_refused(self, tmp_path: Path) -> None:
        """A changed config over an existing database: a clear error, --fresh overrides it."""
        config = write_tournament(tmp_path, size=4)
        assert finish(referee(str(config), "--quiet"))[0] == 0
        config.write_text(config.read_text().replace("seed: 3", "seed: 4"))
        code, _, err = finish(referee(str(config), "--quiet"))
        assert code == 1 and "another secret" in err and "key `seed`" in err and "--fresh" in err
        code, _, err = finish(referee(str(config), "--quiet", "--fresh"))
        assert code == 0, err

    def test_check_shows_the_schedule_size(self, tmp_path: Path) -> None:
        """--check validates and prints the number of matches and games without running."""
        config = write_tournament(tmp_path, size=2, games=4)
        code, out, err = finish(referee(str(config), "--check"))
        assert code == 0, err
        matches = len(build_schedule(SchedulePlan.of(load_config(config)), b"any secret"))
        assert f"{matches} matches, {matches * 8} games" in out
        assert not (tmp_path / "out").exists()

    def test_refused_without_bubblewrap(self, tmp_path: Path) -> None:
        """The default sandbox without bwrap: an error (even for --check), no game played."""
        config = write_tournament(tmp_path)
        config.write_text(config.read_text().replace("mode: unsandboxed", "mode: bwrap"))
        empty = tmp_path / "empty-path"
        empty.mkdir()
        for extra in (("--check",), ("--quiet",)):
            process = referee(str(config), *extra, env={**os.environ, "PATH": str(empty)})
            code, _, err = finish(process)
            assert code == 2 and "not found" in err and "unsandboxed" in err, err
        assert not (tmp_path / "out" / "tournament.sqlite").exists()

    def test_demo_configuration_is_valid(self, tmp_path: Path) -> None:
        """--demo --check: the embedded quickstart validates with the installed example bots."""
        code, out, err = finish(referee("--demo", "--check", cwd=tmp_path))
        assert code == 0, err
        assert "quickstart" in out


RECORDER_CONFIG = """
name: recorded
game: oh-seven
table_size: 3
bots:
  - {{name: rec-a, file: {bot}}}
  - {{name: rec-b, file: {bot}}}
  - {{name: rec-c, file: {bot}}}
schedule: {{type: round-robin, games_per_table: 2, deals: {deals}}}
time_control: {{move_seconds: 5, bank_seconds: 20, start_seconds: 20}}
sandbox: {{mode: bwrap}}
output: out
"""


def recorded_tournament(
    folder: Path, deals: str, bot: str = "deal_recorder.py"
) -> tuple[Path, dict[str, str], list[int]]:
    """A tournament of three deal-recording bots in the bubblewrap sandbox: (output, each bot's
    log, every game's seed)."""
    shutil.copy(Path(__file__).parent / "bots" / bot, folder)
    path = folder / "t.yaml"
    path.write_text(RECORDER_CONFIG.format(deals=deals, bot=bot))
    config = load_config(path)
    outcome = run_tournament(config, workers=1)
    assert outcome.complete
    output = Path(config.output)
    with Store.open(output, create=False) as store:
        logs = store.logs(0)
        seeds = [stored.record.seed for stored in store.games()]
    return output, logs, seeds


def games_seen(log: str) -> dict[str, list[tuple]]:
    """Each process's games (by its token), each game as the sequence of hands dealt."""
    hands: dict[tuple[str, str], list[str]] = {}
    for line in log.splitlines():
        if line.startswith("HAND "):
            _, token, game, _, cards = line.split(" ")
            hands.setdefault((token, game), []).append(cards)
    by_process: dict[str, list[tuple]] = {}
    for (token, _), sequence in hands.items():
        by_process.setdefault(token, []).append(tuple(sequence))
    return by_process


class TestDealIsolation:
    """No bot process ever sees two games on the same deal, and no seed reaches a bot."""

    @pytest.mark.parametrize("deals", ["independent", "duplicate"])
    def test_a_bot_that_remembers_deals_never_sees_one_again(
        self, tmp_path: Path, deals: str
    ) -> None:
        """Every process of every bot is shown each deal at most once (duplicate play renews
        the processes between rotations), and recognises none."""
        _, logs, seeds = recorded_tournament(tmp_path, deals)
        assert len(seeds) == 6 and len(set(seeds)) == (6 if deals == "independent" else 2)
        everywhere = []
        for name, log in logs.items():
            assert "SEEN" not in log, name
            by_process = games_seen(log)
            assert sum(map(len, by_process.values())) == 6, name  # it played all six games
            for token, games in by_process.items():
                assert len(games) == len(set(games)), (name, token)
            everywhere += [game for games in by_process.values() for game in games]
            processes = 1 if deals == "independent" else 3  # a fresh one for each rotation
            assert len(by_process) == processes, name
        # the deals really were replayed in duplicate play: to other processes only
        assert len(set(everywhere)) == (18 if deals == "independent" else 6)

    def test_a_process_leaves_no_note_for_the_next_one(self, tmp_path: Path) -> None:
        """Duplicate play: a bot that writes its hands beside its endpoint (and marks the
        endpoint's times) finds no note in its next rotation's process, so never recalls a
        deal."""
        _, logs, _ = recorded_tournament(tmp_path, "duplicate", "memo_bot.py")
        for name, log in logs.items():
            assert log.count("NOTE") == 0 and "RECALL" not in log, (name, log)

    def test_no_seed_or_secret_reaches_a_bot(self, tmp_path: Path) -> None:
        """Without `seed:` the deals come from a random secret kept private to the referee, and
        neither it nor any game's seed is in a bot's environment or messages."""
        output, logs, seeds = recorded_tournament(tmp_path, "independent")
        secret_file = output / "secret.key"
        assert secret_file.stat().st_mode & 0o777 == 0o600
        secret = secret_file.read_text().strip()
        assert len(bytes.fromhex(secret)) == 32
        for name, log in logs.items():
            numbers = {int(line.split()[1]) for line in log.splitlines() if line.startswith("BIG ")}
            texts = [line[5:] for line in log.splitlines() if line.startswith("TEXT ")]
            assert numbers, name  # it did report what it saw (its OHSEVEN_SEED at least)
            assert not numbers & set(seeds), name
            assert not [text for text in texts if secret in text or text in secret], name
        board = json.loads((output / LEADERBOARD_NAME).read_text())
        assert board["complete"] and board["seed"] is None and board["secret"] is None


class TestOutputFaults:
    """A damaged database, a full disk, a fresh start: clear words, nothing stale."""

    @pytest.mark.parametrize("damage", ["truncate", "garbage"])
    def test_a_damaged_database_is_named_with_what_to_do(self, tmp_path: Path, damage) -> None:
        """tourney and publish on a damaged tournament.sqlite: exit 1, the file named and what
        to do, no traceback."""
        config = write_tournament(tmp_path, size=4, games=2)
        assert finish(referee(str(config), "--quiet"))[0] == 0
        database = tmp_path / "out" / "tournament.sqlite"
        data = database.read_bytes()
        if damage == "truncate":
            database.write_bytes(data[: len(data) // 2])
        else:
            database.write_bytes(data[:100] + b"\x13" * (len(data) - 100))
        for command in ("tourney", "publish"):
            target = str(config) if command == "tourney" else str(tmp_path / "out")
            extra = ("--quiet",)
            process = subprocess.run(
                [sys.executable, "-m", "ohseven.referee.cli", command, target, *extra],
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert process.returncode == 1, process.stderr
            assert "Traceback" not in process.stderr, process.stderr
            assert str(database) in process.stderr and "damaged" in process.stderr

    def test_fresh_discards_the_old_replay_data(self, tmp_path: Path) -> None:
        """--fresh with another seed over a finished tournament: the site's replay data shows
        the new games, not the old ones."""
        config = write_tournament(tmp_path, size=4, games=1)
        config.write_text(config.read_text().replace("replays: false", "replays: true"))
        assert finish(referee(str(config), "--quiet"))[0] == 0
        config.write_text(config.read_text().replace("seed: 3", "seed: 4"))
        assert finish(referee(str(config), "--quiet", "--fresh"))[0] == 0
        with Store.open(tmp_path / "out", create=False) as store:
            totals = {
                f"{g.record.match_id}-g{g.record.game_index}": list(g.record.totals)
                for g in store.games()
            }
        data = tmp_path / "out" / "replay-data"
        scripts = sorted(data.glob("m*.js"))
        assert len(scripts) == len(totals)
        for script in scripts:
            text = script.read_text()
            ident = script.stem
            assert json.dumps(totals[ident], separators=(",", ":")) in text.replace(", ", ","), (
                ident
            )

    @pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
    def test_a_full_disk_stops_cleanly_and_resumes(self, tmp_path: Path) -> None:
        """Out of space under the output: exit 1 with a clear message and no traceback, the
        database consistent; with space again the same command completes it."""
        config = write_tournament(tmp_path, size=2, games=8, output="small/out")
        config.write_text(config.read_text().replace("replays: false", "replays: true"))
        small = tmp_path / "small"
        small.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(small)], check=True)
        try:
            code, _, err = finish(referee(str(config), "--quiet"))
            assert code == 1 and "disk is full" in err and "Traceback" not in err, err
            kept = stored_games(small / "out")
            subprocess.run(["mount", "-o", "remount,size=64m", str(small)], check=True)
            code, _, err = finish(referee(str(config), "--quiet"))
            assert code == 0, err
            with Store.open(small / "out", create=False) as store:
                assert store.game_count() == board(small / "out")["games_total"] > kept
        finally:
            subprocess.run(["umount", "-l", str(small)], check=False)


class TestLeague:
    """A league: a budget of games in waves drawn from the ratings, deterministic whatever the
    workers and interruptions; bots join and leave between runs."""

    @pytest.mark.timeout(300)
    def test_workers_and_a_kill_give_the_same_games_and_leaderboard(self, tmp_path: Path) -> None:
        """1 worker, 2 workers and SIGKILLs then a resume: the same games, the same board."""
        runs = {}
        for name in ("one", "two", "killed"):
            (tmp_path / name).mkdir()
            runs[name] = write_league(tmp_path / name)
        code, _, err = finish(referee(str(runs["one"]), "--workers", "1", "--quiet"))
        assert code == 0, err
        code, _, err = finish(referee(str(runs["two"]), "--workers", "2", "--quiet"))
        assert code == 0, err
        rng = random.Random(5)
        kept = []
        for _ in range(4):
            process = referee(str(runs["killed"]), "--workers", "2", "--quiet")
            target = (kept[-1] if kept else 0) + rng.randint(2, 8)
            while process.poll() is None and stored_games(tmp_path / "killed" / "out") < target:
                time.sleep(0.02)
            if process.poll() is not None:
                break
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            kept.append(stored_games(tmp_path / "killed" / "out"))
        assert any(0 < games < 30 for games in kept), kept
        code, _, err = finish(referee(str(runs["killed"]), "--workers", "2", "--quiet"))
        assert code == 0, err
        reference = board(tmp_path / "one" / "out")
        games = league_games(tmp_path / "one" / "out")
        assert reference["complete"] and reference["games_played"] == len(games) == 30
        for name in ("two", "killed"):
            assert board(tmp_path / name / "out") == reference, name
            assert league_games(tmp_path / name / "out") == games, name
        with Store.open(tmp_path / "one" / "out", create=False) as store:
            waves = store.db.execute("SELECT COUNT(*) FROM waves").fetchone()[0]
        assert waves >= 5  # 5 bots: every wave seats 5 (or 4) of them, 4 to 7 games a wave
        counts = [bot["games"] for bot in reference["bots"]]
        assert max(counts) - min(counts) <= 3, counts  # a table is 2 or 3 games

    @pytest.mark.timeout(300)
    def test_a_bot_that_cannot_start_is_left_out_lazily(self, tmp_path: Path) -> None:
        """A league starts each bot before its own first match, not all before any game: a
        bot that cannot start is left out with its reason, the others play the budget, and a
        resume starts no bot that started before (remembered by its copy's content)."""
        config = write_league(tmp_path, games=12)
        (tmp_path / "broken.py").write_text(
            'import sys\nprint("oops", file=sys.stderr)\nsys.exit(4)\n'
        )
        starts = tmp_path / "starts.txt"  # the counting bot appends a line at each start
        starts.touch()
        starts.chmod(0o666)  # (unsandboxed as root, bots run as another uid)
        (tmp_path / "counting.py").write_text(
            f"open({str(starts)!r}, 'a').write('start\\n')\n" + FIXED_BOT_SOURCE.format(style="low")
        )
        extra = "  - {name: broken, file: broken.py}\n  - {name: counting, file: counting.py}\n"
        config.write_text(config.read_text().replace("bots:\n", "bots:\n" + extra, 1))

        def matches_of(name: str) -> int:
            with Store.open(tmp_path / "out", create=False) as store:
                rows = store.match_rows()
            return sum(1 for row in rows if name in row["bots"] and row["status"] == "done")

        code, _, err = finish(referee(str(config), "--quiet"))
        assert code == 0, err
        assert "bot broken could not start and was left out" in err
        document = json.loads((tmp_path / "out" / LEADERBOARD_NAME).read_text())
        assert [r["name"] for r in document["refused"]] == ["broken"]
        assert "exited with code 4" in document["refused"][0]["reason"]
        assert document["complete"] and 10 <= document["games_played"] == document["games_total"]
        with Store.open(tmp_path / "out", create=False) as store:
            assert all("broken" not in g.record.seats for g in store.games())
        first = len(starts.read_text().splitlines())
        played = matches_of("counting")
        assert played > 0 and first == played + 1  # one start to validate, one per match
        config.write_text(config.read_text().replace("games: 12", "games: 24"))
        code, _, err = finish(referee(str(config), "--quiet"))
        assert code == 0, err
        more = matches_of("counting") - played
        assert more > 0
        assert len(starts.read_text().splitlines()) == first + more  # not validated again

    @pytest.mark.timeout(300)
    def test_a_bot_joins_and_one_leaves(self, tmp_path: Path) -> None:
        """A newcomer added to the file plays in the next waves; a bot removed keeps its past
        games (and its place in the history) but is scheduled no more."""
        config = write_league(tmp_path, games=20)
        code, _, err = finish(referee(str(config), "--quiet"))
        assert code == 0, err
        before = league_games(tmp_path / "out")
        assert len(before) == 20 and any("low" in game[2] for game in before)
        bots = {name: style for name, style in LEAGUE_BOTS.items() if name != "low"}
        bots["high-v2"] = "high"
        write_league(tmp_path, games=50, bots=bots)
        code, _, err = finish(referee(str(config), "--quiet"))
        assert code == 0, err
        after = league_games(tmp_path / "out")
        assert after[: len(before)] == before and len(after) == 50
        later = [seats for _, _, seats, _, _ in after[len(before) :]]
        assert all("low" not in seats for seats in later)
        assert sum("high-v2" in seats for seats in later) >= 8
        document = board(tmp_path / "out")
        rows = {bot["name"]: bot for bot in document["bots"]}
        assert rows["low"]["games"] == sum("low" in game[2] for game in before) > 0
        assert rows["high-v2"]["games"] > 0 and document["complete"]

    def test_a_changed_rule_key_is_refused_naming_it(self, tmp_path: Path) -> None:
        """Over a league's games, a change to what decided them is an error naming the key;
        so is a bot changed under the same name."""
        config = write_league(tmp_path, games=6)
        assert finish(referee(str(config), "--quiet"))[0] == 0
        text = config.read_text()
        config.write_text(text.replace("move_seconds: 5", "move_seconds: 4"))
        code, _, err = finish(referee(str(config), "--quiet"))
        assert code == 1 and "key `time_control.move_seconds` was 5, now 4" in err, err
        config.write_text(text.replace("game: oh-seven", "game: oh-seven\nrules: {passing: true}"))
        code, _, err = finish(referee(str(config), "--quiet"))
        assert code == 1 and "key `rules.passing`" in err and "Traceback" not in err, err
        changed = text.replace("{name: hash2, file: hash.py}", "{name: hash2, file: low.py}")
        config.write_text(changed)
        code, _, err = finish(referee(str(config), "--quiet"))
        assert code == 1 and "key `bots[3]` (hash2)" in err, err
        config.write_text(text)
        assert finish(referee(str(config), "--quiet"))[0] == 0

    def test_waves_are_drawn_from_the_order_free_ratings(self, tmp_path: Path) -> None:
        """Every wave of a league is the one draw_wave gives from the order-free TrueSkill of
        the games of the waves before it (not the sequential TrueSkill)."""
        bots = {**LEAGUE_BOTS, **{f"hash{n}": "hash" for n in range(4, 9)}, "low2": "low"}
        config = load_config(write_league(tmp_path, games=80, bots=bots))
        outcome = run_tournament(config, workers=2)
        assert outcome.complete
        secret = tournament_secret(config, Path(config.output))
        with Store.open(config.output, create=False) as store:
            query = "SELECT wave, first_match, matches, bots FROM waves ORDER BY wave"
            waves = store.db.execute(query).fetchall()
            rows = store.match_rows()
            stored = store.games()
        assert len(waves) >= 8
        differs = 0
        for wave, first, count, bots in waves:
            before = [game.record for game in stored if game.match_index < first]
            played = Counter(name for record in before for name in record.seats)
            budget = config.schedule.games - sum(row["games"] for row in rows[:first])
            free = order_free(before, config.bot_names, game=config.game)
            tables = [row["bots"] for row in rows[first : first + count]]
            names = json.loads(bots)
            assert (
                draw_wave(SchedulePlan.of(config), secret, wave, names, free, played, budget)
                == tables
            ), wave
            sequential = rate_games(config.game, config.bot_names, before).ratings
            ratings = {name: (r.mu, r.sigma) for name, r in sequential.items()}
            differs += (
                draw_wave(SchedulePlan.of(config), secret, wave, names, ratings, played, budget)
                != tables
            )
        assert differs  # the two estimates do draw other waves here: the check can fail

    def test_check_counts_without_building(self, tmp_path: Path) -> None:
        """--check of a league prints its budget; of a round-robin, its counted size."""
        code, out, err = finish(referee(str(write_league(tmp_path, games=40)), "--check"))
        assert code == 0 and "5 bots, a league of at most 40 games" in out, err


GAUNTLET_CONFIG = """
name: stopping
game: oh-seven
table_size: 3
bots:
  - {{name: heuristic, file: {bots}/heuristic_bot.py}}
  - {{name: random, file: {bots}/random_bot.py}}
  - {{name: field-a, file: {bots}/random_bot.py}}
  - {{name: field-b, file: {bots}/random_bot.py}}
schedule:
  type: gauntlet
  candidates: [random, heuristic]
  repeats: 6
  stop: {{confidence: 0.95, margin: 4, min_games: 6}}
time_control: {{move_seconds: 5, bank_seconds: 20, start_seconds: 20}}
sandbox: {{mode: unsandboxed}}
seed: 5
output: out
"""


def write_gauntlet(folder: Path) -> Path:
    """A gauntlet of the example heuristic and random bots against two random bots, six
    repeats of one table of three (3 games) per candidate, with a stopping rule."""
    folder.mkdir(exist_ok=True)
    folder.chmod(0o755)
    path = folder / "g.yaml"
    path.write_text(GAUNTLET_CONFIG.format(bots=example_bots_dir()))
    return path


class TestStoppingRule:
    """A gauntlet's stopping rule with the example bots: a clearly stronger candidate stops
    early, and the games and the leaderboard are the same whatever the workers and kills."""

    @pytest.mark.timeout(300)
    def test_a_clear_candidate_stops_early_alike_with_any_workers_and_a_resume(
        self, tmp_path: Path
    ) -> None:
        """heuristic is better than the random field after two repeats and plays no more;
        random plays all six. 1 worker, 2 workers and SIGKILLs then a resume agree."""
        code, _, err = finish(
            referee(str(write_gauntlet(tmp_path / "one")), "--workers", "1", "--quiet")
        )
        assert code == 0, err
        outcome = run_tournament(load_config(write_gauntlet(tmp_path / "two")), workers=2)
        assert outcome.complete and not outcome.interrupted
        killed = write_gauntlet(tmp_path / "killed")
        rng = random.Random(3)
        kept = []
        for _ in range(4):
            process = referee(str(killed), "--workers", "2", "--quiet")
            target = (kept[-1] if kept else 0) + rng.randint(2, 7)
            while process.poll() is None and stored_games(killed.parent / "out") < target:
                time.sleep(0.02)
            if process.poll() is not None:
                break
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            kept.append(stored_games(killed.parent / "out"))
        assert any(0 < games < 24 for games in kept), kept
        code, _, err = finish(referee(str(killed), "--workers", "2", "--quiet"))
        assert code == 0, err

        reference = board(tmp_path / "one" / "out")
        rows = {bot["name"]: bot for bot in reference["bots"]}
        assert rows["heuristic"]["sprt"] == {
            **rows["heuristic"]["sprt"],
            "status": "better",
            "stopped": True,
            "repeats": 2,
            "games": 6,
        }
        assert rows["heuristic"]["games"] == 6 and rows["random"]["games"] == 18
        assert rows["random"]["sprt"]["status"] in ("undecided", "equal", "worse")
        assert rows["field-a"]["sprt"] is None
        assert reference["stopping"]["margin"] == 4 and reference["stopping"]["repeats"] == 6
        assert reference["complete"] and reference["games_played"] == reference["games_total"]
        assert reference["games_total"] == 24 < 36  # 4 of heuristic's 6 tables never played
        games = league_games(tmp_path / "one" / "out")
        for name in ("two", "killed"):
            assert board(tmp_path / name / "out") == reference, name
            assert league_games(tmp_path / name / "out") == games, name
        assert outcome.leaderboard == reference  # the live board is what publish recomputes
        with Store.open(tmp_path / "one" / "out", create=False) as store:
            tables = [row["bots"] for row in store.match_rows()]
        assert sum("heuristic" in bots for bots in tables) == 2 and len(tables) == 8
        index = (tmp_path / "one" / "out" / "index.html").read_text()
        assert "better, stopped" in index

    def test_check_says_the_size_is_at_most(self, tmp_path: Path) -> None:
        """--check of a gauntlet with a stopping rule counts its games as an upper bound."""
        code, out, err = finish(referee(str(write_gauntlet(tmp_path / "g")), "--check"))
        assert code == 0, err
        assert "8 matches" not in out and "12 matches, 36 games at most" in out
