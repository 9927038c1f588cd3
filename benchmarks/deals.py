"""Deal modes compared: the standard error of the bots' results per CPU-second of tournament.

Plays the quickstart's three example bots (``tournaments/quickstart.yaml``: random, heuristic,
montecarlo with ``--samples 60``) at tables of ``--sizes`` bots, ``deals: independent`` and
``deals: duplicate`` with the same number of tables and games, through the real referee
(``run_tournament``: real bot processes, ZeroMQ, the store), and reports for each bot's mean
points per game and each pairwise difference of means:

- ``SE ind``: independent deals, the standard error of the mean over tables (each table's value
  is the mean over its games: games grouped by table);
- ``SE dup``: duplicate deals, the paired standard error: the SE of the mean over deals, each
  deal's value the mean over the rotations that played it; ``dup/tbl`` is the same grouped by
  table instead (a check that the deals of one table, played by the same processes, are not
  correlated);
- ``var ind/dup``: SE ind^2 / SE dup^2 (how many times more games independent deals need for the
  same precision), with a 90% bootstrap interval (tables resampled for independent, deals for
  duplicate, independently);
- ``eff dup/ind``: SE * sqrt(CPU) of duplicate over that of independent, with the same
  interval (CPU taken as measured): below 1, duplicate gives the smaller SE for the same CPU.

**CPU** is that of the whole tournament: the referee process and every worker and bot process,
``getrusage(RUSAGE_SELF) + getrusage(RUSAGE_CHILDREN)`` (user + system) taken just before and
after each in-process ``run_tournament`` call. Every worker and bot process is reaped before the
call returns, so their time is in RUSAGE_CHILDREN. The modes are played in ``--runs`` runs each,
interleaved (ABBA order), each run a tournament of its own with its own seed, so a slow spell of
the shared machine touches both; the per-run CPU ratios show the noise.

The bots run unsandboxed by default, for speed: the sandbox changes neither the deals nor the
bots' moves (every bot's randomness comes from the referee's ``OHSEVEN_SEED``), only the CPU of
starting a process, which ``benchmarks/tourney.py`` measures (bwrap and unsandboxed start-up);
``--sandbox bwrap`` plays this benchmark in the sandbox too.

    python benchmarks/deals.py [--games N] [--sizes 3[,2]] [--runs R] [--seed K]
        [--sandbox unsandboxed|bwrap] [--workers W] [--bootstrap B]
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import math
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from itertools import combinations
from pathlib import Path

import yaml
from ohseven.referee.plan.loader import load_config_text
from ohseven.referee.results.store import Store
from ohseven.referee.tournament.run import run_tournament

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "tournaments" / "quickstart.yaml"
MODES = ("independent", "duplicate")

#: a unit's games, each as the bots' points by name (a unit: a table, or a duplicate deal)
Games = list[dict[str, int]]


def cpu_seconds() -> float:
    """User + system CPU of this process and of every reaped descendant."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def cgroup_meter() -> Callable[[], float] | None:
    """CPU seconds of this process and all its descendants by a cpuacct cgroup (v1) made for
    it, or None. In bwrap a bot killed with its sandbox's PID 1 is reaped by the kernel without
    its CPU being added to anyone's RUSAGE_CHILDREN, so getrusage misses the renewed bots."""
    group = Path("/sys/fs/cgroup/cpuacct") / f"ohseven-deals-{os.getpid()}"
    try:
        group.mkdir()
        (group / "cgroup.procs").write_text(f"{os.getpid()}\n")
    except OSError:
        return None

    @atexit.register
    def leave() -> None:
        with contextlib.suppress(OSError):
            (group.parent / "cgroup.procs").write_text(f"{os.getpid()}\n")
            group.rmdir()

    return lambda: int((group / "cpuacct.usage").read_text()) / 1e9


def config_text(
    deals: str, size: int, repeats: int, per_table: int, seed: int, sandbox: str, output: str
) -> str:
    """The quickstart's bots and time control at tables of ``size``, ``repeats`` times."""
    document = yaml.safe_load(QUICKSTART.read_text())
    document.update(
        name=f"deals-{deals}-{size}",
        table_size=size,
        seed=seed,
        output=output,
        replays=False,
        sandbox={"mode": sandbox},
        schedule={
            "type": "round-robin",
            "repeats": repeats,
            "games_per_table": per_table,
            "deals": deals,
        },
    )
    return yaml.safe_dump(document, sort_keys=False)


