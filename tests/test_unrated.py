"""Unrated games on request (``server.unrated``): the real server on loopback, real bots in the
sandbox, a real HTTP client; the games are played, never rated, and seen by their author and
the organiser only (another author's token, none, a forged session: refused)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from ohseven.referee.server.headers import SESSION_COOKIE
from test_server import RANDOM_BOT, Running, free_port, tar_gz, wait_for, write_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # real processes; a loaded machine


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    folder = tmp_path_factory.mktemp("unrated-server")
    port = free_port()
    config = write_config(folder, port, unrated_games=3, unrated_per_author=1)
    running = Running(config, port)
    running.tokens = {  # type: ignore[attr-defined]
        name: running.add_author(name) for name in ("alice", "bob")
    }
    running.tokens["org"] = running.add_author("org", "--organiser")  # type: ignore[attr-defined]
    running.start()
    yield running
    if running.process is not None:
        assert running.stop() == 0, running.log.read_text()


def test_unrated_games_are_played_unrated_and_private(server: Running) -> None:
    tokens = server.tokens  # type: ignore[attr-defined]
    alice = server.client(tokens["alice"])
    wrapper = (
        "import os, runpy, sys\n"
        'print("alice private trace", file=sys.stderr, flush=True)\n'
        'runpy.run_path(os.path.join(os.path.dirname(__file__), "bot.py"), run_name="__main__")\n'
    )
    upload = alice.post(
        "/api/uploads",
        params={"bot": "mcbot", "command": "python3 main.py"},
        content=tar_gz({"main.py": wrapper.encode(), "bot.py": RANDOM_BOT.encode()}),
    )
    assert upload.status_code == 201, upload.text
    state = wait_for(
        lambda: (
            (s := alice.get(upload.json()["status_url"]).json())["state"] in ("passed", "failed")
            and s
        )
    )
    assert state["state"] == "passed", state
    # refusals: not a playing bot of hers, a wrong table, too many games
    for body, word in (
        ({"bot": "heuristic", "opponents": ["random", "random-2"]}, "your playing bots"),
        ({"bot": "mcbot", "opponents": ["random"]}, "name 2 bots"),
        ({"bot": "mcbot", "opponents": ["random", "nobody"]}, "not a playing bot"),
        ({"bot": "mcbot", "opponents": ["random", "heuristic"], "games": 4}, "unrated_games"),
    ):
        answer = alice.post("/api/unrated", json=body)
        assert answer.status_code == 400 and word in answer.json()["error"], answer.text
    made = alice.post(
        "/api/unrated", json={"bot": "mcbot", "opponents": ["random", "heuristic"], "games": 3}
    )
    assert made.status_code == 201, made.text
    request_id = made.json()["id"]
    assert made.json()["bot"] == "alice/mcbot v1"
    second = alice.post("/api/unrated", json={"bot": "mcbot", "opponents": ["random", "heuristic"]})
    if alice.get(f"/api/unrated/{request_id}").json()["state"] in ("queued", "playing"):
        assert second.status_code == 429 and "unrated_per_author" in second.json()["error"]
    done = wait_for(
        lambda: (r := alice.get(f"/api/unrated/{request_id}").json())["state"] == "done" and r
    )
    games = done["result"]["games"]
    assert len(games) == 3
    for game in games:
        names = {p["name"] for p in game["players"]}
        assert names == {"alice/mcbot v1", "random", "heuristic"}
        assert sorted(p["place"] for p in game["players"])[0] == 1
    assert "alice private trace" in done["result"]["log"]
    # never rated: no league game of hers comes from the request
    league = server.client().get("/api/games", params={"limit": 1000}).json()["games"]
    assert not any(game["match_id"].startswith("u") for game in league)
    # private: the organiser reads it; bob, nobody and a forged session do not
    assert server.client(tokens["org"]).get(f"/api/unrated/{request_id}").status_code == 200
    assert server.client(tokens["bob"]).get(f"/api/unrated/{request_id}").status_code == 404
    assert server.client(tokens["bob"]).get("/api/unrated").json() == {"requests": []}
    assert server.client().get(f"/api/unrated/{request_id}").status_code == 401
    assert server.client().get("/api/unrated").status_code == 401
    forged = server.client()
    forged.cookies.set(SESSION_COOKIE, f"alice.{2**40}.{'0' * 64}")
    assert forged.get(f"/me/unrated/{request_id}").status_code == 401
    assert forged.get("/me/unrated").status_code == 401
    # the page, with a session: the form needs its CSRF token
    browser = server.client()
    assert browser.post("/login", data={"token": tokens["alice"]}).status_code == 303
    page = browser.get(f"/me/unrated/{request_id}")
    assert page.status_code == 200 and "alice private trace" in page.text
    refused = browser.post(
        "/me/unrated", data={"bot": "mcbot", "opponent": ["random", "heuristic"], "games": "1"}
    )
    assert refused.status_code == 403 and "CSRF" in refused.text
    bob_browser = server.client()
    assert bob_browser.post("/login", data={"token": tokens["bob"]}).status_code == 303
    assert bob_browser.get(f"/me/unrated/{request_id}").status_code == 404
