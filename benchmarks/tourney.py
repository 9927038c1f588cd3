"""Tournament throughput: games per second with 1 and 2 workers on the same schedule.

Runs a round-robin of fast deterministic bots (real bot processes, unsandboxed, through the real
referee) twice, and reports games/s for each, the scaling ratio (goal >= 1.7x on 2 cores), and
the share of the 1-worker run's wall time spent outside the bots, split in two: the per-decision
cost inside the games (the protocol's, whose own goal is benchmarks/protocol.py's) and the
tournament's machinery outside them (ratings, database, scheduling, bot start-up: goal < 5%).

**Time in the bots** is measured by the bots themselves: each decision function (``choose_*``,
where a thinking bot thinks: here it burns ``--work`` CPU seconds, then picks a move by a stable
hash) records when it starts and returns on the system-wide monotonic clock; the time in the
bots is the union of these intervals over all bots (two bots thinking at once count once).
Everything else is **outside the bots**: the bots' start-up and shutdown, the SDK's decoding and
view, the transport, the referee, the database, the ratings, the scheduling and the final site.
It is split into the part inside ``play_match``'s games (``GameRecord.seconds``, per decision:
with duplicate deals it holds what readies the fresh processes of a rotation) and the part
outside the games (start-up and shutdown of a match's bots, the tourney machinery). The cost per
decision inside the games is set against the same bot's alone, measured in the same run by
benchmarks/protocol.py's ``match`` (a match at a table of the same size, a new deal each game so
no process is renewed, the bots' own time taken off the same way): goal <= 1.25x, and <= 10% of
the 1-worker run outside the bots. The two are paired: each repeat measures the bot alone right
before or right after its 1-worker run (the order alternating from repeat to repeat, so a load
that rises or falls through the run favours neither), the ratio is taken within each repeat,
and the median of those ratios is the figure (``--repeats``: more repeats, a steadier median).
The bots' thinking is measured as wall time, so a machine loaded by other work slows the bots,
not the share outside them. Beside the bot alone, each repeat measures **the transport's floor
for a bot that thinks** (benchmarks/protocol.py's ``floor``, its peer spinning ``--work`` before
each answer, that time not counted): the bare ZeroMQ + msgpack round trip, which costs more after
a think than after an instant answer (the referee's core slept through the think and wakes
cold); no referee can decide for less, so it is printed as its share of the run.

The cluster row plays the same schedule on a Dask cluster: by default one started here on
loopback (a ``dask scheduler`` and two ``dask worker --nthreads 1 --resources match=1``), or the
scheduler given with ``--cluster ADDRESS``; ``--no-cluster`` skips it (needs ``ohseven[cluster]``).

    python benchmarks/tourney.py [--games-per-table N] [--bots N] [--table K] [--work S]
        [--repeats R] [--alone-games N] [--floor-trips N] [--cluster ADDRESS | --no-cluster]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from ohseven.referee.plan.loader import load_config
from ohseven.referee.results.store import Store
from ohseven.referee.tournament.run import run_tournament

# benchmarks/protocol.py's measure of a bot alone (this script's folder is first on sys.path)
from protocol import floor as transport_floor
from protocol import match as match_alone

#: Each decision burns ``WORK`` seconds of CPU (like a thinking bot), then answers by a stable
#: hash; the bot writes the intervals of its decisions to ``SPANS`` when it exits. The thread's
#: CPU clock, not ``process_time``: under the referee's ``RLIMIT_CPU`` the process clock only
#: advances at scheduler ticks, and a bot burning 0.5 ms by it spins for about 4 ms.
BOT = """
import atexit, os, time, zlib
from ohseven.sdk import Bot, run

WORK = {work}
SPANS = {spans!r}
spans = []


@atexit.register
def save():
    with open(os.path.join(SPANS, f"{{os.getpid()}}.txt"), "w") as out:
        out.writelines(f"{{a!r}} {{b!r}}\\n" for a, b in spans)


