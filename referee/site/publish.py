"""Publish a tournament: leaderboards (JSON, CSV, Markdown) and a static HTML site.

:func:`publish` rebuilds everything from the database in a tournament's output directory. The
pages are plain files that work offline from ``file://``: the charting library is vendored, and
each game's replay is a ``.js`` file loaded by a script tag (``fetch`` of local files is refused
by browsers). Every file is written atomically, so a reader never sees half of one.

This module renders and writes; what the pages show is computed by pure functions elsewhere:
``tournament.py`` (the database read in one go), ``leaderboard.py`` (``leaderboard.json``, CSV,
Markdown; schema in ``docs/LEADERBOARD.md``), ``site_data.py`` (rating history, head-to-head,
statistics, games and bot pages) and ``replay_view.py`` (the replay viewer's frames).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import pickle
import signal
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2
import markupsafe
from ohseven.referee.files import write_atomic
from ohseven.referee.records import FaultStatus
from ohseven.referee.replay import load_replay
from ohseven.referee.results.archive import (
    Tournament,
    game_id,
    load_tournament,
    rated_records,
    unique_slugs,
)
from ohseven.referee.results.leaderboard import (
    leaderboard,
    leaderboard_csv,
    leaderboard_markdown,
    order_free_estimate,
    progress,
    statistics_of,
)
from ohseven.referee.results.store import StoredGame, aggregate
from ohseven.referee.site.pages import (
    GAMES_PER_PAGE,
    bot_view,
    config_items,
    format_number,
    format_percent,
    game_pages,
    game_rows,
    head_to_head,
    rating_history_data,
    ratings_from_data,
    table_statistics,
)
from ohseven.referee.site.replay_view import SUIT_NAMES, replay_script, round_outcomes

__all__ = ["REPLAY_DATA", "STATIC", "publish"]


#: the games from which a publish uses a second process: the ratings (every game's on a first
#: build, the order-free estimate always) and half the bots' pages are computed beside the rest
PARALLEL_GAMES = 20_000


def _write_changed(path: Path, data: str | bytes) -> Path | None:
    """Write ``data`` to ``path`` (atomically) unless it holds those bytes already; the path
    written, or None."""
    if path.is_file() and path.read_bytes() == (
        data.encode("utf-8") if isinstance(data, str) else data
    ):
        return None
    return write_atomic(path, data)


@contextlib.contextmanager
def _in_child(function: Callable[[], Any], parallel: bool = True) -> Iterator[Callable[[], Any]]:
    """Start ``function`` in a forked child process; yields a function that waits for its
    result (picklable). In this process instead when not ``parallel``, on one core, without
    ``fork``, or when the child fails (the same result, later). A child whose result is not
    waited for (the publish failed meanwhile) is killed on leaving the context."""
    if not parallel or (os.cpu_count() or 1) < 2 or not hasattr(os, "fork"):
        result = function()
        yield lambda: result
        return
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, send, and leave without any of the parent's cleanup
        status = 1
        try:
            os.close(reader)
            data = pickle.dumps(function(), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(writer, "wb") as pipe:
                pipe.write(data)
            status = 0
        finally:
            os._exit(status)
    os.close(writer)
    waited = False

    def join() -> Any:
        nonlocal waited
        with os.fdopen(reader, "rb") as pipe:
            data = pipe.read()
        waited = True
        _, status = os.waitpid(pid, 0)
        if status != 0 or not data:
            return function()
        return pickle.loads(data)

    try:
        yield join
    finally:
        if not waited:
            os.close(reader)
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


TEMPLATES = Path(__file__).parent / "templates"


STATIC = Path(__file__).parent / "static"


STATIC_FILES = (
    "style.css",
    "site.js",
    "cards.js",
    "replay.js",
    "chart.umd.min.js",
    "chart.js-LICENSE.md",
)


REPLAY_DATA = "replay-data"  # <output>/replay-data/<game id>.js, one per game with a replay


#: in REPLAY_DATA: the ratings after the settled games, so a republish rates only the new ones
RATINGS_CACHE = "ratings-cache.json"


RECENT_GAMES = 100


#: games listed on a bot's page (its most recent), bots in the index's matrix and chart: pages
#: stay small however large the league
BOT_RECENT_GAMES = 50


INDEX_BOTS = 30


#: the names of a tier's other bots in the index's tooltip of a shared place (a tier of a large
#: league can hold hundreds: every row naming them all made the index tens of megabytes)
TIED_NAMES = 10


def _tied_note(bots: Sequence[Mapping[str, Any]], row: Mapping[str, Any]) -> str:
    """``", tied with a, b and 5 more"``: the index's tooltip of a shared place, naming the
    first :data:`TIED_NAMES` other bots of the row's tier (its ranks ``tied_from``..``tied_to``)."""
    first, last = row["tied_from"], row["tied_to"]
    if first == last:
        return ""
    ranks = [
        rank for rank in range(first, min(last, first + TIED_NAMES) + 1) if rank != row["rank"]
    ]
    names = ", ".join(bots[rank - 1]["name"] for rank in ranks[:TIED_NAMES])
    more = last - first - TIED_NAMES  # the others of the tier, less those named
    return f", tied with {names}" + (f" and {more} more" if more > 0 else "")


