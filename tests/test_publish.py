"""The published leaderboards and the data behind every page of the site.

The tournament is real: games played in-process by the engine with random legal moves, their
statistics from ``stats.py``, their replays from ``replay.py``, all written to a real SQLite
database through ``store.py``.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import attrs
import pytest
from conftest import play_random
from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.core.rules import competition_ranks, new_game
from ohseven.referee.records import Fault, FaultStatus, GameRecord
from ohseven.referee.replay import load_replay, save_replay, to_replay
from ohseven.referee.results.archive import (
    PublishError,
    Tournament,
    game_id,
    load_tournament,
    rated_records,
    slugify,
    unique_slugs,
)
from ohseven.referee.results.leaderboard import (
    LEADERBOARD_FORMAT,
    LEADERBOARD_VERSION,
    bot_statistics,
    leaderboard,
    leaderboard_csv,
    leaderboard_markdown,
    statistics_of,
)
from ohseven.referee.results.ratings import game_ranks, order_free, rate_games
from ohseven.referee.results.store import Store, StoredGame, aggregate
from ohseven.referee.secret import derive_seed
from ohseven.referee.site import publish as publish_module
from ohseven.referee.site.pages import (
    bid_tricks,
    bot_view,
    head_to_head,
    rating_history,
    table_statistics,
)
from ohseven.referee.site.publish import REPLAY_DATA, publish
from ohseven.referee.site.replay_view import (
    compact_frames,
    expand_frames,
    replay_script,
    replay_view,
    round_outcomes,
)
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


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    out = build_tournament(tmp_path_factory.mktemp("site"))
    return out, publish(out)


class TestNames:
    @given(st.text(max_size=30))
    def test_slug_is_safe_for_file_names(self, name: str) -> None:
        """A slug is non-empty and uses only lowercase letters, digits, dot, dash, underscore."""
        slug = slugify(name)
        assert slug and all(c in "abcdefghijklmnopqrstuvwxyz0123456789._-" for c in slug)

    @given(st.lists(st.text(max_size=8), max_size=12))
    def test_unique_slugs_are_distinct(self, names: list[str]) -> None:
        """Names that slug alike still get distinct slugs."""
        slugs = unique_slugs(names)
        assert set(slugs) == set(names)
        assert len(set(slugs.values())) == len(slugs)

    def test_game_id_is_url_safe(self) -> None:
        """A game id names the match and the game index without URL-unsafe characters."""
        assert game_id("R1 t/2", 3) == "r1-t-2-g3"


class TestReplayView:
    @pytest.mark.parametrize(
        ("game", "players", "options"),
        [
            ("oh-seven", 4, {"passing": True}),
            ("oh-seven", 6, {}),
            ("oh-hell", 3, {}),
            ("oh-hell", 4, {"simultaneous_bids": True}),
        ],
    )
    def test_frames_follow_the_game(self, game: str, players: int, options: dict) -> None:
        """The last frame shows the final totals; one frame ends each trick, with the cards
        played and the winner the engine recorded; hands shrink by one card per trick."""
        played = play(game, players, 11, options)
        replay = to_replay(played, [f"b{i}" for i in range(players)])
        view = replay_view(replay)
        frames = view["frames"]
        assert frames[-1]["totals"] == list(played.result().totals)
        assert view["result"]["totals"] == list(played.result().totals)
        tricks = [e for e in played.events if e["type"] == "trick"]
        assert len(view["tricks"]) == len(tricks)
        for index, event in zip(view["tricks"], tricks, strict=True):
            frame = frames[index]
            assert [card for _, card in frame["trick"]] == event["cards"]
            assert frame["winner"] == event["winner"]
        rounds = [e for e in played.events if e["type"] == "round" and e.get("deal", 0) == 0]
        assert len(view["rounds"]) == len(rounds)
        for index in view["tricks"]:
            frame = frames[index]
            left = frame["hand_size"] - frame["trick_no"]
            assert all(len(hand) == left for hand in frame["hands"])

    def test_deal_and_pass_frames_show_the_private_hands(self) -> None:
        """A deal frame shows every seat's dealt hand; after the pass, each hand lost the cards
        it gave and holds the cards it received."""
        played = play("oh-seven", 3, 4, {"passing": True})
        view = replay_view(to_replay(played, ["a", "b", "c"]))
        frames = view["frames"]
        deals = [e for e in played.events if e["type"] == "deal"][:3]
        assert frames[0]["kind"] == "deal"
        assert frames[0]["hands"] == [e["hand"] for e in deals]
        pass_frames = [f for f in frames if f["kind"] == "pass"]
        assert pass_frames, "rounds 2-6 pass cards"
        first = pass_frames[0]
        before = frames[frames.index(first) - 1]["hands"]
        for p in first["passes"]:
            giver, receiver = p["giver"], p["receiver"]
            assert not set(p["cards"]) & (set(first["hands"][giver]) - set(before[receiver]))
            assert set(p["cards"]) <= set(first["hands"][receiver])
        assert all(len(hand) == 7 for hand in first["hands"])

    def test_every_bid_attempt_is_shown_with_its_bonus(self) -> None:
        """Each Oh-Seven bids event appears as an attempt; a forced attempt's bonus points are
        in the running totals at once and the score frames agree with the engine's totals."""
        for seed in range(200):
            played = play("oh-seven", 3, seed)
            if any(e["type"] == "bids" and e["forced"] for e in played.events):
                break
        view = replay_view(to_replay(played, ["a", "b", "c"]))
        attempts = [e for e in played.events if e["type"] == "bids"]
        shown = [f for f in view["frames"] if f["kind"] in ("bids", "rebid")]
        assert len(shown) == len(attempts)
        assert any(f["kind"] == "rebid" for f in shown)
        scores = [e for e in played.events if e["type"] == "score"]
        score_frames = [f for f in view["frames"] if f["kind"] == "score"]
        assert [f["totals"] for f in score_frames] == [e["totals"] for e in scores]
        forced = next(f for f in shown if f["kind"] == "rebid")
        assert sum(forced["bonus"]) >= 1

    @settings(max_examples=15, deadline=None)
    @given(st.integers(0, 10_000), st.sampled_from([("oh-seven", 5), ("oh-hell", 5)]))
    def test_compact_frames_expand_back(self, seed: int, table: tuple[str, int]) -> None:
        """The delta form written for the viewer expands to exactly the full frames."""
        played = play(table[0], table[1], seed)
        frames = replay_view(to_replay(played))["frames"]
        assert expand_frames(compact_frames(frames)) == frames

    def test_round_outcomes_are_the_scored_bids_and_tricks(self) -> None:
        """One [seat, bid, tricks] per seat and scored round, as the score events say."""
        played = play("oh-hell", 4, 3)
        outcomes = round_outcomes(to_replay(played))
        scores = [e for e in played.events if e["type"] == "score"]
        assert len(outcomes) == 4 * len(scores)
        assert outcomes[:4] == [[s, scores[0]["bids"][s], scores[0]["tricks"][s]] for s in range(4)]


