"""The competition server attacked as a hostile author would, across routes: the real server
on loopback (``serve`` as a process), a real HTTP client (httpx), the real sandbox for the
uploaded bots' checks. Each test is an attack that once broke through."""

from __future__ import annotations

import io
import json
import os
import sys
import tarfile
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from test_server import RANDOM_BOT, Running, free_port, tar_gz, wait_for, write_config

pytestmark = pytest.mark.slow  # real processes


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    folder = tmp_path_factory.mktemp("hostile-server")
    port = free_port()
    running = Running(write_config(folder, port, max_active_bots=2), port)
    running.tokens = {  # type: ignore[attr-defined]
        name: running.add_author(name) for name in ("mallory", "carol", "probe")
    }
    running.start()
    yield running
    if running.process is not None:
        assert running.stop() == 0, running.log.read_text()


def upload(server: Running, token: str, bot: str, files: dict[str, bytes], **params: str):
    return server.client(token).post(
        "/api/uploads", params={"bot": bot, **params}, content=tar_gz(files)
    )


def test_a_command_naming_the_servers_files_is_refused(server: Running) -> None:
    """The check (``check-bot``) showed the bot the folder of the first host file its command
    named: ``python3 -c CODE <output>/server.sqlite`` read the token hashes, every author's
    reports, the secret and every upload. The output folder's path was in the API's answer."""
    token = server.tokens["mallory"]  # type: ignore[attr-defined]
    first = upload(server, token, "scout", {"main.py": RANDOM_BOT.encode()})
    assert first.status_code == 201, first.text
    # the answer showed the stored copy's host path: <output>/.uploads/<digest>/bot/main.py
    assert first.json()["command"] == ["python3", "main.py"]
    assert str(server.output) not in first.text and sys.executable not in first.text
    output = server.output.resolve()
    assert (output / "server.sqlite").exists()
    code = "import os,sys; print(os.listdir(os.path.dirname(sys.argv[1]))); sys.exit(1)"
    for target in (
        str(output / "server.sqlite"),  # absolute
        "../../../server.sqlite",  # relative to the upload's own folder
        "pyproject.toml",  # relative to the server's working directory
    ):
        if target == "pyproject.toml" and not Path(target).exists():
            continue
        command = f"python3 -c '{code}' {target}"
        response = upload(server, token, "scout", {"main.py": b"# v2\n"}, command=command)
        assert response.status_code == 400, (target, response.text)
        assert "outside the upload" in response.json()["error"]
    assert not (output / "server.sqlite").read_bytes().count(b"mallory/scout v2")


def test_limits_hold_for_uploads_sent_at_once(server: Running) -> None:
    """Each request checked ``max_active_bots`` before any was stored: six distinct bots sent
    at once were all accepted past a limit of two."""
    token = server.tokens["carol"]  # type: ignore[attr-defined]
    body = tar_gz({"main.py": RANDOM_BOT.encode()})
    started, release = threading.Barrier(6, timeout=60), threading.Event()

    def send(index: int) -> int:
        def chunks() -> Iterator[bytes]:
            release.wait(60)  # the headers are sent: the server admitted the request
            yield body

        with httpx.Client(base_url=server.url, timeout=120) as client:
            request = client.build_request(
                "POST",
                "/api/uploads",
                params={"bot": f"rush{index}"},
                headers={"Authorization": f"Bearer {token}"},
                content=chunks(),
            )
            started.wait()
            return client.send(request).status_code

    with ThreadPoolExecutor(6) as pool:
        futures = [pool.submit(send, index) for index in range(6)]
        # the bodies wait while the headers reach the server (and each request is admitted);
        # how long is only how likely the race was before the fix: with it, the limit holds
        # whatever the order
        release.wait(1.0)
        release.set()
        codes = [future.result() for future in futures]
    assert codes.count(201) <= 2, codes
    assert set(codes) <= {201, 403}, codes
    mine = server.client(token).get("/api/uploads").json()["uploads"]
    assert len({v["bot"] for v in mine}) <= 2


def test_login_from_another_site_is_refused(server: Running) -> None:
    """Login CSRF: another site's page posted its own author's token to /login, and the
    victim's browser then uploaded the victim's bot into the attacker's account."""
    token = server.tokens["mallory"]  # type: ignore[attr-defined]
    browser = server.client()
    foreign = browser.post(
        "/login",
        data={"token": token},
        headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
    )
    assert foreign.status_code == 403 and "set-cookie" not in foreign.headers
    origin_only = browser.post("/login", data={"token": token}, headers={"Origin": "http://x.y"})
    assert origin_only.status_code == 403
    own = browser.post(
        "/login",
        data={"token": token},
        headers={"Origin": server.url, "Sec-Fetch-Site": "same-origin"},
    )
    assert own.status_code == 303
    assert server.client().post("/login", data={"token": token}).status_code == 303  # a CLI


