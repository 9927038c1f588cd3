"""Referee time per decision against the transport's floor.

(a) the floor: a msgpack request of realistic size (a play request with a few events and a
legal list) sent over ROUTER/DEALER on ipc to a second Python process that decodes it, picks
a legal card and replies; the round trip is timed in the first process. The ``4 echoes`` row
(information only) sends to four such processes in turn, as a match of four bots does: each
wakes a process that slept through the three other decisions.
(b) a real ``play_match`` of 4 bots (Oh-Seven), unsandboxed and in bwrap: the games' wall time
(``GameRecord.seconds``: dealing, every request and reply, the statistics; the bots' start-up
is excluded) divided by the decisions played (simultaneous bids count one decision per seat).
The goal row is 4 copies of the SDK's random bot (``example_bots/random_bot.py``); the
``lean`` row runs this file as a bot that does exactly the floor's work per request (unpack,
pick, pack, no SDK), so the difference between it and the floor is the referee's own time.
Those rows run with the default ``ponder: false`` (each bot frozen from its reply to its next
request: a freeze and a thaw per decision); the ``ponder on`` rows are the same matches
without freezing, in the same repeats, so the difference is what freezing costs per decision.
(c) ``cgroup set-up + teardown``: creating a bot's cgroup with its limits and removing it
(``cgroups.BotCgroup.create`` then ``remove``, no process in it), the mean of 200.

Every row is measured ``--repeat`` times, interleaved, one run each (the floor's run has about
as many round trips as the match has decisions), and the best (lowest) value of each row is
printed, and the ratios of those: another load on the machine only ever slows a run down, and
every row gets the same number of chances at a quiet moment. The ``paired`` column is a second
view of the same runs: each run's ratio to the floor run of its own repeat (measured seconds
apart, so a slow spell of the machine touches both), the median over the repeats.
The ``vs 4 echoes`` column is each run's ratio to the ``floor, 4 echoes`` run of its own
repeat, the median over the repeats: the goal is the random bot in bwrap <= 1.3x there (a
match of four bots wakes a process that slept through three decisions, as that floor does).

``--code DIR`` (repeatable) adds the goal rows of another checkout, in the same repeats,
interleaved: each is a child process run with ``DIR/.venv/bin/python`` (that tree's editable
install: its referee, SDK and random bot), so two versions are compared on the same machine
at the same moments.

Run: ``python benchmarks/protocol.py [--round-trips N] [--games N] [--repeat N] [--bot PATH]
[--code DIR]`` (``--bot``: another Python bot file for the goal row).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import msgpack
import zmq

# The referee is imported by the functions that need it: this file is also the lean bot, run
# in the sandbox, where an editable install shows a bot the SDK and the core, not the referee.

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


def _echo(endpoint: str, work: float = 0.0) -> None:
    sock = zmq.Context().socket(zmq.DEALER)
    sock.connect(endpoint)
    rng = random.Random(1)
    sock.send(b"ready")
    while True:
        message = msgpack.unpackb(sock.recv())
        if message["type"] == "shutdown":
            return
        reply = {"type": "move", "id": message["id"], "move": rng.choice(message["legal"])}
        if work:  # a thinking peer: spin ``work`` CPU seconds and say how long it took
            began, end = time.monotonic(), time.thread_time() + work
            while time.thread_time() < end:
                pass
            reply["thought"] = time.monotonic() - began
        sock.send(msgpack.packb(reply))


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


def floor(round_trips: int, echoes: int = 1, work: float = 0.0) -> float:
    """Seconds per round trip of the bare transport with msgpack on both sides, to ``echoes``
    processes in turn (one run: like every row, it gets one chance per ``--repeat``). With
    ``work``, each peer thinks that many CPU seconds before it answers, and the time it
    thought is not counted: the transport's floor for a bot that thinks (each answer wakes a
    referee that slept through the thinking; benchmarks/tourney.py prints it)."""
    directory = tempfile.mkdtemp(prefix="ohseven-bench-")
    endpoint = f"ipc://{directory}/s"
    context = zmq.Context()
    sock = context.socket(zmq.ROUTER)
    sock.bind(endpoint)
    spawn = multiprocessing.get_context("spawn")
    children = [spawn.Process(target=_echo, args=(endpoint, work)) for _ in range(echoes)]
    for child in children:
        child.start()
    rids = [sock.recv_multipart()[0] for _ in children]
    request = dict(REQUEST)
    for i in range(200):  # warm up: the first round trips set up the pipes
        request["id"] = i + 1
        sock.send_multipart([rids[i % echoes], msgpack.packb(request)])
        sock.recv_multipart()
    thought = 0.0
    started = time.perf_counter()
    for i in range(round_trips):
        request["id"] = i + 1
        sock.send_multipart([rids[i % echoes], msgpack.packb(request)])
        _, reply = sock.recv_multipart()
        thought += msgpack.unpackb(reply).get("thought", 0.0)
    per = (time.perf_counter() - started - thought) / round_trips
    for rid in rids:
        sock.send_multipart([rid, msgpack.packb({"type": "shutdown"})])
    for child in children:
        child.join(5)
    sock.close(0)
    context.term()
    shutil.rmtree(directory, ignore_errors=True)
    return per


def cgroup_cost(count: int = 200) -> float | None:
    """Seconds to create a bot's cgroup with its limits and remove it (None: no cgroups)."""
    from ohseven.referee.sandbox import cgroups

    if not cgroups.support().dirs:
        return None
    started = time.perf_counter()
    for _ in range(count):
        group = cgroups.BotCgroup.create(memory_mb=1024, cpus=1.0, processes=64)
        assert group is not None
        group.remove()
    return (time.perf_counter() - started) / count