class TestLeaderboard:
    def test_ratings_are_order_free_trueskill(self, tourney: Path) -> None:
        """Every bot's mu and sigma are the order-free TrueSkill estimate of the stored games,
        the sequential ones (canonical order) are extra fields; score is mu - 3 sigma and the
        rows are sorted by it."""
        t = load_tournament(tourney)
        board = leaderboard(t)
        ratings = rate_games("oh-seven", BOTS, t.records)
        free = order_free(t.records, BOTS)
        for row in board["bots"]:
            rating = ratings.ratings[row["name"]]
            assert row["mu"] == pytest.approx(free[row["name"]][0], abs=1e-5)
            assert row["sigma"] == pytest.approx(free[row["name"]][1], abs=1e-5)
            assert row["sequential_mu"] == pytest.approx(rating.mu, abs=1e-5)
            assert row["sequential_sigma"] == pytest.approx(rating.sigma, abs=1e-5)
            assert row["score"] == pytest.approx(row["mu"] - 3 * row["sigma"], abs=1e-5)
        scores = [row["score"] for row in board["bots"]]
        assert scores == sorted(scores, reverse=True)
        assert [row["rank"] for row in board["bots"]] == list(range(1, len(BOTS) + 1))

    def test_counts_match_the_records(self, tourney: Path) -> None:
        """Games, points, wins and faults per bot are the sums over the stored games."""
        t = load_tournament(tourney)
        board = leaderboard(t)
        for row in board["bots"]:
            seats = [(r, r.seats.index(row["name"])) for r in t.records if row["name"] in r.seats]
            assert row["games"] == len(seats)
            assert row["points"] == sum(r.totals[s] for r, s in seats)
            ranks = [game_ranks(r)[s] for r, s in seats]  # faulted bots rank last
            assert row["wins"] == ranks.count(1)
            faults = sum(1 for r, s in seats for f in r.faults if f.seat == s)
            assert row["faults_total"] == faults
            assert row["fault_counts"]["timeout"] + row["fault_counts"]["bot_error"] == faults
            assert row["points_per_game"] == pytest.approx(row["points"] / row["games"], abs=1e-4)
        assert next(r for r in board["bots"] if r["name"] == FAULTY)["faults_total"] > 0

    @pytest.mark.parametrize("fault_ranks_last", [True, False])
    def test_wins_and_ranks_follow_the_ratings_view(self, fault_ranks_last: bool) -> None:
        """A bot dropped in every game though its totals are the best: with fault_ranks_last
        its wins, ranks and average rank (leaderboard and bot page) count it last each game."""
        clean = [("abcd", (5, 3, 2, 9)), ("bcda", (3, 2, 9, 5)), ("cdab", (2, 9, 5, 3))] * 10
        board = synthetic(clean)
        records = [
            attrs.evolve(
                stored.record,
                faults=(Fault(stored.record.seats.index("d"), FaultStatus.DROPPED, "dropped"),),
            )
            for stored in board.games
        ]
        t = attrs.evolve(
            board,
            games=tuple(
                attrs.evolve(g, record=r) for g, r in zip(board.games, records, strict=True)
            ),
            fault_ranks_last=fault_ranks_last,
        )
        rows = {row["name"]: row for row in leaderboard(t)["bots"]}
        page = bot_view(t, rows["d"], {}, unique_slugs(t.bots))
        if fault_ranks_last:
            assert (rows["d"]["wins"], rows["d"]["win_rate"]) == (0, 0.0)
            assert rows["d"]["ranks"] == {"4": 30}
            assert rows["d"]["average_rank"] == 4.0
            assert rows["a"]["wins"] == 30 and rows["a"]["ranks"] == {"1": 30}
            assert page["ranks"] == [[1, 0], [2, 0], [3, 0], [4, 30]]
        else:
            assert rows["d"]["wins"] == 30 and rows["d"]["average_rank"] == 1.0
            assert page["ranks"] == [[1, 30], [2, 0], [3, 0], [4, 0]]
        h2h = head_to_head(rated_records(records, fault_ranks_last))  # what the site shows
        assert h2h["d"]["a"]["ahead"] == (0 if fault_ranks_last else 30)
        for row in rows.values():
            mine = [(r, r.seats.index(row["name"])) for r in records if row["name"] in r.seats]
            ranks = [game_ranks(r, fault_ranks_last=fault_ranks_last)[s] for r, s in mine]
            assert row["wins"] == ranks.count(1)
            assert row["average_rank"] == pytest.approx(sum(ranks) / len(ranks), abs=1e-4)

    def test_header_and_progress(self, tourney: Path) -> None:
        """The document names its format and version, the tournament and its progress; no seed
        while it runs."""
        board = leaderboard(load_tournament(tourney))
        assert (board["format"], board["version"]) == (LEADERBOARD_FORMAT, LEADERBOARD_VERSION)
        assert (board["tournament"], board["game"]) == ("test cup", "oh-seven")
        assert board["seed"] is None and board["secret"] is None
        assert (board["matches_done"], board["matches_total"]) == (3, 4)
        assert (board["games_played"], board["games_total"]) == (9, 12)
        assert board["complete"] is False

    def test_csv_and_markdown_carry_the_same_rows(self, tourney: Path) -> None:
        """The CSV and Markdown tables list the bots in the JSON's order with its values."""
        board = leaderboard(load_tournament(tourney))
        rows = list(csv.DictReader(io.StringIO(leaderboard_csv(board))))
        assert [r["name"] for r in rows] == [b["name"] for b in board["bots"]]
        assert [float(r["score"]) for r in rows] == [b["score"] for b in board["bots"]]
        md = leaderboard_markdown(board).splitlines()
        table = [line for line in md if line.startswith("| ") and "---" not in line][1:]
        assert [line.split(" | ")[1] for line in table] == [b["name"] for b in board["bots"]]
        assert "9 of 12 games" in md[2]


