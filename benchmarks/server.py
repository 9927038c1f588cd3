"""The competition server under load: a real ``ohseven-referee serve`` on loopback, read and
written by real HTTP clients while its league plays on every core.

One run prints, each against its goal (issue 26):

- **API reads** (``/api/leaderboard``, ``/api/bots/{name}``, ``/api/games?...``, a mix) at
  ``--rate`` requests/s, open loop (each request's time counts from when it was due, so a
  stalled server is not hidden by a client that waits): p50/p99, first with the league complete
  (nothing playing: the baseline, same server, same data), then while it plays on every core;
  goal p99 < 100 ms.
- **Freshness**: for every match the league finishes while it is watched, the time from its
  ``finished`` stamp in the database to the API (its games in ``/api/games``, the leaderboard's
  ``games_played`` counting them) and the pages (``/games.html``) showing it; a wave ends with
  its last match, so the wave's end is among these; goal < 5 s.
- **Upload to first game**: a passing bot uploaded through ``POST /api/uploads`` by a real
  author: the time its check takes, then the time from the check's pass to its first game in
  ``/api/games``; goal < 60 s after the check passes.
- **50 concurrent clients**: ``--clients`` uploaders and readers at once (half each): every
  request must succeed; their latencies.
- **CPU share**: the server process's CPU (HTTP, live view, the run loop) against that of its
  whole process tree (the workers and the bots they play) while the league plays.

The database (``--bots`` bots, ``--games`` finished games) is built by a shortcut through the
real store code: the league's waves, matches and games are written with ``Store.add_wave``,
``start_match``, ``add_game`` and ``finish_match`` as the league writes them, from the league's
own match ids and deals (``schedule.league_match``), but each game's outcome is a real game
played once by the rules engine with random moves (``benchmarks/site.py``'s templates) with the
match's bots in its seats, instead of a game played by bot processes. The server then resumes
that league as it would its own: the next waves are drawn and played by real sandboxed bots.
The database is written once and kept (``--cache``): the next runs copy it.

    python benchmarks/server.py [--bots 1000] [--games 100000] [--rate 100] [--seconds 10]
                                [--clients 50] [--watch 60] [--first-game-wait 60] [--keep DIR]
                                [--cache DIR | --no-cache]

benchmarks/server.md quotes its figures.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib.util
import inspect
import io
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = ROOT / "example_bots" / "random_bot.py"
TABLE = 4


def _site_benchmark() -> Any:
    """``benchmarks/site.py`` (its real games, played once by the rules engine)."""
    spec = importlib.util.spec_from_file_location(
        "site_benchmark", Path(__file__).with_name("site.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- the league


def write_config(folder: Path, bots: int, budget: int, port: int, workers: int) -> Path:
    """The competition's YAML: ``bots`` house bots (the random example bot, each its own
    entry), tables of 4, a budget of ``budget`` games."""
    lines = [
        "name: serverbench",
        "game: oh-seven",
        f"table_size: {TABLE}",
        "seed: 20261204",
        f"workers: {workers}",
        f"output: {folder / 'out'}",
        "bots:",
        *(f"  - {{name: b{i:04d}, file: {RANDOM_BOT}}}" for i in range(bots)),
        "schedule:",
        "  type: league",
        f"  games: {budget}",
        "time_control: {move_seconds: 1.0, bank_seconds: 10.0}",
        "sandbox: {mode: bwrap}",
        "server:",
        f"  listen: 127.0.0.1:{port}",
        "  max_active_bots: 100",
        "  uploads_per_hour: 1000",
        "  check_queue: 200",
    ]
    path = folder / "competition.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def build_store(config_path: Path, games: int, seed: int) -> tuple[int, float]:
    """Write ``games`` finished games of the league of ``config_path`` through the store (see
    the module): whole waves of tables of 4, every bot once a wave. (games, seconds)."""
    from ohseven.referee.plan.loader import load_config
    from ohseven.referee.plan.schedule import SchedulePlan, league_match
    from ohseven.referee.records import GameRecord
    from ohseven.referee.results.store import Store
    from ohseven.referee.secret import fingerprint
    from ohseven.referee.tournament.run import tournament_secret

    started = time.monotonic()
    config = load_config(str(config_path))
    output = Path(config.output)
    secret = tournament_secret(config, output)
    templates = _site_benchmark().play_templates(20, [TABLE], seed)[TABLE]
    rng = random.Random(seed)
    names = list(config.bot_names)
    schedule = SchedulePlan.of(config)
    written = 0
    with Store.open(output) as store:
        store.setup(
            digest=config.digest,
            config=config.document,
            secret_fingerprint=fingerprint(secret),
        )
        store.set_meta({"bot_fingerprints": json.dumps(dict(config.bot_fingerprints))})
        wave = 0
        index, first_game = store.next_match_index()
        while written < games:
            order = rng.sample(names, len(names))
            tables = [
                tuple(sorted(order[at : at + TABLE]))
                for at in range(0, len(order) - TABLE + 1, TABLE)
            ]
            matches = []
            for number, table in enumerate(tables):
                match = league_match(schedule, secret, index, first_game, wave, number, table)
                if written + match.games > games and matches:
                    break
                matches.append(match)
                index += 1
                first_game += match.games
                written += match.games
            store.add_wave(
                wave,
                names,
                [(m.index, m.spec.match_id, m.bot_names, m.first_game, m.games) for m in matches],
            )
            for match in matches:
                store.start_match(match.index)
                for game_index, (seating, deal) in enumerate(
                    zip(match.spec.seatings, match.spec.seeds, strict=True)
                ):
                    template = rng.choice(templates)
                    seats = tuple(match.bot_names[bot] for bot in seating)
                    record = GameRecord(
                        match_id=match.spec.match_id,
                        game_index=game_index,
                        seed=deal,
                        seats=seats,
                        totals=tuple(template["totals"]),
                        ranks=tuple(template["ranks"]),
                        stats=json.loads(template["stats"]),
                        seconds=0.5,
                    )
                    store.add_game(match.first_game + game_index, match.index, record)
                store.finish_match(match.index, {})
            wave += 1
    return written, time.monotonic() - started


def prepared_store(
    config_path: Path, games: int, seed: int, cache: Path | None
) -> tuple[int, float, str]:
    """The database of :func:`build_store` in the league's output folder: copied from
    ``cache`` when an earlier run left one made by this code with these arguments (the store's
    schema, this module's and ``site.py``'s source, the configuration's digest and the bots'
    fingerprints that a resumed league checks, the games, the seed), else built
    (and kept there). (games, seconds, how it was made)."""
    from ohseven.referee.plan.loader import load_config
    from ohseven.referee.results.store import DB_NAME, SCHEMA_VERSION

    started = time.monotonic()
    config = load_config(str(config_path))
    output = Path(config.output)
    if cache is None:
        written, seconds = build_store(config_path, games, seed)
        return written, seconds, "written through the store"
    key = hashlib.sha256(
        "\0".join(
            [
                str(SCHEMA_VERSION),
                inspect.getsource(build_store),
                inspect.getsource(write_config),
                Path(__file__).with_name("site.py").read_text(encoding="utf-8"),
                config.digest,  # (the fingerprints the league checks on resuming)
                json.dumps(sorted(config.bot_fingerprints)),
                str(games),
                str(seed),
            ]
        ).encode()
    ).hexdigest()[:16]
    kept = cache / f"store-{len(config.bot_names)}-{games}-{seed}-{key}.sqlite"
    if not kept.exists():
        written, seconds = build_store(config_path, games, seed)
        cache.mkdir(parents=True, exist_ok=True)
        partial = kept.with_suffix(".partial")
        shutil.copyfile(output / DB_NAME, partial)
        partial.replace(kept)  # (whole or not at all: a run stopped while copying leaves none)
        return written, seconds, f"written through the store, kept in {kept}"
    output.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(kept, output / DB_NAME)
    return games, time.monotonic() - started, f"copied from {kept}, written by an earlier run"


# --------------------------------------------------------------------------- the server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def referee(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "ohseven.referee.cli", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"ohseven-referee {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done.stdout


class Serving:
    """A real ``ohseven-referee serve`` process."""

    def __init__(self, config: Path, port: int, log: Path) -> None:
        self.url, self.log = f"http://127.0.0.1:{port}", log
        started = time.monotonic()
        with open(log, "a") as handle:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "ohseven.referee.cli", "serve", str(config)],
                stdout=subprocess.PIPE,
                stderr=handle,
                text=True,
            )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("serving"):
            raise SystemExit(f"serve did not start: {line!r}\n{log.read_text()[-3000:]}")
        self.listening = time.monotonic() - started
        self.psutil = psutil.Process(self.process.pid)

    def ready(self, games: int, timeout: float = 1800) -> float:
        """Wait until the API shows ``games`` games and a leaderboard: seconds since start."""
        started = time.monotonic() - self.listening
        deadline = time.monotonic() + timeout
        with httpx.Client(base_url=self.url, timeout=30) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise SystemExit(f"serve exited: {self.process.returncode}; see {self.log}")
                try:
                    board = client.get("/api/leaderboard")
                    total = client.get("/api/games", params={"limit": 1}).json().get("total", 0)
                except httpx.HTTPError:  # (busy starting)
                    time.sleep(0.5)
                    continue
                if board.status_code == 200 and total >= games:
                    return time.monotonic() - started
                time.sleep(0.5)
        raise SystemExit(f"the server did not show {games} games within {timeout} s")

    def settle(self, share: float, timeout: float = 600) -> float:
        """Wait until the server process has used less than ``share`` of a core over each of 3
        seconds in a row (its start-up work done: the whole database read, the first live
        leaderboard made): seconds waited."""
        started = time.monotonic()
        quiet, last = 0, self.cpu()[0]
        while quiet < 3:
            if time.monotonic() - started > timeout:
                raise SystemExit(f"the server did not settle within {timeout} s")
            time.sleep(1.0)
            now = self.cpu()[0]
            quiet = quiet + 1 if now - last < share else 0
            last = now
        return time.monotonic() - started

    def cpu(self) -> tuple[float, float]:
        """CPU seconds so far: (the server process, its whole tree: workers, bots)."""
        own = self.psutil.cpu_times()
        tree = own.user + own.system + own.children_user + own.children_system
        for child in self.psutil.children(recursive=True):
            try:
                times = child.cpu_times()
            except psutil.Error:
                continue
            tree += times.user + times.system + times.children_user + times.children_system
        return own.user + own.system, tree

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# --------------------------------------------------------------------------- load


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


class Connection:
    """A kept-alive HTTP/1.1 connection (asyncio streams of the stdlib): a lean client, so that
    the load generator, on the same cores, does not cost more than the server it measures
    (httpx spends tens of milliseconds of CPU on a 1 MB leaderboard)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, target: str) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        self.writer.write(f"GET {target} HTTP/1.1\r\nHost: {self.host}\r\n\r\n".encode())
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = 0
        close = False
        for line in head.split(b"\r\n")[1:]:
            key, _, value = line.partition(b":")
            if key.strip().lower() == b"content-length":
                length = int(value)
            elif key.strip().lower() == b"connection" and value.strip().lower() == b"close":
                close = True
        body = await self.reader.readexactly(length)
        if close:
            self.close()
        return status, body

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def read_load(url: str, rate: float, seconds: float, bots: list[str], games: int) -> dict:
    """GETs of the three API routes in turn at ``rate`` a second for ``seconds``, open loop:
    each request's latency counts from when it was due (a request waits for a free connection
    of 64 kept alive, as a crowd of browsers would not, so a stall shows). Returns the
    latencies (s) by route and the errors."""
    host, port = url.removeprefix("http://").split(":")
    rng = random.Random(7)
    latencies: dict[str, list[float]] = {"leaderboard": [], "bot": [], "games": []}
    errors: list[str] = []
    start = time.monotonic() + 0.2
    count = int(rate * seconds)
    kinds = ("leaderboard", "bot", "games")
    due: asyncio.Queue[tuple[str, str, float]] = asyncio.Queue()
    for n in range(count):
        kind = kinds[n % 3]
        if kind == "leaderboard":
            target = "/api/leaderboard"
        elif kind == "bot":
            target = f"/api/bots/{rng.choice(bots)}"
        else:
            target = f"/api/games?bot={rng.choice(bots)}&after={rng.randrange(max(1, games))}"
        due.put_nowait((kind, target, start + n / rate))

    async def worker() -> None:
        connection = Connection(host, int(port))
        try:
            while not due.empty():
                kind, target, when = due.get_nowait()
                delay = when - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                try:
                    status, _ = await connection.get(target)
                    if status != 200:
                        errors.append(f"{target.split('?')[0]}: {status}")
                except (OSError, asyncio.IncompleteReadError, ValueError) as error:
                    errors.append(f"{target.split('?')[0]}: {type(error).__name__}")
                    connection.close()
                latencies[kind].append(time.monotonic() - when)
        finally:
            connection.close()

    await asyncio.gather(*(worker() for _ in range(64)))
    return {"latencies": latencies, "errors": errors}


