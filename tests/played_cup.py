"""A tournament played in-process into a real store, for the results and site tests.

The games are played by the engine with random legal moves, their statistics from ``stats.py``,
their replays from ``replay.py``, all written to a real SQLite database through ``store.py``; a
faulty bot times out once in each of its matches. tests/conftest.py loads this module as a
plugin, so that its ``tourney`` fixture serves every module."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from conftest import play_random
from ohseven.core.rules import new_game
from ohseven.referee.records import Fault, FaultStatus, GameRecord
from ohseven.referee.replay import save_replay, to_replay
from ohseven.referee.results.store import Store
from ohseven.referee.stats import game_statistics

BOTS = ("alpha", "beta", "gamma", "Delta Bot")
FAULTY = "Delta Bot"
LOG = "Traceback (most recent call last):\n  File 'bot.py'\nValueError: bad card\n"
#: a fault's traceback as the organiser's machine records it: the bot's staged copy, the
#: referee's own installation, a line far wider than a phone
HOST = "/srv/organiser/cups/2026"
TRACE = (
    "choose_play raised KeyError: '7D' (game 1, round 1, trick 2)\n"
    "Traceback (most recent call last):\n"
    f'  File "{HOST}/out/.bots/0123456789abcdef0123456789abcdef/delta/bot.py", line 11, in f\n'
    f"    return table[view.legal[0]] + {'x' * 150}\n"
    f'  File "{HOST}/venv/lib/python3.11/site-packages/ohseven/sdk/view.py", line 3, in g\n'
    "KeyError: '7D'"
)


def play(game: str, players: int, seed: int, options: dict | None = None):
    return play_random(new_game(game, players, seed, options), random.Random(seed))


def build_tournament(
    out: Path,
    *,
    game: str = "oh-seven",
    table: int = 3,
    games_per_match: int = 3,
    seed: int = 5,
    unfinished: int = 0,
    replays: bool = True,
    reveal_seeds: bool = False,
    game_seed=None,
    site_logs: str | None = None,
    bots: tuple[str, ...] = BOTS,
) -> Path:
    """A round-robin of ``bots`` at tables of ``table``; the last ``unfinished`` matches are
    scheduled but not played. ``FAULTY`` times out in the first game of each of its matches."""
    rng = random.Random(seed)
    tables = list(itertools.combinations(bots, table))
    matches = [
        (index, f"m{index}", seats, index * games_per_match, games_per_match)
        for index, seats in enumerate(tables)
    ]
    (out / "replays").mkdir(parents=True, exist_ok=True)
    config = {
        "name": "test cup",
        "game": game,
        "table_size": table,
        "bots": [{"name": name} for name in bots],
        "schedule": {"type": "round-robin", "games_per_table": games_per_match},
        "seed": seed,
        "reveal_seeds": reveal_seeds,
        **({"site_logs": site_logs} if site_logs else {}),
    }
    with Store.open(out) as store:
        store.setup(digest="d", config=config, secret_fingerprint="f", matches=matches)
        for index, match_id, seats, first, count in matches[: len(matches) - unfinished]:
            store.start_match(index)
            for g in range(count):
                order = list(seats)
                rng.shuffle(order)
                deal = seed * 1000 + index * 10 + g if game_seed is None else game_seed(index, g)
                played = play(game, table, deal)
                faults = ()
                if FAULTY in order and g == 0:
                    seat = order.index(FAULTY)
                    # its first play, as the referee records a timeout there (move from 1)
                    move = next(
                        i for i, (s, kind, _) in enumerate(played.moves, 1)
                        if s == seat and kind == "play"
                    )  # fmt: skip
                    faults = (
                        Fault(seat, FaultStatus.TIMEOUT, "no reply in 1 s", move, 1, 1),
                        Fault(seat, FaultStatus.BOT_ERROR, TRACE, move + table, 1, 2),
                    )
                result = played.result()
                path = None
                if replays:
                    path = f"replays/{match_id}-{g}.json"
                    save_replay(out / path, to_replay(played, order, faults))
                record = GameRecord(
                    match_id,
                    g,
                    played.seed,
                    tuple(order),
                    result.totals,
                    result.ranks,
                    faults,
                    game_statistics(played),
                    path,
                    0.01,
                )
                store.add_game(first + g, index, record)
            store.finish_match(index, {FAULTY: LOG} if FAULTY in seats else {})
    return out


@pytest.fixture(scope="module")
def tourney(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # unfinished, its logs shown all the same (the organiser's choice: ``site_logs``)
    return build_tournament(tmp_path_factory.mktemp("cup"), unfinished=1, site_logs="always")
