"""The live view of a running league, kept up to date incrementally: a thread reads the
tournament database every ``interval`` seconds for the matches finished since its last look
(never all the games again) and keeps in memory what the API and the pages serve: one row per
finished game with each seat's place and rating change, each bot's games (sorted, so a page of
them is a slice), and the leaderboard.

The leaderboard is kept by ``results.incremental.LiveBoard`` from the same games: rebuilt after
new games at most every :data:`DOCUMENT_GAP` seconds (and never more than three quarters of the
time: :data:`GAP_SHARE`), about a second of CPU at 1,000 bots and 100,000 games where the run
loop's whole ``leaderboard.json`` takes seven and is written only now and then. When that file
counts as many games as the live view (and before the first live document), the file is
served instead: it is the reference (and, once the league is complete, the one that reveals
the seeds when the configuration says so).

A game's rating change is the sequential TrueSkill update (mu - 3 sigma before and after,
``ratings.Ratings``) in match order: the games of a match are applied once every earlier
match is done or withdrawn (a league's wave ends whole), so the changes are the same after a
restart. Until then a row shows its places and ``null`` changes.
"""

from __future__ import annotations

import bisect
import json
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ohseven.referee.results.archive import REFUSED_KEY, Tournament, game_id, slugify
from ohseven.referee.results.board import LEADERBOARD_NAME
from ohseven.referee.results.incremental import LiveBoard
from ohseven.referee.results.ratings import Ratings
from ohseven.referee.results.store import DB_NAME, Store, StoredGame

__all__ = ["DOCUMENT_GAP", "GAP_SHARE", "LiveView"]

_TERMINAL = ("done", "withdrawn")

#: the least time between the starts of two live leaderboards (seconds)
DOCUMENT_GAP = 1.0
#: the pause after a live leaderboard, as a share of its cost (a document that took 1.5 s waits
#: 0.5 s before the next): the HTTP thread and the run loop get the interpreter the rest of the
#: time. A match that ends just after a document began is counted by the next one: its lag is
#: about (2 + GAP_SHARE) documents' cost plus a look (``interval``)
GAP_SHARE = 1 / 3
#: more fresh matches than this are read in one query (the first look at a long league)
_BULK = 64
#: matches taken in under the lock at a time
_CHUNK = 50


