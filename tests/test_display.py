"""The terminal of a running tournament: the leaderboard table laid out for the terminal's
width, the progress, quiet mode."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ohseven.referee.plan.config import TourneyConfig
from ohseven.referee.plan.loader import demo_config, example_bots_dir, load_config_text
from ohseven.referee.plan.run_plan import RunPlan
from ohseven.referee.records import GameRecord
from ohseven.referee.results.board import Leaderboard
from ohseven.referee.results.display import Display, board_table, print_board, short_names
from rich.console import Console

#: a league as the docs suggest naming bots: versions, and names that share a long start
LEAGUE = [
    "heuristic",
    "heuristic-b",
    "mybot-v1",
    "mybot-v2",
    "random",
    "montecarlo-with-a-rather-long-name-v3",
    "montecarlo-with-a-rather-long-name-v4",
]


@pytest.fixture
def config(tmp_path: Path) -> TourneyConfig:
    return demo_config(tmp_path)


def league_document(tmp_path: Path, names: list[str], games: int = 80) -> dict:
    """A real leaderboard document (``board.Leaderboard``) of ``games`` 4-player games of
    the bots ``names``, the better placed bots scoring more."""
    bots = "".join(f"  - name: {name}\n    file: random_bot.py\n" for name in names)
    text = (
        "name: league\ngame: oh-seven\ntable_size: [4]\nbots:\n"
        + bots
        + "schedule:\n  type: league\n  games: 400\n"
    )
    config = load_config_text(text, base_dir=example_bots_dir(), output_base=tmp_path)
    board = Leaderboard(RunPlan.resolve(config, b"s" * 32), games, games, names)
    rng = random.Random(7)
    for index in range(games):
        seats = tuple(rng.sample(names, 4))
        totals = tuple(rng.randrange(30) - 3 * names.index(name) for name in seats)
        ranks = tuple(1 + sorted(totals, reverse=True).index(t) for t in totals)
        board.add(index, GameRecord(f"m{index:05d}", 0, index, seats, totals, ranks))
    return board.document()


@pytest.fixture
def document(config: TourneyConfig) -> dict:
    """A real leaderboard document (``board.Leaderboard``) after two games of the demo."""
    board = Leaderboard(RunPlan.resolve(config, b"s" * 32), 10, 5, config.bot_names)
    board.add(0, GameRecord("m00000", 0, 1, config.bot_names, (3, 1, 0), (1, 2, 3)))
    board.add(1, GameRecord("m00000", 1, 2, config.bot_names, (0, 5, 1), (3, 1, 2)))
    return board.document()


def rendered(document: dict, width: int) -> list[str]:
    console = Console(width=width, force_terminal=False, color_system=None)
    with console.capture() as capture:
        console.print(board_table(document, width))
    return capture.get().splitlines()


def table_rows(lines: list[str], names: list[str]) -> dict[str, list[str]]:
    """Each bot's row (its cells split on runs of spaces), found by its place in the order of
    the document."""
    body = [line for line in lines if line.strip() and not set(line.strip()) <= {"─"}]
    body = [line for line in body[2:] if not line.startswith("score =")]
    assert len(body) == len(names), lines
    return {name: line.split() for name, line in zip(names, body, strict=True)}


class TestBoard:
    def test_every_bot_is_a_row_with_its_figures(self, document: dict, capsys) -> None:
        """Each bot's place, score, points per game, games and wins, as the document has them."""
        print_board(document)
        out = capsys.readouterr().out
        for column in ("bot", "score", "pts/game", "games", "wins", "faults"):
            assert column in out
        assert "SPRT" not in out  # no stopping rule
        rows = table_rows(out.splitlines(), [bot["name"] for bot in document["bots"]])
        for bot in document["bots"]:
            row = rows[bot["name"]]
            assert row[:3] == [bot["place"], bot["name"], f"{bot['score']:.2f}"], row

    def test_a_league_of_seven_fits_80x24_one_line_per_bot(self, tmp_path: Path) -> None:
        """At 80 columns: one line per bot, the title and the header, at most 80 characters,
        every name told apart, the points with a compact interval."""
        document = league_document(tmp_path, LEAGUE)
        lines = rendered(document, 80)
        assert len(lines) <= 12, lines
        assert max(map(len, lines)) <= 80
        assert lines[0].startswith("leaderboard")
        rows = table_rows(lines, [bot["name"] for bot in document["bots"]])
        shown = [row[1] for row in rows.values()]
        assert len(set(shown)) == len(LEAGUE), shown
        for name in ("heuristic", "heuristic-b", "mybot-v1", "mybot-v2"):
            assert name in shown  # short names are never cut
        for bot in document["bots"]:
            low, high = bot["points_per_game_ci"]
            assert f"{bot['points_per_game']:.2f}±{(high - low) / 2:.2f}" in rows[bot["name"]]

    @pytest.mark.parametrize("width", [60, 80, 100, 120, 160, 240])
    def test_wider_terminals_show_more_columns_not_longer_lines(
        self, tmp_path: Path, width: int
    ) -> None:
        """Every width: no line longer than it, one line per bot; a wider terminal has at least
        the columns of a narrower one."""
        document = league_document(tmp_path, LEAGUE)
        lines = rendered(document, width)
        assert max(map(len, lines)) <= width
        assert len(lines) == 4 + len(LEAGUE) + (width < 80)  # the caption wraps at 60
        narrower = rendered(document, width - 20)[1].split()
        assert set(narrower) <= set(lines[1].split())
        if width >= 160:
            assert "mu±sigma" in lines[1] and "montecarlo-with-a-rather-long-name-v3" in "".join(
                lines
            )

    def test_a_stopping_rule_adds_each_candidates_verdict(self, document: dict) -> None:
        """With a stopping rule, a SPRT column: status, stopped, difference, repeats; compact
        at 80 columns, in words where there is room."""
        document["stopping"] = {"repeats": 8}
        first = document["bots"][0]
        first["sprt"] = {"status": "better", "stopped": True, "difference": 9.671, "repeats": 3}
        document["bots"][1]["sprt"] = {
            "status": "undecided",
            "stopped": False,
            "difference": None,
            "repeats": 2,
        }
        narrow = "\n".join(rendered(document, 80))
        assert "SPRT" in narrow and "better/stop +9.67 3/8" in narrow
        assert "undecided 2/8" in narrow
        wide = "\n".join(rendered(document, 200))
        assert "better, stopped +9.67 (3/8)" in wide and "undecided (2/8)" in wide


