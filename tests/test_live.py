"""The server's live view (``server.live``) on a real tournament database: games taken in as
their matches finish (many at once in one query, then match by match), pages of games by
canonical index, rating changes in match order, and the live leaderboard: the same as the run
loop's for the same games, served instead of a ``leaderboard.json`` that is behind."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from ohseven.core.rules import competition_ranks
from ohseven.referee.plan.config import TourneyConfig
from ohseven.referee.plan.loader import load_config
from ohseven.referee.plan.run_plan import RunPlan
from ohseven.referee.records import GameRecord
from ohseven.referee.results.board import LEADERBOARD_NAME, Leaderboard
from ohseven.referee.results.store import Store
from ohseven.referee.server.live import LiveView

BOTS = [f"bot{i:02d}" for i in range(12)]
EXAMPLES = Path(__file__).resolve().parent.parent / "example_bots"


@pytest.fixture
def config(tmp_path: Path) -> TourneyConfig:
    bots = "\n".join(f"  - {{name: {name}, file: {EXAMPLES / 'random_bot.py'}}}" for name in BOTS)
    path = tmp_path / "league.yaml"
    path.write_text(
        f"name: live\ngame: oh-seven\ntable_size: 3\nbots:\n{bots}\n"
        "schedule: {type: league, games: 1000}\noutput: out\n"
    )
    return load_config(str(path))


def play(store: Store, rng: random.Random, first: int, count: int, finish: bool = True) -> None:
    """Matches ``first`` .. ``first + count - 1`` of 3 games each, their outcomes drawn."""
    for index in range(first, first + count):
        table = rng.sample(BOTS, 3)
        store.add_matches([(index, f"m{index:05d}", table, 3 * index, 3)])
        store.start_match(index)
        for game in range(3):
            seats = table[game:] + table[:game]
            totals = [rng.randint(0, 15) for _ in seats]
            record = GameRecord(
                f"m{index:05d}",
                game,
                index,
                tuple(seats),
                tuple(totals),
                competition_ranks(totals),
                stats={"table": {"rounds": 7}},
            )
            store.add_game(3 * index + game, index, record)
        if finish:
            store.finish_match(index, {})


def reference(config: TourneyConfig, store: Store) -> dict:
    board = Leaderboard(RunPlan.resolve(config, b"s" * 32), 1000, 0, sorted(store.bot_names()))
    for stored in store.games(finished_matches_only=True):
        board.add(stored.canonical_index, stored.record)
    return board.document()


def test_live_view_follows_the_games_and_ranks_them_as_the_run_loop(
    config: TourneyConfig,
) -> None:
    rng = random.Random(4)
    output = Path(config.output)
    with Store.open(output) as store:
        store.setup(digest=config.digest, config=config.document, secret_fingerprint="f")
        store.set_meta({"games_total": "1000", "matches_total": "300"})
        play(store, rng, 0, 80)  # more than one look reads match by match: in one query
        live = LiveView(output, "oh-seven")
        try:
            live.refresh()
            assert live.game_count() == 240
            board = live.leaderboard()
            assert board is not None and board["games_played"] == 240
            expected = reference(config, store)
            assert [row["name"] for row in board["bots"]] == [r["name"] for r in expected["bots"]]
            for row, other in zip(board["bots"], expected["bots"], strict=True):
                assert abs(row["mu"] - other["mu"]) < 1e-5 and row["games"] == other["games"]
                assert row["points_per_game_ci"] == other["points_per_game_ci"]
            assert (board["games_total"], board["matches_done"]) == (1000, 80)

            # pages of games: sorted by canonical index, after an index, of one bot
            page = live.games(after=100, limit=7)
            assert [row["canonical"] for row in page] == list(range(101, 108))
            assert [row["canonical"] for row in live.games(limit=3)] == [237, 238, 239]
            mine = live.games(bot="bot03", limit=1000)
            assert mine and all("bot03" in [p["name"] for p in r["players"]] for r in mine)
            assert [row["canonical"] for row in mine] == sorted(row["canonical"] for row in mine)
            assert all(p["rating_change"] is not None for r in page for p in r["players"])

            # a match still running holds the rating changes of later ones back, not their rows
            play(store, rng, 80, 1, finish=False)
            play(store, rng, 81, 2)
            live.next_document = 0.0
            live.refresh()
            assert live.game_count() == 246
            later = live.games(after=242, limit=3)
            assert [row["match_id"] for row in later] == ["m00081"] * 3
            assert all(p["rating_change"] is None for r in later for p in r["players"])
            assert live.leaderboard()["games_played"] == 246  # type: ignore[index]
            store.finish_match(80, {})
            live.next_document = 0.0
            live.refresh()
            assert live.game_count() == 249
            assert all(
                p["rating_change"] is not None
                for r in live.games(after=239, limit=20)
                for p in r["players"]
            )
            expected = reference(config, store)
            board = live.leaderboard()
            assert board is not None and board["games_played"] == 249
            for row, other in zip(board["bots"], expected["bots"], strict=True):
                assert row["name"] == other["name"]
                assert row["sequential_mu"] == other["sequential_mu"]

            # the run loop's file, once it counts every game, is served instead (it is exact)
            (output / LEADERBOARD_NAME).write_text(json.dumps({**expected, "mark": "file"}))
            live.refresh()
            assert live.leaderboard()["mark"] == "file"  # type: ignore[index]
            play(store, rng, 83, 1)  # ... and not when it is behind
            live.next_document = 0.0
            live.refresh()
            board = live.leaderboard()
            assert board is not None and "mark" not in board and board["games_played"] == 252
        finally:
            if live.store is not None:
                live.store.close()


def test_the_live_leaderboard_is_made_at_most_so_often(config: TourneyConfig) -> None:
    """New games alone do not rebuild it before ``next_document``; the next look after does."""
    rng = random.Random(5)
    output = Path(config.output)
    with Store.open(output) as store:
        store.setup(digest=config.digest, config=config.document, secret_fingerprint="f")
        play(store, rng, 0, 2)
        live = LiveView(output, "oh-seven")
        try:
            made: list[int] = []  # what a listener (the server's JSON) sees, in the view's thread
            live.listeners.append(
                lambda: made.append(live.leaderboard()["games_played"])  # type: ignore[index]
            )
            live.refresh()
            version = live.version
            live.next_document = float("inf")
            play(store, rng, 2, 1)
            live.refresh()
            assert live.game_count() == 9 and live.version == version and live.stale
            assert live.leaderboard()["games_played"] == 6  # type: ignore[index]
            live.next_document = 0.0
            live.refresh()
            assert live.version > version and not live.stale
            assert live.leaderboard()["games_played"] == 9  # type: ignore[index]
            assert made == [6, 9]  # once per document, after it is the one served (not 9 twice)
        finally:
            if live.store is not None:
                live.store.close()
