"""Referee time per decision against the transport's floor.

(a) the floor: a msgpack request of realistic size (a play request with a few events and a
legal list) sent over ROUTER/DEALER on ipc to a second Python process that decodes it, picks
a legal card and replies; the round trip is timed in the first process.
(b) a real ``play_match`` of 4 random bots (Oh-Seven), unsandboxed and in bwrap: the games'
wall time (process start-up excluded) divided by the decisions played.

Run: ``python benchmarks/protocol.py [--round-trips N] [--games N] [--bot PATH]``. By default
the bots of (b) are this file run as a lean bot that does exactly the floor's work per request,
so the difference between (b) and (a) is the referee's own time; ``--bot`` measures a real bot
(the SDK's ``example_bots/random_bot.py``, say) and then includes that bot's thinking.
The goal is referee time per decision <= 1.3x the floor.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import shutil
import sys
import tempfile
import time

import msgpack
import zmq
from ohseven.referee.match import play_match
from ohseven.referee.records import BotSpec, MatchSpec, TimeControl
from ohseven.referee.replay import load_replay
from ohseven.referee.rules import Rules
from ohseven.referee.sandbox import SandboxConfig, SandboxError, check_sandbox

REQUEST = {
    "type": "request",
    "id": 0,
    "kind": "play",
    "events": [
        {"type": "play", "seat": 2, "card": "4D"},
        {"type": "play", "seat": 3, "card": "6D"},
        {"type": "trick", "leader": 2, "cards": ["4D", "6D", "1D", "7D"], "winner": 1},
        {"type": "play", "seat": 1, "card": "5H"},
    ],
    "legal": ["3H", "7H"],
    "count": 0,
    "time_ms": 1000,
    "bank_ms": 10000,
}


def _echo(endpoint: str) -> None:
    sock = zmq.Context().socket(zmq.DEALER)
    sock.connect(endpoint)
    rng = random.Random(1)
    sock.send(b"ready")
    while True:
        message = msgpack.unpackb(sock.recv())
        if message["type"] == "shutdown":
            return
        move = rng.choice(message["legal"])
        sock.send(msgpack.packb({"type": "move", "id": message["id"], "move": move}))


def lean_bot() -> int:
    """A bot doing exactly the floor's work per request (unpack, pick, pack): run by (b)."""
    sock = zmq.Context().socket(zmq.DEALER)
    sock.connect(os.environ["OHSEVEN_ENDPOINT"])
    sock.send(
        msgpack.packb({"type": "hello", "protocol": 1, "secret": os.environ["OHSEVEN_SECRET"]})
    )
    rng = random.Random(1)
    while True:
        message = msgpack.unpackb(sock.recv())
        kind = message["type"]
        if kind == "shutdown":
            return 0
        if kind != "request":
            continue
        legal = message["legal"]
        move = rng.sample(legal, message["count"]) if message["count"] else rng.choice(legal)
        sock.send(msgpack.packb({"type": "move", "id": message["id"], "move": move}))


def floor(round_trips: int) -> float:
    """Seconds per round trip of the bare transport with msgpack on both sides."""
    directory = tempfile.mkdtemp(prefix="ohseven-bench-")
    endpoint = f"ipc://{directory}/s"
    context = zmq.Context()
    sock = context.socket(zmq.ROUTER)
    sock.bind(endpoint)
    child = multiprocessing.get_context("spawn").Process(target=_echo, args=(endpoint,))
    child.start()
    rid, _ = sock.recv_multipart()
    request = dict(REQUEST)
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for i in range(round_trips):
            request["id"] = i + 1
            sock.send_multipart([rid, msgpack.packb(request)])
            _, reply = sock.recv_multipart()
            msgpack.unpackb(reply)
        best = min(best, (time.perf_counter() - started) / round_trips)
    sock.send_multipart([rid, msgpack.packb({"type": "shutdown"})])
    child.join(5)
    sock.close(0)
    context.term()
    shutil.rmtree(directory, ignore_errors=True)
    return best


def match(bot: tuple[str, ...], games: int, mode: str) -> tuple[float, int]:
    """Seconds per decision in a real match of 4 copies of ``bot``, and the decisions."""
    replays = tempfile.mkdtemp(prefix="ohseven-bench-replays-")
    spec = MatchSpec(
        match_id="bench",
        rules=Rules.make("oh-seven"),
        bots=tuple(BotSpec(f"bot{i}", (sys.executable, *bot)) for i in range(4)),
        seatings=tuple(tuple((s + g) % 4 for s in range(4)) for g in range(games)),
        seeds=tuple(range(games)),
        time_control=TimeControl(move_seconds=5, bank_seconds=10),
    )
    result = play_match(spec, sandbox=SandboxConfig(mode=mode), replay_dir=replays)
    seconds = sum(record.seconds for record in result.games)
    decisions = sum(len(load_replay(r.replay_path)["moves"]) for r in result.games)
    faults = sum(len(r.faults) for r in result.games)
    shutil.rmtree(replays, ignore_errors=True)
    if faults:
        raise SystemExit(f"{faults} faults in the benchmark match: {result.games[0].faults}")
    return seconds / decisions, decisions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--round-trips", type=int, default=5000)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument(
        "--bot",
        help="a Python bot file for (b) (default: a lean bot doing exactly the floor's work)",
    )
    args = parser.parse_args()
    bot = (args.bot,) if args.bot else (os.path.abspath(__file__), "--lean-bot")
    base = floor(args.round_trips)
    print(f"floor: msgpack round trip over ROUTER/DEALER ipc   {base * 1e6:8.1f} us")
    for mode in ("unsandboxed", "bwrap"):
        try:
            check_sandbox(SandboxConfig(mode=mode))
        except SandboxError as error:
            print(f"play_match {mode:<12} skipped: {error}")
            continue
        per, decisions = match(bot, args.games, mode)
        print(
            f"play_match {mode:<12} per decision ({decisions} decisions) "
            f"{per * 1e6:8.1f} us  ratio {per / base:5.2f}x floor"
        )
    return 0


if __name__ == "__main__":
    sys.exit(lean_bot() if sys.argv[1:] == ["--lean-bot"] else main())
