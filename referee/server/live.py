"""The live view of a running league, kept up to date incrementally: a thread reads the
tournament database every ``interval`` seconds for the matches finished since its last look
(never all the games again) and the ``leaderboard.json`` the run loop writes, and keeps in
memory what the API and the pages serve: one row per finished game with each seat's place and
rating change, each bot's games, and the leaderboard.

A game's rating change is the sequential TrueSkill update (mu - 3 sigma before and after,
``ratings.Ratings``) in match order: the games of a match are applied once every earlier
match is done or withdrawn (a league's wave ends whole), so the changes are the same after a
restart. Until then a row shows its places and ``null`` changes.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ohseven.referee.results.archive import game_id, slugify
from ohseven.referee.results.board import LEADERBOARD_NAME
from ohseven.referee.results.ratings import Ratings
from ohseven.referee.results.store import DB_NAME, Store, StoredGame

__all__ = ["LiveView"]

_TERMINAL = ("done", "withdrawn")


class LiveView:
    """What the server shows, read from the output folder ``output`` as the league plays."""

    def __init__(
        self,
        output: str | Path,
        game: str,
        *,
        draw_probability: float | None = None,
        fault_ranks_last: bool = True,
        interval: float = 0.5,
    ) -> None:
        self.output = Path(output)
        self.interval = interval
        self.lock = threading.Lock()
        self.ratings = Ratings(
            game, (), draw_probability=draw_probability, fault_ranks_last=fault_ranks_last
        )
        self.rows: dict[int, dict[str, Any]] = {}  # canonical index -> row
        self.order: list[int] = []  # canonical indexes as ingested
        self.by_bot: dict[str, list[int]] = defaultdict(list)
        self.pending: dict[int, list[StoredGame]] = {}  # done matches not yet rated
        self.next_match = 0  # the first match not yet ingested and rated
        self.seen: set[int] = set()  # done matches ingested beyond next_match
        self.board: dict[str, Any] | None = None
        self.board_mtime: float | None = None
        self.updated = 0.0  # time of the last look that found something new
        self.looked = 0.0
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
        """Take in what finished since the last look."""
        path = self.output / LEADERBOARD_NAME
        try:
            mtime = path.stat().st_mtime
        except OSError:
            mtime = None
        if mtime is not None and mtime != self.board_mtime:
            try:
                board = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                board = None
            if isinstance(board, dict):
                with self.lock:
                    self.board, self.board_mtime = board, mtime
                    self.updated = time.time()
        with self._reading() as store:
            if store is None:
                return
            statuses = store.statuses_from(self.next_match)
            fresh = [
                index for index, status in statuses if status == "done" and index not in self.seen
            ]
            games = {index: store.match_games(index) for index in fresh}
        with self.lock:
            for index in fresh:
                self.seen.add(index)
                self.pending[index] = games[index]
                for stored in games[index]:
                    self._add_row(stored)
            for index, status in statuses:  # rate, in match order, up to the first unfinished
                if index != self.next_match or status not in _TERMINAL:
                    break
                for stored in self.pending.pop(index, []):
                    self._rate(stored)
                self.seen.discard(index)
                self.next_match += 1
            if fresh:
                self.updated = time.time()
            self.looked = time.time()

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
                    "slug": slugify(name),
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
        self.order.append(stored.canonical_index)
        for name in record.seats:
            self.by_bot[name].append(stored.canonical_index)

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
        with self.lock:
            return self.board

    def games(
        self, bot: str | None = None, after: int = -1, limit: int = 100
    ) -> list[dict[str, Any]]:
        """Finished games with canonical index above ``after`` (of ``bot``, if given), in
        canonical order, at most ``limit``; ``after`` < 0 with no games asked: the latest."""
        with self.lock:
            indexes = self.by_bot.get(bot, []) if bot is not None else self.order
            chosen = sorted(index for index in indexes if index > after)
            chosen = chosen[:limit] if after >= 0 else chosen[-limit:]
            return [json.loads(json.dumps(self.rows[index])) for index in chosen]

    def game_count(self, bot: str | None = None) -> int:
        with self.lock:
            return len(self.by_bot.get(bot, [])) if bot is not None else len(self.order)