PROBE = """
import json, os, socket, sys
found = {}
try:
    with socket.create_connection(("127.0.0.1", PORT), timeout=2) as s:
        found["port"] = "connected"
except OSError as error:
    found["port"] = type(error).__name__
found["output"] = os.path.exists(OUTPUT)
found["db"] = os.path.exists(OUTPUT + "/server.sqlite")
found["uploads"] = os.path.exists(OUTPUT + "/.uploads")
try:
    found["kill1"] = os.kill(1, 0) or "sent"
except OSError as error:
    found["kill1"] = type(error).__name__
found["root"] = sorted(os.listdir("/"))
print("PROBE" + json.dumps(found), file=sys.stderr)
sys.exit(1)
"""


def test_an_uploaded_bot_sees_neither_the_server_nor_its_files(server: Running) -> None:
    """From inside the sandbox (the check of an upload): no connection to the server's port,
    no sight of the output folder, its database or the other uploads, no signal to outside."""
    token = server.tokens["probe"]  # type: ignore[attr-defined]
    first = upload(server, token, "probe", {"main.py": RANDOM_BOT.encode()})
    assert first.status_code == 201, first.text
    output = str(server.output.resolve())
    code = PROBE.replace("PORT", str(server.port)).replace("OUTPUT", repr(output))
    response = upload(server, token, "probe", {"main.py": code.encode()})
    assert response.status_code == 201, response.text
    client = server.client(token)
    url = response.json()["status_url"]
    report = wait_for(lambda: (v := client.get(url).json())["state"] == "failed" and v["report"])
    text = json.dumps(report)
    assert output not in client.get(url).text  # no host path of the organiser's
    assert "PROBE" in text, text[:2000]
    tail = next(c["output_tail"] for c in report["checks"] if "PROBE" in c["output_tail"])
    found = json.loads(tail.split("PROBE", 1)[1].splitlines()[0])
    assert found["port"] != "connected"
    assert found["output"] is False and found["db"] is False and found["uploads"] is False


def test_a_logged_out_session_cookie_is_worth_nothing(server: Running) -> None:
    """Logging out only deleted the cookie in the browser: a copy of it (a shared computer,
    a proxy's log) read the author's private pages for a week."""
    token = server.add_author("dora")
    browser = server.client()
    assert browser.post("/login", data={"token": token}).status_code == 303
    me = browser.get("/me")
    assert me.status_code == 200
    stolen = browser.cookies.get("ohseven_session")
    csrf = me.text.split('name="csrf" value="')[1].split('"')[0]
    assert browser.post("/logout", data={"csrf": csrf}).status_code == 303
    thief = server.client()
    thief.cookies.set("ohseven_session", stolen)
    assert thief.get("/me").status_code == 401
    assert thief.get("/api/uploads").status_code == 401
    again = server.client()  # logging in again works
    assert again.post("/login", data={"token": token}).status_code == 303
    assert again.get("/me").status_code == 200


def test_a_malformed_session_cookie_is_no_session(server: Running) -> None:
    """A 5,000-digit expiry (Python's limit on int conversions) or a non-ASCII digit answered
    500 and wrote a traceback to the organiser's log on every request."""
    for value in ("mallory." + "9" * 5000 + ".x", "mallory.\u00b2\u00b3.x", "a.b.c.d", "x"):
        cookie = f"ohseven_session={value}".encode("latin-1")
        for path in ("/me", "/api/uploads"):
            response = server.client().get(path, headers={"Cookie": cookie})  # type: ignore[dict-item]
            assert response.status_code == 401, (value[:20], response.status_code)


def calm(server: Running, token: str) -> None:
    """Wait until this address may send credentials again: the attacks above failed token
    and session checks on purpose, and the limiter refuses (429) for a minute after."""
    wait_for(lambda: server.client(token).get("/api/uploads").status_code != 429, step=1.0)


