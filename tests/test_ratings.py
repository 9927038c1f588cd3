"""TrueSkill ratings: free-for-all ranks, faults last, canonical order, the draw estimate."""

from __future__ import annotations

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.referee.ratings import DRAW_PROBABILITY, Ratings, game_ranks, rate_games
from ohseven.referee.records import Fault, FaultStatus, GameRecord
from ohseven.referee.rules import OH_HELL, OH_SEVEN, competition_ranks, new_game
from ohseven.referee.tourney import Leaderboard

NAMES = ("a", "b", "c", "d")


def record(seats, totals, faults=(), index=0) -> GameRecord:
    return GameRecord(
        "m", index, 0, tuple(seats), tuple(totals), competition_ranks(totals), tuple(faults)
    )


class TestRanks:
    def test_equal_totals_draw(self) -> None:
        """Equal totals share a rank."""
        assert game_ranks(record("abc", (5, 9, 5))) == (2, 1, 2)

    def test_faulted_bot_ranks_below_every_clean_bot(self) -> None:
        """A faulted bot with the best total still ranks below the clean bots."""
        game = record("abc", (20, 3, -4), [Fault(0, FaultStatus.TIMEOUT)])
        assert game_ranks(game) == (3, 1, 2)
        assert game_ranks(game, fault_ranks_last=False) == (1, 2, 3)

    def test_a_reported_bot_error_does_not_rank_last(self) -> None:
        """A bot_error (the bot's own report of a legal substitute) keeps the bot's rank."""
        game = record("abc", (20, 3, -4), [Fault(0, FaultStatus.BOT_ERROR, "ZeroDivisionError")])
        assert game_ranks(game) == (1, 2, 3)

    def test_faulted_bots_keep_their_order_among_themselves(self) -> None:
        """Two faulted bots: below the clean one, ordered by their totals."""
        faults = [Fault(0, FaultStatus.CRASH), Fault(2, FaultStatus.ILLEGAL)]
        assert game_ranks(record("abc", (9, -30, 7), faults)) == (2, 1, 3)


class TestRatings:
    def test_winner_gains_and_loser_loses(self) -> None:
        """After one game the first has the highest mu, the last the lowest."""
        ratings = rate_games(OH_SEVEN, NAMES, [record("abcd", (10, 5, 0, -5))])
        mu = {row.name: row.mu for row in ratings.table()}
        assert mu["a"] > mu["b"] > mu["c"] > mu["d"]
        assert [row.name for row in ratings.table()] == ["a", "b", "c", "d"]
        assert all(row.score == row.mu - 3 * row.sigma for row in ratings.table())

    def test_draw_moves_ratings_towards_each_other(self) -> None:
        """A draw between a strong and a weak bot narrows the gap."""
        games = [record("ab", (9, 1), index=i) for i in range(5)]
        ratings = rate_games(OH_SEVEN, "ab", games)
        gap = ratings.ratings["a"].mu - ratings.ratings["b"].mu
        ratings.apply(record("ab", (4, 4)))
        assert ratings.ratings["a"].mu - ratings.ratings["b"].mu < gap

    @settings(max_examples=30, deadline=None)
    @given(
        st.lists(
            st.tuples(
                st.permutations(NAMES), st.lists(st.integers(-20, 40), min_size=4, max_size=4)
            ),
            min_size=1,
            max_size=12,
        ),
        st.randoms(use_true_random=False),
    )
    def test_order_of_arrival_does_not_matter(self, games, rng) -> None:
        """The leaderboard's ratings equal rate_games in canonical order, whatever the arrival."""
        records = [record(seats, totals, index=i) for i, (seats, totals) in enumerate(games)]
        expected = rate_games(OH_SEVEN, NAMES, records).table()

        class Config:  # the two fields the leaderboard reads for the ratings
            game = OH_SEVEN
            bot_names = NAMES

            class ratings:  # noqa: N801
                draw_probability = None
                fault_ranks_last = True

        board = Leaderboard(Config, len(records))
        order = list(range(len(records)))
        rng.shuffle(order)
        for index in order:
            board.add(index, records[index])
        assert board.ratings().table() == expected

    def test_unknown_bot_is_refused(self) -> None:
        """A record naming a bot outside the tournament raises KeyError."""
        ratings = Ratings(OH_SEVEN, "ab")
        try:
            ratings.apply(record("az", (1, 2)))
        except KeyError as error:
            assert "'z'" in str(error)
        else:
            raise AssertionError("accepted an unknown bot")


class TestDrawProbability:
    def test_estimate_matches_random_play(self) -> None:
        """DRAW_PROBABILITY is near the share of tied pairs among random players (equal skill)."""
        for game, players in ((OH_SEVEN, 4), (OH_HELL, 4)):
            ties = pairs = 0
            for seed in range(60):
                engine = new_game(game, players, seed)
                rng = random.Random(seed)
                while not engine.is_over:
                    for seat in list(engine.to_act):
                        engine.push(seat, rng.choice(list(engine.legal_moves(seat))))
                for x, y in itertools.combinations(engine.result().totals, 2):
                    pairs += 1
                    ties += x == y
            share = ties / pairs
            assert abs(share - DRAW_PROBABILITY[game]) < 0.035, (game, share)