class Busy(Bot):
    name = "busy"

    def think(self, view, options):
        start = time.monotonic()
        end = time.thread_time() + WORK
        while time.thread_time() < end:
            pass
        options = sorted(options, key=str)
        key = "|".join(map(str, (sorted(view.hand), options)))
        move = options[zlib.crc32(key.encode()) % len(options)]
        spans.append((start, time.monotonic()))
        return move

    def choose_pass(self, view, count):
        start = time.monotonic()
        move = sorted(view.legal, key=str)[:count]
        spans.append((start, time.monotonic()))
        return move

    def choose_bid(self, view):
        return self.think(view, view.legal)

    def choose_play(self, view):
        return self.think(view, view.legal)

if __name__ == "__main__":
    run(Busy)
"""


def write(folder: Path, bots: int, table: int, games: int, work: float) -> Path:
    spans = folder / "spans"
    spans.mkdir()
    spans.chmod(0o777)  # a root referee runs bots as other uids: they write here
    # the bots' folder holds only their file: staging checks it is unchanged while they play
    (folder / "bot").mkdir(mode=0o755)
    (folder / "bot" / "busy.py").write_text(BOT.format(work=work, spans=str(spans)))
    lines = [
        "name: bench",
        "game: oh-seven",
        f"table_size: {table}",
        "bots:",
        *(f"  - {{name: bot{i}, file: bot/busy.py}}" for i in range(bots)),
        f"schedule: {{type: round-robin, games_per_table: {games}}}",
        "time_control: {move_seconds: 5, bank_seconds: 30, start_seconds: 30}",
        "sandbox: {mode: unsandboxed}",
        "seed: 1",
    ]
    path = folder / "bench.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def game_seconds(output: str) -> float:
    """Seconds spent inside games (play_match's own timing of each game)."""
    with Store.open(output, create=False) as store:
        return sum(stored.record.seconds for stored in store.games())


def count_decisions(output: str) -> int:
    """Decisions the bots made (each burned ``WORK`` CPU seconds), from the game statistics:
    per seat and round 7 plays and one bid per bidding attempt (forced re-bids included)."""
    total = 0
    with Store.open(output, create=False) as store:
        for stored in store.games():
            table = stored.record.stats["table"]
            seats = len(stored.record.seats)
            total += seats * (table["rounds"] * 7 + table["rounds"] + table.get("rebids", 0))
    return total


def bot_seconds(folder: Path) -> tuple[float, int]:
    """The union of the bots' decision intervals (seconds) and the number of intervals."""
    spans = sorted(
        (float(a), float(b))
        for file in (folder / "spans").glob("*.txt")
        for a, b in (line.split() for line in file.read_text().splitlines())
    )
    total, end = 0.0, float("-inf")
    for a, b in spans:
        if b > end:
            total += b - max(a, end)
            end = b
    return total, len(spans)


def alone(folder: Path, seats: int, games: int) -> float:
    """Seconds per decision outside the bots for the same bot alone: benchmarks/protocol.py's
    match of ``seats`` copies of it (unsandboxed, a new deal each game, so no process is
    renewed), less the bots' own time (their recorded intervals)."""
    for file in (folder / "spans").glob("*.txt"):
        file.unlink()
    per, decisions = match_alone(
        (str(folder / "bot" / "busy.py"),), games, "unsandboxed", seats=seats
    )
    thinking, _ = bot_seconds(folder)
    return per - thinking / decisions


def measure(path: Path, workers: int, cluster: str | None = None) -> tuple[float, int, dict]:
    config = load_config(path)
    for file in (path.parent / "spans").glob("*.txt"):
        file.unlink()
    began = time.perf_counter()
    outcome = run_tournament(config, workers=workers, fresh=True, cluster=cluster)
    return time.perf_counter() - began, outcome.games, outcome.leaderboard


@contextlib.contextmanager
def loopback_dask(folder: Path, workers: int = 2) -> Iterator[str]:
    """A ``dask scheduler`` and ``workers`` ``dask worker`` processes on 127.0.0.1."""
    dask = shutil.which(
        "dask", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    )
    if dask is None:
        raise SystemExit("the dask command is missing: pip install 'ohseven[cluster]'")
    file = folder / "scheduler.json"
    log = open(folder / "dask.log", "ab")  # noqa: SIM115 - closed below
    common = {"stdout": log, "stderr": subprocess.STDOUT, "start_new_session": True}
    processes = [
        subprocess.Popen(
            [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"]
            + ["--scheduler-file", str(file)],
            **common,
        )
    ]
    try:
        deadline = time.monotonic() + 60
        while not file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(file.read_text())["address"]
        for n in range(workers):
            processes.append(
                subprocess.Popen(
                    [dask, "worker", address, "--host", "127.0.0.1", "--nthreads", "1"]
                    + ["--resources", "match=1", "--no-dashboard"]
                    + ["--local-directory", str(folder / f"w{n}")],
                    **common,
                )
            )
        import distributed

        with distributed.Client(address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(workers, timeout=60)
        yield address
    finally:
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            process.wait(30)
        log.close()


# --------------------------------------------------------------------------- deal isolation

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "tournaments" / "quickstart.yaml"
#: the rows of the isolation report: (label, schedule.deals, fresh processes per rotation)
ISOLATION_ROWS = (
    ("reuse (old behaviour: duplicate deals, the same processes)", "duplicate", False),
    ("deals: independent", "independent", True),
    ("deals: duplicate (fresh processes per rotation)", "duplicate", True),
)


@contextlib.contextmanager
def processes_reused() -> Iterator[None]:
    """The old behaviour, for the baseline only: ``Referee.renew`` does nothing, so duplicate
    deals are played by the same processes in every rotation (workers fork: they inherit it)."""
    from ohseven.referee.play.referee import Referee

    renew = Referee.renew
    Referee.renew = lambda self, seats, seed: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        Referee.renew = renew  # type: ignore[method-assign]


def quickstart_run(
    folder: Path, deals: str, fresh: bool, workers: int, sandbox: str | None, seed: int
) -> tuple[float, int, int]:
    """(wall seconds, games, bot faults) of the quickstart with ``deals``."""
    import yaml
    from ohseven.referee.plan.loader import load_config_text

    document = yaml.safe_load(QUICKSTART.read_text())
    document["schedule"]["deals"] = deals
    document.update(output=str(folder / "out"), seed=seed)
    if sandbox is not None:
        document["sandbox"] = {"mode": sandbox}
    text = yaml.safe_dump(document, sort_keys=False)
    config = load_config_text(text, source=str(QUICKSTART), base_dir=QUICKSTART.parent)
    with contextlib.nullcontext() if fresh else processes_reused():
        began = time.perf_counter()
        outcome = run_tournament(config, workers=workers, fresh=True)
        wall = time.perf_counter() - began
    faults = sum(sum(bot["faults"].values()) for bot in outcome.leaderboard["bots"])
    return wall, outcome.games, faults


def isolation_throughput(repeats: int, workers: int, sandbox: str | None) -> None:
    """Games/s of the quickstart in each row of ``ISOLATION_ROWS``, as ratios to the reuse
    baseline: the rows interleaved (in a rotated order) within each repeat, paired by repeat."""
    import statistics

    walls: dict[str, list[float]] = {label: [] for label, _, _ in ISOLATION_ROWS}
    games, faults = 0, 0
    with tempfile.TemporaryDirectory(prefix="ohseven-bench-") as tmp:
        Path(tmp).chmod(0o755)  # a root referee runs bots as another uid: they must read it
        for repeat in range(repeats):
            shift = repeat % len(ISOLATION_ROWS)
            for label, deals, fresh in ISOLATION_ROWS[shift:] + ISOLATION_ROWS[:shift]:
                wall, games, f = quickstart_run(
                    Path(tmp), deals, fresh, workers, sandbox, seed=repeat + 1
                )
                walls[label].append(wall)
                faults += f
                print(f"  repeat {repeat + 1}, {label}: {wall:.1f} s", flush=True)
    mode = sandbox or "the file's sandbox (unsandboxed)"
    print(
        f"quickstart ({games} games, {workers} worker{'s' * (workers != 1)}, {mode}), "
        f"{repeats} repeats interleaved: games/s, median; ratio to the reuse baseline, "
        "median of the per-repeat ratios (min-max)"
    )
    base = walls[ISOLATION_ROWS[0][0]]
    for label, _, _ in ISOLATION_ROWS:
        rate = games / statistics.median(walls[label])
        ratios = sorted(b / w for b, w in zip(base, walls[label], strict=True))
        goal = "  (goal >= 0.8x)" if label != ISOLATION_ROWS[0][0] else ""
        print(
            f"  {label:<58} {rate:5.2f} games/s  {statistics.median(ratios):.2f}x "
            f"({ratios[0]:.2f}-{ratios[-1]:.2f}){goal}"
        )
    print(f"  bot faults in all runs: {faults}")


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _hello_time(
    command: list[str], mode: str, folder: Path, until_exit: bool
) -> tuple[float, float]:
    """Seconds from ``BotProcess.start()`` to the bot's first message on a real ROUTER socket
    (``until_exit``: to the process's exit instead), and the CPU seconds of its reaped processes
    from its start to its kill (unsandboxed only: see ``startup_times``)."""
    import secrets as _secrets

    import zmq
    from ohseven.referee.sandbox.process import BotProcess
    from ohseven.referee.sandbox.settings import SandboxConfig

    socket_dir = Path(tempfile.mkdtemp(dir=folder))
    context = zmq.Context()
    sock = context.socket(zmq.ROUTER)
    endpoint = f"ipc://{socket_dir}/referee"
    sock.bind(endpoint)
    bot = BotProcess(
        command,
        name="bench",
        bot_dir=str(ROOT / "example_bots"),
        socket_dir=str(socket_dir),
        env={
            "OHSEVEN_ENDPOINT": endpoint,
            "OHSEVEN_SECRET": _secrets.token_hex(16),
            "OHSEVEN_NAME": "bench",
        },
        config=SandboxConfig(mode=mode),
    )
    cpu = _children_cpu()
    try:
        began = time.perf_counter()
        bot.start()
        if until_exit:
            code = bot.wait(30)
            if code != 0:
                raise SystemExit(f"{command} in {mode} exited with {code}: {bot.log()}")
        elif not sock.poll(30_000):
            raise SystemExit(f"{command} in {mode}: no hello in 30 s: {bot.log()}")
        wall = time.perf_counter() - began
    finally:
        bot.kill()  # reaps it: its CPU is in RUSAGE_CHILDREN now
        sock.close(0)
        context.term()
        shutil.rmtree(socket_dir, ignore_errors=True)
    return wall, _children_cpu() - cpu


def startup_times(repeats: int) -> None:
    """Median time from exec to hello of the SDK's bots, in bwrap and unsandboxed, against a bare
    ``python -c "import zmq, msgpack"`` (exec to exit), all interleaved in one run."""
    import statistics

    bare = [sys.executable, "-c", "import zmq, msgpack"]
    random_bot = [sys.executable, str(ROOT / "example_bots" / "random_bot.py")]
    montecarlo = [sys.executable, str(ROOT / "example_bots" / "montecarlo_bot.py")]

    def run_bare(folder: Path) -> tuple[float, float]:
        cpu, began = _children_cpu(), time.perf_counter()
        subprocess.run(bare, check=True)
        return time.perf_counter() - began, _children_cpu() - cpu

    def started(command: list[str], mode: str, until_exit: bool = False):  # noqa: ANN202
        return lambda folder: _hello_time(command, mode, folder, until_exit)

    rows = [
        ('bare python -c "import zmq, msgpack", subprocess, exec to exit', run_bare),
        ("  the same, BotProcess unsandboxed, start() to exit", started(bare, "unsandboxed", True)),
        ("  the same, BotProcess bwrap, start() to exit", started(bare, "bwrap", True)),
        (
            "random_bot.py, BotProcess unsandboxed, start() to hello",
            started(random_bot, "unsandboxed"),
        ),
        ("random_bot.py, BotProcess bwrap, start() to hello", started(random_bot, "bwrap")),
        (
            "montecarlo_bot.py, BotProcess unsandboxed, start() to hello",
            started(montecarlo, "unsandboxed"),
        ),
        ("montecarlo_bot.py, BotProcess bwrap, start() to hello", started(montecarlo, "bwrap")),
    ]
    times: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in rows}
    with tempfile.TemporaryDirectory(prefix="ohseven-bench-") as tmp:
        Path(tmp).chmod(0o755)
        for _label, measure_once in rows:  # warm the page cache once
            measure_once(Path(tmp))
        for _ in range(repeats):
            for label, measure_once in rows:
                times[label].append(measure_once(Path(tmp)))
    base = statistics.median(wall for wall, _ in times[rows[0][0]])
    base_cpu = statistics.median(cpu for _, cpu in times[rows[0][0]])
    print(
        f"bot start-up, median of {repeats} (interleaved): wall time and ratio to the bare "
        "python; CPU of the process from start to kill (unsandboxed only), and ratio"
    )
    for label, _ in rows:
        median = statistics.median(wall for wall, _ in times[label])
        cpu = statistics.median(cpu for _, cpu in times[label])
        # a bot in bwrap is reaped inside its PID namespace: its CPU never reaches getrusage
        cpu_text = "n/a" if "bwrap" in label else f"{cpu * 1000:6.1f} ms {cpu / base_cpu:5.2f}x"
        print(f"  {label:<62} {median * 1000:6.1f} ms {median / base:5.2f}x  CPU {cpu_text}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=4)
    parser.add_argument("--table", type=int, default=2)
    parser.add_argument("--games-per-table", type=int, default=4)
    parser.add_argument("--work", type=float, default=0.005, help="bot CPU seconds per decision")
    parser.add_argument("--cluster", metavar="ADDRESS", help="a Dask scheduler (default: 2 here)")
    parser.add_argument("--no-cluster", action="store_true", help="skip the Dask cluster row")
    parser.add_argument(
        "--alone-games",
        type=int,
        default=8,
        metavar="N",
        help="games of the same bot alone (benchmarks/protocol.py's match) per repeat",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        metavar="R",
        help="play the 1- and 2-worker runs R times; report the median run (by the share "
        "outside the games) and every run's shares",
    )
    parser.add_argument(
        "--isolation",
        type=int,
        metavar="REPEATS",
        help="instead: games/s of the quickstart by deal mode against today's reuse, and the "
        "bots' start-up, REPEATS times each (interleaved)",
    )
    parser.add_argument(
        "--floor-trips",
        type=int,
        default=1000,
        metavar="N",
        help="round trips of the transport's floor (protocol.py's, the peer thinking --work) "
        "per repeat",
    )
    parser.add_argument("--isolation-workers", type=int, default=1, metavar="N")
    parser.add_argument("--isolation-sandbox", choices=("bwrap", "unsandboxed"))
    args = parser.parse_args(argv)
    if args.isolation:
        startup_times(max(10, args.isolation))
        isolation_throughput(args.isolation, args.isolation_workers, args.isolation_sandbox)
        return 0
    with tempfile.TemporaryDirectory(prefix="ohseven-bench-") as tmp:
        Path(tmp).chmod(0o755)  # a root referee runs bots as another uid: they must read it
        path = write(Path(tmp), args.bots, args.table, args.games_per_table, args.work)
        output = load_config(path).output
        runs = []  # per repeat: (wall 1 worker, wall 2 workers, thinking, in games, decisions,
        # the cost per decision of the bot alone, the transport's floor for a thinking bot)
        for repeat in range(args.repeats):
            if repeat % 2:  # paired: the bot alone next to the run, before it every other time
                single = alone(Path(tmp), args.table, args.alone_games)
                least = transport_floor(args.floor_trips, work=args.work)
            wall1, games, board1 = measure(path, 1)
            thinking, spans = bot_seconds(Path(tmp))
            decisions = count_decisions(output)
            in_games = game_seconds(output)
            if not repeat % 2:
                single = alone(Path(tmp), args.table, args.alone_games)
                least = transport_floor(args.floor_trips, work=args.work)
            wall2, _, board2 = measure(path, 2)
            runs.append((wall1, wall2, thinking, in_games, decisions, single, least))
            if args.repeats > 1:
                per = (in_games - thinking) / decisions
                print(
                    f"run {repeat + 1}/{args.repeats}: 1 worker {wall1:.2f} s, 2 workers "
                    f"{wall2:.2f} s; outside the bots {(wall1 - thinking) / wall1:.1%}, outside "
                    f"the games {(wall1 - in_games) / wall1:.1%}; per decision in the games "
                    f"{per * 1e6:.0f} us, alone {single * 1e6:.0f} us: {per / single:.2f}x; "
                    f"the transport's floor {least * 1e6:.0f} us",
                    flush=True,
                )
            if spans < decisions:
                print(f"warning: {spans} decision intervals recorded, {decisions} decisions made")
            if board1 != board2:
                print("warning: the leaderboards of 1 and 2 workers differ")
        # the paired figures: each repeat's ratio and share, then their medians
        ratios = sorted(((run[3] - run[2]) / run[4]) / run[5] for run in runs)
        outside = sorted((run[0] - run[2]) / run[0] for run in runs)
        floors = sorted(run[6] * run[4] / run[0] for run in runs)
        # the median run by its share outside the games; its other figures
        runs.sort(key=lambda run: (run[0] - run[3]) / run[0])
        wall1, wall2, thinking, in_games, decisions, single, least = runs[len(runs) // 2]
        if args.repeats > 1:
            shares = [(run[0] - run[3]) / run[0] for run in runs]
            print(
                f"median of {args.repeats} runs (outside the games, sorted: "
                f"{', '.join(f'{share:.1%}' for share in shares)}):"
            )
        for workers, wall in ((1, wall1), (2, wall2)):
            print(f"workers={workers}: {games} games in {wall:.2f} s = {games / wall:.2f} games/s")
        print(f"scaling 1 -> 2 workers: {wall1 / wall2:.2f}x (goal >= 1.7x)")
        print(
            f"time outside the bots (1 worker): {(wall1 - thinking) / wall1:.1%} "
            f"(the bots think {thinking:.2f} s of {wall1:.2f} s; goal <= 10%), of which:"
        )
        per = (in_games - thinking) / decisions
        print(
            f"  inside the games, per decision (transport, SDK, referee, fresh processes of "
            f"duplicate deals): {(in_games - thinking) / wall1:.1%} "
            f"({per * 1e6:.0f} us per decision of {decisions})"
        )
        print(
            f"  the same bot alone (protocol.py's match: {args.alone_games} games at a table of "
            f"{args.table}, no renewal): {single * 1e6:.0f} us per decision; in the games / "
            f"alone: {per / single:.2f}x (goal <= 1.25x)"
        )
        print(
            f"  outside the games (ratings, database, scheduling, bots' start-up and shutdown): "
            f"{(wall1 - in_games) / wall1:.1%} ({wall1 - in_games:.2f} s; goal < 5%)"
        )
        print(
            f"  the transport's floor for a bot that thinks {args.work * 1000:g} ms (protocol.py's "
            f"floor, its peer thinking): {least * 1e6:.0f} us per decision, "
            f"{least * decisions / wall1:.1%} of the run: the least a decision could cost"
        )
        if args.repeats > 1:
            print(
                f"paired over {args.repeats} repeats: in the games / alone "
                f"{', '.join(f'{ratio:.2f}x' for ratio in ratios)}; median "
                f"{ratios[len(ratios) // 2]:.2f}x (goal <= 1.25x)"
            )
            print(
                f"  outside the bots (1 worker) {', '.join(f'{share:.1%}' for share in outside)}; "
                f"median {outside[len(outside) // 2]:.1%} (goal <= 10%); of it the transport's "
                f"floor {', '.join(f'{share:.1%}' for share in floors)}; median "
                f"{floors[len(floors) // 2]:.1%}"
            )
        print(f"same leaderboard with 1 and 2 workers: {board1 == board2}")
        faults = sum(sum(bot["faults"].values()) for bot in board1["bots"])
        print(f"bot faults: {faults}")
        if not args.no_cluster:
            with contextlib.ExitStack() as stack:
                address = args.cluster or stack.enter_context(loopback_dask(Path(tmp)))
                wall3, _, board3 = measure(path, 2, cluster=address)
            where = args.cluster or "2 local Dask workers"
            print(
                f"cluster ({where}): {games} games in {wall3:.2f} s = {games / wall3:.2f} games/s "
                f"({wall2 / wall3:.2f}x the local pool of 2 workers)"
            )
            print(f"same leaderboard on the cluster: {board3 == board1}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
