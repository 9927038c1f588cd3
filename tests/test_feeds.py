"""Where a tournament's matches come from: a schedule taken piece by piece from a real store,
and the ratings a league's next wave is drawn from. (Leagues and stopping rules end to end, with
real bots, kills and resumes: tests/test_tourney.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from ohseven.referee.plan.config import TourneyConfig
from ohseven.referee.plan.loader import demo_config
from ohseven.referee.plan.schedule import build_schedule
from ohseven.referee.records import GameRecord
from ohseven.referee.results.board import Leaderboard
from ohseven.referee.results.ratings import order_free
from ohseven.referee.results.store import Store
from ohseven.referee.tournament.feeds import ScheduleFeed, matchmaking_ratings

SECRET = b"feeds" * 8


@pytest.fixture
def config(tmp_path: Path) -> TourneyConfig:
    return demo_config(tmp_path)


@pytest.fixture
def store(config: TourneyConfig, tmp_path: Path):
    with Store.open(tmp_path / "store") as store:
        store.setup(digest=config.digest, config=config.document, secret_fingerprint="f")
        yield store


def take_all(feed: ScheduleFeed, room: int) -> list[int]:
    """The indices of every match the feed gives, ``room`` at a time; done only at the end."""
    indices: list[int] = []
    while not feed.done:
        taken = feed.take(room, idle=True)
        assert len(taken) <= room
        indices += [match.index for match in taken]
    return indices


class TestScheduleFeed:
    @pytest.mark.parametrize("room", [1, 3, 1000])
    def test_the_schedule_in_canonical_order_in_pieces(self, config, store, room: int) -> None:
        """Taken in pieces of any size: every match once, in the schedule's order."""
        everything = [match.index for match in build_schedule(config, SECRET)]
        assert len(everything) > 3
        assert take_all(ScheduleFeed(config, SECRET, store), room) == everything

    def test_the_matches_done_are_not_given_again(self, config, store) -> None:
        """A resumed tournament's feed leaves out the matches the store holds as done."""
        schedule = build_schedule(config, SECRET)
        store.add_matches(
            (m.index, m.spec.match_id, m.bot_names, m.first_game, m.games) for m in schedule
        )
        for match in (schedule[0], schedule[3]):
            store.start_match(match.index)
            seats = match.bot_names
            for game in range(match.games):
                places = tuple(range(1, len(seats) + 1))
                record = GameRecord(match.spec.match_id, game, game, seats, places, places)
                store.add_game(match.first_game + game, match.index, record)
            store.finish_match(match.index)
        rest = [m.index for m in schedule if m.index not in (schedule[0].index, schedule[3].index)]
        assert take_all(ScheduleFeed(config, SECRET, store), 2) == rest


GAMES = [
    ((3, 1, 0), (1, 2, 3)),
    ((0, 5, 1), (3, 1, 2)),
    ((2, 2, 6), (2, 3, 1)),
]


def board_with(config: TourneyConfig, order: list[int]) -> Leaderboard:
    board = Leaderboard(config, 10, 5, SECRET, config.bot_names)
    for game in order:
        totals, ranks = GAMES[game]
        board.add(game, GameRecord("m00000", game, game, config.bot_names, totals, ranks))
    return board


class TestMatchmakingRatings:
    def test_every_bot_at_the_prior_before_any_game(self, config) -> None:
        """No game yet: each bot at the same prior (mu, sigma)."""
        ratings = matchmaking_ratings(board_with(config, []))
        assert set(ratings) == set(config.bot_names)
        assert len(set(ratings.values())) == 1
        mu, sigma = next(iter(ratings.values()))
        assert mu > 0 and sigma > 0

    def test_the_order_free_estimate_whatever_order_the_games_came(self, config) -> None:
        """The games added in any order give the same ratings: ``ratings.order_free``'s."""
        first = matchmaking_ratings(board_with(config, [0, 1, 2]))
        assert matchmaking_ratings(board_with(config, [2, 0, 1])) == first
        board = board_with(config, [1, 2, 0])
        assert first == order_free(
            board.games.values(),
            board.names,
            game=config.game,
            draw_probability=config.ratings.draw_probability,
            fault_ranks_last=config.ratings.fault_ranks_last,
        )
        assert len(set(first.values())) > 1  # the games moved the bots apart
