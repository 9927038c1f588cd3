"""Schedules and sites that scale: `--check`, the start of a run, the referee's own time per
game, and publishing a large league. Not a test: it prints figures (docs/CONFIG.md quotes them).

Rows:

- ``check``: ``ohseven-referee tourney CONFIG --check`` as a subprocess (real bubblewrap when
  installed; every distinct bot command is started once): wall time and peak memory (the
  child's ``ru_maxrss``) for round-robins of 20, 50 and 100 bots at tables of 4, 20 bots at
  every size from 2 to 9 and a league of 1,000 bots. Goals: the league under 2 s and 200 MB.
- ``start``: ``ohseven-referee tourney CONFIG`` until its first match is marked running in the
  database (polled every 5 ms), then Ctrl-C. Goals: a league of 1,000 bots under 2 s and 200
  MB, a round-robin of 100 bots at tables of 4 under 5 s.
- ``overhead``: ``run_tournament`` with 2 workers and a runner that returns made-up games at
  once, for ``--seconds``, then Ctrl-C (the final leaderboard and site included): the referee's
  own time per game (scheduling, ratings, database, publishing), wall and the referee process's
  CPU, against the wall time per game of a real tournament of the example bots at the same
  table size (the quickstart's bots plus a second random bot, 4 per table, 1 worker). Goal:
  under 5%.
- ``matchmaking``: what drawing a league's next wave costs now that it uses the order-free
  TrueSkill estimate: ``feeds.matchmaking_ratings`` (``ratings.order_free`` of every game so
  far) plus ``schedule.draw_wave`` for a league of 1,000 bots at tables of 4 (a wave: 250
  tables, 1,000 games) after 1,000 to 100,000 made-up games, CPU seconds, against the
  sequential TrueSkill it replaces (kept incrementally by the board: the cost of a wave's
  games) in the same run.
- ``publish``: a store of 1,000 bots and 100,000 made-up games (1,000 of them with a replay)
  written straight into SQLite, published; then 1,000 more games and published again. Goals:
  under a minute, small pages, replays not rewritten.

    python benchmarks/schedule.py [--seconds S] [--only check,start,overhead,matchmaking,publish]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ohseven.core.rules import competition_ranks
from ohseven.referee.plan.loader import example_bots_dir, load_config
from ohseven.referee.plan.run_plan import RunPlan
from ohseven.referee.plan.schedule import SchedulePlan
from ohseven.referee.records import GameRecord, MatchResult, MatchSpec

MODE = "bwrap" if shutil.which("bwrap") else "unsandboxed"


def write_config(
    folder: Path, name: str, bots: int, sizes: list[int], schedule: str, bot: str = "random"
) -> Path:
    """A configuration of ``bots`` copies of an example bot (distinct names, one file)."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    shutil.copy(example_bots_dir() / f"{bot}_bot.py", folder / "bot.py")
    lines = [
        f"name: {name}",
        "game: oh-seven",
        f"table_size: {sizes}",
        "bots:",
        *(f"  - {{name: bot-{i:04d}, file: bot.py}}" for i in range(bots)),
        f"schedule: {schedule}",
        "time_control: {move_seconds: 1, bank_seconds: 10, start_seconds: 10}",
        f"sandbox: {{mode: {MODE}}}",
        "seed: 1",
        "output: out",
    ]
    path = folder / f"{name}.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def referee(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "ohseven.referee.cli.main.main", "tourney", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait(process: subprocess.Popen) -> tuple[int, float, float]:
    """(exit status, peak memory in MB, CPU seconds) of a child, once it ends."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def running(process: subprocess.Popen) -> bool:
    """Whether the child still runs, without reaping it (its usage is read by :func:`wait`)."""
    info = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    return info is None


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system) of a running process so far, from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


CHECKS = [
    ("rr-20x4", 20, [4], "{type: round-robin}"),
    ("rr-50x4", 50, [4], "{type: round-robin}"),
    ("rr-100x4", 100, [4], "{type: round-robin}"),
    ("rr-20x2..9", 20, list(range(2, 10)), "{type: round-robin}"),
    ("league-1000x4", 1000, [4], "{type: league, games: 100000}"),
]


def bench_check(root: Path) -> None:
    print("check: tourney CONFIG --check (a subprocess)")
    for name, bots, sizes, schedule in CHECKS:
        config = write_config(root / name, name, bots, sizes, schedule)
        started = time.monotonic()
        process = referee(str(config), "--check")
        error = process.stderr.read().strip().splitlines() if process.stderr else []
        code, peak, cpu = wait(process)
        seconds = time.monotonic() - started
        note = "" if code == 0 else f"  exit {code}: {error[-1] if error else ''}"
        print(f"  {name:15} {seconds:6.2f} s wall {cpu:6.2f} s CPU {peak:7.0f} MB{note}")


def bench_start(root: Path) -> None:
    print("start: tourney CONFIG until its first match is running")
    for name, bots, sizes, schedule in (
        ("league-1000x4", 1000, [4], "{type: league, games: 100000}"),
        ("rr-100x4", 100, [4], "{type: round-robin}"),
    ):
        config = write_config(root / f"start-{name}", name, bots, sizes, schedule)
        database = config.parent / "out" / "tournament.sqlite"
        started = time.monotonic()
        process = referee(str(config), "--quiet", "--workers", "2")
        seconds = None
        while running(process) and time.monotonic() - started < 120:
            if database.exists():
                try:
                    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
                        begun = db.execute(
                            "SELECT COUNT(*) FROM matches WHERE status != 'pending'"
                        ).fetchone()[0]
                except sqlite3.Error:
                    begun = 0
                if begun:
                    seconds = time.monotonic() - started
                    break
            time.sleep(0.005)
        cpu_then = _cpu_of(process.pid)
        process.send_signal(signal.SIGINT)
        _, peak, _ = wait(process)
        shown = f"{seconds:6.2f} s wall" if seconds is not None else "  none"
        print(f"  {name:15} {shown} {cpu_then:6.2f} s CPU {peak:7.0f} MB (peak of the run)")


# --------------------------------------------------------------------------- overhead


def instant_runner(spec: MatchSpec, *, on_game: Any = None, **_: Any) -> MatchResult:
    """Made-up games at once: the referee's own costs with no time in the bots."""
    games = []
    for index, (seating, seed) in enumerate(zip(spec.seatings, spec.seeds, strict=True)):
        rng = random.Random(seed)
        totals = tuple(rng.randint(-20, 20) for _ in seating)
        record = GameRecord(
            spec.match_id,
            index,
            seed,
            tuple(spec.bots[i].name for i in seating),
            totals,
            tuple(competition_ranks(totals)),
            stats={"table": {"rounds": 7}},
        )
        games.append(record)
        if on_game is not None:
            on_game(record)
    return MatchResult(spec, tuple(games))