def _heat(position: float) -> str:
    strength = min(1.0, abs(position) / 1.5)
    if position > 0:
        return f"rgba(43, 138, 62, {0.1 + 0.5 * strength:.2f})"
    if position < 0:
        return f"rgba(192, 57, 43, {0.1 + 0.5 * strength:.2f})"
    return "transparent"


def _escape(value: object, cache: dict[str, str] = {}) -> str:  # noqa: B006 - the cache
    """``markupsafe.escape`` as a string; numbers need none, and strings repeat (bot names)."""
    kind = type(value)
    if kind is int or kind is float:
        return str(value)
    if kind is str:
        text = cache.get(value)  # type: ignore[call-overload]
        if text is None:
            if len(cache) > 1_000_000:
                cache.clear()
            text = cache[value] = str(markupsafe.escape(value))  # type: ignore[index]
        return text
    return str(markupsafe.escape(value))


class _GameRows:
    """The games tables' row of a game (``game_rows``) as HTML, each (game, root) rendered
    once: a league's site lists 100,000 games in its pages and again on the bots' pages, and a
    template loop costs ten times this."""

    def __init__(self) -> None:
        self.cache: dict[tuple[int, str, bool], markupsafe.Markup] = {}

    def __call__(self, g: Mapping[str, Any], root: str, seeds: bool = True) -> markupsafe.Markup:
        key = (id(g), root, seeds)
        html = self.cache.get(key)
        if html is not None:
            return html
        e = _escape
        root = e(root)
        players = g["players"]
        cells = []
        for position, p in enumerate(players):
            faults = p["faults"]
            cells.append(
                '<span class="player">'
                f'<a href="{root}bots/{e(p["slug"])}.html"'
                + (' class="winner"' if p["rank"] == 1 else "")
                + f">{e(p['name'])}</a> {e(p['total'])} ({e(p['rank'])})"
                + (
                    f' <span class="tag bad">{e(faults)} fault{"s" if faults != 1 else ""}</span>'
                    if faults
                    else ""
                )
                + "</span>"
                + (" · " if position < len(players) - 1 else "")
            )
        seed = g["seed"]
        replay = (
            f'<a href="{root}replay.html?game={e(g["id"])}">replay</a>'
            if g["replay"]
            else '<span class="muted">–</span>'
        )
        neg = ' class="neg"' if g["faults"] else ""
        html = markupsafe.Markup(
            "    <tr>\n"
            f'      <td data-value="{e(g["canonical"])}">{e(g["canonical"])}</td>\n'
            f'      <td class="text" data-value="{e(g["match_id"])}">{e(g["match_id"])} '
            f"#{e(g['game_index'])}</td>\n"
            + (
                f'      <td data-value="{e(seed) if seed is not None else ""}">'
                f"{e(seed) if seed is not None else '–'}</td>\n"
                if seeds
                else ""
            )
            + '      <td class="text players" '
            + f'data-value="{e(players[0]["name"]) if players else ""}">\n'
            + "".join(cells)
            + "      </td>\n"
            f'      <td data-value="{e(g["faults"])}"{neg}>'
            f"{e(g['faults'])}</td>\n"
            f'      <td class="text" data-value="{1 if g["replay"] else 0}">{replay}</td>\n'
            "    </tr>"
        )
        self.cache[key] = html
        return html