def play(
    deals: str,
    size: int,
    repeats: int,
    per_table: int,
    seed: int,
    sandbox: str,
    workers: int,
    meter: Callable[[], float],
) -> tuple[float, float, dict[tuple, Games], dict[tuple, tuple], int]:
    """One tournament: (CPU s, wall s, games by unit, table of each unit, faults)."""
    with tempfile.TemporaryDirectory(prefix="ohseven-deals-") as tmp:
        Path(tmp).chmod(0o755)  # a root referee runs bots as other uids
        text = config_text(deals, size, repeats, per_table, seed, sandbox, tmp)
        config = load_config_text(text, source="<deals bench>", base_dir=QUICKSTART.parent)
        cpu, wall = meter(), time.perf_counter()
        outcome = run_tournament(config, workers=workers, fresh=True)
        cpu, wall = meter() - cpu, time.perf_counter() - wall
        if not outcome.complete:
            raise SystemExit(f"the {deals} tournament did not complete: {outcome.failed}")
        units: dict[tuple, Games] = defaultdict(list)
        table: dict[tuple, tuple] = {}
        faults = 0
        with Store.open(tmp, create=False) as store:
            for stored in store.games():
                record = stored.record
                faults += len(record.faults)
                key = (seed, record.match_id)
                unit = key if deals == "independent" else (*key, record.seed)
                units[unit].append(dict(zip(record.seats, record.totals, strict=True)))
                table[unit] = key
    return cpu, wall, dict(units), table, faults


def unit_values(units: list[Games], stat: tuple[str, ...]) -> list[float]:
    """Per unit, the mean over its games of a bot's points (``(a,)``) or a difference
    (``(a, b)``: a's points less b's), over the units where the bots played."""
    values = []
    for games in units:
        seen = [g for g in games if all(name in g for name in stat)]
        if not seen:
            continue
        if len(stat) == 1:
            values.append(statistics.fmean(g[stat[0]] for g in seen))
        else:
            values.append(statistics.fmean(g[stat[0]] - g[stat[1]] for g in seen))
    return values


def standard_error(values: list[float]) -> float:
    return statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else math.nan


