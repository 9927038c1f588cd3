"""Where a tournament's matches come from: a schedule taken piece by piece from a real store,
and the ratings a league's next wave is drawn from. (Leagues and stopping rules end to end, with
real bots, kills and resumes: tests/test_tourney.py.)"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import attrs
import pytest
from ohseven.referee.plan.config import TourneyConfig
from ohseven.referee.plan.loader import demo_config, load_config
from ohseven.referee.plan.run_plan import RunPlan
from ohseven.referee.plan.schedule import SchedulePlan, build_schedule, newcomer_tables
from ohseven.referee.records import GameRecord
from ohseven.referee.results.board import Leaderboard
from ohseven.referee.results.ratings import order_free
from ohseven.referee.results.store import Store
from ohseven.referee.tournament.feeds import LeagueFeed, ScheduleFeed, matchmaking_ratings
from ohseven.referee.tournament.run import run_tournament
from test_server import RANDOM_BOT, Running, free_port, tar_gz, wait_for, write_config
from tourney_files import league_games, write_league

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
        everything = [match.index for match in build_schedule(SchedulePlan.of(config), SECRET)]
        assert len(everything) > 3
        assert take_all(ScheduleFeed(RunPlan.resolve(config, SECRET), store), room) == everything

    def test_the_matches_done_are_not_given_again(self, config, store) -> None:
        """A resumed tournament's feed leaves out the matches the store holds as done."""
        schedule = build_schedule(SchedulePlan.of(config), SECRET)
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
        assert take_all(ScheduleFeed(RunPlan.resolve(config, SECRET), store), 2) == rest


GAMES = [
    ((3, 1, 0), (1, 2, 3)),
    ((0, 5, 1), (3, 1, 2)),
    ((2, 2, 6), (2, 3, 1)),
]


def board_with(config: TourneyConfig, order: list[int]) -> Leaderboard:
    board = Leaderboard(RunPlan.resolve(config, SECRET), 10, 5, config.bot_names)
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


def league_with_a_newcomer(folder: Path, workers: int) -> tuple[Path, dict[int, int]]:
    """A real league of 16 fixed bots (unsandboxed subprocesses) whose roster adds ``late``
    from its first read while wave 0 is played (its third call: the run's start and wave 0's
    draw come first): the output folder and the calls made."""
    folder.mkdir()
    bots = {f"b{n:02}": ("low", "high", "hash")[n % 3] for n in range(16)}
    path = write_league(folder, games=40, bots=bots)
    (folder / "joined").mkdir()
    joined = load_config(write_league(folder / "joined", games=40, bots={**bots, "late": "low"}))
    late = next(bot for bot in joined.bots if bot.name == "late")
    calls = {"n": 0}

    def roster(house: TourneyConfig) -> TourneyConfig:
        calls["n"] += 1
        return house if calls["n"] < 3 else attrs.evolve(house, bots=(*house.bots, late))

    outcome = run_tournament(load_config(path), workers=workers, quiet=True, roster=roster)
    assert outcome.complete
    return folder / "out", {0: calls["n"]}