def _sign_class(value: float) -> str:
    return "pos" if value > 0 else ("neg" if value < 0 else "")


def _opponent_row(o: Mapping[str, Any]) -> markupsafe.Markup:
    """A row of a bot page's opponents table, as HTML (a bot meets hundreds in a league)."""
    e = _escape
    return markupsafe.Markup(
        f'        <tr><td class="text" data-value="{e(o["name"])}"><a href="{e(o["slug"])}.html">'
        f"{e(o['name'])}</a></td>\n"
        f'          <td data-value="{e(o["games"])}">{e(o["games"])}</td>'
        f'<td data-value="{e(o["ahead"])}">{e(o["ahead"])}</td>'
        f'<td data-value="{e(o["behind"])}">{e(o["behind"])}</td>\n'
        f'          <td data-value="{e(o["position"])}" class="{_sign_class(o["position"])}">'
        f"{o['position']:+.2f}</td>\n"
        f'          <td data-value="{e(o["points"])}" class="{_sign_class(o["points"])}">'
        f"{o['points']:+.1f}</td></tr>"
    )


def template_environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        fmt=format_number,
        heat=_heat,
        game_row=_GameRows(),
        show_seeds=True,  # the games tables' Seed column (``publish``: once seeds are revealed)
        opponent_row=_opponent_row,
        tied_note=_tied_note,
    )
    return env


def _find_replay(output: Path, path: str) -> Path | None:
    given = Path(path)
    for candidate in (given, output / given, output / "replays" / given.name):
        if candidate.is_file():
            return candidate
    return None


def publish(output_dir: str | os.PathLike[str], *, now: float | None = None) -> list[Path]:
    """Rebuild the leaderboards and the site of the tournament in ``output_dir``.

    Returns every file written. Replay pages of games already published are kept (a finished
    game never changes), so calling this during a tournament costs one pass over the database
    plus the rendering, and the replays of the new games only.
    """
    # Millions of small objects (every game's record, the pages' rows) and few cycles: the
    # cyclic collector would walk them all again and again (a third of the time at 100,000
    # games); it runs again once the site is written.
    collecting = gc.isenabled()
    gc.disable()
    try:
        with contextlib.ExitStack() as stack:  # the helper processes, if any
            return _publish(Path(output_dir), now, stack)
    finally:
        if collecting:
            gc.enable()


