"""The check queue (``server.checks``) in a real ``serve`` on loopback: real uploads through a
real HTTP client, real ``check-bot`` runs in the sandbox. What its verdicts leave on disk: a
failed version's tree is removed once its report is stored, an upload refused after it was
unpacked leaves no tree, and a start-up removes every tree no version names."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from ohseven.referee.plan.config import ServerConfig
from ohseven.referee.server.checks import CHECK_DECISIONS
from ohseven.referee.server.db import ServerDB
from ohseven.referee.server.uploads import UploadLimits, unpack
from test_server import (
    CRASHING_BOT,
    EXAMPLES,
    RANDOM_BOT,
    Running,
    free_port,
    sleeping_bot,
    tar_gz,
    wait_for,
    write_config,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # real processes


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    folder = tmp_path_factory.mktemp("checks")
    port = free_port()
    running = Running(write_config(folder, port, games=30), port)
    running.tokens = {name: running.add_author(name) for name in ("dave", "erin")}  # type: ignore[attr-defined]
    running.start()
    yield running
    if running.process is not None:
        assert running.stop() == 0, running.log.read_text()


def upload(server: Running, author: str, bot: str, files: dict[str, bytes], **params: str):
    token = server.tokens[author]  # type: ignore[attr-defined]
    return server.client(token).post(
        "/api/uploads", params={"bot": bot, **params}, content=tar_gz(files)
    )


def checked(server: Running, author: str, version_id: int) -> dict:
    client = server.client(server.tokens[author])  # type: ignore[attr-defined]
    return wait_for(
        lambda: (
            (v := client.get(f"/api/uploads/{version_id}").json())["state"] in ("passed", "failed")
            and v
        )
    )


def trees(server: Running) -> set[str]:
    return {p.name for p in (server.output / ".uploads").iterdir() if not p.name.startswith(".")}


def disk(server: Running) -> int:
    return sum(p.stat().st_size for p in (server.output / ".uploads").rglob("*") if p.is_file())


def test_a_failed_versions_tree_goes_and_its_report_stays(server: Running) -> None:
    """Nothing deleted the trees of versions whose check failed: an author refused ten times
    an hour kept ten trees of up to ``max_unpacked_bytes`` each on the server's disk forever."""
    crash = {"main.py": CRASHING_BOT.encode(), "padding.bin": b"x" * (1 << 20)}
    first = upload(server, "dave", "crasher", crash)
    assert first.status_code == 201, first.text
    digest = first.json()["digest"]
    assert digest in trees(server)  # stored until its check ends
    version = checked(server, "dave", first.json()["id"])
    assert version["state"] == "failed"
    wait_for(lambda: digest not in trees(server))  # (removed right after the report is stored)
    # the author still reads the whole report, the bot's own output with it
    assert "my secret strategy failed" in version["report"]["checks"][0]["output_tail"]
    assert version["files"] == 2 and version["bytes"] > 1 << 20
    good = upload(server, "dave", "mcbot", {"main.py": RANDOM_BOT.encode()})
    assert checked(server, "dave", good.json()["id"])["state"] == "passed"
    assert good.json()["digest"] in trees(server)  # a passed version's tree stays
    # the same failing content again: its verdict is remembered, its tree removed again
    again = upload(server, "dave", "crasher", crash)
    assert again.json()["digest"] == digest
    assert checked(server, "dave", again.json()["id"])["state"] == "failed"
    wait_for(lambda: trees(server) == {good.json()["digest"]})
    assert disk(server) < 1 << 20  # only the passing bot's few kilobytes


def test_an_upload_refused_once_unpacked_leaves_no_tree(server: Running) -> None:
    """An upload refused after its tree was unpacked (its command names no file of it; or
    the limits checked again under the lock, in a race) left the tree with no version."""
    before = trees(server)
    refused = upload(
        server, "erin", "ghost", {"main.py": b"# nothing\n" * 1000}, command="./missing --go"
    )
    assert refused.status_code == 400 and "not a file of the upload" in refused.text
    assert trees(server) == before


def test_a_start_removes_every_tree_no_version_needs(server: Running) -> None:
    """A server killed between unpacking an upload and recording it left its tree forever."""
    kept = trees(server)
    assert kept  # dave/mcbot v1's
    assert server.stop(signal.SIGKILL) == -signal.SIGKILL
    source = server.output.parent / "orphan.tar.gz"
    source.write_bytes(tar_gz({"main.py": b"# an orphan\n", "data.bin": b"y" * 4096}))
    with source.open("rb") as archive:
        orphan = unpack(archive, server.output / ".uploads", UploadLimits())
    assert orphan.digest in trees(server)
    # a tree a failed version names, left by a server older than the sweep of failed trees
    stale = server.output / ".uploads" / ("f" * 64)
    shutil.copytree(orphan.path.parent, stale)
    server.start()
    wait_for(lambda: trees(server) == kept)
    token = server.tokens["dave"]  # type: ignore[attr-defined]
    uploads = server.client(token).get("/api/uploads").json()["uploads"]
    assert [v["state"] for v in uploads] == ["failed", "passed", "failed"]
    assert uploads[0]["report"]["checks"][0]["output_tail"]