def overhead_child(config_path: str) -> None:
    """Run with the instant runner until SIGINT; print games, wall and CPU seconds."""
    from ohseven.referee.tournament.run import run_tournament

    config = load_config(config_path)
    started, cpu = time.monotonic(), time.process_time()
    outcome = run_tournament(config, workers=2, runner=instant_runner, fresh=True)
    print(
        json.dumps(
            {
                "games": outcome.played_games,
                "wall": time.monotonic() - started,
                "cpu": time.process_time() - cpu,
            }
        )
    )


def real_seconds_per_game(root: Path) -> float:
    """Wall seconds per game of the example bots (quickstart settings), 4 per table."""
    folder = root / "real"
    folder.mkdir()
    folder.chmod(0o755)
    bots = example_bots_dir()
    text = f"""
name: real
game: oh-seven
table_size: 4
bots:
  - {{name: random, file: {bots / "random_bot.py"}}}
  - {{name: random-2, file: {bots / "random_bot.py"}}}
  - {{name: heuristic, file: {bots / "heuristic_bot.py"}}}
  - {{name: montecarlo, file: {bots / "montecarlo_bot.py"}, args: [--samples, "60"]}}
schedule: {{type: round-robin, games_per_table: 2}}
time_control: {{move_seconds: 0.3, bank_seconds: 5, start_seconds: 10}}
sandbox: {{mode: {MODE}}}
seed: 2
output: out
"""
    (folder / "real.yaml").write_text(text)
    from ohseven.referee.tournament.run import run_tournament

    started = time.monotonic()
    outcome = run_tournament(load_config(folder / "real.yaml"), workers=1)
    return (time.monotonic() - started) / outcome.played_games