def _publish(output: Path, now: float | None, stack: contextlib.ExitStack) -> list[Path]:
    tournament = load_tournament(output)
    cache_path = output / REPLAY_DATA / RATINGS_CACHE
    try:
        cache = json.loads(cache_path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        cache = None
    if not isinstance(cache, dict):
        cache = None
    # The sequential replay of every game (of the new ones once cached) and the order-free
    # estimate are the longest steps and depend on nothing else: for a large tournament they
    # run in a child process while this one does what does not need them (replays, games pages).
    ranking = stack.enter_context(
        _in_child(
            lambda: (rating_history_data(tournament, cache), order_free_estimate(tournament)),
            parallel=len(tournament.games) >= PARALLEL_GAMES,
        )
    )
    written: list[Path] = []

    def write(relative: str, data: str | bytes) -> None:
        path = _write_changed(output / relative, data)
        if path is not None:
            written.append(path)

    rated = list(rated_records(tournament.records, tournament.fault_ranks_last))
    aggregates = aggregate(rated, tournament.bots)
    h2h = head_to_head(rated)
    del rated
    stats = table_statistics(tournament.records, digits=None)  # formatted once, on the page
    for name in STATIC_FILES:
        write(f"static/{name}", (STATIC / name).read_bytes())
    replays, outcomes, changed = _publish_replays(output, tournament, written)
    if changed:
        write(f"{REPLAY_DATA}/outcomes.json", json.dumps(outcomes, separators=(",", ":")))
    slugs = unique_slugs(tournament.bots)  # as the board's rows have them
    games = game_rows(tournament.games, slugs, replays, reveal=tournament.revealed)
    generated = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(now))
    site = {"name": tournament.name, "generated": generated}
    env = template_environment()
    # a secret-seed tournament's seeds are all "–" until revealed: no column of dashes
    env.globals["show_seeds"] = tournament.revealed
    pages = game_pages(games, GAMES_PER_PAGE)
    listing = env.get_template("games.html")
    common = {"site": site, "pages": pages, "total": len(games), "per_page": GAMES_PER_PAGE}
    recent = list(reversed(games[-RECENT_GAMES:]))
    write("games.html", listing.render(root="", games=recent, page=None, **common))
    for page in pages:
        write(page["href"], listing.render(root="../", games=page["rows"], page=page, **common))
    for stale in (output / "games").glob("*.html"):  # pages of a tournament started over
        if not (stale.stem.isdigit() and 1 <= int(stale.stem) <= len(pages)):
            stale.unlink(missing_ok=True)
    write("replay.html", env.get_template("replay.html").render(root="", site=site))

    sequential, table = ranking()
    ratings, history, saved = ratings_from_data(tournament, sequential)
    board = leaderboard(tournament, ratings, aggregates, table)
    old = cache or {}
    if saved and (saved.get("prefix"), saved.get("key")) != (old.get("prefix"), old.get("key")):
        write_atomic(cache_path, json.dumps(saved, separators=(",", ":")))
    write("leaderboard.json", json.dumps(board, indent=2) + "\n")
    write("leaderboard.csv", leaderboard_csv(board))
    write("leaderboard.md", leaderboard_markdown(board))
    done = progress(tournament)
    order = [row["name"] for row in board["bots"]]
    trump_rows = [
        {
            "suit": suit,
            "label": (
                f"{SUIT_SYMBOLS[suit]} {SUIT_NAMES[suit]}" if suit in SUIT_NAMES else "No trump"
            ),
            "rate": rate,
        }
        for suit, rate in stats["trump_rates"].items()
        if rate is not None
    ]
    index = env.get_template("index.html").render(
        root="",
        site=site,
        board=board,
        progress=done,
        config_items=config_items(tournament.config),
        fault_statuses=[status.value for status in FaultStatus],
        h2h=h2h,
        h2h_bots=order[:INDEX_BOTS],
        table_rows=_table_rows(stats, tournament.game),
        trump_rows=trump_rows,
        games=list(reversed(games))[:20],
        page_data={
            "history": [{"name": name, "points": history[name]} for name in order[:INDEX_BOTS]],
            "trumps": trump_rows,
        },
    )
    write("index.html", index)
    by_canonical = {row["canonical"]: row for row in games}
    by_bot: dict[str, list[StoredGame]] = defaultdict(list)
    for stored in tournament.games:
        for name in stored.record.seats:
            by_bot[name].append(stored)
    bot_template = env.get_template("bot.html")
    statistics = statistics_of(aggregates)

    def bot_pages(rows: Sequence[Mapping[str, Any]]) -> list[Path]:
        pages_written = []
        for row in rows:
            view = bot_view(
                tournament,
                row,
                h2h,
                slugs,
                outcomes,
                mine=by_bot.get(row["name"], []),
                aggregates=aggregates,
                statistics=statistics,
            )
            pairs = view["bid_tricks"]
            html = bot_template.render(
                root="../",
                site=site,
                bot=row,
                bots_total=len(board["bots"]),
                view=view,
                games=[by_canonical[index] for index in view["games"][::-1][:BOT_RECENT_GAMES]],
                page_data={
                    "ranks": view["ranks"],
                    "bid_tricks": pairs,
                    "bid_tricks_max": max((n for _, _, n in pairs), default=1),
                },
            )
            path = _write_changed(output / f"bots/{row['slug']}.html", html)
            if path is not None:
                pages_written.append(path)
        return pages_written

    # the bots' pages are rendered anew on every publish: those of the lower half of a large
    # tournament in a child process meanwhile
    bots = board["bots"]
    half = len(bots) // 2
    lower = stack.enter_context(
        _in_child(lambda: bot_pages(bots[half:]), parallel=len(games) >= PARALLEL_GAMES)
    )
    written.extend(bot_pages(bots[:half]))
    written.extend(lower())
    return written