def synthetic(games: list[tuple[str, tuple[int, ...]]], bots: str = "abcd") -> Tournament:
    """A tournament of the given (seats, totals) games, each its own deal."""
    records = [
        GameRecord(f"m{i // 6}", i % 6, i, tuple(seats), totals, competition_ranks(totals))
        for i, (seats, totals) in enumerate(games)
    ]
    return Tournament(
        name="synthetic",
        game="oh-seven",
        seed=None,
        config={},
        bots=tuple(bots),
        games=tuple(StoredGame(i, i // 6, record) for i, record in enumerate(records)),
        games_total=len(records),
    )


class TestUncertainty:
    def test_equal_bots_share_a_place(self) -> None:
        """Two bots equal by construction (they swap places every other game, both above c) are
        one tier with a shared '=' place; the clearly better and worse bots are not tied."""
        games = []
        for i in range(120):
            first, second = ("a", "b") if i % 2 else ("b", "a")
            games.append((first + second + "cd", (30, 20, 10, 0)))
        board = leaderboard(synthetic(games))
        rows = {row["name"]: row for row in board["bots"]}
        assert rows["a"]["tier"] == rows["b"]["tier"] == 1
        assert rows["a"]["place"] == rows["b"]["place"] == "=1"
        assert (rows["a"]["tied_from"], rows["a"]["tied_to"]) == (1, 2)
        assert (rows["b"]["tied_from"], rows["b"]["tied_to"]) == (1, 2)
        assert (rows["c"]["tier"], rows["c"]["place"]) == (2, "3")
        assert (rows["c"]["tied_from"], rows["c"]["tied_to"]) == (3, 3)
        assert (rows["d"]["tier"], rows["d"]["place"]) == (3, "4")
        upper = board["bots"][0]
        assert upper["superiority_next"] < 0.95 and upper["games_to_separate"] is None

    def test_superiority_matrix_is_complementary(self) -> None:
        """P(a > b) + P(b > a) = 1 in the published matrix; the diagonal is absent."""
        rng = random.Random(3)
        games = []
        for _ in range(60):
            seats = rng.sample("abcd", 4)
            games.append(("".join(seats), tuple(rng.randint(0, 30) for _ in range(4))))
        board = leaderboard(synthetic(games))
        matrix = board["superiority"]
        for a, b in itertools.permutations("abcd", 2):
            assert abs(matrix[a][b] + matrix[b][a] - 1.0) < 1e-9
        assert all(name not in matrix[name] for name in "abcd")
        for upper, lower in itertools.pairwise(board["bots"]):
            expected = matrix[upper["name"]][lower["name"]]
            assert upper["superiority_next"] == pytest.approx(expected, abs=1e-5)

    def test_points_interval_in_json_csv_and_markdown(self) -> None:
        """Each bot's points-per-game interval holds its points per game and is in the CSV
        (two columns) and the Markdown table."""
        rng = random.Random(4)
        games = [("abcd", tuple(rng.randint(0, 30) for _ in range(4))) for _ in range(30)]
        board = leaderboard(synthetic(games))
        rows = list(csv.DictReader(io.StringIO(leaderboard_csv(board))))
        for bot, row in zip(board["bots"], rows, strict=True):
            low, high = bot["points_per_game_ci"]
            assert low < bot["points_per_game"] < high
            assert (float(row["points_per_game_low"]), float(row["points_per_game_high"])) == (
                low,
                high,
            )
        assert "points/game low" in leaderboard_markdown(board)

    def test_order_of_the_games_does_not_change_the_board(self) -> None:
        """The same games stored in another order give the same bots, values and ranks."""
        rng = random.Random(5)
        games = []
        for _ in range(48):
            seats = rng.sample("abcd", 3)
            games.append(("".join(seats), tuple(rng.randint(0, 30) for _ in range(3))))
        tournament = synthetic(games)
        shuffled = list(tournament.games)
        rng.shuffle(shuffled)
        other = attrs.evolve(tournament, games=tuple(shuffled))
        strip = ("sequential_mu", "sequential_sigma")
        boards = [leaderboard(t)["bots"] for t in (tournament, other)]
        first, second = ([{k: r[k] for k in r if k not in strip} for r in b] for b in boards)
        assert first == second


class TestIndexData:
    def test_rating_history_ends_at_the_final_ratings(self, tourney: Path) -> None:
        """Each bot's history starts at the prior, has a point per game it played, and ends at
        its final sequential rating."""
        t = load_tournament(tourney)
        ratings, history = rating_history(t)
        board = leaderboard(t, ratings)
        for row in board["bots"]:
            points = history[row["name"]]
            assert points[0][0] == 0 and points[0][1] == pytest.approx(25.0)
            assert len(points) == row["games"] + 1
            assert points[-1][1] == pytest.approx(row["sequential_mu"], abs=1e-3)
            assert [p[0] for p in points] == sorted(p[0] for p in points)

    def test_rating_history_is_thinned_keeping_the_ends(self, tourney: Path) -> None:
        """A limit on points keeps the first and last points."""
        t = load_tournament(tourney)
        _, full = rating_history(t)
        _, thin = rating_history(t, max_points=3)
        for name, points in full.items():
            assert len(thin[name]) == min(3, len(points))
            assert thin[name][0] == points[0] and thin[name][-1] == points[-1]

    def test_head_to_head_is_antisymmetric(self, tourney: Path) -> None:
        """A vs B mirrors B vs A; games count shared tables; ahead + behind <= games."""
        t = load_tournament(tourney)
        h2h = head_to_head(t.records)
        for a, row in h2h.items():
            for b, cell in row.items():
                mirror = h2h[b][a]
                assert cell["games"] == mirror["games"]
                assert cell["position"] == pytest.approx(-mirror["position"])
                assert cell["points"] == pytest.approx(-mirror["points"])
                assert (cell["ahead"], cell["behind"]) == (mirror["behind"], mirror["ahead"])
                shared = [r for r in t.records if a in r.seats and b in r.seats]
                assert cell["games"] == len(shared)
                diffs = [r.totals[r.seats.index(a)] - r.totals[r.seats.index(b)] for r in shared]
                assert cell["points"] == pytest.approx(sum(diffs) / len(diffs), abs=1e-3)

    def test_table_statistics_count_every_scored_round(self, tourney: Path) -> None:
        """Null-bid rate, average top bid and trump shares agree with the replays' events."""
        t = load_tournament(tourney)
        stats = table_statistics(t.records)
        bids, zero, rounds, trumps = 0, 0, 0, Counter()
        for record in t.records:
            replay = load_replay(tourney / record.replay_path)
            for event in replay["events"]:
                if event["type"] == "score":
                    rounds += 1
                    bids += len(event["bids"])
                    zero += event["bids"].count(0)
                elif event["type"] == "trump":
                    trumps[event["suit"]] += 1
        assert stats["rounds"] == rounds == 7 * len(t.records)
        assert stats["null_bid_rate"] == pytest.approx(zero / bids, abs=1e-4)
        assert sum(stats["trump_rates"].values()) == pytest.approx(1.0, abs=1e-3)
        for suit, rate in stats["trump_rates"].items():
            assert rate == pytest.approx(trumps[suit] / rounds, abs=1e-4)
        assert 0 <= stats["average_top_bid"] <= 7


class TestBotView:
    def test_bot_page_data(self, tourney: Path) -> None:
        """Rank distribution sums to the bot's games; bids-vs-tricks covers all its rounds;
        faults are listed with the end of the bot's output; its games are all listed."""
        t = load_tournament(tourney)
        board = leaderboard(t)
        slugs = {row["name"]: row["slug"] for row in board["bots"]}
        outcomes = {
            game_id(r.match_id, r.game_index): round_outcomes(load_replay(tourney / r.replay_path))
            for r in t.records
        }
        h2h = head_to_head(t.records)
        for row in board["bots"]:
            view = bot_view(t, row, h2h, slugs, outcomes)
            assert sum(n for _, n in view["ranks"]) == row["games"]
            assert sum(n for _, _, n in view["bid_tricks"]) == 7 * row["games"]
            assert len(view["games"]) == row["games"]
            assert sum(group["count"] for group in view["faults"]) == row["faults_total"]
            assert {o["name"] for o in view["opponents"]} == set(BOTS) - {row["name"]}
            if row["name"] == FAULTY:
                # one group per kind, each with its count, games and first moves
                timeout, raised = sorted(view["faults"], key=lambda group: group["status"])[::-1]
                assert (timeout["status"], raised["status"]) == ("timeout", "bot_error")
                assert timeout["count"] == raised["count"] == timeout["games"]
                assert raised["location"] == "delta/bot.py:11 in f"
                assert all(f["move"] and "round 1" in f["where"] for f in timeout["first"])
                assert HOST not in json.dumps(view)  # no path of the organiser's machine
                assert 'File "delta/bot.py", line 11' in raised["detail"]
                assert view["logs"] and "ValueError: bad card" in view["logs"][0]["text"]
            else:
                assert view["logs"] == []

    def test_bid_tricks_ignore_games_without_outcomes(self, tourney: Path) -> None:
        """Without replays the bids of each round are unknown: the chart data is empty."""
        t = load_tournament(tourney)
        assert bid_tricks(t.games, "alpha", {}) == []


class TestPublish:
    def test_writes_every_page(self, published: tuple[Path, list[Path]]) -> None:
        """The leaderboards, index, games, replay viewer, a page per bot, the static files and
        a replay script per game are written."""
        out, written = published
        board = json.loads((out / "leaderboard.json").read_text())
        names = {p.relative_to(out).as_posix() for p in written}
        for name in ("leaderboard.json", "leaderboard.csv", "leaderboard.md", "index.html"):
            assert name in names
        assert {"games.html", "replay.html", "static/chart.umd.min.js", "static/site.js"} <= names
        for row in board["bots"]:
            page = (out / "bots" / f"{row['slug']}.html").read_text()
            assert row["name"] in page
        scripts = sorted((out / REPLAY_DATA).glob("*.js"))
        assert len(scripts) == board["games_played"] == 12
        assert scripts[0].read_text().startswith("ohsevenReplay(")

    def test_no_temporary_files_are_left(self, published: tuple[Path, list[Path]]) -> None:
        """Atomic writes leave no temporary files behind."""
        out, _ = published
        assert not [p for p in out.rglob("*.tmp")]

    def test_republishing_keeps_replay_scripts(self, tmp_path: Path) -> None:
        """A second publish writes no replay script again and leaves the JSON as it was."""
        out = build_tournament(tmp_path, games_per_match=1)
        publish(out)
        before = (out / "leaderboard.json").read_bytes()
        again = publish(out, now=0)
        assert not [p for p in again if REPLAY_DATA in p.parts]
        assert (out / "leaderboard.json").read_bytes() == before

    def test_new_games_are_published_during_the_run(self, tmp_path: Path) -> None:
        """Publishing a running tournament shows its progress; later games add replays."""
        out = build_tournament(tmp_path, games_per_match=1, unfinished=2)
        publish(out)
        assert json.loads((out / "leaderboard.json").read_text())["games_played"] == 2
        assert len(list((out / REPLAY_DATA).glob("*.js"))) == 2

    def test_without_replays(self, tmp_path: Path) -> None:
        """A tournament without replays publishes every page, with no replay links."""
        out = build_tournament(tmp_path, games_per_match=1, replays=False)
        publish(out)
        assert "replay.html?game=" not in (out / "games.html").read_text()
        assert not list(out.glob(f"{REPLAY_DATA}/*.js"))
        assert (out / "bots" / "alpha.html").is_file()

    def test_missing_database_is_a_clear_error(self, tmp_path: Path) -> None:
        """A directory without a tournament raises PublishError naming it."""
        with pytest.raises(PublishError, match="no tournament database"):
            publish(tmp_path)


class TestCommandLine:
    def test_publish_command(self, tmp_path: Path) -> None:
        """``ohseven-referee publish DIR`` rebuilds the site and says where it is."""
        out = build_tournament(tmp_path, games_per_match=1)
        done = subprocess.run(
            [sys.executable, "-m", "ohseven.referee.cli", "publish", str(out)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert "index.html" in done.stdout and (out / "index.html").is_file()

    def test_publish_command_without_a_tournament(self, tmp_path: Path) -> None:
        """On a directory without a database it prints one clear line and exits 1."""
        done = subprocess.run(
            [sys.executable, "-m", "ohseven.referee.cli", "publish", str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 1
        assert "no tournament database" in done.stderr and "Traceback" not in done.stderr


#: an SDK bot whose output is its strategy (what rivals would read), with a bug the SDK covers
#: up (a ``bot_error`` fault: its output is then kept for its page), a little slow to play
TRACING_BOT = """import sys, time
from ohseven.sdk import Bot, run


class Tracing(Bot):
    def choose_bid(self, view):
        print("MY-SECRET-STRATEGY bids low", file=sys.stderr)
        time.sleep(0.01)
        return view.legal[0]

    def choose_play(self, view):
        time.sleep(0.01)
        return "XX" if not view.tricks else view.legal[0]


run(Tracing)
"""


class TestLogsOnTheSite:
    """A bot's output tells its rivals its strategy: shown once the tournament is complete,
    unless the organiser says otherwise (``site_logs``)."""

    def test_an_unfinished_tournament_shows_no_logs(self, tmp_path: Path) -> None:
        out = build_tournament(tmp_path / "cup", unfinished=1)
        assert load_tournament(out).logs == {}
        publish(out)
        assert "ValueError: bad card" not in _published_text(out)
        complete = build_tournament(tmp_path / "done")
        assert load_tournament(complete).logs
        publish(complete)
        assert "ValueError: bad card" in _published_text(complete)

    @pytest.mark.parametrize("shown", ["always", "never"])
    def test_the_organiser_decides(self, tmp_path: Path, shown: str) -> None:
        for unfinished in (0, 1):
            out = build_tournament(tmp_path / f"{shown}{unfinished}", unfinished=unfinished)
            with Store.open(out, create=False) as store:
                config = json.loads(store.meta()["config"])
                store.set_meta({"config": json.dumps({**config, "site_logs": shown})})
            assert bool(load_tournament(out).logs) == (shown == "always")

    @pytest.mark.slow
    def test_publish_on_a_running_league(self, tmp_path: Path) -> None:
        """A real league in the sandbox, published while it runs: the bot's output is in the
        database, not on the site."""
        folder = tmp_path / "league"
        folder.mkdir()
        os.chmod(tmp_path, 0o755)
        os.chmod(folder, 0o755)
        (folder / "tracing_bot.py").write_text(TRACING_BOT)
        random_bot = Path(__file__).parent.parent / "example_bots" / "random_bot.py"
        (folder / "random_bot.py").write_text(random_bot.read_text())
        (folder / "t.yaml").write_text(
            "name: league\ngame: oh-seven\ntable_size: 3\nbots:\n"
            "  - {name: tracing, file: tracing_bot.py}\n"
            "  - {name: r1, file: random_bot.py}\n  - {name: r2, file: random_bot.py}\n"
            "schedule: {type: league, games: 5000}\noutput: out\n"
        )
        out = folder / "out"
        referee = subprocess.Popen(
            [sys.executable, "-m", "ohseven.referee.cli", "tourney", "--quiet", "t.yaml"],
            cwd=folder,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            logged = ""
            give_up = time.monotonic() + 600
            while "MY-SECRET-STRATEGY" not in logged:  # a match of the bot is done
                assert referee.poll() is None, referee.stderr.read() if referee.stderr else ""
                assert time.monotonic() < give_up, "no match of the bot ended"
                time.sleep(0.2)
                if (out / "tournament.sqlite").exists():
                    with Store.open(out, create=False) as store:
                        logged = json.dumps(store.all_logs())
            published = subprocess.run(
                [sys.executable, "-m", "ohseven.referee.cli", "publish", str(out)],
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert published.returncode == 0, published.stderr
            assert referee.poll() is None  # still running: the league is not complete
            assert (out / "index.html").is_file()
            assert "MY-SECRET-STRATEGY" not in _published_text(out)
        finally:
            os.killpg(referee.pid, signal.SIGINT)
            referee.communicate(timeout=120)


def _published_text(out: Path) -> str:
    return "\n".join(
        path.read_text(encoding="utf-8", errors="replace")
        for path in sorted(out.rglob("*"))
        if path.is_file()
        and path.suffix in (".json", ".js", ".html", ".csv", ".md")
        and "replays" not in path.relative_to(out).parts[:1]
    )


class TestSecrecy:
    @staticmethod
    def big_seed(index: int, game: int) -> int:
        return derive_seed(b"test", index, game)

    def test_nothing_published_while_running_names_a_seed(self, tmp_path: Path) -> None:
        """While games remain, no published file (board, CSV/MD, site, replay data) holds the
        seed of any game, even with reveal_seeds."""
        out = build_tournament(
            tmp_path / "cup", unfinished=1, reveal_seeds=True, game_seed=self.big_seed
        )
        publish(out)
        text = _published_text(out)
        seeds = [str(stored.record.seed) for stored in load_tournament(out).games]
        assert seeds and all(len(seed) > 12 for seed in seeds)
        assert [seed for seed in seeds if seed in text] == []

    @staticmethod
    def play_last_match(out: Path, deal: int, finish: bool) -> str:
        """(Re)start the last match of ``out`` and play its games on ``deal``, ``deal + 1``...
        (replays saved): all of them if ``finish`` (and finish it), else the first. The first
        game's id."""
        with Store.open(out, create=False) as store:
            index = max(store.match_status())
            (match_id, seats, first, games) = store.db.execute(
                "SELECT match_id, bots, first_game, games FROM matches WHERE match_index = ?",
                (index,),
            ).fetchone()
            seats = tuple(json.loads(seats))
            store.start_match(index)
            for g in range(games if finish else 1):
                played = play("oh-seven", len(seats), deal + g)
                path = f"replays/{match_id}-{g}.json"
                save_replay(out / path, to_replay(played, seats, ()))
                result = played.result()
                record = GameRecord(
                    match_id, g, deal + g, seats, result.totals, result.ranks, (),
                    game_statistics(played), path, 0.01,
                )  # fmt: skip
                store.add_game(first + g, index, record)
            if finish:
                store.finish_match(index, {})
        return game_id(match_id, 0)

    def test_no_replay_data_before_the_match_is_done(self, tmp_path: Path) -> None:
        """A game of a match still being played has no replay data published (its deal may
        be played again: the other rotations of duplicate play, a match cut short and
        replayed); once the match is done, it has."""
        out = build_tournament(tmp_path / "cup", unfinished=1)
        ident = self.play_last_match(out, 4242, finish=False)
        publish(out)
        assert not (out / "replay-data" / f"{ident}.js").exists()
        assert ident not in json.loads((out / "replay-data" / "outcomes.json").read_text())
        self.play_last_match(out, 4242, finish=True)
        publish(out)
        assert (out / "replay-data" / f"{ident}.js").is_file()

    def test_a_match_played_again_shows_its_last_games(self, tmp_path: Path) -> None:
        """A match cut short (its game published while it ran) and played again: the replay
        data shown is that of the game that counts, not the discarded one."""
        out = build_tournament(tmp_path / "cup", unfinished=1)
        ident = self.play_last_match(out, 1111, finish=False)
        publish(out)
        self.play_last_match(out, 2222, finish=True)
        publish(out)
        script = (out / "replay-data" / f"{ident}.js").read_text()
        with Store.open(out, create=False) as store:
            (stored,) = [
                g for g in store.games() if game_id(g.record.match_id, g.record.game_index) == ident
            ]
        expected = replay_script(ident, stored.record, load_replay(out / stored.record.replay_path))
        assert script == expected

    def test_a_finished_tournament_reveals_only_if_asked(self, tmp_path: Path) -> None:
        """Complete: the seeds stay unpublished unless `reveal_seeds`; then the secret and every
        game's seed are published for anyone to verify the deals."""
        for reveal in (False, True):
            out = build_tournament(
                tmp_path / f"cup{reveal}", reveal_seeds=reveal, game_seed=self.big_seed
            )
            publish(out)
            board = json.loads((out / "leaderboard.json").read_text())
            seeds = [str(stored.record.seed) for stored in load_tournament(out).games]
            text = _published_text(out)
            assert board["complete"] is True
            assert (board["seed"], board["secret"] is not None) == (
                (5, True) if reveal else (None, False)
            )
            assert all((seed in text) is reveal for seed in seeds)


def _page_data(html: str) -> dict:
    start = html.index('<script type="application/json" id="page-data">') + len(
        '<script type="application/json" id="page-data">'
    )
    return json.loads(html[start : html.index("</script>", start)])


class TestSiteDetails:
    def test_revealed_seeds_reach_the_replay_as_exact_strings(self, tmp_path: Path) -> None:
        """Once revealed, each replay script carries its game's seed as a string (a JavaScript
        number would round a 64-bit seed); before, none."""
        out = build_tournament(tmp_path / "cup", reveal_seeds=True, game_seed=TestSecrecy.big_seed)
        publish(out)
        for stored in load_tournament(out).games:
            record = stored.record
            ident = f"{record.match_id}-g{record.game_index}"
            script = (out / "replay-data" / f"{ident}.js").read_text()
            data = json.loads(script[len("ohsevenReplay(") : -len(");\n")])
            assert data["seed"] == str(record.seed) and record.seed > 2**53

    def test_the_games_list_shows_seeds_only_once_revealed(self, tmp_path: Path) -> None:
        """A secret-seed tournament's games list has no Seed column (it would be all dashes);
        once the seeds are revealed, it has it, with each game's seed."""
        hidden = build_tournament(tmp_path / "hidden", unfinished=1, reveal_seeds=True)
        publish(hidden)
        page = (hidden / "games.html").read_text()
        assert (
            '<th data-type="num">Seed</th>' not in page
            and "–</td>" not in page.split("<tbody>")[1].split("Players")[0]
        )
        shown = build_tournament(tmp_path / "shown", reveal_seeds=True)
        publish(shown)
        page = (shown / "games.html").read_text()
        assert '<th data-type="num">Seed</th>' in page
        assert str(load_tournament(shown).games[0].record.seed) in page

    def test_oh_hell_pages_show_no_oh_seven_rows(self, tmp_path: Path) -> None:
        """Oh Hell has no forced re-bids, redeals or re-bid bonus: its index and bot pages do
        not list them (an Oh-Seven site does)."""
        hell = build_tournament(tmp_path / "hell", game="oh-hell", table=4, games_per_match=2)
        publish(hell)
        seven = build_tournament(tmp_path / "seven", table=4, games_per_match=2)
        publish(seven)
        for words in ("Forced re-bids per round", "Redeals"):
            assert words not in (hell / "index.html").read_text()
            assert words in (seven / "index.html").read_text()
        assert "Re-bid bonus points" not in (hell / "bots" / "alpha.html").read_text()
        assert "Re-bid bonus points" in (seven / "bots" / "alpha.html").read_text()

    def test_oh_hell_trump_chart_includes_no_trump(self, tmp_path: Path) -> None:
        """The Oh Hell trump chart has a "No trump" bar when rounds were played without trump,
        with the same share as the statistics table."""
        out = build_tournament(tmp_path / "hell", game="oh-hell", table=4, games_per_match=6)
        publish(out)
        stats = table_statistics(load_tournament(out).records, digits=None)
        assert stats["trump_rates"].get("none"), "the deals had rounds without trump"
        trumps = _page_data((out / "index.html").read_text())["trumps"]
        labels = {row["label"]: row["rate"] for row in trumps}
        assert labels["No trump"] == stats["trump_rates"]["none"]

    def test_percentages_are_rounded_once(self, tmp_path: Path) -> None:
        """The site formats exact rates once: 0.13946 shows as 13.9%, not 14.0% (after a first
        rounding to 0.1395)."""
        out = build_tournament(tmp_path / "cup")
        records = load_tournament(out).records
        exact = table_statistics(records, digits=None)
        rounded = table_statistics(records)
        assert rounded["null_bid_rate"] == round(exact["null_bid_rate"], 4)
        publish(out)
        html = (out / "index.html").read_text()
        assert f"{100 * exact['null_bid_rate']:.1f}%" in html
        for suit, rate in exact["trump_rates"].items():
            assert (
                rate == rounded["trump_rates"][suit]
                or round(rate, 4) == rounded["trump_rates"][suit]
            )

    def test_chart_colours_are_told_apart(self) -> None:
        """No two colours of the charts' palette are nearly the same (CIE76 distance > 15)."""
        import re

        from ohseven.referee.site.publish import STATIC

        source = (STATIC / "site.js").read_text()
        palette = re.findall(r'"(#[0-9a-fA-F]{6})"', source.split("PALETTE = [")[1].split("]")[0])

        def lab(colour: str) -> tuple[float, float, float]:
            def linear(c: float) -> float:
                return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

            r, g, b = (linear(int(colour[i : i + 2], 16) / 255) for i in (1, 3, 5))
            x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
            y = 0.2126 * r + 0.7152 * g + 0.0722 * b
            z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

            def f(v: float) -> float:
                return v ** (1 / 3) if v > 0.008856 else 7.787 * v + 16 / 116

            return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))

        assert len(palette) >= 10
        for one, other in itertools.combinations(palette, 2):
            distance = sum((a - b) ** 2 for a, b in zip(lab(one), lab(other), strict=True)) ** 0.5
            assert distance > 15, (one, other, distance)


#: the canonical index in the first cell of a games table's row
ROW = r'<tr>\s*<td data-value="(\d+)">'


class TestScale:
    """Pages stay small however many games: a paged games list, recent games on bot pages,
    and ratings kept from one publish to the next."""

    def test_the_games_list_is_paged(self, tmp_path: Path, monkeypatch) -> None:
        """games/<n>.html hold the games in canonical order, a page each; games.html lists the
        pages and the most recent games, never every game; stale pages are removed."""
        monkeypatch.setattr(publish_module, "GAMES_PER_PAGE", 5)
        monkeypatch.setattr(publish_module, "RECENT_GAMES", 4)
        out = build_tournament(tmp_path, games_per_match=3)  # 12 games
        (out / "games").mkdir()
        (out / "games" / "9.html").write_text("old")
        publish(out)
        seen = []
        for number, expected in ((1, 5), (2, 5), (3, 2)):
            page = (out / "games" / f"{number}.html").read_text()
            rows = re.findall(ROW, page)
            assert len(rows) == expected, (number, rows)
            seen += [int(row) for row in rows]
            assert 'href="../games/1.html"' in page or number == 1
        assert seen == list(range(12)) and not (out / "games" / "9.html").exists()
        landing = (out / "games.html").read_text()
        recent = [int(row) for row in re.findall(ROW, landing)]
        assert recent == [11, 10, 9, 8]
        assert all(f'href="games/{n}.html"' in landing for n in (1, 2, 3))

    def test_bot_pages_list_their_recent_games(self, tmp_path: Path, monkeypatch) -> None:
        """A bot page lists its most recent games only, and says so."""
        monkeypatch.setattr(publish_module, "BOT_RECENT_GAMES", 2)
        out = build_tournament(tmp_path, games_per_match=3)
        publish(out)
        board = json.loads((out / "leaderboard.json").read_text())
        row = board["bots"][0]
        page = (out / "bots" / f"{row['slug']}.html").read_text()
        listed = re.findall(ROW, page)
        assert len(listed) == 2 and f"Its 2 most recent games of {row['games']}" in page

    def test_a_republish_rates_only_the_new_games(self, tmp_path: Path) -> None:
        """The ratings after the settled games are kept: a republish reads them back (a
        tampered value shows), gives the same board as a full replay, and a cache that does not
        match the games is ignored."""
        out = build_tournament(tmp_path, games_per_match=2)
        publish(out)
        reference = json.loads((out / "leaderboard.json").read_text())
        cache_file = out / REPLAY_DATA / publish_module.RATINGS_CACHE
        cache = json.loads(cache_file.read_text())
        assert cache["prefix"] == reference["games_played"]
        tampered = json.loads(json.dumps(cache))
        name = reference["bots"][0]["name"]
        tampered["ratings"][name][1] += 10.0  # tau: mu moves by 10 / pi
        cache_file.write_text(json.dumps(tampered))
        publish(out)
        changed = json.loads((out / "leaderboard.json").read_text())
        # the cache holds the sequential TrueSkill (the order-free estimate is computed anew)
        changed_mu = {b["name"]: b["sequential_mu"] for b in changed["bots"]}[name]
        assert changed_mu != reference["bots"][0]["sequential_mu"]
        tampered["key"] = "0" * 64  # the games no longer match: replayed from the start
        cache_file.write_text(json.dumps(tampered))
        publish(out)
        assert json.loads((out / "leaderboard.json").read_text()) == reference
        assert json.loads(cache_file.read_text()) == cache


#: the games tables' and opponents tables' rows as the templates wrote them before the rows
#: were rendered in Python (publish._GameRows, publish._opponent_row), each player of a game
#: since in a span of its own (the players' cell wraps between players)
_GAME_ROW_TEMPLATE = """  {% for g in games %}
    <tr>
      <td data-value="{{ g.canonical }}">{{ g.canonical }}</td>
      <td class="text" data-value="{{ g.match_id }}">{{ g.match_id }} #{{ g.game_index }}</td>
      <td data-value="{{ g.seed if g.seed is not none else '' }}">{{ g.seed if g.seed is not none else "–" }}</td>
      <td class="text players" data-value="{{ g.players[0].name if g.players else '' }}">
        {% for p in g.players %}<span class="player"><a href="{{ root }}bots/{{ p.slug }}.html"{% if p.rank == 1 %} class="winner"{% endif %}>{{ p.name }}</a> {{ p.total }} ({{ p.rank }}){% if p.faults %} <span class="tag bad">{{ p.faults }} fault{{ "s" if p.faults != 1 }}</span>{% endif %}</span>{% if not loop.last %} · {% endif %}{% endfor %}
      </td>
      <td data-value="{{ g.faults }}"{% if g.faults %} class="neg"{% endif %}>{{ g.faults }}</td>
      <td class="text" data-value="{{ 1 if g.replay else 0 }}">{% if g.replay %}<a href="{{ root }}replay.html?game={{ g.id }}">replay</a>{% else %}<span class="muted">–</span>{% endif %}</td>
    </tr>
  {% endfor %}
"""  # noqa: E501
_OPPONENT_ROW_TEMPLATE = """      {% for o in opponents %}
        <tr><td class="text" data-value="{{ o.name }}"><a href="{{ o.slug }}.html">{{ o.name }}</a></td>
          <td data-value="{{ o.games }}">{{ o.games }}</td><td data-value="{{ o.ahead }}">{{ o.ahead }}</td><td data-value="{{ o.behind }}">{{ o.behind }}</td>
          <td data-value="{{ o.position }}" class="{{ 'pos' if o.position > 0 else ('neg' if o.position < 0 else '') }}">{{ "%+.2f" | format(o.position) }}</td>
          <td data-value="{{ o.points }}" class="{{ 'pos' if o.points > 0 else ('neg' if o.points < 0 else '') }}">{{ "%+.1f" | format(o.points) }}</td></tr>
      {% endfor %}
"""  # noqa: E501


def _old_template(text: str):
    import jinja2

    env = jinja2.Environment(
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )
    return env.from_string(text)


class TestRows:
    NAMES = ("plain", "q<\"&'>", "ünï code", "x")

    def games(self, reveal: bool) -> list[dict]:
        rng = random.Random(2)
        stored = []
        for index in range(40):
            seats = tuple(rng.sample(self.NAMES, rng.randint(2, 4)))
            totals = tuple(rng.randint(-9, 9) for _ in seats)
            faults = tuple(
                Fault(rng.randrange(len(seats)), FaultStatus.TIMEOUT, "late")
                for _ in range(rng.choice([0, 0, 1, 2, 3]))
            )
            record = GameRecord(
                f"m<{index}>", index % 3, rng.getrandbits(64), seats, totals,
                competition_ranks(totals), faults,
            )  # fmt: skip
            stored.append(StoredGame(index, index, record))
        slugs = unique_slugs(self.NAMES)
        replays = [game_id(s.record.match_id, s.record.game_index) for s in stored[::2]]
        return publish_module.game_rows(stored, slugs, replays, reveal=reveal)

    @pytest.mark.parametrize("reveal", [False, True])
    @pytest.mark.parametrize("root", ["", "../"])
    def test_game_rows_are_the_former_template(self, reveal: bool, root: str) -> None:
        """A games-table row rendered in Python is byte for byte the former template's (names
        that need escaping, seeds hidden and shown, faults, with and without a replay)."""
        games = self.games(reveal)
        expected = _old_template(_GAME_ROW_TEMPLATE).render(games=games, root=root)
        rows = publish_module._GameRows()
        assert "".join(rows(g, root) + "\n" for g in games) == expected
        assert rows(games[0], root) is rows(games[0], root)  # rendered once

    def test_opponent_rows_are_the_former_template(self) -> None:
        """An opponents-table row rendered in Python is byte for byte the former template's."""
        rng = random.Random(5)
        opponents = [
            {
                "name": name,
                "slug": slugify(name),
                "games": rng.randint(1, 50),
                "ahead": rng.randint(0, 9),
                "behind": rng.randint(0, 9),
                "position": round(rng.uniform(-2, 2), 3) if i else 0.0,
                "points": round(rng.uniform(-9, 9), 3) if i != 1 else 0.0,
            }
            for i, name in enumerate(self.NAMES * 3)
        ]
        expected = _old_template(_OPPONENT_ROW_TEMPLATE).render(opponents=opponents)
        assert "".join(publish_module._opponent_row(o) + "\n" for o in opponents) == expected


class TestLargeLeague:
    def test_superiority_matrix_holds_the_best_bots(self) -> None:
        """With more than 100 bots (docs/LEADERBOARD.md) the matrix of leaderboard.json holds
        the 100 best only (every pair among them), and P(> next) is there for every bot."""
        rng = random.Random(8)
        names = [f"b{i:03d}" for i in range(120)]
        games = [("".join(rng.sample(names, 4)), (3, 2, 1, 0)) for _ in range(10)]
        records = [
            GameRecord(f"m{i}", 0, i, tuple(seats), totals, competition_ranks(totals))
            for i, (seats, totals) in enumerate((rng.sample(names, 4), t) for _, t in games)
        ]
        tournament = Tournament(
            name="big",
            game="oh-seven",
            seed=None,
            config={},
            bots=tuple(names),
            games=tuple(StoredGame(i, i, r) for i, r in enumerate(records)),
            games_total=len(records),
        )
        board = leaderboard(tournament)
        best = [row["name"] for row in board["bots"][:100]]
        assert list(board["superiority"]) == best
        assert all(set(row) == set(best) - {name} for name, row in board["superiority"].items())
        assert all(row["superiority_next"] is not None for row in board["bots"][:-1])

    def test_a_row_does_not_grow_with_its_tier(self) -> None:
        """A league's first document (no games: every bot in one tier) has rows of a bounded
        size: a tier is a range of ranks, not a list of the other bots (quadratic in all)."""
        names = [f"bot-{i:04d}" for i in range(400)]
        tournament = Tournament(
            name="league", game="oh-seven", seed=None, config={}, bots=tuple(names), games=()
        )
        board = leaderboard(tournament)
        assert {row["tier"] for row in board["bots"]} == {1}
        assert all((row["tied_from"], row["tied_to"]) == (1, 400) for row in board["bots"])
        assert max(len(json.dumps(row)) for row in board["bots"]) < 2000

    def test_a_parallel_build_writes_the_same_bytes(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The rating history computed in a child process (a large first build) gives the same
        site, byte for byte, as computed in the publishing process."""
        serial, parallel = tmp_path / "serial", tmp_path / "parallel"
        build_tournament(serial)
        build_tournament(parallel)
        monkeypatch.setattr(publish_module, "PARALLEL_GAMES", 10**9)
        publish(serial, now=0)
        monkeypatch.setattr(publish_module, "PARALLEL_GAMES", 1)
        publish(parallel, now=0)

        def files(root: Path) -> dict[str, bytes]:
            return {
                str(path.relative_to(root)): path.read_bytes()
                for path in root.rglob("*")
                if path.is_file() and "tournament.sqlite" not in path.name
            }

        assert files(serial) == files(parallel)

    def test_a_failed_parallel_build_leaves_no_process(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A publish that fails while its child process rates the games kills and reaps it:
        a referee publishing as it goes keeps no stray process per failure."""

        def children() -> set[int]:
            tasks = Path(f"/proc/{os.getpid()}/task")
            return {
                int(pid)
                for task in tasks.iterdir()
                for pid in (task / "children").read_text().split()
            }

        build_tournament(tmp_path)
        before = children()
        monkeypatch.setattr(publish_module, "PARALLEL_GAMES", 1)

        def full_disk(*args: object) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(publish_module, "_publish_replays", full_disk)
        with pytest.raises(OSError, match="No space"):
            publish(tmp_path)
        assert children() == before

    def test_statistics_from_aggregates_match_those_of_the_records(self) -> None:
        """Each bot's statistics derived from its aggregate (one pass over the games) equal
        those summed from its seats' statistics."""
        records = [
            GameRecord(f"m{i}", 0, i, seats, (1, 2, 3), (3, 2, 1), (), game_statistics(played))
            for i, seats in enumerate(itertools.permutations(BOTS[:3]))
            for played in [play("oh-seven", 3, 40 + i)]
        ]
        mine = statistics_of(aggregate(records, BOTS))
        assert mine == bot_statistics(records)
        assert set(mine) == set(BOTS[:3])

    def test_shared_place_names_a_few_of_its_tier(self, tmp_path: Path) -> None:
        """A tier of many bots names 10 of the others in the index's tooltip, then how many
        more (every row naming them all grew with the square of the tier)."""
        names = [f"bot{i:02d}" for i in range(16)]
        record = GameRecord("m0", 0, 1, tuple(names[:2]), (1, 1), (1, 1))
        with Store.open(tmp_path) as store:
            store.setup(
                digest="d",
                config={"name": "t", "bots": [{"name": name} for name in names]},
                secret_fingerprint="f",
                matches=[(0, "m0", names[:2], 0, 1)],
            )
            store.add_game(0, 0, record)
            store.finish_match(0)
        publish(tmp_path)
        board = json.loads((tmp_path / "leaderboard.json").read_text())
        row = board["bots"][0]
        assert (row["tied_from"], row["tied_to"]) == (1, len(names))  # the tier's ranks
        index = (tmp_path / "index.html").read_text()
        shown = ", ".join(other["name"] for other in board["bots"][1:11])
        assert f'title="tier 1, tied with {shown} and 5 more"' in index