def match(
    bot: tuple[str, ...], games: int, mode: str, ponder: bool = False, seats: int = 4
) -> tuple[float, int]:
    """Seconds per decision in a real match of ``seats`` copies of ``bot`` (each game a new
    deal: no process is renewed), and the decisions. benchmarks/tourney.py measures its bot
    in isolation with it."""
    from ohseven.core.rules import Rules
    from ohseven.referee.play.match import play_match
    from ohseven.referee.records import BotSpec, MatchSpec, TimeControl
    from ohseven.referee.replay import load_replay
    from ohseven.referee.sandbox.settings import SandboxConfig

    replays = tempfile.mkdtemp(prefix="ohseven-bench-replays-")
    spec = MatchSpec(
        match_id="bench",
        rules=Rules.make("oh-seven"),
        bots=tuple(BotSpec(f"bot{i}", (sys.executable, *bot)) for i in range(seats)),
        seatings=tuple(tuple((s + g) % seats for s in range(seats)) for g in range(games)),
        seeds=tuple(range(games)),
        time_control=TimeControl(move_seconds=5, bank_seconds=10),
    )
    config = SandboxConfig(mode=mode, ponder=ponder)
    result = play_match(spec, sandbox=config, replay_dir=replays)
    seconds = sum(record.seconds for record in result.games)
    decisions = sum(len(load_replay(r.replay_path)["moves"]) for r in result.games)
    faults = sum(len(r.faults) for r in result.games)
    shutil.rmtree(replays, ignore_errors=True)
    if faults:
        raise SystemExit(f"{faults} faults in the benchmark match: {result.games[0].faults}")
    return seconds / decisions, decisions


def match_in(code: str, games: int, mode: str) -> tuple[float, int]:
    """:func:`match` of ``code``'s random bot, run by ``code``'s own interpreter and install."""
    python = os.path.join(code, ".venv", "bin", "python")
    if not os.access(python, os.X_OK):
        raise SystemExit(f"--code {code}: no {python}")
    out = subprocess.run(
        [python, os.path.abspath(__file__), "--child-match", mode, str(games)],
        capture_output=True,
        text=True,
        check=False,
        cwd=code,
    )
    if out.returncode != 0:
        raise SystemExit(f"--code {code}: the match failed:\n{out.stderr[-4000:]}")
    per, decisions = json.loads(out.stdout.strip().splitlines()[-1])
    return per, decisions


def child_match(mode: str, games: str) -> int:
    """The ``--code`` child: one goal-row match with this interpreter's install, as JSON."""
    print(json.dumps(match((random_bot(),), int(games), mode)))
    return 0


def random_bot() -> str:
    """The SDK's example random bot (a file run with Python)."""
    spec = importlib.util.find_spec("ohseven.example_bots.random_bot")
    assert spec is not None and spec.origin is not None
    return spec.origin


