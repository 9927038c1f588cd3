"""``ohseven-referee final`` end to end: a real league served on loopback with an uploaded bot
(real sandbox) among its finalists, then the final as the command it is: killed and resumed
with another number of workers, and played uninterrupted in copies of the league's folder
with 1 and 2 workers: the same games, totals, leaderboard and reveal each time, the uploaded
bot playing its own moves in every game; its deals none of the league's, its results apart
from the league's, the secret revealed and checked against the commitment published before,
and the server started again refusing uploads and serving the final."""

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
    RANDOM_BOT,
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


def results(output: Path) -> dict:
    """What a final's outcome is: each game (deal, seating, totals, places, faults) in the
    schedule's order, its leaderboard and its reveal."""
    with Store.open(output / "final", create=False) as store:
        games = sorted(
            (
                g.record.match_id,
                g.record.game_index,
                g.record.seed,
                g.record.seats,
                g.record.totals,
                g.record.ranks,
                g.record.faults,
            )
            for g in store.games()
        )
    board = json.loads((output / "final" / "leaderboard.json").read_text())
    reveal = json.loads((output / "final" / "reveal.json").read_text())
    return {"games": games, "leaderboard": board, "reveal": reveal}


def test_the_final(tmp_path: Path) -> None:
    port = free_port()
    config = write_config(tmp_path, port, games=100_000, final_bots=4, final_games=12)
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
        bot = tmp_path / "mcbot"  # alice's upload: the random bot in a folder
        bot.mkdir()
        (bot / "main.py").write_text(RANDOM_BOT)
        sent = server.submit(alice, "mcbot", bot, "--wait")
        assert sent.returncode == 0, sent.stdout + sent.stderr
        wait_for(lambda: (board_row(server, "alice/mcbot v1") or {}).get("games", 0) >= 2)
    finally:
        assert server.stop() == 0, server.log.read_text()

    # too few bots for a table: refused, and nothing begun (uploads still open afterwards)
    few = tmp_path / "few.yaml"
    few.write_text(config.read_text().replace("final_bots: 4", "final_bots: 2"))
    refused = referee("final", str(few))
    assert refused.returncode == 2 and "fewer than a table of 3" in refused.stderr

    # the same league in copies of its folder (elsewhere: the uploaded bot's files too), for
    # an uninterrupted final with one worker and one with two
    twins = {}
    for workers in (1, 2):
        twin = tmp_path / f"twin{workers}"
        twin.mkdir()
        shutil.copytree(output, twin / "out", symlinks=True)
        (twin / "league.yaml").write_text(config.read_text())
        twins[workers] = twin

    # the final, killed once it has played a game, then resumed with two workers
    command = [sys.executable, "-m", "ohseven.referee.cli", "final", str(config), "--workers", "1"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: final_games(output) >= 1 or process.poll() is not None)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
    killed_at = final_games(output)
    assert 1 <= killed_at < 12, killed_at  # 4 bots, tables of 3: 4 tables x 3 seatings
    resumed = referee("final", str(config), "--workers", "2")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "the final is complete (12 games)" in resumed.stdout
    for workers, twin in twins.items():
        straight = referee("final", str(twin / "league.yaml"), "--workers", str(workers))
        assert straight.returncode == 0, straight.stdout + straight.stderr
        assert straight.stdout.splitlines()[1:5] == resumed.stdout.splitlines()[1:5]
    outcome = results(output)
    assert results(twins[1] / "out") == outcome
    assert results(twins[2] / "out") == outcome
    chosen = outcome["leaderboard"]
    assert len(chosen["bots"]) == 4 and chosen["complete"]
    assert chosen["tournament"] == "live final" and chosen["secret"]  # its own, revealed
    # the uploaded finalist played its own moves in every game (no fallback played for it)
    assert "alice/mcbot v1" in {row["name"] for row in chosen["bots"]}
    assert len(outcome["games"]) == 12 and all(not faults for *_, faults in outcome["games"])

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
