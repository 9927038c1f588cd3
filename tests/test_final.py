"""``ohseven-referee final`` end to end: a real league served on loopback with an uploaded bot
(real sandbox), then the final as the command it is: killed and resumed with another number of
workers (the same results as an uninterrupted run), its deals none of the league's, its results
apart from the league's, the secret revealed and checked against the commitment published
before, and the server started again refusing uploads and serving the final."""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from ohseven.referee.results.store import Store
from ohseven.referee.secret import load_secret
from test_server import (
    Running,
    board_row,
    free_port,
    referee,
    tar_gz,
    wait_for,
    write_config,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # real processes; a loaded machine


def final_games(output: Path) -> int:
    path = output / "final" / "tournament.sqlite"
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    except sqlite3.Error:
        return 0


def seeds(folder: Path) -> set[int]:
    with Store.open(folder, create=False) as store:
        return {stored.record.seed for stored in store.games()}


def standings(output: Path) -> list[tuple]:
    board = json.loads((output / "final" / "leaderboard.json").read_text())
    return [
        (row["name"], row["games"], row["points_per_game"], round(row["score"], 6))
        for row in board["bots"]
    ]


def test_the_final(tmp_path: Path) -> None:
    port = free_port()
    config = write_config(tmp_path, port, games=100_000, final_bots=3, final_games=9)
    config.write_text(config.read_text() + "reveal_seeds: true\n")
    output = tmp_path / "out"

    # no league yet: a clear error, nothing begun
    early = referee("final", str(config))
    assert early.returncode == 2 and "no league" in early.stderr, early.stderr

    server = Running(config, port)
    alice = server.add_author("alice")
    server.start()
    try:
        commitment = server.client().get("/api/commitment").json()
        assert commitment["secret"] is None
        wait_for(lambda: (board_row(server, "heuristic") or {}).get("games", 0) >= 2)
    finally:
        assert server.stop() == 0, server.log.read_text()

    # too few bots for a table: refused, and nothing begun (uploads still open afterwards)
    few = tmp_path / "few.yaml"
    few.write_text(config.read_text().replace("final_bots: 3", "final_bots: 2"))
    refused = referee("final", str(few))
    assert refused.returncode == 2 and "fewer than a table of 3" in refused.stderr

    twin = tmp_path / "twin"  # the same league, for an uninterrupted final with one worker
    twin.mkdir()
    shutil.copytree(output, twin / "out")
    (twin / "league.yaml").write_text(config.read_text())

    # the final, killed once it has played a game, then resumed with two workers
    command = [sys.executable, "-m", "ohseven.referee.cli", "final", str(config), "--workers", "1"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: final_games(output) >= 1 or process.poll() is not None)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
    killed_at = final_games(output)
    assert 1 <= killed_at < 9, killed_at  # 3 bots at one table of 3: 9 rounds of 1 game
    resumed = referee("final", str(config), "--workers", "2")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "the final is complete (9 games)" in resumed.stdout
    straight = referee("final", str(twin / "league.yaml"), "--workers", "1")
    assert straight.returncode == 0, straight.stdout + straight.stderr
    assert standings(output) == standings(twin / "out")
    chosen = json.loads((output / "final" / "leaderboard.json").read_text())
    assert len(chosen["bots"]) == 3 and chosen["complete"]
    assert chosen["tournament"] == "live final" and chosen["secret"]  # its own, revealed

    # fresh deals: none of the league's
    assert seeds(output / "final").isdisjoint(seeds(output))
    # published apart from the league's site
    assert "live final" in (output / "final" / "index.html").read_text()
    assert "live final" not in (output / "index.html").read_text()  # the league's site

    # the secret revealed, and it is the one committed to before the event
    reveal = json.loads((output / "final" / "reveal.json").read_text())
    secret = bytes.fromhex(reveal["secret"])
    assert hashlib.sha256(secret).hexdigest() == commitment["sha256"] == reveal["sha256"]
    assert secret == load_secret(output)

    # done: a clear refusal
    again = referee("final", str(config))
    assert again.returncode == 1 and "complete already" in again.stderr

    # the server started again: no league games, no uploads, the final shown
    server.start()
    try:
        assert server.process is not None and server.process.stdout is not None
        assert "the final has begun" in server.process.stdout.readline()
        upload = server.client(alice).post(
            "/api/uploads", params={"bot": "late"}, content=tar_gz({"main.py": b"x"})
        )
        assert upload.status_code == 403 and "final has begun" in upload.json()["error"]
        shown = server.client().get("/api/commitment").json()
        assert hashlib.sha256(bytes.fromhex(shown["secret"])).hexdigest() == shown["sha256"]
        final = server.client().get("/api/final").json()
        assert final["complete"] and [row["name"] for row in final["leaderboard"]["bots"]] == [
            name for name, *_ in standings(output)
        ]
        page = server.client().get("/final").text
        assert "Final standings" in page and reveal["secret"] in page
        assert 'href="/final"' in server.client().get("/").text
    finally:
        assert server.stop() == 0, server.log.read_text()
