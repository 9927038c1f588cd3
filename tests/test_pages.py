"""The data behind the site's pages: the index's (rating history, head to head, table
statistics) and each bot's page; the tournament is conftest's ``tourney``
(tests/played_cup.py)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from ohseven.referee.replay import load_replay
from ohseven.referee.results.archive import game_id, load_tournament
from ohseven.referee.results.leaderboard import leaderboard
from ohseven.referee.site.pages import (
    bid_tricks,
    bot_view,
    head_to_head,
    rating_history,
    table_statistics,
)
from ohseven.referee.site.replay_view import round_outcomes
from played_cup import BOTS, FAULTY, HOST


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