def report_reads(label: str, result: dict, baseline: dict | None) -> None:
    every = [value for values in result["latencies"].values() for value in values]
    p50, p99 = percentile(every, 0.5), percentile(every, 0.99)
    line = f"  {label:<34} p50 {1000 * p50:7.1f} ms  p99 {1000 * p99:7.1f} ms"
    if baseline is not None:
        base = [value for values in baseline["latencies"].values() for value in values]
        line += f"  (x{p50 / percentile(base, 0.5):.2f} / x{p99 / percentile(base, 0.99):.2f} "
        line += "of the baseline)"
    verdict = "meets" if p99 < 0.1 else "MISSES"
    print(f"{line}  goal p99 < 100 ms: {verdict}; {len(result['errors'])} errors")
    for kind, values in result["latencies"].items():
        print(
            f"    {kind:<12} n={len(values):5d} p50 {1000 * percentile(values, 0.5):7.1f} ms "
            f"p99 {1000 * percentile(values, 0.99):7.1f} ms max {1000 * max(values):7.1f} ms"
        )
    if result["errors"]:
        print(f"    errors: {sorted(set(result['errors']))[:5]}")


class Freshness:
    """Watches the database for matches that finish and the API and pages for them: for each,
    the seconds from its ``finished`` stamp to its games in ``/api/games``, to the
    leaderboard's ``games_played`` counting them, and to its game on its first bot's page."""

    def __init__(self, url: str, database: Path, bots: int) -> None:
        self.url, self.database = url, database
        self.bots = bots  # a wave of at least half of them is a full wave, else a newcomer wave
        self.since = time.time()
        self.lags: dict[str, list[float]] = {"api games": [], "leaderboard": [], "bot page": []}
        self.wave_ends: list[tuple[str, dict[str, float]]] = []
        self.pending: dict[int, dict[str, Any]] = {}
        self.seen: set[int] = set()
        self.stop = False

    def run(self, seconds: float) -> None:
        from ohseven.referee.results.archive import game_id, slugify

        deadline = time.monotonic() + seconds
        db = sqlite3.connect(f"file:{self.database}?mode=ro", uri=True, timeout=30)
        last_of_wave: dict[int, str] = {}  # a wave's last match -> "full" or "newcomer"

        def waves() -> None:
            for first, count, bots in db.execute("SELECT first_match, matches, bots FROM waves"):
                full = len(json.loads(bots)) >= self.bots / 2
                last_of_wave[first + count - 1] = "full" if full else "newcomer"

        waves()
        with httpx.Client(base_url=self.url, timeout=30) as client:
            while not self.stop and time.monotonic() < deadline:
                for index, match_id, finished, bots, first_game in db.execute(
                    "SELECT match_index, match_id, finished, bots, first_game FROM matches "
                    "WHERE status = 'done' AND finished > ?",
                    (self.since,),
                ).fetchall():
                    if index in self.seen:
                        continue
                    self.seen.add(index)
                    (before,) = db.execute(
                        "SELECT COALESCE(SUM(games), 0) FROM matches WHERE status = 'done' "
                        "AND finished <= ?",
                        (finished,),
                    ).fetchone()
                    self.pending[index] = {
                        "finished": finished,
                        "match_id": match_id,
                        "first_game": first_game,
                        "games_before": before,
                        "page": f"/bots/{slugify(json.loads(bots)[0])}",
                        "game": game_id(match_id, 0),
                        "wave_end": last_of_wave.get(index),
                        "lags": {},
                    }
                    waves()
                if self.pending:
                    board = client.get("/api/leaderboard")
                    played = board.json().get("games_played", 0) if board.is_success else 0
                for index, match in list(self.pending.items()):
                    lags = match["lags"]
                    now = time.time()
                    if "api games" not in lags:
                        shown = client.get(
                            "/api/games", params={"after": match["first_game"] - 1, "limit": 1}
                        ).json()["games"]
                        if shown and shown[0]["match_id"] == match["match_id"]:
                            lags["api games"] = now - match["finished"]
                    if "leaderboard" not in lags and played >= match["games_before"]:
                        lags["leaderboard"] = now - match["finished"]
                    if "bot page" not in lags:
                        page = client.get(match["page"]).text
                        if f'data-game="{match["game"]}"' in page:
                            lags["bot page"] = now - match["finished"]
                    if len(lags) == 3:
                        for key, value in lags.items():
                            self.lags[key].append(value)
                        if match["wave_end"]:
                            self.wave_ends.append((match["wave_end"], lags))
                        del self.pending[index]
                time.sleep(0.2)
        db.close()

    def report(self) -> None:
        done = len(self.lags["api games"])
        print(f"  {done} matches finished and shown while watched ({len(self.pending)} not yet)")
        for key, values in self.lags.items():
            if not values:
                print(f"    {key:<12} no match finished while watched")
                continue
            worst = max(values)
            verdict = "meets" if worst < 5 else "MISSES"
            print(
                f"    {key:<12} p50 {percentile(values, 0.5):5.2f} s  max {worst:5.2f} s  "
                f"goal < 5 s: {verdict}"
            )
        for kind in ("full", "newcomer"):
            ends = [lags for wave, lags in self.wave_ends if wave == kind]
            label = {"full": "a full wave's end", "newcomer": "a newcomer wave's end"}[kind]
            for lags in ends:
                worst = max(lags.values())
                verdict = "meets" if worst < 5 else "MISSES"
                print(
                    f"    {label}: "
                    + ", ".join(f"{k} {v:.2f} s" for k, v in lags.items())
                    + f"  goal < 5 s: {verdict}"
                )
            if not ends:
                print(f"    ({label.replace('a ', 'no ', 1)} while watched)")