def bench_overhead(root: Path, seconds: float) -> None:
    print(f"overhead: instant games for {seconds:.0f} s, 2 workers, then Ctrl-C")
    real = real_seconds_per_game(root)
    print(f"  the example bots at 4 per table: {real * 1000:.0f} ms of wall time per game")
    for name, bots, sizes, schedule in (
        ("league-1000x4", 1000, [4], "{type: league, games: 100000}"),
        ("rr-100x4", 100, [4], "{type: round-robin}"),
    ):
        config = write_config(root / f"overhead-{name}", name, bots, sizes, schedule)
        process = subprocess.Popen(
            [sys.executable, __file__, "--overhead-child", str(config)],
            stdout=subprocess.PIPE,
            text=True,
        )
        time.sleep(seconds)
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate()
        figures = json.loads(out.strip().splitlines()[-1])
        games = max(1, figures["games"])
        wall, cpu = figures["wall"] / games, figures["cpu"] / games
        print(
            f"  {name:15} {figures['games']:7d} games: {wall * 1000:6.2f} ms wall/game "
            f"({100 * wall / real:.2f}% of a real game), referee CPU {cpu * 1000:6.2f} ms/game "
            f"({100 * cpu / real:.2f}%)"
        )


# --------------------------------------------------------------------------- matchmaking