def percentile(sorted_values: list[float], q: float) -> float:
    position = q * (len(sorted_values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def bootstrap_ratio(
    independent: list[float], duplicate: list[float], samples: int, rng: random.Random
) -> tuple[float, float]:
    """A 90% percentile interval of SE_ind^2 / SE_dup^2, resampling each mode's units."""
    ratios = []
    for _ in range(samples):
        a = rng.choices(independent, k=len(independent))
        b = rng.choices(duplicate, k=len(duplicate))
        se_b = standard_error(b)
        if se_b > 0:
            ratios.append(standard_error(a) ** 2 / se_b**2)
    ratios.sort()
    return percentile(ratios, 0.05), percentile(ratios, 0.95)


def compare(args: argparse.Namespace, size: int, rng: random.Random) -> None:
    bots = [bot["name"] for bot in yaml.safe_load(QUICKSTART.read_text())["bots"]]
    per_table = args.games_per_table
    tables_per_repeat = math.comb(len(bots), size)
    games_per_repeat = tables_per_repeat * size * per_table
    repeats = max(1, round(args.games / (games_per_repeat * args.runs)))
    games = repeats * args.runs * games_per_repeat
    print(
        f"table size {size}: {repeats * args.runs * tables_per_repeat} tables of {size * per_table}"
        f" games ({per_table} deals x {size} seats) = {games} games per mode, in {args.runs} runs "
        f"per mode (interleaved, ABBA), {args.sandbox}, {args.workers} workers"
    )
    cpu = {mode: [] for mode in MODES}
    wall = dict.fromkeys(MODES, 0.0)
    units: dict[str, dict[tuple, Games]] = {mode: {} for mode in MODES}
    tables: dict[tuple, tuple] = {}
    faults = dict.fromkeys(MODES, 0)
    runs = args.runs
    began = time.monotonic()
    deadline = began + args.minutes * 60 if args.minutes else 0.0
    for run in range(runs):
        order = MODES if run % 2 == 0 else MODES[::-1]
        for mode in order:
            seed = args.seed * 1000 + size * 100 + run * 2 + MODES.index(mode)
            c, w, u, t, f = play(
                mode, size, repeats, per_table, seed, args.sandbox, args.workers, args.meter
            )
            cpu[mode].append(c)
            wall[mode] += w
            units[mode].update(u)
            tables.update(t)
            faults[mode] += f
        ratio = cpu["duplicate"][-1] / cpu["independent"][-1]
        print(
            f"  run {run + 1}: CPU independent {cpu['independent'][-1]:7.1f} s, duplicate "
            f"{cpu['duplicate'][-1]:7.1f} s ({ratio:.3f}x)",
            flush=True,
        )
        if run >= 1:  # the figures so far, in case the machine is too slow for every run
            done = "all" if run + 1 == runs else "so far"
            print(f"  after {run + 1} of {args.runs} runs per mode ({done}):")
            report(bots, cpu, wall, units, tables, faults, args.bootstrap, rng)
        if deadline and time.monotonic() + (time.monotonic() - began) / (run + 1) > deadline:
            if run + 1 < runs:
                print(f"  stopped after {run + 1} runs: --minutes {args.minutes:g} would be passed")
            break


def report(
    bots: list[str],
    cpu: dict[str, list[float]],
    wall: dict[str, float],
    units: dict[str, dict[tuple, Games]],
    tables: dict[tuple, tuple],
    faults: dict[str, int],
    bootstrap: int,
    rng: random.Random,
) -> None:
    """The CPU of each mode and the table of standard errors, from the runs played so far."""
    ratios = sorted(d / i for d, i in zip(cpu["duplicate"], cpu["independent"], strict=True))
    cpu_ind, cpu_dup = sum(cpu["independent"]), sum(cpu["duplicate"])
    print(
        f"  CPU (referee + workers + bots): independent {cpu_ind:.1f} s "
        f"({wall['independent']:.0f} s wall), duplicate {cpu_dup:.1f} s "
        f"({wall['duplicate']:.0f} s wall): duplicate/independent {cpu_dup / cpu_ind:.3f}x "
        f"(per run: median {statistics.median(ratios):.3f}x, {ratios[0]:.3f}-{ratios[-1]:.3f}x)"
    )
    print(f"  bot faults: independent {faults['independent']}, duplicate {faults['duplicate']}")
    n_ind = len(units["independent"])
    n_dup = len(units["duplicate"])
    by_table: dict[tuple, Games] = defaultdict(list)
    for unit, games_of in units["duplicate"].items():
        by_table[tables[unit]].extend(games_of)
    print(f"  units: independent {n_ind} tables; duplicate {n_dup} deals ({len(by_table)} tables)")
    print(
        f"  {'points per game':<26}{'mean':>7}{'SE ind':>8}{'SE dup':>8}{'dup/tbl':>8}"
        f"{'var ind/dup [90%]':>24}{'eff dup/ind [90%]':>24}"
    )
    stats = [(bot,) for bot in bots] + list(combinations(bots, 2))
    cpu_factor = math.sqrt(cpu_dup / cpu_ind)
    for stat in stats:
        ind = unit_values(list(units["independent"].values()), stat)
        dup = unit_values(list(units["duplicate"].values()), stat)
        dup_tables = unit_values(list(by_table.values()), stat)
        se_ind, se_dup = standard_error(ind), standard_error(dup)
        variance = se_ind**2 / se_dup**2
        low, high = bootstrap_ratio(ind, dup, bootstrap, rng)
        eff = cpu_factor / math.sqrt(variance)
        label = stat[0] if len(stat) == 1 else f"{stat[0]} - {stat[1]}"
        mean = (statistics.fmean(ind) + statistics.fmean(dup)) / 2
        print(
            f"  {label:<26}{mean:7.2f}{se_ind:8.3f}{se_dup:8.3f}{standard_error(dup_tables):8.3f}"
            f"{variance:8.2f} [{low:5.2f}, {high:5.2f}]"
            f"{eff:10.2f} [{cpu_factor / math.sqrt(high):4.2f}, "
            f"{cpu_factor / math.sqrt(low) if low > 0 else math.inf:4.2f}]",
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=288, help="games per mode and table size")
    parser.add_argument("--games-per-table", type=int, default=4, help="deals per table")
    parser.add_argument(
        "--sizes", default="3", help="table sizes, comma-separated (2 and/or 3; default 3)"
    )
    parser.add_argument("--runs", type=int, default=4, help="interleaved runs per mode")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first run's deals")
    parser.add_argument("--sandbox", choices=("unsandboxed", "bwrap"), default="unsandboxed")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples")
    parser.add_argument(
        "--minutes",
        type=float,
        default=14.0,
        help="start no run that would end after this many minutes per table size (0: no limit)",
    )
    args = parser.parse_args(argv)
    try:
        sizes = [int(size) for size in args.sizes.split(",")]
    except ValueError:
        parser.error(f"--sizes: expected numbers like 3 or 3,2, not {args.sizes!r}")
    if any(size not in (2, 3) for size in sizes):
        parser.error("--sizes: the quickstart has three bots, so tables of 2 or 3")
    if min(args.games, args.games_per_table, args.runs, args.workers, args.bootstrap) < 1:
        parser.error("--games, --games-per-table, --runs, --workers and --bootstrap must be >= 1")
    args.meter = cpu_seconds
    if args.sandbox == "unsandboxed":
        print("CPU measured by getrusage(RUSAGE_SELF) + getrusage(RUSAGE_CHILDREN)")
    else:
        meter = cgroup_meter()
        if meter is None:
            print("warning: no cpuacct cgroup: the CPU of bots killed in bwrap is not counted")
        else:
            args.meter = meter
            print("CPU measured by a cpuacct cgroup holding this process and its descendants")
    rng = random.Random(args.seed)
    began = time.perf_counter()
    for size in sizes:
        compare(args, size, rng)
    print(f"finished in {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
