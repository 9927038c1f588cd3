"""The competition server end to end: ``ohseven-referee serve`` run as a real process on a free
loopback port, real bots in the bubblewrap sandbox, ``authors`` and ``submit`` run as the
commands they are, and a real HTTP client (httpx) reading the API and the pages."""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from ohseven.referee.results.archive import game_id
from ohseven.referee.secret import load_secret

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # real processes; a loaded machine

EXAMPLES = Path(__file__).resolve().parent.parent / "example_bots"
RANDOM_BOT = (EXAMPLES / "random_bot.py").read_text()
CRASHING_BOT = 'import sys\nprint("my secret strategy failed", file=sys.stderr)\nsys.exit(3)\n'


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def referee(*args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ohseven.referee.cli", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=check,
    )


def write_config(folder: Path, port: int, games: int = 100_000, **server: Any) -> Path:
    settings = {"listen": f"127.0.0.1:{port}", **server}
    lines = "\n".join(f"  {key}: {value}" for key, value in settings.items())
    config = folder / "league.yaml"
    config.write_text(
        f"""name: live
game: oh-seven
table_size: [3]
bots:
  - name: random
    file: {EXAMPLES / "random_bot.py"}
  - name: random-2
    file: {EXAMPLES / "random_bot.py"}
  - name: heuristic
    file: {EXAMPLES / "heuristic_bot.py"}
schedule:
  type: league
  games: {games}
  games_per_table: 1
time_control:
  move_seconds: 1.0
  bank_seconds: 5.0
workers: 1
output: out
server:
{lines}
"""
    )
    return config


class Running:
    """A ``serve`` process and what talks to it."""

    def __init__(self, config: Path, port: int) -> None:
        self.config, self.port = config, port
        self.url = f"http://127.0.0.1:{port}"
        self.output = config.parent / "out"
        self.process: subprocess.Popen[str] | None = None
        self.log = config.parent / "serve.log"

    def start(self) -> None:
        handle = open(self.log, "a")  # noqa: SIM115 - the child's, closed with it
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ohseven.referee.cli", "serve", str(self.config)],
            stdout=subprocess.PIPE,
            stderr=handle,
            text=True,
        )
        handle.close()
        assert self.process.stdout is not None
        line = self.process.stdout.readline()  # the server says where once it listens
        assert line.startswith("serving live on"), (line, self.log.read_text())

    def stop(self, sig: int = signal.SIGTERM) -> int:
        assert self.process is not None
        self.process.send_signal(sig)
        code = self.process.wait(timeout=120)
        self.process = None
        return code

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)

    def submit(self, token: str, name: str, path: Path, *extra: str) -> subprocess.CompletedProcess:
        return referee(
            "submit", "--server", self.url, "--token", token, "--name", name, *extra, str(path)
        )

    def add_author(self, name: str, *extra: str) -> str:
        result = referee("authors", "add", name, str(self.config), *extra, check=True)
        return result.stdout.strip()


def wait_for(what: Callable[[], Any], timeout: float = 240.0, step: float = 0.25) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = what()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out waiting for {what}")


def board_row(server: Running, name: str) -> dict | None:
    response = server.client().get("/api/leaderboard")
    if response.status_code != 200:
        return None
    return next((row for row in response.json()["bots"] if row["name"] == name), None)


def tar_gz(entries: dict[str, bytes], mode: int = 0o644) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    folder = tmp_path_factory.mktemp("server")
    port = free_port()
    running = Running(write_config(folder, port, max_active_bots=2), port)
    running.tokens = {  # type: ignore[attr-defined]
        name: running.add_author(name) for name in ("alice", "bob")
    }
    running.tokens["org"] = running.add_author("org", "--organiser")  # type: ignore[attr-defined]
    running.start()
    yield running
    if running.process is not None:
        assert running.stop() == 0, running.log.read_text()