class TestShortNames:
    def test_versions_and_shared_starts_stay_apart(self) -> None:
        names = ["mybot-v1", "mybot-v2", "heuristic", "heuristic-b"]
        for width in range(5, 12):
            shown = short_names(names, width)
            assert len(set(shown.values())) == len(names), (width, shown)
            assert all(len(text) <= width for text in shown.values())
        assert short_names(names, 11) == dict(zip(names, names, strict=True))
        assert short_names(["mybot-v1", "mybot-v2"], 5) == {
            "mybot-v1": "my…v1",
            "mybot-v2": "my…v2",
        }

    @given(st.lists(st.text("abc-12", min_size=1, max_size=30), unique=True, max_size=8))
    def test_never_longer_and_apart_when_room(self, names: list[str]) -> None:
        """No name longer than the width; distinct names stay distinct at a width of 12 (room
        enough for a head and a tail to tell these apart), unchanged when they fit."""
        shown = short_names(names, 20)
        assert all(len(text) <= 20 for text in shown.values())
        assert all(shown[name] == name for name in names if len(name) <= 20)
        assert len(set(shown.values())) == len(names)


class TestDisplay:
    def test_quiet_prints_nothing(self, config: TourneyConfig, document: dict, capsys) -> None:
        """``quiet``: no progress, no board, no messages, on either stream."""
        with Display(config.name, 10, 0, quiet=True) as display:
            display.advance(2)
            display.total(12)
            display.board(document)
            display.message("match m00001 failed: it broke")
        assert capsys.readouterr() == ("", "")

    def test_live_display_goes_to_stderr(
        self, config: TourneyConfig, document: dict, capsys
    ) -> None:
        """The live display writes to stderr (stdout stays for the results) with the board."""
        with Display(config.name, 10, 0, quiet=False) as display:
            display.advance(2)
            display.board(document)
            display.message("match m00001 failed: it broke")
        out, err = capsys.readouterr()
        assert out == ""
        assert "match m00001 failed: it broke" in err
        assert "quickstart" in err and "heuristic" in err

    def test_without_a_terminal_the_board_is_80_columns(self, tmp_path: Path) -> None:
        """A log (stdout not a terminal, no COLUMNS): the board is laid out for 80 columns."""
        document = league_document(tmp_path, LEAGUE)
        path = tmp_path / "leaderboard.json"
        path.write_text(json.dumps(document))
        code = (
            "import json, sys; from ohseven.referee.results.display import print_board; "
            "print_board(json.load(open(sys.argv[1])))"
        )
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        out = subprocess.run(
            [sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env
        ).stdout
        lines = out.splitlines()
        assert len(lines) == 4 + len(LEAGUE)
        assert max(map(len, lines)) == 80


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_board_in_an_80x24_terminal(tmp_path: Path) -> None:
    """In a real 80x24 terminal (tmux): the title and every bot of a 7-bot league on screen,
    one line each, no line wrapped."""
    document = league_document(tmp_path, LEAGUE)
    path = tmp_path / "leaderboard.json"
    path.write_text(json.dumps(document))
    done = tmp_path / "done"
    script = tmp_path / "show.py"
    script.write_text(
        "import json, sys\n"
        "from ohseven.referee.results.display import print_board\n"
        f"print_board(json.load(open({str(path)!r})))\n"
        f"open({str(done)!r}, 'w').close()\n"
    )
    session = f"ohseven-display-{tmp_path.name}"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24"], check=True)
    try:
        subprocess.run(
            ["tmux", "send-keys", "-t", session, f"clear; {sys.executable} {script}", "Enter"],
            check=True,
        )
        deadline = time.monotonic() + 60
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert done.exists()
        screen = subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True
        ).stdout.splitlines()
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
    title = next(i for i, line in enumerate(screen) if line.startswith("leaderboard"))
    rows = screen[title + 3 : title + 3 + len(LEAGUE)]
    assert [row.split()[0] for row in rows][0].lstrip("=") == "1", screen
    names = [row.split()[1] for row in rows]
    assert len(set(names)) == len(LEAGUE), screen
    assert {"mybot-v1", "mybot-v2", "heuristic", "heuristic-b"} <= set(names)