@pytest.fixture
def readable():
    """A folder the bots can read (as root the referee runs them as another uid)."""
    folder = Path(tempfile.mkdtemp(prefix="ohseven-feeds-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


class TestNewcomers:
    """A bot that joins a league while a wave is played gets its first tables at once (a wave
    of its own, recorded, played before the rest of the queue), not at the next wave."""

    @pytest.mark.slow
    @pytest.mark.timeout(300)
    def test_a_newcomer_plays_before_the_running_wave_ends(self, readable: Path) -> None:
        out, _ = league_with_a_newcomer(readable / "one", workers=1)
        with Store.open(out, create=False) as store:
            waves = store.db.execute(
                "SELECT wave, first_match, matches, bots FROM waves ORDER BY wave"
            ).fetchall()
            rows = {row["index"]: row for row in store.match_rows()}
            finished = dict(store.db.execute("SELECT match_index, finished FROM matches"))
        first_wave = range(waves[0][1], waves[0][1] + waves[0][2])
        assert len(first_wave) > 4  # more than the 4 matches one worker is given at once
        wave, first, count, seated = waves[1]
        assert json.loads(seated) and "late" in json.loads(seated)
        newcomer = [rows[i] for i in range(first, first + count)]
        assert newcomer and all("late" in row["bots"] for row in newcomer)
        assert all(len(row["bots"]) == 2 for row in newcomer)  # the smallest table size
        # played while wave 0 still had matches to play (before: only after its last one)
        assert finished[first] < max(finished[i] for i in first_wave)
        document = json.loads((out / "leaderboard.json").read_text())
        assert {bot["name"]: bot for bot in document["bots"]}["late"]["games"] > 0
        assert document["games_played"] == 40

    @pytest.mark.slow
    @pytest.mark.timeout(300)
    def test_the_same_games_whatever_the_workers(self, readable: Path) -> None:
        one, _ = league_with_a_newcomer(readable / "one", workers=1)
        two, _ = league_with_a_newcomer(readable / "two", workers=2)
        assert league_games(one) == league_games(two)
        board_one = json.loads((one / "leaderboard.json").read_text())
        board_two = json.loads((two / "leaderboard.json").read_text())
        assert board_one["bots"] == board_two["bots"]

    def test_a_resume_queues_the_newcomer_wave_first(self, readable: Path) -> None:
        """A feed made again on the store (as after a SIGKILL) queues the unplayed matches of
        every open wave, the newcomer wave (the latest) first, the same matches."""
        bots = {f"b{n:02}": "low" for n in range(16)}
        config = load_config(write_league(readable, games=100, bots=bots))
        with Store.open(readable / "store") as store:
            store.setup(digest=config.digest, config=config.document, secret_fingerprint="f")
            self.resume(config, store)

    def resume(self, config: TourneyConfig, store: Store) -> None:
        plan = RunPlan.resolve(config, SECRET)
        board = Leaderboard(plan, 0, 0, config.bot_names)
        feed = LeagueFeed(plan, store, board)
        wave0 = feed.take(1, idle=True)
        assert wave0 and feed.queue  # wave 0 drawn, some of it still queued
        names = config.bot_names
        tables = newcomer_tables(plan.schedule, SECRET, feed.wave, [names[0]], names[1:], 10**6)
        assert tables and all(names[0] in table for table in tables)
        feed._record(tables, [names[0]], front=True)
        newcomers = [match.spec.match_id for match in feed.queue[: len(tables)]]
        rest = sorted(match.spec.match_id for match in [*wave0, *feed.queue[len(tables) :]])
        expected = [*newcomers, *rest]  # (the match taken, not finished, is played again)
        again = LeagueFeed(plan, store, Leaderboard(plan, 0, 0, names))
        assert [match.spec.match_id for match in again.queue] == expected
        assert again.wave == feed.wave


# --------------------------------------------------------------------------- in a real server

#: passes its check (check-bot names it plainly) and exits before hello in the league (where
#: its name is ``author/bot vN``): left out by lazy validation
QUITTER = (
    "import os, sys\n"
    "if '/' in os.environ.get('OHSEVEN_NAME', ''):\n"
    "    print('league seen, leaving', file=sys.stderr)\n"
    "    sys.exit(4)\n"
)


def quitter() -> str:
    future = "from __future__ import annotations\n"
    assert future in RANDOM_BOT
    return RANDOM_BOT.replace(future, future + QUITTER, 1)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_why_a_bot_was_left_out_is_private(tmp_path: Path) -> None:
    """The reason a bot was left out was shown to everyone on ``/`` and in the leaderboard's
    JSON: with a ``node_modules`` above the uploads, the sandbox's hint named the bot's host
    folder (``OUTPUT/.uploads/<digest>/bot``) and the folder above it."""
    (tmp_path / "node_modules").mkdir()  # hidden from the bot: the hint names it
    port = free_port()
    server = Running(write_config(tmp_path, port), port)
    token = server.add_author("zed")
    other = server.add_author("yan")
    organiser = server.add_author("org", "--organiser")
    server.start()
    try:
        sent = server.client(token).post(
            "/api/uploads",
            params={"bot": "quitter"},
            content=tar_gz({"main.py": quitter().encode()}),
        )
        assert sent.status_code == 201, sent.text
        status = f"/api/uploads/{sent.json()['id']}"
        mine = wait_for(lambda: (v := server.client(token).get(status).json())["left_out"] and v)
        assert mine["state"] == "passed"  # its check passed: the league left it out
        assert "before hello" in mine["left_out"] and str(tmp_path) in mine["left_out"]
        bot = "/api/bots/zed/quitter v1"  # (listed once its withdrawn match is recorded)
        page = wait_for(lambda: (r := server.client(organiser).get(bot)).status_code == 200 and r)
        assert page.json()["private"]["left_out"] == mine["left_out"]  # the organiser's too
        assert "private" not in server.client(other).get(bot).json()
        board = server.client().get("/api/leaderboard").json()
        assert board["refused"] == [{"name": "zed/quitter v1", "status": "no_start"}]
        slug = next(r["slug"] for r in board["bots"] if r["name"] == "zed/quitter v1")
        public = ("/", "/api/leaderboard", "/leaderboard.json", "/leaderboard.md", "/api/final")
        for route in (*public, "/leaderboard.csv", "/games.html", f"/bots/{slug}"):
            text = server.client().get(route).text
            assert str(tmp_path) not in text and ".uploads" not in text, route
            assert "before hello" not in text, route
        assert "zed/quitter v1" in server.client().get("/").text
        assert server.client(other).get(status).status_code == 404
        assert "private" not in server.client().get(bot).json()
    finally:
        assert server.stop() == 0, server.log.read_text()
