"""The leaderboard of a stored tournament (order-free TrueSkill ratings, its JSON, CSV and
Markdown forms) and its uncertainty (shared places, tiers); the tournament is conftest's
``tourney`` (tests/played_cup.py)."""

from __future__ import annotations

import csv
import io
import itertools
import random
from pathlib import Path

import attrs
import pytest
from ohseven.core.rules import competition_ranks
from ohseven.referee.records import Fault, FaultStatus, GameRecord
from ohseven.referee.results.archive import Tournament, load_tournament, rated_records, unique_slugs
from ohseven.referee.results.leaderboard import (
    LEADERBOARD_FORMAT,
    LEADERBOARD_VERSION,
    leaderboard,
    leaderboard_csv,
    leaderboard_markdown,
)
from ohseven.referee.results.ratings import game_ranks, order_free, rate_games
from ohseven.referee.results.store import StoredGame
from ohseven.referee.site.pages import bot_view, head_to_head
from played_cup import BOTS, FAULTY


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
