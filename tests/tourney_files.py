"""The files of the tourney tests: a small tournament and a league of conftest's
``FIXED_BOT_SOURCE`` bots written to a folder, and what a run leaves there (the games stored,
the leaderboard)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from conftest import FIXED_BOT_SOURCE
from ohseven.referee.results.board import LEADERBOARD_NAME
from ohseven.referee.results.store import Store

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


def write_tournament(folder: Path, *, size: int = 3, games: int = 1, output: str = "out") -> Path:
    folder.chmod(0o755)
    for style in ("low", "high", "hash"):
        (folder / f"{style}.py").write_text(FIXED_BOT_SOURCE.format(style=style))
    path = folder / "t.yaml"
    path.write_text(CONFIG.format(size=size, games=games, output=output))
    return path


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


LEAGUE_CONFIG = """
name: league
game: oh-seven
table_size: [2, 3]
bots:
{bots}
schedule: {{type: league, games: {games}, games_per_table: 1}}
time_control: {{move_seconds: 5, bank_seconds: 20, start_seconds: 20}}
sandbox: {{mode: unsandboxed}}
seed: 8
output: out
"""
LEAGUE_BOTS = {"low": "low", "high": "high", "hash": "hash", "hash2": "hash", "hash3": "hash"}


def write_league(folder: Path, *, games: int = 30, bots: dict[str, str] | None = None) -> Path:
    """A league of the fixed bots (name -> style) in ``folder``: its configuration file."""
    folder.chmod(0o755)
    for style in ("low", "high", "hash"):
        (folder / f"{style}.py").write_text(FIXED_BOT_SOURCE.format(style=style))
    listed = "\n".join(
        f"  - {{name: {name}, file: {style}.py}}" for name, style in (bots or LEAGUE_BOTS).items()
    )
    path = folder / "t.yaml"
    path.write_text(LEAGUE_CONFIG.format(bots=listed, games=games))
    return path


def league_games(folder: Path) -> list[tuple]:
    """Every stored game of a league: (canonical index, match id, seats, seed, totals)."""
    with Store.open(folder, create=False) as store:
        return [
            (g.canonical_index, g.record.match_id, g.record.seats, g.record.seed, g.record.totals)
            for g in store.games()
        ]