def test_ids_past_sqlites_integers_are_no_such_row(server: Running) -> None:
    """An id of 2**63 or more (``OverflowError`` in SQLite's binding) and a form's number of
    games of 5,000 digits or '²' (``int`` refuses them) answered 500, a traceback each in the
    organiser's log."""
    token = server.add_author("counter")
    calm(server, token)
    api = server.client(token)
    browser = server.client()
    assert browser.post("/login", data={"token": token}).status_code == 303
    huge = str(1 << 63)
    for path in (f"/api/uploads/{huge}", f"/api/unrated/{huge}", f"/api/uploads/{huge}0"):
        assert api.get(path).status_code == 404, path
    for path in (f"/me/uploads/{huge}", f"/me/unrated/{huge}"):
        assert browser.get(path).status_code == 404, path
    page = browser.get("/me/unrated")
    csrf = page.text.split('name="csrf" value="')[1].split('"')[0]
    for games in ("9" * 5000, "\u00b2", "1" * 30):
        sent = browser.post("/me/unrated", data={"csrf": csrf, "bot": "x", "games": games})
        assert sent.status_code == 400, (games[:10], sent.status_code)
    log = server.log.read_text()
    assert "OverflowError" not in log and "Exceeds the limit" not in log


def zeros_archive(files: int = 49, size: int = 2_000_000) -> bytes:
    """A bot of ``files`` files of zeros: a small body that unpacks to nearly 100 MB."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        tar.addfile(tarfile.TarInfo("main.py"), io.BytesIO(b""))
        for index in range(files):
            info = tarfile.TarInfo(f"data{index}.bin")
            info.size = size
            tar.addfile(info, io.BytesIO(bytes(size)))
    return out.getvalue()


def test_an_upload_being_unpacked_stalls_no_other_request(server: Running) -> None:
    """The upload's tree was unpacked (100 MB synced to disk: seconds) under the lock that a
    request for unrated games took in the event loop itself: every request of every client
    waited for the unpacking, and a stream of such uploads stalled the whole server."""
    token = server.add_author("unpacker")
    calm(server, token)
    uploads = server.output / ".uploads"
    body = zeros_archive()

    def unpacking() -> list[str]:
        return [
            name
            for name in os.listdir(uploads)
            if name.startswith(".tmp-") and not name.startswith(".tmp-body-")
        ]

    with ThreadPoolExecutor(1) as pool:
        sent = pool.submit(upload_body, server, token, "zeros", body)
        # the body is stored and its tree is being unpacked: a request for unrated games
        # (refused: no playing bot) and a read are answered meanwhile
        temp = wait_for(unpacking, timeout=120, step=0.01)[0]
        unrated = server.client(token).post("/api/unrated", json={"bot": "x", "games": 1})
        read = server.client().get("/api/commitment")
        still = (uploads / temp).exists()
        assert unrated.status_code == 400 and read.status_code == 200
        assert still, "the requests waited for the upload's tree to be unpacked"
        assert sent.result().status_code == 201


def upload_body(server: Running, token: str, bot: str, body: bytes) -> httpx.Response:
    with server.client(token) as client:
        return client.post("/api/uploads", params={"bot": bot}, content=body)


def test_refused_uploads_count_against_the_hourly_limit(server: Running) -> None:
    """Only stored versions counted against ``uploads_per_hour``: an archive refused once
    unpacked (100 MB written and synced, then a bad entry or command) could be sent again and
    again, as fast as the server unpacked it, keeping its disk busy for every bot."""
    token = server.add_author("refused")
    calm(server, token)
    refused = tar_gz({"a.py": b"", "b.py": b""})  # no single .py file and no command
    for _ in range(10):  # uploads_per_hour: 10 (the default)
        response = upload_body(server, token, "twice", refused)
        assert response.status_code == 400 and "--command" in response.json()["error"]
    good = upload_body(server, token, "good", tar_gz({"main.py": RANDOM_BOT.encode()}))
    assert good.status_code == 429, good.text
    assert "uploads_per_hour" in good.json()["error"]


def test_identical_uploads_at_once_share_one_copy(server: Running) -> None:
    """Trees are unpacked outside the store lock: two uploads of the same content unpacked
    at once both rename to the same digest's folder, and the second must not fail."""
    tokens = [server.add_author(name) for name in ("twin-a", "twin-b")]
    calm(server, tokens[0])
    body = zeros_archive(files=8)
    start = threading.Barrier(4, timeout=60)

    def send(index: int) -> httpx.Response:
        start.wait()
        return upload_body(server, tokens[index % 2], "twin", body)

    with ThreadPoolExecutor(4) as pool:
        responses = list(pool.map(send, range(4)))
    assert [r.status_code for r in responses] == [201] * 4, [r.text for r in responses]
    assert len({r.json()["digest"] for r in responses}) == 1
    uploads = server.output / ".uploads"
    assert not [name for name in os.listdir(uploads) if name.startswith(".tmp-")]