class LiveView:
    """What the server shows, read from the output folder ``output`` as the league plays."""

    def __init__(
        self,
        output: str | Path,
        game: str,
        *,
        draw_probability: float | None = None,
        fault_ranks_last: bool = True,
        interval: float = 0.25,
    ) -> None:
        self.output = Path(output)
        self.game = game
        self.interval = interval
        self.draw_probability = draw_probability
        self.fault_ranks_last = fault_ranks_last
        self.lock = threading.Lock()
        self.ratings = Ratings(
            game, (), draw_probability=draw_probability, fault_ranks_last=fault_ranks_last
        )
        self.rows: dict[int, dict[str, Any]] = {}  # canonical index -> row
        self.order: list[int] = []  # canonical indexes, sorted
        self.by_bot: dict[str, list[int]] = defaultdict(list)  # sorted too
        self.pending: dict[int, list[StoredGame]] = {}  # done matches not yet rated
        self.next_match = 0  # the first match not yet ingested and rated
        self.seen: set[int] = set()  # done matches ingested beyond next_match
        self.matches_done = 0
        self.matches_known = -1  # matches recorded at the last look (a new wave: more)
        self.names: list[str] = []  # every bot: the configuration's, then those of matches
        self.meta: dict[str, str] = {}
        self.slugs: dict[str, str] = {}  # slugify's, once a name (100,000 games: 400,000 seats)
        self.live = LiveBoard(
            game, draw_probability=draw_probability, fault_ranks_last=fault_ranks_last
        )
        self.live_board: dict[str, Any] | None = None  # the latest live document
        self.stale = False  # games came in since it
        self.next_document = 0.0  # (monotonic) not before
        self.file_board: dict[str, Any] | None = None  # the run loop's leaderboard.json
        self.board_mtime: float | None = None
        self.version = 0  # counts the changes of what :meth:`leaderboard` returns
        self.updated = 0.0  # time of the last look that found something new
        self.looked = 0.0
        #: called (in the reader thread) after each new live document: the server makes the
        #: JSON it serves then, not on its event loop when the first reader asks
        self.listeners: list[Callable[[], None]] = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="live-view", daemon=True)
        self.store: Store | None = None

    # -- the reader thread

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=10)

    def _loop(self) -> None:
        while not self.stopping.is_set():  # (the database connection lives in this thread)
            try:
                self.refresh()
            except Exception as error:  # noqa: BLE001 - a read fails now, the next one may not
                print(f"warning: live view: {type(error).__name__}: {error}", file=sys.stderr)
            self.stopping.wait(self.interval)
        if self.store is not None:
            self.store.close()

    @contextmanager
    def _reading(self) -> Iterator[Store | None]:
        if self.store is None and (self.output / DB_NAME).exists():
            self.store = Store.open(self.output, create=False)
        yield self.store

    def refresh(self) -> None:
        """Take in what finished since the last look; the leaderboard when it is due."""
        self._read_file()
        with self._reading() as store:
            if store is None:
                return
            statuses = store.statuses_from(self.next_match)
            fresh = [
                index for index, status in statuses if status == "done" and index not in self.seen
            ]
            if len(fresh) > _BULK:  # one query for them all (the first look at a long league)
                chosen = set(fresh)
                games: dict[int, list[StoredGame]] = {index: [] for index in fresh}
                first = min(fresh)
                for stored in store.games(after=-1, finished_matches_only=True):
                    if stored.match_index >= first and stored.match_index in chosen:
                        games[stored.match_index].append(stored)
            else:
                games = {index: store.match_games(index) for index in fresh}
            known = self.next_match + len(statuses)
            if fresh or known != self.matches_known:
                self.meta = store.meta()
                if known != self.matches_known:  # a new wave: its bots
                    self._name_bots(store)
                    self.matches_known = known
        # (the lock is taken a few matches at a time: the readers, on the server's event loop,
        # never wait for a long first look)
        for start in range(0, len(fresh), _CHUNK):
            with self.lock:
                for index in fresh[start : start + _CHUNK]:
                    self.seen.add(index)
                    self.pending[index] = games[index]
                    self.matches_done += 1
                    for stored in games[index]:
                        self._add_row(stored)
        position = 0
        while position < len(statuses):  # rate, in match order, up to the first unfinished
            with self.lock:
                for index, status in statuses[position : position + _CHUNK]:
                    if index != self.next_match or status not in _TERMINAL:
                        position = len(statuses)
                        break
                    for stored in self.pending.pop(index, []):
                        self._rate(stored)
                    self.seen.discard(index)
                    self.next_match += 1
                    position += 1
        with self.lock:
            if fresh:
                self.updated = time.time()
                self.stale = True
            self.looked = time.time()
        for index in fresh:
            for stored in games[index]:
                self.live.add(stored.record)
        if self.stale and time.monotonic() >= self.next_document:
            self._document()

    def _read_file(self) -> None:
        path = self.output / LEADERBOARD_NAME
        try:
            mtime = path.stat().st_mtime
        except OSError:
            return
        if mtime == self.board_mtime:
            return
        try:
            board = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(board, dict):
            with self.lock:
                self.file_board, self.board_mtime = board, mtime
                self.version += 1
                self.updated = time.time()

    def _name_bots(self, store: Store) -> None:
        """Every bot, in the order the run loop's leaderboard has them: the configuration's,
        then the others of the recorded matches (sorted)."""
        try:
            config = json.loads(self.meta.get("config") or "{}")
        except ValueError:
            config = {}
        listed = [bot.get("name") for bot in config.get("bots") or () if isinstance(bot, dict)]
        names = dict.fromkeys(name for name in listed if isinstance(name, str))
        names.update(dict.fromkeys(sorted(store.bot_names())))
        for name in self.names:
            names.setdefault(name)
        self.names = list(names)

    def _tournament(self) -> Tournament:
        meta = self.meta
        try:
            config = json.loads(meta.get("config") or "{}")
            refused = json.loads(meta.get(REFUSED_KEY) or "{}")
        except ValueError:
            config, refused = {}, {}
        return Tournament(
            name=str(config.get("name", "")),
            game=self.game,
            seed=None,
            config=config,
            bots=tuple(self.names),
            games=(),
            matches_done=self.matches_done,
            matches_total=int(meta.get("matches_total") or 0),
            games_total=int(meta.get("games_total") or 0),
            digest=meta.get("config_digest"),
            draw_probability=self.draw_probability,
            fault_ranks_last=self.fault_ranks_last,
            refused=tuple(sorted((str(k), str(v)) for k, v in dict(refused).items())),
        )

    def _document(self) -> None:
        """The live leaderboard of the games taken in (in this thread, outside the lock)."""
        started = time.monotonic()
        with self.lock:
            ratings = self.ratings.copy()  # the games in match order, then those beyond a gap
            tail = [stored for index in sorted(self.pending) for stored in self.pending[index]]
            tournament = self._tournament()
        for stored in tail:
            for name in stored.record.seats:
                if name not in ratings.ratings:
                    ratings.ratings[name] = ratings.env.create_rating()
                    ratings.games[name] = 0
            ratings.apply(stored.record)
        document = self.live.document(tournament, ratings)
        with self.lock:
            self.live_board = document
            self.stale = False
            self.version += 1
        for listener in self.listeners:
            listener()
        cost = time.monotonic() - started
        self.next_document = time.monotonic() + max(DOCUMENT_GAP - cost, cost * GAP_SHARE)

    def _add_row(self, stored: StoredGame) -> None:
        record = stored.record
        statuses: dict[int, list[str]] = defaultdict(list)
        for fault in record.faults:
            statuses[fault.seat].append(fault.status.value)
        row = {
            "canonical": stored.canonical_index,
            "id": game_id(record.match_id, record.game_index),
            "match_id": record.match_id,
            "game_index": record.game_index,
            "players": [
                {
                    "name": name,
                    "slug": self._slug(name),
                    "total": record.totals[seat],
                    "place": record.ranks[seat],
                    "faults": statuses.get(seat, []),
                    "rating_before": None,
                    "rating_after": None,
                    "rating_change": None,
                }
                for seat, name in enumerate(record.seats)
            ],
            "faults": len(record.faults),
        }
        self.rows[stored.canonical_index] = row
        _insert(self.order, stored.canonical_index)
        for name in record.seats:
            _insert(self.by_bot[name], stored.canonical_index)

    def _slug(self, name: str) -> str:
        slug = self.slugs.get(name)
        if slug is None:
            slug = self.slugs[name] = slugify(name)
        return slug

    def _rate(self, stored: StoredGame) -> None:
        ratings = self.ratings
        for name in stored.record.seats:
            if name not in ratings.ratings:
                ratings.ratings[name] = ratings.env.create_rating()
                ratings.games[name] = 0
        before = {name: ratings.ratings[name] for name in stored.record.seats}
        ratings.apply(stored.record)
        for player in self.rows[stored.canonical_index]["players"]:
            old, new = before[player["name"]], ratings.ratings[player["name"]]
            player["rating_before"] = round(old.mu - 3 * old.sigma, 4)
            player["rating_after"] = round(new.mu - 3 * new.sigma, 4)
            player["rating_change"] = round(player["rating_after"] - player["rating_before"], 4)

    # -- what the API reads

    def leaderboard(self) -> dict[str, Any] | None:
        """The leaderboard document: the run loop's file when it counts every game taken in
        (or no live one is made yet), else the live one. Read only: shared by every caller."""
        with self.lock:
            live, file = self.live_board, self.file_board
        if live is None:
            return file
        if file is not None and file.get("games_played", -1) >= live["games_played"]:
            return file
        return live

    def games(
        self, bot: str | None = None, after: int = -1, limit: int = 100
    ) -> list[dict[str, Any]]:
        """Finished games with canonical index above ``after`` (of ``bot``, if given), in
        canonical order, at most ``limit``; ``after`` < 0 with no games asked: the latest.
        The rows are copies (the rating changes of a row are filled in later)."""
        with self.lock:
            indexes = self.by_bot.get(bot, []) if bot is not None else self.order
            if after >= 0:
                start = bisect.bisect_right(indexes, after)
                chosen = indexes[start : start + limit]
            else:
                chosen = indexes[-limit:] if limit > 0 else []
            return [_copy(self.rows[index]) for index in chosen]

    def game_count(self, bot: str | None = None) -> int:
        with self.lock:
            return len(self.by_bot.get(bot, [])) if bot is not None else len(self.order)


def _insert(indexes: list[int], index: int) -> None:
    """Add ``index`` to the sorted list (games come in nearly in order: at its end)."""
    if not indexes or indexes[-1] < index:
        indexes.append(index)
    else:
        bisect.insort(indexes, index)


def _copy(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "players": [{**player} for player in row["players"]]}
