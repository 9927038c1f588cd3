"""The published site: every page and its data written, during and after the run, the logs and
seeds it shows or keeps secret, its size at scale.

The tournament is real (tests/played_cup.py): games played in-process by the engine with random
legal moves, their statistics from ``stats.py``, their replays from ``replay.py``, all written to
a real SQLite database through ``store.py``.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ohseven.core.rules import competition_ranks
from ohseven.referee.records import Fault, FaultStatus, GameRecord
from ohseven.referee.replay import load_replay, save_replay, to_replay
from ohseven.referee.results.archive import (
    PublishError,
    Tournament,
    game_id,
    load_tournament,
    slugify,
    unique_slugs,
)
from ohseven.referee.results.leaderboard import bot_statistics, leaderboard, statistics_of
from ohseven.referee.results.store import Store, StoredGame, aggregate
from ohseven.referee.secret import derive_seed
from ohseven.referee.site import publish as publish_module
from ohseven.referee.site.pages import table_statistics
from ohseven.referee.site.publish import REPLAY_DATA, publish
from ohseven.referee.site.replay_view import replay_script
from ohseven.referee.stats import game_statistics
from played_cup import BOTS, build_tournament, play


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    out = build_tournament(tmp_path_factory.mktemp("site"))
    return out, publish(out)


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