@pytest.fixture(scope="module")
def alice_bot(server: Running, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """alice/mcbot v1 (the random bot in a folder, started by its main.py), accepted."""
    folder = tmp_path_factory.mktemp("mcbot")
    (folder / "main.py").write_text(RANDOM_BOT)
    (folder / "data").mkdir()
    (folder / "data" / "weights.txt").write_text("0.5\n")
    result = server.submit(server.tokens["alice"], "mcbot", folder, "--wait")  # type: ignore[attr-defined]
    assert result.returncode == 0, result.stdout + result.stderr
    assert "alice/mcbot v1: accepted" in result.stdout
    assert "OK: " in result.stdout  # the check's whole report
    versions = server.client(server.tokens["alice"]).get("/api/uploads").json()["uploads"]  # type: ignore[attr-defined]
    return versions[-1]


class TestAuthors:
    def test_the_token_is_printed_once_and_kept_only_hashed(self, tmp_path: Path) -> None:
        config = write_config(tmp_path, free_port())
        token = referee("authors", "add", "carol", str(config), check=True).stdout.strip()
        assert len(token) >= 40
        raw = (tmp_path / "out" / "server.sqlite").read_bytes()
        assert token.encode() not in raw
        with sqlite3.connect(tmp_path / "out" / "server.sqlite") as db:
            (stored,) = db.execute("SELECT token_hash FROM authors").fetchone()
        assert stored == hashlib.sha256(token.encode()).hexdigest()
        again = referee("authors", "add", "carol", str(config))
        assert again.returncode == 1 and "exists" in again.stderr
        listed = referee("authors", "list", str(config), check=True).stdout
        assert "carol" in listed and token not in listed
        assert referee("authors", "revoke", "carol", str(config)).returncode == 0
        assert referee("authors", "list", str(config)).stdout.count("UTC") == 2  # revoked when
        assert referee("authors", "revoke", "carol", str(config)).returncode == 1
        bad = referee("authors", "add", "Carol Smith", str(config))
        assert bad.returncode == 1 and "author name" in bad.stderr


class TestSubmitAndPlay:
    def test_an_accepted_version_plays_with_rating_changes_and_places(
        self, server: Running, alice_bot: dict
    ) -> None:
        assert alice_bot["name"] == "alice/mcbot v1" and alice_bot["state"] == "passed"
        assert alice_bot["files"] == 2
        assert alice_bot["command"] == ["python3", "main.py"]  # no server path shown
        row = wait_for(lambda: (r := board_row(server, "alice/mcbot v1")) and r["games"] and r)
        assert row["server"] == {"author": "alice", "bot": "mcbot", "version": 1, "state": "active"}
        games = wait_for(
            lambda: [
                g
                for g in server.client()
                .get("/api/games", params={"bot": "alice/mcbot v1"})
                .json()["games"]
                if g["players"][0]["rating_change"] is not None
            ]
        )
        for player in games[0]["players"]:
            assert player["place"] in (1, 2, 3)
            assert player["rating_after"] == pytest.approx(
                player["rating_before"] + player["rating_change"], abs=1e-3
            )
        later = server.client().get("/api/games", params={"after": games[0]["canonical"]}).json()
        assert all(g["canonical"] > games[0]["canonical"] for g in later["games"])
        page = server.client().get(f"/bots/{row['slug']}")
        assert page.status_code == 200 and "alice/mcbot v1" in page.text

    def test_a_failing_version_never_plays_and_its_author_sees_why(
        self, server: Running, tmp_path: Path
    ) -> None:
        bot = tmp_path / "crash.py"
        bot.write_text(CRASHING_BOT)
        result = server.submit(server.tokens["bob"], "crasher", bot, "--wait")  # type: ignore[attr-defined]
        assert result.returncode == 1, result.stdout + result.stderr
        assert "my secret strategy failed" in result.stdout  # the bot's own output
        assert "bob/crasher v1: refused by the check" in result.stdout
        time.sleep(1.0)
        assert board_row(server, "bob/crasher v1") is None
        mine = server.client(server.tokens["bob"]).get("/api/uploads").json()["uploads"]  # type: ignore[attr-defined]
        assert mine[-1]["state"] == "failed"
        assert mine[-1]["report"]["checks"][0]["output_tail"]

    def test_a_new_version_replaces_the_old_which_keeps_its_games(
        self, server: Running, alice_bot: dict, tmp_path: Path
    ) -> None:
        wait_for(lambda: (r := board_row(server, "alice/mcbot v1")) and r["games"])
        bot = tmp_path / "main.py"
        bot.write_text(RANDOM_BOT + "\n# v2\n")
        result = server.submit(server.tokens["alice"], "mcbot", bot, "--wait")  # type: ignore[attr-defined]
        assert result.returncode == 0, result.stdout + result.stderr
        new = wait_for(lambda: (r := board_row(server, "alice/mcbot v2")) and r["games"] and r)
        old = board_row(server, "alice/mcbot v1")
        assert old is not None and old["games"] > 0 and old["server"]["state"] == "retired"
        assert new["server"]["state"] == "active"
        before = old["games"]
        time.sleep(3.0)  # (no more games for a retired version, whatever is played meanwhile)
        wait_for(lambda: (r := board_row(server, "alice/mcbot v2")) and r["games"] > new["games"])
        assert board_row(server, "alice/mcbot v1")["games"] == before  # type: ignore[index]

    def test_the_secret_is_committed_to_before_the_event(self, server: Running) -> None:
        published = server.client().get("/api/commitment").json()["sha256"]
        secret = load_secret(server.output)
        assert secret is not None and published == hashlib.sha256(secret).hexdigest()
        assert published[:16] in server.client().get("/").text  # (also before any game)

    def test_bad_input_exits_2(self, server: Running, tmp_path: Path) -> None:
        missing = server.submit(server.tokens["alice"], "x", tmp_path / "nothing")  # type: ignore[attr-defined]
        assert missing.returncode == 2 and "no such file" in missing.stderr
        bot = tmp_path / "b.py"
        bot.write_text(RANDOM_BOT)
        wrong = server.submit("not-a-token", "x", bot)
        assert wrong.returncode == 2 and "401" in wrong.stderr
        assert "token is not accepted" in wrong.stderr  # not "send your token": one was sent
        name = server.submit(server.tokens["alice"], "Bad Name", bot)  # type: ignore[attr-defined]
        assert name.returncode == 2 and "bot name" in name.stderr
        (tmp_path / "two").mkdir()
        (tmp_path / "two" / "a.py").write_text(RANDOM_BOT)
        (tmp_path / "two" / "b.py").write_text(RANDOM_BOT)
        command = server.submit(server.tokens["alice"], "two", tmp_path / "two")  # type: ignore[attr-defined]
        assert command.returncode == 2 and "--command" in command.stderr

    def test_the_active_bot_limit(self, server: Running, tmp_path: Path) -> None:
        bot = tmp_path / "b.py"
        bot.write_text(RANDOM_BOT)
        token = server.tokens["bob"]  # type: ignore[attr-defined]
        first = server.submit(token, "one", bot, "--wait")
        second = server.submit(token, "two", bot, "--wait")
        assert first.returncode == 0 and second.returncode == 0
        third = server.submit(token, "three", bot)
        assert third.returncode == 2 and "max_active_bots" in third.stderr


class TestTrustedOnlySettings:
    @pytest.mark.parametrize(
        ("old", "new", "key"),
        [
            ("workers: 1", "workers: 1\nsandbox: {mode: unsandboxed}", "sandbox.mode"),
            ("workers: 1", "workers: 1\nsandbox: {ponder: true}", "sandbox.ponder"),
            ("  games_per_table: 1", "  games_per_table: 1\n  deals: duplicate", "schedule.deals"),
        ],
    )
    def test_serve_refuses_them_naming_the_line(
        self, tmp_path: Path, old: str, new: str, key: str
    ) -> None:
        config = write_config(tmp_path, free_port())
        text = config.read_text()
        config.write_text(text.replace(old, new))
        line = text.replace(old, new).splitlines().index(new.splitlines()[-1]) + 1
        done = referee("serve", str(config))
        assert done.returncode == 2, done.stderr
        assert f"{config}:{line}: key `{key}`" in done.stderr, done.stderr
        assert "trusted bots only" in done.stderr and "Traceback" not in done.stderr
        assert not (tmp_path / "out").exists()  # refused before anything was written


class TestHostileUploads:
    def upload(self, server: Running, body: bytes, token: str, **params: str) -> httpx.Response:
        return server.client(token).post(
            "/api/uploads", params={"bot": "hostile", **params}, content=body
        )

    def test_each_refusal_names_its_limit_and_leaves_nothing(self, server: Running) -> None:
        token = server.tokens["org"]  # type: ignore[attr-defined]
        uploads = server.output / ".uploads"
        before = sorted(os.listdir(uploads))
        big = os.urandom(25 << 20)
        response = self.upload(server, big, token)
        assert response.status_code == 413 and "max_upload_bytes" in response.json()["error"]

        def chunks() -> Iterator[bytes]:  # no Content-Length: the limit holds while streaming
            for _ in range(25):
                yield os.urandom(1 << 20)

        streamed = server.client(token).post(
            "/api/uploads", params={"bot": "hostile"}, content=chunks()
        )
        assert streamed.status_code == 413 and "max_upload_bytes" in streamed.json()["error"]
        bomb = io.BytesIO()
        with tarfile.open(fileobj=bomb, mode="w:gz") as tar:
            info = tarfile.TarInfo("zeros.bin")
            info.size = 200 << 20
            tar.addfile(info, io.BytesIO(bytes(200 << 20)))
        assert len(bomb.getvalue()) < 1 << 20
        response = self.upload(server, bomb.getvalue(), token)
        assert response.status_code == 413 and "max_unpacked_bytes" in response.json()["error"]
        link = io.BytesIO()
        with tarfile.open(fileobj=link, mode="w:gz") as tar:
            info = tarfile.TarInfo("main.py")
            info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
            tar.addfile(info)
        response = self.upload(server, link.getvalue(), token)
        assert response.status_code == 400 and "links are not allowed" in response.json()["error"]
        response = self.upload(server, tar_gz({"../escape.py": b"x"}), token)
        assert response.status_code == 400 and "'..'" in response.json()["error"]
        response = self.upload(server, b"not an archive at all", token)
        assert response.status_code == 400 and "gzip" in response.json()["error"]
        assert sorted(os.listdir(uploads)) == before  # nothing half-written left

    def test_no_token_no_upload(self, server: Running) -> None:
        response = server.client().post(
            "/api/uploads", params={"bot": "x"}, content=tar_gz({"main.py": b""})
        )
        assert response.status_code == 401
        assert response.json()["error"] == "send your token: Authorization: Bearer TOKEN"


class TestPrivacy:
    def test_every_private_route_refuses_other_authors_and_strangers(
        self, server: Running, alice_bot: dict
    ) -> None:
        tokens = server.tokens  # type: ignore[attr-defined]
        name, version_id = alice_bot["name"], alice_bot["id"]
        wait_for(lambda: (r := board_row(server, name)) and r["games"])
        alice, bob, org = (server.client(tokens[who]) for who in ("alice", "bob", "org"))
        nobody = server.client()
        forged = server.client()
        forged.cookies.set("ohseven_session", f"alice.{int(time.time()) + 3600}.{'0' * 64}")
        # the author's own report and private details
        assert alice.get(f"/api/uploads/{version_id}").json()["report"]["passed"] is True
        assert "private" in alice.get(f"/api/bots/{name}").json()
        assert "private" in org.get(f"/api/bots/{name}").json()  # the organiser
        for client in (bob, nobody, forged):
            assert client.get(f"/api/uploads/{version_id}").status_code in (401, 404)
            listing = client.get("/api/uploads")
            assert listing.status_code == 401 or all(
                v["author"] != "alice" for v in listing.json()["uploads"]
            )
            public = client.get(f"/api/bots/{name}")
            assert public.status_code == 200 and "private" not in public.json()
            assert "command" not in json.dumps(public.json())
            assert client.get("/me").status_code in (200, 401)
            if client is not bob:
                assert client.get("/me").status_code == 401
                assert client.get(f"/me/uploads/{version_id}").status_code == 401
        page = bob.get(f"/bots/{alice_bot['name'].replace('/', '-').replace(' ', '-')}")
        assert page.status_code == 200 and 'id="private"' not in page.text

    def test_sessions_csrf_and_revocation(self, server: Running, tmp_path: Path) -> None:
        token = server.add_author("dave")
        browser = server.client()
        assert browser.post("/login", data={"token": "wrong"}).status_code == 403
        response = browser.post("/login", data={"token": token})
        assert response.status_code == 303
        cookie = response.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        me = browser.get("/me")
        assert me.status_code == 200 and "dave" in me.text
        files = {"file": ("bot.py", RANDOM_BOT.encode())}
        no_csrf = browser.post("/me/upload", data={"bot": "web"}, files=files)
        assert no_csrf.status_code == 403
        csrf = me.text.split('name="csrf" value="')[1].split('"')[0]
        sent = browser.post("/me/upload", data={"bot": "web", "csrf": csrf}, files=files)
        assert sent.status_code == 303 and sent.headers["location"].startswith("/me/uploads/")
        assert browser.get(sent.headers["location"]).status_code == 200
        other = server.client(server.tokens["alice"])  # type: ignore[attr-defined]
        assert other.get("/api" + sent.headers["location"][3:]).status_code == 404
        referee("authors", "revoke", "dave", str(server.config), check=True)
        assert browser.get("/me").status_code == 401  # the session ended with the token
        assert server.client(token).get("/api/uploads").status_code == 401


def test_sigkill_loses_no_acknowledged_upload_and_resumes(tmp_path: Path) -> None:
    port = free_port()
    server = Running(write_config(tmp_path, port), port)
    token = server.add_author("erin")
    server.start()
    try:
        wait_for(lambda: (r := board_row(server, "heuristic")) and r["games"] >= 3)
        response = server.client(token).post(
            "/api/uploads",
            params={"bot": "late"},
            content=tar_gz({"main.py": RANDOM_BOT.encode()}),
        )
        assert response.status_code == 201
        played = server.client().get("/api/games").json()["total"]
    finally:
        assert server.stop(signal.SIGKILL) == -signal.SIGKILL
    server.start()
    try:  # the upload is there and gets checked; the games are there and more follow
        mine = server.client(token).get("/api/uploads").json()["uploads"]
        assert [v["name"] for v in mine] == ["erin/late v1"]
        wait_for(
            lambda: (
                server.client(token).get("/api/uploads").json()["uploads"][0]["state"] == "passed"
            )
        )
        wait_for(lambda: server.client().get("/api/games").json()["total"] > played)
        wait_for(lambda: (r := board_row(server, "erin/late v1")) and r["games"])
    finally:
        assert server.stop() == 0
    assert not [p for p in os.listdir(server.output / ".uploads") if p.startswith(".tmp")]


def sleeping_bot(seconds: float) -> bytes:
    """A passing bot that sleeps ``seconds`` over each card."""
    return f"""import time
from ohseven.sdk import Bot, run


class Slow(Bot):
    name = "slow"

    def choose_play(self, view):
        time.sleep({seconds!r})
        return super().choose_play(view)


run(Slow)
""".encode()


#: a passing bot that takes its time over each card, so that its matches last a few seconds
SLOW_BOT = sleeping_bot(0.05)


def finished_games(output: Path) -> dict[str, list]:
    """The games of every finished match in the tournament database: id -> totals."""
    with sqlite3.connect(f"file:{output / 'tournament.sqlite'}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT g.match_id, g.game_index, g.totals FROM games g JOIN matches m "
            "ON g.match_index = m.match_index WHERE m.status = 'done'"
        ).fetchall()
    return {game_id(match, index): json.loads(totals) for match, index, totals in rows}


def newcomer_match(output: Path, name: str) -> tuple[str, list[str], int, int] | None:
    """The newcomer's first match while it is being played, one of its games already written:
    (match id, the bots of its wave, its games written, its games), else None."""
    with sqlite3.connect(f"file:{output / 'tournament.sqlite'}?mode=ro", uri=True) as db:
        for index, match_id, bots, status, games in db.execute(
            "SELECT match_index, match_id, bots, status, games FROM matches ORDER BY match_index"
        ):
            if name not in json.loads(bots):
                continue
            (written,) = db.execute(
                "SELECT COUNT(*) FROM games WHERE match_index = ?", (index,)
            ).fetchone()
            if status != "running" or not written or written == games:
                return None
            (wave,) = db.execute(
                "SELECT bots FROM waves WHERE first_match <= ? ORDER BY wave DESC LIMIT 1",
                (index,),
            ).fetchone()
            return match_id, json.loads(wave), written, games
    return None


def wave_begun(output: Path) -> bool:
    """Whether the latest wave of the league has begun and none of its matches is done."""
    with sqlite3.connect(f"file:{output / 'tournament.sqlite'}?mode=ro", uri=True) as db:
        latest = db.execute(
            "SELECT first_match, matches FROM waves ORDER BY wave DESC LIMIT 1"
        ).fetchone()
        if latest is None:
            return False
        (done,) = db.execute(
            "SELECT COUNT(*) FROM matches WHERE match_index >= ? AND match_index < ? "
            "AND status = 'done'",
            (latest[0], latest[0] + latest[1]),
        ).fetchone()
    return done == 0


def test_sigkill_while_a_newcomer_plays_loses_nothing_and_resumes(tmp_path: Path) -> None:
    """A bot uploaded mid-wave is seated at once (a newcomer wave); the server is SIGKILLed in
    the middle of the newcomer's match (a game of it written, the next being played); the same
    command resumes: the upload is kept, every game of a finished match is still served with
    its result, and the newcomer's match is played again from its start and shown."""
    port = free_port()
    config = write_config(tmp_path, port)
    house = "".join(  # waves of 5 tables of 3: long enough for a check to pass mid-wave
        f"  - name: house-{n}\n    file: {EXAMPLES / 'random_bot.py'}\n" for n in range(12)
    )
    text = config.read_text().replace("games_per_table: 1", "games_per_table: 3")
    config.write_text(text.replace("bots:\n", "bots:\n" + house, 1))
    server = Running(config, port)
    token = server.add_author("erin")
    server.start()
    name = "erin/slow v1"
    try:
        wait_for(lambda: (r := board_row(server, "heuristic")) and r["games"] >= 3)
        wait_for(lambda: wave_begun(server.output), step=0.05)  # uploaded mid-wave
        response = server.client(token).post(
            "/api/uploads", params={"bot": "slow"}, content=tar_gz({"main.py": SLOW_BOT})
        )
        assert response.status_code == 201
        caught = wait_for(lambda: newcomer_match(server.output, name), step=0.05)
        before = finished_games(server.output)
        shown = server.client().get("/api/games", params={"limit": 1000}).json()
    finally:
        assert server.stop(signal.SIGKILL) == -signal.SIGKILL
    match_id, wave_bots, written, games = caught
    # a newcomer wave (the new bot and opponents at one table) when its check passed while the
    # wave was played, else the next full wave: on a loaded machine the check can outlast the
    # wave (tests/test_feeds.py shows the newcomer wave itself, without a race)
    assert name in wave_bots and len(wave_bots) in (3, 16), wave_bots
    assert 1 <= written < games
    assert before and all(game["id"] in before for game in shown["games"])
    server.start()
    try:
        mine = server.client(token).get("/api/uploads").json()["uploads"]
        assert [(v["name"], v["state"]) for v in mine] == [(name, "passed")]

        def newcomer_shown() -> list:
            games = server.client().get("/api/games", params={"bot": name, "limit": 100})
            if games.status_code != 200:  # (not known yet to the live view of the restart)
                return []
            return [g for g in games.json()["games"] if g["match_id"] == match_id]

        replayed = wait_for(newcomer_shown)
        # the whole match, played again from its start
        assert sorted(g["game_index"] for g in replayed) == list(range(games))
        after = finished_games(server.output)
        assert {key: after.get(key) for key in before} == before  # no finished game lost
        api = server.client().get("/api/games", params={"limit": 1000}).json()["games"]
        assert set(before) <= {game["id"] for game in api}
        wait_for(lambda: (r := board_row(server, name)) and r["games"] >= games)
    finally:
        assert server.stop() == 0
