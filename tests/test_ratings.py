"""TrueSkill ratings: free-for-all ranks, faults last, canonical order, the draw estimate."""

from __future__ import annotations

import itertools
import random

import pytest
import trueskill
from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.core.rules import OH_HELL, OH_SEVEN, competition_ranks, new_game
from ohseven.referee.records import Fault, FaultStatus, GameRecord
from ohseven.referee.results.board import Leaderboard
from ohseven.referee.results.ratings import (
    DRAW_PROBABILITY,
    Ratings,
    free_for_all,
    game_ranks,
    make_env,
    order_free,
    order_free_table,
    rate_games,
)

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

        class Plan:  # what the leaderboard reads of the run plan for the ratings
            game = OH_SEVEN
            bot_names = NAMES
            stopping = None

            class ratings:  # noqa: N801
                draw_probability = None
                fault_ranks_last = True

        board = Leaderboard(Plan, len(records))  # type: ignore[arg-type]
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


class TestFreeForAll:
    @settings(max_examples=300, deadline=None)
    @given(
        st.sampled_from([OH_SEVEN, OH_HELL, "tau0"]),
        st.lists(
            st.tuples(st.floats(-20, 70), st.floats(0.05, 9), st.integers(0, 8)),
            min_size=2,
            max_size=9,
        ),
    )
    def test_same_numbers_as_the_library(self, game, players) -> None:
        """free_for_all gives the library's env.rate bit for bit (pi and tau), ties and
        FloatingPointError included, for 2 to 9 one-bot teams."""
        env = trueskill.TrueSkill(tau=0, backend=None) if game == "tau0" else make_env(game)
        ratings = [trueskill.Rating(mu, sigma) for mu, sigma, _ in players]
        ranks = [rank % len(players) for _, _, rank in players]
        try:
            expected = [group[0] for group in env.rate([(r,) for r in ratings], ranks=ranks)]
        except FloatingPointError:
            with pytest.raises(FloatingPointError):
                free_for_all(env, ratings, ranks)
            return
        got = free_for_all(env, ratings, ranks)
        assert [(r.pi, r.tau) for r in got] == [(r.pi, r.tau) for r in expected]

    def test_other_backend_same_numbers(self) -> None:
        """With another backend (scipy's cdf and pdf) the generic path matches the library."""
        env = trueskill.TrueSkill(draw_probability=0.2, backend="scipy")
        ratings = [trueskill.Rating(25 + i, 8 - i) for i in range(5)]
        ranks = [2, 0, 2, 1, 4]
        expected = [group[0] for group in env.rate([(r,) for r in ratings], ranks=ranks)]
        got = free_for_all(env, ratings, ranks)
        assert [(r.pi, r.tau) for r in got] == [(r.pi, r.tau) for r in expected]

    def test_rate_games_is_the_library_in_canonical_order(self) -> None:
        """Ratings.apply over 300 real-looking games equals env.rate applied game by game."""
        rng = random.Random(4)
        env = make_env(OH_SEVEN)
        expected = {name: env.create_rating() for name in "abcdefgh"}
        records = []
        for index in range(300):
            seats = rng.sample("abcdefgh", rng.randint(2, 6))
            totals = tuple(rng.randint(-5, 5) for _ in seats)
            records.append(record(seats, totals, index=index))
            ranks = [rank - 1 for rank in competition_ranks(totals)]
            rated = env.rate([(expected[name],) for name in seats], ranks=ranks)
            for name, (rating,) in zip(seats, rated, strict=True):
                expected[name] = rating
        got = rate_games(OH_SEVEN, "abcdefgh", records).ratings
        assert {n: (r.pi, r.tau) for n, r in got.items()} == {
            n: (r.pi, r.tau) for n, r in expected.items()
        }

    def test_needs_two_teams(self) -> None:
        """One rating is refused as the library refuses it."""
        with pytest.raises(ValueError, match="multiple"):
            free_for_all(make_env(OH_SEVEN), [trueskill.Rating()], [0])


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


