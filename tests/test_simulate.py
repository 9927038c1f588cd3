"""The ``simulate`` subcommand, run as the real ``ohseven-referee`` console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ohseven.core.rules import Rules
from ohseven.referee.cli.simulate import simulate

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')


def referee_command() -> list[str]:
    found = shutil.which("ohseven-referee") or str(
        Path(sys.executable).with_name("ohseven-referee")
    )
    assert os.path.exists(found), "the ohseven-referee console script is installed"
    return [found]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*referee_command(), "simulate", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "120"},
    )


class TestCommandLine:
    def test_json_report(self):
        """--json prints one object with totals, statistics and games per second."""
        done = run("--game", "oh-hell", "--players", "4", "--games", "5", "--seed", "3", "--json")
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert (report["game"], report["players"], report["games"]) == ("oh-hell", 4, 5)
        assert len(report["average_totals"]) == 4
        assert report["statistics"]["table"]["rounds"] == 5 * 13
        assert report["statistics"]["table"]["games"] == 5
        assert report["games_per_second"] > 0

    def test_same_seed_same_numbers(self):
        """The same arguments give the same totals and statistics; another seed differs."""
        args = ("--players", "3", "--games", "4", "--rule", "passing=true", "--json")
        first = json.loads(run(*args, "--seed", "9").stdout)
        second = json.loads(run(*args, "--seed", "9").stdout)
        other = json.loads(run(*args, "--seed", "10").stdout)
        assert first["rules"]["passing"] is True
        assert first["average_totals"] == second["average_totals"]
        assert first["statistics"] == second["statistics"]
        assert first["statistics"] != other["statistics"]

    def test_table_output(self):
        """Without --json the report is a set of tables with the games per second."""
        done = run("--game", "oh-seven", "--players", "5", "--games", "3")
        assert done.returncode == 0, done.stderr
        assert "3 random games of oh-seven with 5 players" in done.stdout
        assert "average top bid" in done.stdout
        assert "games/second" in done.stdout
        assert done.stdout.count("│") > 20

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            (("--game", "oh-hell", "--players", "9"), "oh-hell is played by 3 to 7 players"),
            (("--players", "1"), "oh-seven is played by 2 to 9 players, not 1"),
            (("--rule", "hook=true"), "unknown rule option 'hook' for oh-seven"),
            (("--rule", "passing=perhaps"), "passing='perhaps': expected true or false"),
            (("--rule", "passing"), "expected KEY=VALUE"),
            (("--game", "oh-hell", "--rule", "hook=1", "--rule", "simultaneous_bids=1"), "both"),
            (("--games", "0"), "--games must be at least 1"),
        ],
    )
    def test_bad_input_is_one_line_and_exit_2(self, args, message):
        """Bad input prints a single error line and exits 2, never a traceback."""
        done = run(*args)
        assert done.returncode == 2
        assert message in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        assert "Traceback" not in done.stderr and done.stdout == ""


class TestInProcess:
    def test_averages_are_the_totals_over_games(self):
        """The averages are the seats' totals divided by the games."""
        report = simulate(Rules.make("oh-seven"), 2, 6, 1)
        seats = report["statistics"]["seats"]
        assert report["average_totals"] == [seat["total"] / 6 for seat in seats]
        assert report["statistics"]["table"]["rounds"] == 42