def made_up_league(bots: int, games: int, seed: int = 1) -> list[GameRecord]:
    """``games`` made-up games of ``bots`` bots, 4 per table, totals from a hidden skill."""
    rng = random.Random(seed)
    names = [f"bot-{i:04d}" for i in range(bots)]
    skill = {name: rng.gauss(0, 3) for name in names}
    records = []
    for table in range(games // 4):
        seats = rng.sample(names, 4)
        for game in range(4):
            order = tuple(seats[game:] + seats[:game])
            totals = tuple(round(skill[name] + rng.gauss(0, 8)) for name in order)
            records.append(
                GameRecord(
                    f"m{table:05d}",
                    game,
                    rng.getrandbits(63),
                    order,
                    totals,
                    tuple(competition_ranks(totals)),
                )
            )
    return records


def bench_matchmaking(root: Path, games: list[int]) -> None:
    from collections import Counter

    from ohseven.referee.plan.schedule import draw_wave
    from ohseven.referee.results.board import Leaderboard
    from ohseven.referee.results.ratings import Ratings
    from ohseven.referee.tournament.feeds import matchmaking_ratings

    wave = 1000  # 250 tables of 4, one game per seat rotation each
    print(f"matchmaking: a wave of a league of 1,000 bots at tables of 4 ({wave:,} games)")
    config = load_config(
        write_config(root / "matchmaking", "mm", 1000, [4], "{type: league, games: 1000000}")
    )
    records = made_up_league(1000, max(games) + wave)
    for count in games:
        board = Leaderboard(RunPlan.resolve(config, b"s" * 32), count)
        board.games = dict(enumerate(records[:count]))  # (not rated sequentially: not timed)
        started = time.process_time()
        ratings = matchmaking_ratings(board)
        free = time.process_time() - started
        played = Counter(name for record in records[:count] for name in record.seats)
        started = time.process_time()
        draw_wave(
            SchedulePlan.of(config),
            b"s" * 32,
            count // wave,
            config.bot_names,
            ratings,
            played,
            10**9,
        )
        draw = time.process_time() - started
        sequential = Ratings(config.game, config.bot_names)
        started = time.process_time()  # what the sequential board spent on a wave's games
        for record in records[count : count + wave]:
            sequential.apply(record)
        old = time.process_time() - started
        print(
            f"  after {count:7,} games: order-free {free:6.2f} s CPU + draw {draw:5.2f} s "
            f"= {1e3 * (free + draw) / wave:5.2f} ms per game of the next wave; the sequential "
            f"TrueSkill of a wave's games {old:5.2f} s"
        )


# --------------------------------------------------------------------------- publish


def synthetic_store(output: Path, bots: int, games: int, replays: int, start: int = 0) -> None:
    """``games`` made-up games of a league of ``bots`` straight into SQLite (one transaction),
    4 per table; the first ``replays`` games of this batch get a replay file (one real game's)."""
    from ohseven.core.rules import Phase, new_game
    from ohseven.referee.replay import save_replay, to_replay
    from ohseven.referee.results.store import Store
    from ohseven.referee.stats import game_statistics

    rng = random.Random(start + 1)
    played = new_game("oh-seven", 4, 7)
    moves = random.Random(7)
    while played.phase is not Phase.OVER:
        for seat in played.to_act:
            played.push(seat, moves.choice(list(played.legal_moves(seat))))
    stats = json.dumps(game_statistics(played), sort_keys=True)
    names = [f"bot-{i:04d}" for i in range(bots)]
    (output / "replays").mkdir(parents=True, exist_ok=True)
    sample = output / "replays" / "sample.json"
    if not sample.exists():
        save_replay(sample, to_replay(played, names[:4], ()))
    with Store.open(output) as store:
        if start == 0:
            config = {
                "name": "big league",
                "game": "oh-seven",
                "table_size": 4,
                "bots": [{"name": name} for name in names],
                "schedule": {"type": "league", "games": games},
            }
            store.setup(digest="d", config=config, secret_fingerprint="f")
        with store.transaction() as db:
            for table in range(start // 4, (start + games) // 4):
                seats = rng.sample(names, 4)
                match_id = f"m{table:05d}"
                db.execute(
                    "INSERT INTO matches VALUES (?, ?, ?, ?, 4, 'done', 0, 0)",
                    (table, match_id, json.dumps(sorted(seats)), table * 4),
                )
                for game in range(4):
                    canonical = table * 4 + game
                    totals = [rng.randint(-20, 20) for _ in seats]
                    replay = None
                    if canonical - start < replays:
                        replay = f"replays/{match_id}-{game}.json"
                        shutil.copy(sample, output / replay)
                    db.execute(
                        "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            canonical,
                            table,
                            match_id,
                            game,
                            canonical,
                            json.dumps(seats[game:] + seats[:game]),
                            json.dumps(totals),
                            json.dumps(competition_ranks(totals)),
                            stats,
                            "[]",
                            replay,
                            0.1,
                            0.0,
                        ),
                    )
        total = start + games
        store.set_meta({"games_total": str(total), "matches_total": str(total // 4)})


def bench_publish(root: Path, games: int) -> None:
    from ohseven.referee.site.publish import REPLAY_DATA, publish

    print(f"publish: 1,000 bots, {games:,} made-up games (1,000 with a replay)")
    output = root / "site"
    synthetic_store(output, 1000, games, 1000)
    started, cpu = time.monotonic(), time.process_time()
    written = publish(output)
    first, first_cpu = time.monotonic() - started, time.process_time() - cpu
    pages = [p for p in output.rglob("*.html")]
    largest = max(pages, key=lambda p: p.stat().st_size)
    print(
        f"  first publish  {first:6.1f} s wall {first_cpu:6.1f} s CPU, {len(written)} files "
        f"written; {len(pages)} pages, "
        f"the largest {largest.relative_to(output)} {largest.stat().st_size / 1e6:.2f} MB, "
        f"games.html {(output / 'games.html').stat().st_size / 1e3:.0f} kB"
    )
    synthetic_store(output, 1000, 1000, 10, start=games)
    started, cpu = time.monotonic(), time.process_time()
    written = publish(output)
    again, again_cpu = time.monotonic() - started, time.process_time() - cpu
    scripts = [p for p in written if p.parent.name == REPLAY_DATA and p.suffix == ".js"]
    print(
        f"  after 1,000 more games (10 with a replay): {again:6.1f} s wall {again_cpu:6.1f} s "
        f"CPU, {len(written)} files "
        f"written, {len(scripts)} of them replay scripts"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--only", default="check,start,overhead,matchmaking,publish")
    parser.add_argument("--matchmaking-games", default="1000,10000,50000,100000")
    parser.add_argument("--publish-games", type=int, default=100_000)
    parser.add_argument("--overhead-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.overhead_child:
        overhead_child(args.overhead_child)
        return
    root = Path(tempfile.mkdtemp(prefix="ohseven-bench-schedule-"))
    root.chmod(0o755)
    try:
        wanted = set(args.only.split(","))
        load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
        print(f"sandbox: {MODE}; cores: {os.cpu_count()}; load average {load}")
        if "check" in wanted:
            bench_check(root)
        if "start" in wanted:
            bench_start(root)
        if "overhead" in wanted:
            bench_overhead(root, args.seconds)
        if "matchmaking" in wanted:
            bench_matchmaking(root, [int(n) for n in args.matchmaking_games.split(",")])
        if "publish" in wanted:
            bench_publish(root, args.publish_games)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
