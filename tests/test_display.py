"""The terminal of a running tournament: the leaderboard table, the progress, quiet mode."""

from __future__ import annotations

from pathlib import Path

import pytest
from ohseven.referee.plan.config import TourneyConfig
from ohseven.referee.plan.loader import demo_config
from ohseven.referee.records import GameRecord
from ohseven.referee.results.board import Leaderboard
from ohseven.referee.results.display import Display, print_board


@pytest.fixture
def config(tmp_path: Path) -> TourneyConfig:
    return demo_config(tmp_path)


@pytest.fixture
def document(config: TourneyConfig) -> dict:
    """A real leaderboard document (``board.Leaderboard``) after two games of the demo."""
    board = Leaderboard(config, 10, 5, b"s" * 32, config.bot_names)
    board.add(0, GameRecord("m00000", 0, 1, config.bot_names, (3, 1, 0), (1, 2, 3)))
    board.add(1, GameRecord("m00000", 1, 2, config.bot_names, (0, 5, 1), (3, 1, 2)))
    return board.document()


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # every column on one line


def table_rows(text: str) -> dict[str, str]:
    """Bot name -> its row of the printed table."""
    rows = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip("│┃ ").split("│")]
        if len(cells) > 2:
            rows[cells[1]] = line
    return rows


class TestBoard:
    def test_every_bot_is_a_row_with_its_figures(self, document: dict, capsys) -> None:
        """Each bot's place, score, mu ± sigma, games and wins, as the document has them."""
        print_board(document)
        out = capsys.readouterr().out
        for column in ("bot", "score", "mu ± sigma", "games", "wins", "faults"):
            assert column in out
        assert "SPRT" not in out  # no stopping rule
        rows = table_rows(out)
        for bot in document["bots"]:
            row = rows[bot["name"]]
            for text in (bot["place"], f"{bot['score']:.2f}", f"{bot['mu']:.2f} ± "):
                assert text in row, (text, row)

    def test_a_stopping_rule_adds_each_candidates_verdict(self, document: dict, capsys) -> None:
        """With a stopping rule, a SPRT column: status, stopped, difference, repeats."""
        document["stopping"] = {"repeats": 8}
        first = document["bots"][0]
        first["sprt"] = {"status": "better", "stopped": True, "difference": 9.671, "repeats": 3}
        document["bots"][1]["sprt"] = {
            "status": "undecided",
            "stopped": False,
            "difference": None,
            "repeats": 2,
        }
        print_board(document)
        out = capsys.readouterr().out
        assert "SPRT" in out
        rows = table_rows(out)
        assert "better, stopped +9.67 (3/8)" in rows[first["name"]]
        assert "undecided (2/8)" in rows[document["bots"][1]["name"]]


class TestDisplay:
    def test_quiet_prints_nothing(self, config: TourneyConfig, document: dict, capsys) -> None:
        """``quiet``: no progress, no board, no messages, on either stream."""
        with Display(config, 10, 0, quiet=True) as display:
            display.advance(2)
            display.total(12)
            display.board(document)
            display.message("match m00001 failed: it broke")
        assert capsys.readouterr() == ("", "")

    def test_live_display_goes_to_stderr(
        self, config: TourneyConfig, document: dict, capsys
    ) -> None:
        """The live display writes to stderr (stdout stays for the results) with the board."""
        with Display(config, 10, 0, quiet=False) as display:
            display.advance(2)
            display.board(document)
            display.message("match m00001 failed: it broke")
        out, err = capsys.readouterr()
        assert out == ""
        assert "match m00001 failed: it broke" in err
        assert "quickstart" in err and "heuristic" in err