# --------------------------------------------------------------------------- authors


def bot_archive() -> bytes:
    out = io.BytesIO()
    data = RANDOM_BOT.read_bytes()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo("main.py")
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def upload_to_first_game(url: str, token: str, wait: float) -> dict[str, float | None]:
    """Upload a passing bot, follow its check, then wait for its first game."""
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        started = time.monotonic()
        response = client.post("/api/uploads", params={"bot": "fresh"}, content=bot_archive())
        if response.status_code != 201:
            raise SystemExit(f"upload refused: {response.status_code} {response.text}")
        version = response.json()
        while True:
            state = client.get(f"/api/uploads/{version['id']}").json()["state"]
            if state in ("passed", "failed"):
                break
            time.sleep(0.2)
        if state != "passed":
            raise SystemExit(f"the uploaded bot failed its check: {version}")
        passed = time.monotonic()
        name = f"{version['author']}/{version['bot']} v{version['version']}"
        first = None
        while time.monotonic() < passed + wait:
            found = client.get("/api/games", params={"bot": name, "limit": 1})
            if found.status_code == 200 and found.json()["total"] > 0:
                first = time.monotonic() - passed
                break
            time.sleep(0.5)
    return {"check": passed - started, "first_game": first}


async def burst(url: str, token: str, clients: int, bots: list[str]) -> dict[str, list]:
    """``clients`` clients at once, each on its own connection: half upload a bot (the same
    program under its own name: its check is remembered), half read a page of the API."""
    headers = {"Authorization": f"Bearer {token}"}
    archive = bot_archive()
    result: dict[str, list] = {"upload": [], "read": [], "errors": []}

    async def one(number: int) -> None:
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120) as client:
            started = time.monotonic()
            try:
                if number % 2 == 0:
                    response = await client.post(
                        "/api/uploads", params={"bot": f"burst{number:02d}"}, content=archive
                    )
                    kind, expected = "upload", 201
                else:
                    bot = bots[number % len(bots)]
                    path = ("/api/leaderboard", f"/api/bots/{bot}", "/api/games")[number % 3]
                    response = await client.get(path)
                    kind, expected = "read", 200
                if response.status_code != expected:
                    result["errors"].append(f"{kind}: {response.status_code} {response.text[:80]}")
                result[kind].append(time.monotonic() - started)
            except httpx.HTTPError as error:
                result["errors"].append(f"{type(error).__name__}: {error}")

    await asyncio.gather(*(one(number) for number in range(clients)))
    return result