def test_a_command_with_a_nul_neither_passes_nor_stops_the_queue(server: Running) -> None:
    """``?command=python3 main.py %00`` was accepted; its check's process could not start
    (``embedded null byte``), the exception ended the check queue's thread, and no author's
    upload was checked again until a restart."""
    refused = upload(server, "erin", "nul", {"main.py": RANDOM_BOT.encode()}, command="main.py \0")
    assert refused.status_code == 400 and "control characters" in refused.json()["error"]
    # one recorded before this refusal existed: the queue reports it and goes on
    assert server.stop() == 0
    (kept,) = trees(server)
    with ServerDB(server.output) as db:
        stale = db.add_version("erin", "nul", kept, ("python3", "main.py", "\0"), 10, 1)
    server.start()
    assert checked_or_error(server, "erin", stale.id)["state"] == "error"
    good = upload(server, "erin", "good", {"main.py": (RANDOM_BOT + "\n# erin\n").encode()})
    assert checked(server, "erin", good.json()["id"])["state"] == "passed"
    assert "embedded null byte" in server.log.read_text()  # the organiser reads why


def checked_or_error(server: Running, author: str, version_id: int) -> dict:
    client = server.client(server.tokens[author])  # type: ignore[attr-defined]
    return wait_for(
        lambda: (
            (v := client.get(f"/api/uploads/{version_id}").json())["state"]
            in ("passed", "failed", "error")
            and v
        )
    )


#: passes every check, thinking half its move time (1 s) over each card: its check lasts
#: about 931 plays x 0.5 s, nearly eight minutes, against the server's limit of a few seconds
PONDERING_BOT = sleeping_bot(0.5)


def test_a_slow_check_holds_the_queue_no_longer_than_its_limit(tmp_path: Path) -> None:
    """A bot thinking just under its move time made its check last up to ``check_timeout``,
    900 s by default, for every other author's check queued behind it; the report said only
    "the check took more than 900 s"."""
    assert ServerConfig().check_timeout <= 300  # the default: 5 minutes at most per turn
    limit = 30
    port = free_port()
    server = Running(write_config(tmp_path, port, games=30, check_timeout=limit), port)
    slow, quick = server.add_author("slowpoke"), server.add_author("quick")
    server.start()
    try:
        first = server.client(slow).post(
            "/api/uploads", params={"bot": "ponder"}, content=tar_gz({"main.py": PONDERING_BOT})
        )
        assert first.status_code == 201, first.text
        mine = server.client(slow)
        wait_for(
            lambda: mine.get(f"/api/uploads/{first.json()['id']}").json()["state"] == "checking"
        )
        second = server.client(quick).post(
            "/api/uploads", params={"bot": "fast"}, content=tar_gz({"main.py": RANDOM_BOT.encode()})
        )
        assert second.status_code == 201, second.text
        other = server.client(quick)
        passed = wait_for(
            lambda: (
                (v := other.get(f"/api/uploads/{second.json()['id']}").json())["state"] == "passed"
                and v
            ),
            timeout=600,
        )
        ended = mine.get(f"/api/uploads/{first.json()['id']}").json()
        assert ended["state"] == "failed"
        assert ended["checked"] <= passed["checked"]  # the slow one was stopped first
        # stopped at its limit, long before its natural end (931 plays x 0.5 s)
        assert ended["checked"] - ended["uploaded"] < 931 * 0.5 / 2
        error = ended["report"]["error"]
        assert f"more than {limit} s" in error and "(check_timeout)" in error
        assert "1130 decisions" in error and "ms a decision" in error
        assert ended["report"]["limit"] == {"check_timeout": limit, "decisions": 1130}
        page = server.client()
        page.post("/login", data={"token": slow}, headers={"Origin": server.url})
        assert "(check_timeout)" in page.get(f"/me/uploads/{first.json()['id']}").text
    finally:
        assert server.stop() == 0, server.log.read_text()


@pytest.mark.parametrize("game", sorted(CHECK_DECISIONS))
def test_the_decisions_a_check_asks_are_as_the_report_says(game: str) -> None:
    """The timeout's report tells how long a decision may take from the decisions check-bot
    asks: a real check of the random bot asks about as many."""
    result = subprocess.run(
        [sys.executable, "-m", "ohseven.referee.cli", "check-bot", "--json", "--game", game]
        + [str(EXAMPLES / "random_bot.py")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    asked = sum(check["decisions"] for check in json.loads(result.stdout)["checks"])
    assert abs(asked - CHECK_DECISIONS[game]) <= CHECK_DECISIONS[game] / 10, asked