SUIT_SYMBOLS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}


def _publish_replays(
    output: Path, tournament: Tournament, written: list[Path]
) -> tuple[list[str], dict[str, list[list[int]]], bool]:
    """Write the viewer's script of every game with a replay not yet published, and keep the
    games' round outcomes (for the bid-against-tricks charts) in ``outcomes.json``. Returns the
    ids of the games with a replay, the outcomes, and whether they changed.

    Only the games of matches done: a running match's deals may be played again (the other
    rotations of duplicate play; a match cut short is played again from its start), and its
    games may yet be discarded and replaced under the same ids."""
    folder = output / REPLAY_DATA
    try:
        outcomes = json.loads((folder / "outcomes.json").read_text(encoding="utf-8"))
        if not isinstance(outcomes, dict):
            outcomes = {}
    except (OSError, ValueError, RecursionError):
        outcomes = {}
    changed = False
    replays: list[str] = []
    for stored in tournament.games:
        record = stored.record
        if not record.replay_path or stored.match_index not in tournament.done_matches:
            continue
        ident = game_id(record.match_id, record.game_index)
        target = folder / f"{ident}.js"
        # once the seeds are revealed, the scripts are written again with them
        if target.is_file() and ident in outcomes and not tournament.revealed:
            replays.append(ident)
            continue
        source = _find_replay(output, record.replay_path)
        if source is None:
            continue
        try:
            replay = load_replay(source)
            seed = record.seed if tournament.revealed else None
            script = replay_script(ident, record, replay, seed)
            outcomes[ident] = round_outcomes(replay)
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            continue  # an unreadable replay: the game is listed without one
        written.append(write_atomic(target, script))
        replays.append(ident)
        changed = True
    return replays, outcomes, changed


def _table_rows(stats: Mapping[str, Any], game: str = "oh-seven") -> list[tuple[str, str]]:
    """The index's table statistics; forced re-bids and redeals only for Oh-Seven (Oh Hell
    has neither: its rows would read 0 and mislead)."""
    players = ", ".join(f"{n} players: {count}" for n, count in stats["players"].items())
    rows = [
        ("Games", str(stats["games"])),
        ("Rounds", str(stats["rounds"])),
        ("Tables", players or "–"),
        ("Null-bid rate", format_percent(stats["null_bid_rate"])),
        ("Average top bid", format_number(stats["average_top_bid"])),
    ]
    if game == "oh-seven":
        rows += [
            ("Forced re-bids per round", format_number(stats["rebids_per_round"])),
            ("Redeals", str(stats["redeals"])),
        ]
    for suit, rate in stats["trump_rates"].items():
        label = (
            f"Trump {SUIT_SYMBOLS[suit]} {SUIT_NAMES[suit]}" if suit in SUIT_NAMES else "No trump"
        )
        rows.append((label, format_percent(rate)))
    return rows
