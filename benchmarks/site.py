"""Publishing a large league: the time, memory and page sizes of ``publish`` on a real store.

Builds a tournament database with the real schema (``referee/store.py``) of ``--bots`` bots and
``--games`` games, publishes it (the first build), adds 1% more games and publishes again (the
republish), each publish in a fresh child process, and prints for each: wall time, CPU time
(the child's and that of the processes it forked), peak RSS (the child's ``ru_maxrss``), files
written, replay scripts written, and the largest page and the largest file of the site. Not a
test: it prints figures (benchmarks/README.md quotes them).

How the games are made: ``--templates`` real games are played in-process by the rules engine
with uniformly random legal moves (every table size of ``--table-sizes``), each with its
statistics (``stats.game_statistics``), totals, ranks and replay (``replay.to_replay``). The
league's matches are tables of bots drawn so that every bot plays about as often (a shuffled
list of the bots cut into tables); a match is one game per seat rotation (duplicate deals: its
games share a seed), each game a template of that table size with the drawn bots in its seats.
About 1% of the games get a ``timeout`` fault of one seat (and that bot's output in the
match's logs). ``--replays`` is the share of games with a replay file (the template's replay
with the bots' names in its seats), as a league with ``replays: true`` keeps for every game.

``--code DIR`` (repeatable) publishes the same store with the referee package of another
checkout too (``DIR/referee``, e.g. a worktree of main), each variant on its own copy of the
store made before anything is published, interleaved, so the figures of one run compare.

    python benchmarks/site.py [--bots 1000] [--games 100000] [--replays 0.01] [--code DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RULES_GAME = "oh-seven"


# --------------------------------------------------------------------------- the games


def play_templates(count: int, sizes: list[int], seed: int) -> dict[int, list[dict[str, Any]]]:
    """``count`` real games per table size, played with random legal moves."""
    from ohseven.core.rules import Phase, new_game
    from ohseven.referee.replay import to_replay
    from ohseven.referee.stats import game_statistics

    rng = random.Random(seed)
    templates: dict[int, list[dict[str, Any]]] = {}
    for size in sizes:
        for number in range(count):
            game = new_game(RULES_GAME, size, rng.getrandbits(63))
            while game.phase is not Phase.OVER:
                for seat in game.to_act:
                    game.push(seat, rng.choice(list(game.legal_moves(seat))))
            result = game.result()
            replay = json.dumps(to_replay(game, None, ()), separators=(",", ":"))
            placeholder = json.dumps([None] * size, separators=(",", ":"))
            head, tail = replay.split(f'"seats":{placeholder}', 1)
            templates.setdefault(size, []).append(
                {
                    "number": number,
                    "totals": list(result.totals),
                    "ranks": list(result.ranks),
                    "stats": json.dumps(game_statistics(game), sort_keys=True),
                    "replay": (head + '"seats":', tail),
                }
            )
    return templates


def add_games(
    output: Path,
    *,
    bots: int,
    games: int,
    sizes: list[int],
    templates: dict[int, list[dict[str, Any]]],
    replays: float,
    seed: int,
) -> int:
    """Append about ``games`` games (whole matches, status done) to the store in ``output``,
    creating it first; returns how many were written."""
    from ohseven.referee.results.store import Store

    rng = random.Random(seed)
    names = [f"bot-{i:04d}" for i in range(bots)]
    replay_dir = output / "replays"
    replay_dir.mkdir(parents=True, exist_ok=True)
    written = 0
    with Store.open(output) as store:
        if store.digest is None:
            config = {
                "name": "big league",
                "game": RULES_GAME,
                "table_size": sizes,
                "replays": replays > 0,
                "bots": [{"name": name, "command": ["python3", "bot.py"]} for name in names],
                "schedule": {"type": "league", "games": games, "deals": "duplicate"},
            }
            store.setup(digest="synthetic", config=config, secret_fingerprint="synthetic")
        match_index, canonical = store.next_match_index()
        pool: list[str] = []
        with store.transaction() as db:
            while written < games:
                size = rng.choice(sizes)
                table = [pool.pop() for _ in range(min(size, len(pool)))]
                if len(table) < size:  # the next round of every bot, without those seated
                    pool = [name for name in rng.sample(names, len(names)) if name not in table]
                    table += [pool.pop() for _ in range(size - len(table))]
                match_id = f"w{match_index // 100:04d}-m{match_index:06d}"
                deal_seed = rng.getrandbits(63)
                db.execute(
                    "INSERT INTO matches VALUES (?, ?, ?, ?, ?, 'done', 0, 0)",
                    (match_index, match_id, json.dumps(sorted(table)), canonical, size),
                )
                faulted: set[str] = set()
                for game_index in range(size):
                    seats = table[game_index:] + table[:game_index]
                    template = rng.choice(templates[size])
                    faults = []
                    if rng.random() < 0.01:
                        seat = rng.randrange(size)
                        faults.append(
                            {"seat": seat, "status": "timeout", "detail": "no reply in 1.0 s"}
                        )
                        faulted.add(seats[seat])
                    replay_path = None
                    if rng.random() < replays:
                        path = replay_dir / f"{match_id}-game{game_index:03d}.json"
                        head, tail = template["replay"]
                        path.write_text(head + json.dumps(seats) + tail + "\n", encoding="utf-8")
                        replay_path = str(path)
                    db.execute(
                        "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            canonical,
                            match_index,
                            match_id,
                            game_index,
                            deal_seed,
                            json.dumps(seats),
                            json.dumps(template["totals"]),
                            json.dumps(template["ranks"]),
                            template["stats"],
                            json.dumps(faults),
                            replay_path,
                            0.5,
                            time.time(),
                        ),
                    )
                    db.executemany(
                        "INSERT INTO faults VALUES (?, ?, ?, ?, ?)",
                        [
                            (canonical, f["seat"], seats[f["seat"]], f["status"], f["detail"])
                            for f in faults
                        ],
                    )
                    canonical += 1
                    written += 1
                db.executemany(
                    "INSERT INTO logs VALUES (?, ?, ?)",
                    [(match_index, bot, "Traceback ...\nTimeoutError\n") for bot in faulted],
                )
                match_index += 1
        store.set_meta({"games_total": str(canonical), "matches_total": str(match_index)})
    return written


# --------------------------------------------------------------------------- publishing


def child(directory: str) -> None:
    """Publish ``directory`` in this process and print the figures as JSON."""
    from ohseven.referee.site import publish as module

    started, cpu = time.monotonic(), time.process_time()
    written = module.publish(directory)
    wall, cpu = time.monotonic() - started, time.process_time() - cpu
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # a publish may fork helpers
    cpu += children.ru_utime + children.ru_stime
    scripts = sum(1 for p in written if p.parent.name == "replay-data" and p.suffix == ".js")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "wall": wall,
                "cpu": cpu,
                "rss_mb": usage.ru_maxrss / 1024,
                "written": len(written),
                "scripts": scripts,
                "module": module.__file__,
            }
        )
    )


def code_path(code: str | None, root: Path) -> dict[str, str]:
    """The environment of a child that imports ``ohseven.referee`` from ``code``'s tree."""
    env = dict(os.environ)
    if code is None:
        return env
    tree = Path(code).resolve()
    shim = root / f"shim-{abs(hash(str(tree)))}" / "ohseven"
    if not shim.exists():
        shim.mkdir(parents=True)
        (shim / "__init__.py").write_text("")
        for part in ("referee", "sdk", "example_bots"):
            (shim / part).symlink_to(tree / part)
    env["PYTHONPATH"] = str(shim.parent) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_publish(directory: Path, env: dict[str, str]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(directory)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"publish of {directory} failed:\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def site_sizes(directory: Path) -> str:
    pages = list(directory.rglob("*.html"))
    files = [p for p in directory.rglob("*") if p.is_file() and "replays" not in p.parts]
    files = [p for p in files if p.name != "tournament.sqlite" and not p.name.endswith("-wal")]
    page = max(pages, key=lambda p: p.stat().st_size)
    data = max(
        (p for p in files if p.suffix != ".html" and p.parent.name != "static"),
        key=lambda p: p.stat().st_size,
    )
    return (
        f"{len(pages)} pages, largest {page.relative_to(directory)} "
        f"{page.stat().st_size / 1e3:.0f} kB; largest data file "
        f"{data.relative_to(directory)} {data.stat().st_size / 1e3:.0f} kB"
    )


def line(label: str, figures: dict[str, Any], directory: Path) -> str:
    return (
        f"  {label:<28} {figures['wall']:7.1f} s wall {figures['cpu']:7.1f} s CPU "
        f"{figures['rss_mb']:6.0f} MB peak; {figures['written']} files written "
        f"({figures['scripts']} replay scripts); {site_sizes(directory)}"
    )


def copy_or_link(source: str, target: str) -> None:
    """Replays hard-linked (never written again), everything else copied (the database)."""
    if Path(source).parent.name == "replays":
        os.link(source, target)
    else:
        shutil.copy2(source, target)


def bench(args: argparse.Namespace, root: Path, bots: int, games: int) -> None:
    sizes = [int(s) for s in args.table_sizes.split(",")]
    started = time.monotonic()
    templates = play_templates(args.templates, sizes, args.seed)
    base = root / f"store-{bots}-{games}"
    made = add_games(
        base,
        bots=bots,
        games=games,
        sizes=sizes,
        templates=templates,
        replays=args.replays,
        seed=args.seed,
    )
    print(
        f"{bots} bots, {made} games (tables of {args.table_sizes}, "
        f"{100 * args.replays:g}% with a replay): store built in "
        f"{time.monotonic() - started:.1f} s"
    )
    variants = [("this tree", None), *((code, code) for code in args.code)]
    folders = {}
    for label, _ in variants:
        folder = root / f"site-{len(folders)}"
        shutil.copytree(base, folder, copy_function=copy_or_link)
        folders[label] = folder
    shutil.rmtree(base)
    for step in ("first build", "republish"):
        if step == "republish":
            extra = max(1, games // 100)
            for label, _ in variants:
                add_games(
                    folders[label],
                    bots=bots,
                    games=extra,
                    sizes=sizes,
                    templates=templates,
                    replays=args.replays,
                    seed=args.seed + 1,
                )
            print(f"  + {extra} games")
        for label, code in variants:
            figures = run_publish(folders[label], code_path(code, root))
            print(line(f"{step} ({label})", figures, folders[label]), flush=True)
    for folder in folders.values():
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--size",
        action="append",
        help="BOTSxGAMES, repeatable (default: 100x10000 and 1000x100000)",
    )
    parser.add_argument("--table-sizes", default="4", help="comma-separated (default 4)")
    parser.add_argument("--templates", type=int, default=50, help="real games per table size")
    parser.add_argument("--replays", type=float, default=0.01, help="share of games with one")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--code", action="append", default=[], help="another checkout")
    parser.add_argument("--keep", help="build the store in this folder and keep it")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    sizes = args.size or ["100x10000", "1000x100000"]
    root = Path(tempfile.mkdtemp(prefix="ohseven-bench-site-", dir=args.keep))
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"cores: {os.cpu_count()}; load average {load}")
    try:
        for size in sizes:
            bots, games = (int(part) for part in size.lower().split("x"))
            bench(args, root, bots, games)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
