"""Statistics from the event log: hand-worked rounds and consistency over random games."""

from __future__ import annotations

import json
import random

import pytest
from conftest import play_random
from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.core.cards import OH_SEVEN_DECK
from ohseven.core.rules import OhHellGame, OhSevenGame, new_game
from ohseven.referee.replay import to_replay
from ohseven.referee.stats import (
    combine_seat_counts,
    combine_statistics,
    game_statistics,
    statistics_from_events,
)


def cards(names: str) -> list[int]:
    return [OH_SEVEN_DECK.parse(name) for name in names.split()]


def two_player_round() -> OhSevenGame:
    """Seat 0 holds seven spades, seat 1 seven hearts; a sum-7 re-bid (4S+3H, bonus to seat
    0), then bids 6S and 0H: seat 0 takes all 7 tricks (bid 6: -1), seat 1 makes 0 (+2)."""
    hands = [cards("7S 6S 5S 4S 3S 2S 1S"), cards("7H 6H 5H 4H 3H 1H 0H")]
    order = [hands[i % 2][i // 2] for i in range(14)]
    order += [c for c in range(32) if c not in order]
    game = OhSevenGame(2, 0, stacked_decks=[order])
    game.push(0, cards("4S")[0])
    game.push(1, cards("3H")[0])
    game.push(0, cards("6S")[0])
    game.push(1, cards("0H")[0])
    play_random(game, random.Random(0), stop=lambda g: g.round == 1)
    return game


class TestHandWorked:
    def test_oh_seven_round(self):
        """One Oh-Seven round: top bid 6 (spades), a re-bid, a bonus point, fill and overflow."""
        stats = game_statistics(two_player_round())
        table = stats["table"]
        assert (table["players"], table["rounds"], table["bids"]) == (2, 1, 2)
        assert (table["null_bids"], table["null_bid_rate"]) == (1, 0.5)
        assert (table["top_bid_sum"], table["average_top_bid"]) == (6, 6.0)
        assert (table["rebids"], table["redeals"]) == (1, 0)
        assert table["trump"] == {"C": 0, "D": 0, "H": 0, "S": 1, "none": 0}
        assert table["trump_rate"]["S"] == 1.0
        first, second = stats["seats"]
        assert (first["points"], first["bonus_points"], first["total"]) == (-1, 1, 0)
        assert (first["top_bids"], first["overflows"], first["fills"]) == (1, 1, 0)
        assert (first["overflow_rate"], first["top_bid_rate"]) == (1.0, 1.0)
        assert (second["points"], second["zero_bids"], second["fills"]) == (2, 1, 1)
        assert (second["bid_fill_rate"], second["zero_bid_rate"]) == (1.0, 1.0)
        assert second["points_per_round"] == 2.0 and second["top_bid_rate"] == 0.0

    def test_oh_hell_no_trump_and_highest_bid(self):
        """Oh Hell: a no-trump hand counts as "none"; equal highest bids are all top bids."""
        game = OhHellGame(4, 0, {"hand_order": "down"}, hand_sizes=(13,), first_dealer=3)
        for seat in range(4):
            game.push(seat, [3, 3, 1, 0][seat])
        play_random(game, random.Random(0))
        stats = game_statistics(game)
        assert stats["table"]["trump"]["none"] == 1
        assert stats["table"]["average_top_bid"] == 3.0
        assert [seat["top_bids"] for seat in stats["seats"]] == [1, 1, 0, 0]
        assert stats["table"]["null_bids"] == 1

    def test_empty_game_has_zero_rates(self):
        """Before any round is scored every count and rate is 0."""
        stats = game_statistics(new_game("oh-seven", 3, 0))
        assert stats["table"]["rounds"] == 0 and stats["table"]["average_top_bid"] == 0.0
        assert all(seat["points_per_round"] == 0.0 for seat in stats["seats"])


class TestConsistency:
    @settings(max_examples=25, deadline=None)
    @given(
        config=st.sampled_from(
            [("oh-seven", 2), ("oh-seven", 5), ("oh-seven", 9), ("oh-hell", 3), ("oh-hell", 7)]
        ),
        seed=st.integers(0, 2**32 - 1),
    )
    def test_counts_add_up(self, config, seed):
        """Counts agree with the game: totals, rounds, bids, fills and trump counts."""
        game = play_random(new_game(config[0], config[1], seed), random.Random(seed))
        stats = game_statistics(game)
        table = stats["table"]
        assert table["rounds"] == game.rounds
        assert table["bids"] == game.rounds * game.players
        assert sum(table["trump"].values()) == game.rounds
        assert sum(seat["top_bids"] for seat in stats["seats"]) >= game.rounds
        for seat, mine in enumerate(stats["seats"]):
            assert mine["total"] == game.scores[seat]
            assert mine["fills"] + mine["overflows"] + mine["underfills"] == game.rounds
        if config[0] == "oh-seven":
            assert sum(seat["top_bids"] for seat in stats["seats"]) == game.rounds
        json.dumps(stats)

    def test_replay_events_give_the_same_statistics(self):
        """Statistics from a replay's events equal those from the live game."""
        game = play_random(new_game("oh-hell", 5, 2), random.Random(2))
        replay = json.loads(json.dumps(to_replay(game)))
        from_replay = statistics_from_events(replay["game"], replay["players"], replay["events"])
        assert from_replay == game_statistics(game)


class TestCombining:
    def test_combined_counts_are_sums_and_rates_recomputed(self):
        """Combining games sums counts and derives rates from the sums, not averages."""
        games = [play_random(new_game("oh-seven", 3, seed), random.Random(seed)) for seed in (1, 2)]
        one, two = (game_statistics(g) for g in games)
        both = combine_statistics([one, two])
        assert both["table"]["games"] == 2
        assert both["table"]["rounds"] == 14
        assert both["table"]["null_bids"] == one["table"]["null_bids"] + two["table"]["null_bids"]
        assert both["table"]["null_bid_rate"] == both["table"]["null_bids"] / 42
        seat = both["seats"][0]
        assert seat["total"] == games[0].scores[0] + games[1].scores[0]
        assert seat["points_per_round"] == seat["total"] / 14

    def test_per_bot_seat_counts(self):
        """A bot's seats from different games combine into one set of counts and rates."""
        one = game_statistics(play_random(new_game("oh-seven", 3, 4), random.Random(4)))
        two = game_statistics(play_random(new_game("oh-seven", 5, 4), random.Random(4)))
        bot = combine_seat_counts([one["seats"][1], two["seats"][3]])
        assert bot["rounds"] == 14
        assert bot["fills"] == one["seats"][1]["fills"] + two["seats"][3]["fills"]
        assert bot["bid_fill_rate"] == bot["fills"] / 14

    def test_mismatched_tables_refused(self):
        """Games of different player counts do not combine into one table."""
        one = game_statistics(new_game("oh-seven", 3, 0))
        two = game_statistics(new_game("oh-seven", 4, 0))
        with pytest.raises(ValueError, match="cannot combine"):
            combine_statistics([one, two])
        with pytest.raises(ValueError, match="no statistics"):
            combine_statistics([])