game_lists = st.lists(
    st.tuples(
        st.permutations("abcde").map(lambda seats: seats[:4]),
        st.lists(st.integers(-20, 40), min_size=4, max_size=4),
        st.integers(2, 4),
    ).map(lambda game: (game[0][: game[2]], game[1][: game[2]])),
    min_size=1,
    max_size=30,
)


class TestOrderFree:
    @settings(max_examples=40, deadline=None)
    @given(game_lists, st.randoms(use_true_random=False))
    def test_any_permutation_gives_identical_estimates(self, games, rng) -> None:
        """Random game lists in any order give the same (mu, sigma), bit for bit."""
        records = [record(seats, totals, index=i) for i, (seats, totals) in enumerate(games)]
        first = order_free(records, "abcde")
        shuffled = records[:]
        rng.shuffle(shuffled)
        assert order_free(shuffled, "abcde") == first
        assert order_free(records[::-1], "abcde") == first

    @settings(max_examples=40, deadline=None)
    @given(game_lists)
    def test_fixed_point_does_not_depend_on_the_order(self, games) -> None:
        """Fed to the propagation unsorted, canonical and reversed lists converge to the same
        fixed point (within 1e-6), so the sorting is not what makes it order-free."""
        from ohseven.referee.results import ratings as module

        records = [record(seats, totals, index=i) for i, (seats, totals) in enumerate(games)]
        env = module.make_env(OH_SEVEN)
        results = []
        for listed in (records, records[::-1]):
            graph = module.factor_graph(listed, "abcde", True, presorted=True)
            results.append(module.propagate(graph, env, 1e-12, 5000))
        for first, second in zip(results[0], results[1], strict=True):
            assert max(abs(first - second)) < 1e-6

    @pytest.mark.parametrize(
        ("seats", "totals"),
        [("ab", (5, 1)), ("ab", (3, 3)), ("abcd", (10, 5, 0, -5)), ("abcd", (10, 5, 5, -5))],
    )
    def test_one_game_is_trueskill_without_dynamics(self, seats, totals) -> None:
        """For a single game the estimate is TrueSkill's update with tau = 0."""
        env = trueskill.TrueSkill(draw_probability=DRAW_PROBABILITY[OH_SEVEN], tau=0)
        ranks = [rank - 1 for rank in competition_ranks(totals)]
        expected = env.rate([(env.create_rating(),) for _ in seats], ranks=ranks)
        got = order_free([record(seats, totals)], seats)
        for name, (rating,) in zip(seats, expected, strict=True):
            assert got[name][0] == pytest.approx(rating.mu, abs=1e-4)
            assert got[name][1] == pytest.approx(rating.sigma, abs=1e-4)

    def test_equal_bots_in_a_cycle_are_equal(self) -> None:
        """a beats b, b beats c, c beats a, equally often: equal mu and sigma."""
        games = [record(seats, (2, 1), index=i) for i, seats in enumerate(["ab", "bc", "ca"] * 4)]
        rated = order_free(games, "abc")
        assert rated["a"][0] == pytest.approx(rated["b"][0], abs=1e-9)
        assert rated["b"][0] == pytest.approx(rated["c"][0], abs=1e-9)

    def test_stronger_bot_ranks_first_and_bots_without_games_keep_the_prior(self) -> None:
        """The bot that always wins is first; a bot without games has mu 25, sigma 25/3."""
        games = [record("abc", (9, 5, 1), index=i) for i in range(10)]
        table = order_free_table(games, "abcd")
        assert [row.name for row in table if row.name != "d"] == ["a", "b", "c"]
        assert [row.games for row in table if row.name == "d"] == [0]
        assert order_free(games, "abcd")["d"] == (25.0, 25 / 3)

    def test_unknown_bot_is_refused(self) -> None:
        """A game with a bot not in the list is an error naming the game and the bot."""
        with pytest.raises(KeyError, match="unknown bot 'x'"):
            order_free([record("ax", (1, 0))], "ab")