# --------------------------------------------------------------------------- the run


def cpu_line(label: str, server: float, tree: float, wall: float) -> None:
    cores = os.cpu_count() or 1
    print(
        f"  {label:<34} server {server:6.1f} s CPU = {100 * server / max(tree, 1e-9):5.1f}% "
        f"of its tree's {tree:6.1f} s ({100 * server / (wall * cores):4.1f}% of {cores} cores, "
        f"tree {100 * tree / (wall * cores):4.0f}%)"
    )


def bench(args: argparse.Namespace, folder: Path) -> None:
    cores = os.cpu_count() or 1
    workers = args.workers or cores
    port = free_port()
    log = folder / "serve.log"
    config = write_config(folder, args.bots, args.games, port, workers)
    cache = None if args.no_cache else Path(args.cache)
    games, seconds, how = prepared_store(config, args.games, args.seed, cache)
    print(
        f"{args.bots} bots, {games} games in {seconds:.1f} s: {how} (real games' outcomes, "
        "the league's own match ids and deals; see the module)"
    )
    token = referee("authors", "add", "bench", str(config)).strip()
    names = [f"b{i:04d}" for i in range(args.bots)]

    # 1. the baseline: the same server and data, the league complete (nothing plays)
    server = Serving(config, port, log)
    try:
        ready = server.ready(games)
        settled = server.settle(0.2)
        print(
            f"serve (league complete): listening after {server.listening:.1f} s, the API "
            f"shows every game after {ready:.1f} s, settled {settled:.1f} s later"
        )
        cpu0, wall0 = server.cpu(), time.monotonic()
        baseline = asyncio.run(read_load(server.url, args.rate, args.seconds, names, games))
        cpu1, wall1 = server.cpu(), time.monotonic()
    finally:
        server.stop()
    print(f"API reads at {args.rate:g}/s for {args.seconds:g} s (open loop):")
    report_reads("baseline (nothing playing)", baseline, None)
    base_cpu = (cpu1[0] - cpu0[0], cpu1[1] - cpu0[1], wall1 - wall0)

    # 2. the league plays on: a budget far beyond the games played
    write_config(folder, args.bots, args.games + 10_000_000, port, workers)
    server = Serving(config, port, log)
    try:
        ready = server.ready(games)
        print(
            f"serve (league playing, {workers} workers): listening after "
            f"{server.listening:.1f} s, the API shows every game after {ready:.1f} s"
        )
        deadline = time.monotonic() + 300
        while len(server.psutil.children(recursive=True)) < workers + 1:  # workers and bots
            if time.monotonic() > deadline:
                raise SystemExit("the league did not start playing within 300 s")
            time.sleep(0.5)
        settled = server.settle(0.6)
        print(f"  playing; the server process settled (< 60% of a core) {settled:.1f} s later")
        watcher = Freshness(server.url, Path(folder / "out" / "tournament.sqlite"), args.bots)
        watch = threading.Thread(target=watcher.run, args=(args.watch,), daemon=True)
        watch.start()
        upload = upload_to_first_game(server.url, token, 0)  # the check only, first
        cpu0, wall0 = server.cpu(), time.monotonic()
        loaded = asyncio.run(read_load(server.url, args.rate, args.seconds, names, games))
        cpu1, wall1 = server.cpu(), time.monotonic()
        report_reads("while the league plays", loaded, baseline)
        crowd = asyncio.run(burst(server.url, token, args.clients, names))
        first = upload_to_first_game(server.url, token, args.first_game_wait)
        watch.join(timeout=max(0.0, args.watch - (time.monotonic() - wall0)))
        watcher.stop = True
        watch.join()
    finally:
        server.stop()
    print("CPU while reading (the server process: HTTP, live view, the league's run loop):")
    cpu_line("baseline (nothing playing)", *base_cpu)
    cpu_line("while the league plays", cpu1[0] - cpu0[0], cpu1[1] - cpu0[1], wall1 - wall0)
    print(f"{args.clients} clients at once (half upload, half read), each its own connection:")
    for kind in ("upload", "read"):
        values = crowd[kind]
        print(
            f"  {kind:<8} {len(values)} done: p50 {percentile(values, 0.5):.2f} s, "
            f"max {max(values):.2f} s"
        )
    verdict = "all succeeded" if not crowd["errors"] else f"{len(crowd['errors'])} FAILED"
    print(f"  {verdict}" + (f": {crowd['errors'][:3]}" if crowd["errors"] else ""))
    print("Upload to first game (a passing bot, uploaded through the API):")
    print(f"  its check: {upload['check']:.1f} s (first upload), {first['check']:.1f} s (again)")
    if first["first_game"] is None:
        print(
            f"  first game: not within {args.first_game_wait:g} s after its check passed "
            "(goal < 60 s: MISSES)"
        )
    else:
        verdict = "meets" if first["first_game"] < 60 else "MISSES"
        print(
            f"  first game {first['first_game']:.1f} s after its check passed "
            f"(goal < 60 s: {verdict})"
        )
    print("From a match's end (a wave ends with its last match) to the API and pages:")
    watcher.report()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=1000, help="house bots (default 1000)")
    parser.add_argument("--games", type=int, default=100_000, help="games in the database")
    parser.add_argument("--rate", type=float, default=100.0, help="API reads a second")
    parser.add_argument("--seconds", type=float, default=10.0, help="of reads, each phase")
    parser.add_argument("--clients", type=int, default=50, help="at once (half upload)")
    parser.add_argument("--watch", type=float, default=60.0, help="seconds of freshness watch")
    parser.add_argument(
        "--first-game-wait", type=float, default=60.0, help="seconds to wait for the new bot"
    )
    parser.add_argument("--workers", type=int, default=None, help="(default: every core)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", help="work in this folder and keep it")
    parser.add_argument(
        "--cache",
        default=str(Path(tempfile.gettempdir()) / "ohseven-serverbench"),
        help="keep the prepared database here for the next run (default: in the temp folder)",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="write the database again, keep no copy"
    )
    args = parser.parse_args()
    if args.keep:
        folder = Path(args.keep).resolve()
        folder.mkdir(parents=True, exist_ok=True)
        bench(args, folder)
        return
    with tempfile.TemporaryDirectory(prefix="serverbench-") as name:
        bench(args, Path(name))


if __name__ == "__main__":
    main()