def main() -> int:
    from ohseven.referee.sandbox import cgroups
    from ohseven.referee.sandbox.settings import SandboxConfig, SandboxError, check_sandbox

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--round-trips", type=int, default=4500)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5, help="runs of every row (best kept)")
    parser.add_argument(
        "--bot", help="a Python bot file for the goal row (default: the SDK's random bot)"
    )
    parser.add_argument(
        "--code",
        action="append",
        default=[],
        metavar="DIR",
        help="another checkout (with its .venv) whose goal rows run in the same repeats",
    )
    args = parser.parse_args()
    bots = {
        "random bot": (args.bot or random_bot(),),
        "lean bot": (os.path.abspath(__file__), "--lean-bot"),
    }
    modes = []
    for mode in ("unsandboxed", "bwrap"):
        try:
            check_sandbox(SandboxConfig(mode=mode))
            modes.append(mode)
        except SandboxError as error:
            print(f"play_match {mode}: skipped: {error}")
    runs: dict[str, list[float]] = {}
    decisions: dict[str, int] = {}

    for _ in range(args.repeat):
        runs.setdefault("floor", []).append(floor(args.round_trips))
        runs.setdefault("floor, 4 echoes", []).append(floor(args.round_trips, 4))
        for mode in modes:
            for name, bot in bots.items():
                row = f"play_match {mode}, {name}"
                per, decisions[row] = match(bot, args.games, mode)
                runs.setdefault(row, []).append(per)
            row = f"play_match {mode}, random bot, ponder on"
            per, decisions[row] = match(bots["random bot"], args.games, mode, ponder=True)
            runs.setdefault(row, []).append(per)
            for code in args.code:
                row = f"play_match {mode}, random bot of {os.path.basename(code.rstrip('/'))}"
                per, decisions[row] = match_in(code, args.games, mode)
                runs.setdefault(row, []).append(per)
    base = min(runs["floor"])
    print(
        f"best of {args.repeat} runs per row, and its ratio to the best floor; 'paired': the "
        "median over the repeats of each run's ratio to the floor run of the same repeat; "
        "'vs 4 echoes': the same against the 'floor, 4 echoes' run of the same repeat"
    )
    echoes = runs["floor, 4 echoes"]
    print(f"{'floor: msgpack round trip, ROUTER/DEALER ipc':<56} {base * 1e6:8.1f} us")
    for row, values in runs.items():
        if row == "floor":
            continue
        what = f"{row} ({decisions[row]} decisions)" if row in decisions else row
        paired = statistics.median(v / f for v, f in zip(values, runs["floor"], strict=True))
        four = statistics.median(v / f for v, f in zip(values, echoes, strict=True))
        goal = "  (goal <= 1.3x vs 4 echoes)" if row.endswith("bwrap, random bot") else ""
        print(
            f"{what:<56} {min(values) * 1e6:8.1f} us  {min(values) / base:5.2f}x"
            f"  paired {paired:5.2f}x  vs 4 echoes {four:5.2f}x{goal}"
        )
    for code in args.code:  # this tree against another checkout, run by run
        name = os.path.basename(code.rstrip("/"))
        for mode in modes:
            ours = runs[f"play_match {mode}, random bot"]
            theirs = runs[f"play_match {mode}, random bot of {name}"]
            paired = statistics.median(a / b for a, b in zip(ours, theirs, strict=True))
            print(
                f"{'this tree / ' + name + ', ' + mode + ', random bot, paired':<56} {paired:8.2f}x"
            )
    for mode in modes:  # what freezing costs: ponder off against on, run by run
        off = runs[f"play_match {mode}, random bot"]
        on = runs[f"play_match {mode}, random bot, ponder on"]
        paired = statistics.median(a - b for a, b in zip(off, on, strict=True))
        print(
            f"{'freezing, ' + mode + ': ponder off - on, per decision':<56} "
            f"{(min(off) - min(on)) * 1e6:8.1f} us  paired {paired * 1e6:6.1f} us"
        )
    cost = cgroup_cost()
    if cost is None:
        print(f"cgroup set-up + teardown: skipped: {cgroups.support().message()}")
    else:
        print(f"{'cgroup set-up + teardown (per bot)':<56} {cost * 1e6:8.1f} us")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--lean-bot"]:
        sys.exit(lean_bot())
    if sys.argv[1:2] == ["--child-match"]:
        sys.exit(child_match(*sys.argv[2:4]))
    sys.exit(main())
