"""The tournament database: one SQLite file (WAL) in the output directory.

Tables: ``meta`` (schema version, config JSON and digest, the secret's fingerprint),
``matches`` (one row per scheduled match: bots, games, status ``pending`` / ``running`` /
``done`` / ``failed``), ``games`` (one row per finished game, keyed by its canonical index),
``faults`` (one row per fault), ``logs`` (each bot's truncated output per match), ``failures``
(why a ``failed`` match failed: on a Dask cluster, a match that kept killing its workers; a
rerun plays it again), ``waves`` (a league's waves: the first match of each, how many, the bots
it was drawn among). Match rows are written as the matches are scheduled, not all at the start;
a league's match whose bot left the league before it was played is ``withdrawn``. Each game
is committed as soon as it is written, so a kill at any moment leaves the database consistent:
at worst a match is ``running`` with some of its games, and :meth:`Store.start_match` clears
them before the match is played again.

Only the referee's parent process writes; readers (``publish``) may read while it runs.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from ohseven.referee.files import DB_NAME
from ohseven.referee.records import Fault, FaultStatus, GameRecord
from ohseven.referee.stats import rate

__all__ = [
    "SCHEMA_VERSION",
    "DB_NAME",
    "StoreError",
    "DamagedStoreError",
    "database_error",
    "StoreIOError",
    "Store",
    "StoredGame",
    "Aggregates",
    "BotAggregate",
    "aggregate",
]

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
    match_index INTEGER PRIMARY KEY,
    match_id TEXT NOT NULL UNIQUE,
    bots TEXT NOT NULL,
    first_game INTEGER NOT NULL,
    games INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    started REAL,
    finished REAL
);
CREATE TABLE IF NOT EXISTS games (
    canonical_index INTEGER PRIMARY KEY,
    match_index INTEGER NOT NULL REFERENCES matches(match_index),
    match_id TEXT NOT NULL,
    game_index INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    seats TEXT NOT NULL,
    totals TEXT NOT NULL,
    ranks TEXT NOT NULL,
    stats TEXT NOT NULL,
    faults TEXT NOT NULL,
    replay_path TEXT,
    seconds REAL NOT NULL,
    finished REAL NOT NULL,
    UNIQUE (match_index, game_index)
);
CREATE TABLE IF NOT EXISTS faults (
    canonical_index INTEGER NOT NULL REFERENCES games(canonical_index),
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    status TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS faults_game ON faults(canonical_index);
CREATE TABLE IF NOT EXISTS logs (
    match_index INTEGER NOT NULL REFERENCES matches(match_index),
    bot TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (match_index, bot)
);
CREATE TABLE IF NOT EXISTS failures (
    match_index INTEGER PRIMARY KEY REFERENCES matches(match_index),
    reason TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS waves (
    wave INTEGER PRIMARY KEY,
    first_match INTEGER NOT NULL,
    matches INTEGER NOT NULL,
    bots TEXT NOT NULL
);
"""


class StoreError(Exception):
    """A database that does not belong to this tournament, or of another schema version."""


class DamagedStoreError(StoreError):
    """A database file SQLite cannot read: truncated, overwritten, not a database."""


#: free space under which an I/O error of the database is taken for a full disk
LOW_SPACE_BYTES = 16 << 20


class StoreIOError(StoreError):
    """A database SQLite cannot read or write for a reason of the machine (an I/O error, a
    permission), not known to be damaged: fix the cause and run again."""


def _free_bytes(path: str | os.PathLike[str]) -> int | None:
    try:
        found = os.statvfs(os.path.dirname(os.path.abspath(path)) or ".")
    except OSError:
        return None
    return found.f_bavail * found.f_frsize


def database_error(path: str | os.PathLike[str], error: sqlite3.Error) -> Exception:
    """What a SQLite error on the database at ``path`` means for the organiser: a full disk
    (an ``OSError`` with ``ENOSPC``: stop, free space, resume; also an I/O error, a ``-shm``
    or ``-wal`` file SQLite cannot create, on a disk with almost no space left), a damaged
    file (SQLite says it is corrupt or not a database), or else a :class:`StoreError` that
    says what failed and never calls the games lost: they are intact as far as anyone knows."""
    text = str(error)
    name = str(getattr(error, "sqlite_errorname", "") or "")
    free = _free_bytes(path)
    if "full" in text or name == "SQLITE_FULL" or (free is not None and free < LOW_SPACE_BYTES):
        return OSError(errno.ENOSPC, f"no space left for {path} ({text})")
    damaged = name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or any(
        words in text
        for words in ("malformed", "not a database", "file is encrypted", "integrity check")
    )
    if damaged:
        return DamagedStoreError(
            f"{path} is damaged ({text}). Restore it from a backup; to start the tournament "
            "over instead, set another `output` (or use --fresh, which discards this one)"
        )
    left = "" if free is None else f", {free >> 20} MB free"
    return StoreIOError(
        f"cannot read or write {path} ({text}{left}): check the disk, its free space and the "
        "folder's permissions, then run the same command again; the games it holds are not "
        "known to be damaged"
    )


@attrs.frozen
class StoredGame:
    canonical_index: int
    match_index: int
    record: GameRecord


@attrs.frozen
class BotAggregate:
    """What a bot did over its finished games."""

    name: str
    games: int = 0
    points: int = 0
    rounds: int = 0
    wins: int = 0  # games ranked first (shared firsts count)
    ranks: tuple[tuple[int, int], ...] = ()  # (rank, games)
    faults: tuple[tuple[str, int], ...] = ()  # (status, count)
    faulted_games: int = 0
    counts: tuple[tuple[str, int], ...] = ()  # summed raw per-seat statistics

    @property
    def points_per_game(self) -> float | None:
        return self.points / self.games if self.games else None

    @property
    def points_per_round(self) -> float | None:
        return self.points / self.rounds if self.rounds else None

    def count(self, key: str) -> int:
        return dict(self.counts).get(key, 0)

    def rates(self) -> dict[str, float | None]:
        """The BGA per-player rates, per scored round (as ``stats``): zero-bid, top-bid,
        bid-fill (bid = tricks), overflow (bid < tricks), underfill (bid > tricks)."""
        counts = dict(self.counts)
        rounds = counts.get("rounds", 0)
        return {
            f"{name}_rate": rate(counts.get(key, 0), rounds)
            for name, key in (
                ("zero_bid", "zero_bids"),
                ("top_bid", "top_bids"),
                ("bid_fill", "fills"),
                ("overflow", "overflows"),
                ("underfill", "underfills"),
            )
        }


def _fault_json(fault: Fault) -> dict[str, Any]:
    data: dict[str, Any] = {
        "seat": fault.seat,
        "status": fault.status.value,
        "detail": fault.detail,
    }
    if fault.move is not None:  # where in the game (games stored before had none)
        data.update(move=fault.move, round=fault.round, trick=fault.trick)
    return data


#: a game's row with its five JSON columns as one JSON array: one parse per game, not five
_GAME_COLUMNS = (
    "g.canonical_index, g.match_index, g.match_id, g.game_index, g.seed, "
    "'[' || g.seats || ',' || g.totals || ',' || g.ranks || ',' || g.faults || ',' || g.stats "
    "|| ']', g.replay_path, g.seconds"
)


def _stored_from_row(row: Sequence[Any]) -> StoredGame:
    canonical, match_index, match_id, game_index, seed, data, replay_path, seconds = row
    seats, totals, ranks, faults, stats = json.loads(data)
    record = GameRecord(
        match_id=match_id,
        game_index=game_index,
        seed=seed,
        seats=tuple(seats),
        totals=tuple(totals),
        ranks=tuple(ranks),
        faults=tuple(
            Fault(
                item["seat"],
                FaultStatus(item["status"]),
                item["detail"],
                item.get("move"),
                item.get("round"),
                item.get("trick"),
            )
            for item in faults
        ),
        stats=stats,
        replay_path=replay_path,
        seconds=seconds,
    )
    return StoredGame(canonical, match_index, record)


class Store:
    """A tournament's database. Open with :meth:`open`; use as a context manager."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self.db = connection
        self.path = path

    @classmethod
    def open(cls, directory: str | os.PathLike[str], *, create: bool = True) -> Store:
        """Open (and with ``create``, create) the database in ``directory``."""
        folder = Path(directory)
        path = folder / DB_NAME
        if not create and not path.exists():
            raise StoreError(f"{folder}: no tournament database ({DB_NAME}) there")
        folder.mkdir(parents=True, exist_ok=True)
        if not path.exists():  # private to the referee's user: it holds every game's seed
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600))
        connection = sqlite3.connect(path, timeout=30, isolation_level=None)
        try:
            version = cls._prepare(connection)
            if create:  # the referee's own open, once per run: read every page once
                (result,) = connection.execute("PRAGMA quick_check").fetchone()
                if result != "ok":
                    raise sqlite3.DatabaseError(f"integrity check: {result}")
        except sqlite3.DatabaseError as error:
            connection.close()
            raise database_error(path, error) from None
        if version is None:
            connection.execute(
                "INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
        elif int(version[0]) != SCHEMA_VERSION:
            connection.close()
            raise StoreError(
                f"{path}: schema version {version[0]}, this referee reads {SCHEMA_VERSION}"
            )
        return cls(connection, path)

    @staticmethod
    def _prepare(connection: sqlite3.Connection) -> Any:
        connection.row_factory = sqlite3.Row
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute("PRAGMA foreign_keys=ON")
        connection.executescript(_SCHEMA)
        return connection.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the tournament

    def meta(self) -> dict[str, str]:
        return {row["key"]: row["value"] for row in self.db.execute("SELECT * FROM meta")}

    @property
    def digest(self) -> str | None:
        return self.meta().get("config_digest")

    def setup(
        self,
        *,
        digest: str,
        config: Mapping[str, Any],
        secret_fingerprint: str,
        matches: Iterable[tuple[int, str, Sequence[str], int, int]] = (),
        accept: Callable[[Mapping[str, str]], None] | None = None,
        secret_changed: str = "key `seed` was changed, added or removed since it started",
    ) -> bool:
        """Record the tournament and its matches (index, id, bot names, first game, games).

        Returns True for a new tournament, False when the database already holds this one
        (same ``digest`` and secret); raises :class:`StoreError` when it holds another.
        ``accept`` sees the stored meta first and may raise a more precise error (a league
        naming the key that changed); ``secret_changed`` says what may have changed the secret.
        """
        existing = self.digest
        if existing is not None:
            if accept is not None:
                accept(self.meta())
            existing = self.digest  # ``accept`` may renew it
            if existing != digest:
                raise StoreError(
                    f"{self.path} holds another tournament (config digest {existing}, "
                    f"this one is {digest})"
                )
            if self.meta().get("secret_fingerprint") != secret_fingerprint:
                raise StoreError(
                    f"{self.path} holds this tournament played from another secret: "
                    f"{secret_changed}"
                )
            return False
        with self.transaction():
            self.db.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                [
                    ("config_digest", digest),
                    ("config", json.dumps(config, sort_keys=True, default=str)),
                    ("secret_fingerprint", secret_fingerprint),
                    ("created", str(time.time())),
                ],
            )
            self.db.executemany(
                "INSERT INTO matches (match_index, match_id, bots, first_game, games) "
                "VALUES (?, ?, ?, ?, ?)",
                [
                    (index, match_id, json.dumps(list(bots)), first, games)
                    for index, match_id, bots, first, games in matches
                ],
            )
        return True

    def transaction(self) -> _Transaction:
        return _Transaction(self.db)

    def set_meta(self, values: Mapping[str, str]) -> None:
        with self.transaction():
            self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(values.items()))

    def add_matches(self, matches: Iterable[tuple[int, str, Sequence[str], int, int]]) -> None:
        """Record matches as they are scheduled (index, id, bot names, first game, games); a
        match already recorded keeps its row."""
        with self.transaction():
            self._insert_matches(matches)

    def _insert_matches(self, matches: Iterable[tuple[int, str, Sequence[str], int, int]]) -> None:
        self.db.executemany(
            "INSERT OR IGNORE INTO matches (match_index, match_id, bots, first_game, games) "
            "VALUES (?, ?, ?, ?, ?)",
            [
                (index, match_id, json.dumps(list(bots)), first, games)
                for index, match_id, bots, first, games in matches
            ],
        )

    # -- a league's waves

    def add_wave(
        self,
        wave: int,
        bots: Sequence[str],
        matches: Sequence[tuple[int, str, Sequence[str], int, int]],
    ) -> None:
        """Record a league's wave and its matches in one transaction (a kill never leaves half
        a wave)."""
        first = matches[0][0] if matches else self.next_match_index()[0]
        with self.transaction():
            self.db.execute(
                "INSERT INTO waves VALUES (?, ?, ?, ?)",
                (wave, first, len(matches), json.dumps(list(bots))),
            )
            self._insert_matches(matches)

    def last_wave(self) -> tuple[int, int, int] | None:
        """(wave, first match, matches) of the league's latest wave, or None before the first."""
        row = self.db.execute(
            "SELECT wave, first_match, matches FROM waves ORDER BY wave DESC LIMIT 1"
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def wave_bots(self) -> set[str]:
        """Every bot of a recorded wave's roster (those that sat a wave out too)."""
        names: set[str] = set()
        for (bots,) in self.db.execute("SELECT bots FROM waves"):
            names.update(json.loads(bots))
        return names

    def open_waves(self) -> list[tuple[int, int, int]]:
        """(wave, first match, matches) of each wave with a match neither done nor withdrawn,
        latest first (a league's newcomer waves are recorded while an earlier wave plays)."""
        rows = self.db.execute(
            "SELECT wave, first_match, matches FROM waves w WHERE EXISTS (SELECT 1 FROM matches "
            "m WHERE m.match_index >= w.first_match AND m.match_index < w.first_match + "
            "w.matches AND m.status NOT IN ('done', 'withdrawn')) ORDER BY wave DESC"
        )
        return [(row[0], row[1], row[2]) for row in rows]

    def match_rows(self, first: int = 0, last: int | None = None) -> list[dict[str, Any]]:
        """The rows of matches ``first`` to ``last`` (inclusive; default: every later one)."""
        rows = self.db.execute(
            "SELECT match_index, match_id, bots, first_game, games, status FROM matches "
            "WHERE match_index >= ? AND match_index <= ? ORDER BY match_index",
            (first, last if last is not None else 2**62),
        )
        return [
            {
                "index": row[0],
                "match_id": row[1],
                "bots": tuple(json.loads(row[2])),
                "first_game": row[3],
                "games": row[4],
                "status": row[5],
            }
            for row in rows
        ]

    def next_match_index(self) -> tuple[int, int]:
        """The index and first game after the last recorded match: (index, first game)."""
        row = self.db.execute(
            "SELECT match_index, first_game + games FROM matches ORDER BY match_index DESC LIMIT 1"
        ).fetchone()
        return (0, 0) if row is None else (row[0] + 1, row[1])

    def bot_names(self) -> set[str]:
        """Every bot of a recorded match."""
        names: set[str] = set()
        for (bots,) in self.db.execute("SELECT DISTINCT bots FROM matches"):
            names.update(json.loads(bots))
        return names

    def withdraw_match(self, match_index: int) -> None:
        """A league's match one of whose bots left before it was played: never played, never
        rated (what an earlier run left of it is discarded)."""
        with self.transaction():
            self._discard_games(match_index)
            self.db.execute(
                "UPDATE matches SET status='withdrawn', finished=? WHERE match_index = ?",
                (time.time(), match_index),
            )

    # -- matches

    def match_status(self) -> dict[int, str]:
        rows = self.db.execute("SELECT match_index, status FROM matches ORDER BY match_index")
        return {row[0]: row[1] for row in rows}

    def unfinished_matches(self) -> list[int]:
        rows = self.db.execute(
            "SELECT match_index FROM matches WHERE status NOT IN ('done', 'withdrawn') "
            "ORDER BY match_index"
        )
        return [row[0] for row in rows]

    def done_matches(self) -> set[int]:
        rows = self.db.execute("SELECT match_index FROM matches WHERE status = 'done'")
        return {row[0] for row in rows}

    def _discard_games(self, match_index: int) -> None:
        """Delete the games of a match and their faults (inside the caller's transaction)."""
        self.db.execute(
            "DELETE FROM faults WHERE canonical_index IN "
            "(SELECT canonical_index FROM games WHERE match_index = ?)",
            (match_index,),
        )
        self.db.execute("DELETE FROM games WHERE match_index = ?", (match_index,))

    def start_match(self, match_index: int) -> None:
        """Mark a match running, discarding whatever a previous, interrupted run left of it."""
        with self.transaction():
            self._discard_games(match_index)
            self.db.execute("DELETE FROM logs WHERE match_index = ?", (match_index,))
            self.db.execute("DELETE FROM failures WHERE match_index = ?", (match_index,))
            self.db.execute(
                "UPDATE matches SET status='running', started=?, finished=NULL "
                "WHERE match_index = ?",
                (time.time(), match_index),
            )

    def add_game(self, canonical_index: int, match_index: int, record: GameRecord) -> bool:
        """Write one finished game (committed at once); False if it was already there."""
        with self.transaction():
            cursor = self.db.execute(
                "INSERT OR IGNORE INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    canonical_index,
                    match_index,
                    record.match_id,
                    record.game_index,
                    record.seed,
                    json.dumps(list(record.seats)),
                    json.dumps(list(record.totals)),
                    json.dumps(list(record.ranks)),
                    json.dumps(record.stats, sort_keys=True, default=str),
                    json.dumps([_fault_json(fault) for fault in record.faults]),
                    record.replay_path,
                    record.seconds,
                    time.time(),
                ),
            )
            if cursor.rowcount == 0:
                return False
            self.db.executemany(
                "INSERT INTO faults VALUES (?, ?, ?, ?, ?)",
                [
                    (
                        canonical_index,
                        fault.seat,
                        record.seats[fault.seat] if 0 <= fault.seat < len(record.seats) else "?",
                        fault.status.value,
                        fault.detail,
                    )
                    for fault in record.faults
                ],
            )
        return True

    def finish_match(self, match_index: int, logs: Mapping[str, str] | None = None) -> None:
        """Mark a match done (after all its games are written) and keep its bots' logs."""
        with self.transaction():
            written, expected = self.db.execute(
                "SELECT (SELECT COUNT(*) FROM games WHERE match_index = ?), games "
                "FROM matches WHERE match_index = ?",
                (match_index, match_index),
            ).fetchone()
            if written != expected:
                raise StoreError(
                    f"match {match_index}: {written} of its {expected} games written; "
                    "cannot mark it done"
                )
            self.db.executemany(
                "INSERT OR REPLACE INTO logs VALUES (?, ?, ?)",
                [(match_index, bot, str(text)) for bot, text in (logs or {}).items()],
            )
            self.db.execute(
                "UPDATE matches SET status='done', finished=? WHERE match_index = ?",
                (time.time(), match_index),
            )

    def fail_match(self, match_index: int, reason: str) -> None:
        """Mark a match failed (none of its games count) and keep why; a rerun plays it again."""
        with self.transaction():
            self._discard_games(match_index)
            self.db.execute(
                "INSERT OR REPLACE INTO failures VALUES (?, ?)", (match_index, str(reason))
            )
            self.db.execute(
                "UPDATE matches SET status='failed', finished=? WHERE match_index = ?",
                (time.time(), match_index),
            )

    def failures(self) -> dict[int, str]:
        """match index -> why it failed, for the matches whose status is ``failed``."""
        rows = self.db.execute(
            "SELECT f.match_index, f.reason FROM failures f JOIN matches m USING (match_index) "
            "WHERE m.status = 'failed' ORDER BY f.match_index"
        )
        return {row[0]: row[1] for row in rows}

    # -- queries

    def games(self, *, after: int = -1, finished_matches_only: bool = False) -> list[StoredGame]:
        """Finished games in canonical order (those with canonical index > ``after``)."""
        query = f"SELECT {_GAME_COLUMNS} FROM games g"
        if finished_matches_only:
            query += " JOIN matches m USING (match_index) WHERE m.status = 'done' AND"
        else:
            query += " WHERE"
        query += " g.canonical_index > ? ORDER BY g.canonical_index"
        return [_stored_from_row(row) for row in self.db.execute(query, (after,))]

    def match_games(self, match_index: int) -> list[StoredGame]:
        """The games of one match in canonical order."""
        query = f"SELECT {_GAME_COLUMNS} FROM games g WHERE g.match_index = ?"
        rows = self.db.execute(query + " ORDER BY g.canonical_index", (match_index,))
        return [_stored_from_row(row) for row in rows]

    def statuses_from(self, first: int) -> list[tuple[int, str]]:
        """(match index, status) of every match from ``first`` on, in order."""
        rows = self.db.execute(
            "SELECT match_index, status FROM matches WHERE match_index >= ? ORDER BY match_index",
            (first,),
        )
        return [(row[0], row[1]) for row in rows]

    def fault_details(self, bot: str, limit: int = 200) -> list[dict[str, Any]]:
        """The latest faults of ``bot`` with their details (private to its author)."""
        rows = self.db.execute(
            "SELECT canonical_index, status, detail FROM faults WHERE bot = ? "
            "ORDER BY canonical_index DESC LIMIT ?",
            (bot, limit),
        )
        return [{"game": row[0], "status": row[1], "detail": row[2]} for row in rows]

    def bot_logs(self, bot: str, limit: int = 20) -> list[dict[str, Any]]:
        """The latest matches' logs (the bot's own output) of ``bot`` (private to its author)."""
        rows = self.db.execute(
            "SELECT l.match_index, m.match_id, l.text FROM logs l JOIN matches m "
            "USING (match_index) WHERE l.bot = ? ORDER BY l.match_index DESC LIMIT ?",
            (bot, limit),
        )
        return [{"match": row[1], "text": row[2]} for row in rows]

    def iter_records(self) -> Iterator[GameRecord]:
        for stored in self.games():
            yield stored.record

    def game_count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM games").fetchone()[0]

    def logs(self, match_index: int) -> dict[str, str]:
        rows = self.db.execute("SELECT bot, text FROM logs WHERE match_index = ?", (match_index,))
        return {row[0]: row[1] for row in rows}

    def faults_by_status(self) -> dict[str, dict[str, int]]:
        """bot -> fault status -> count."""
        result: dict[str, dict[str, int]] = defaultdict(dict)
        for bot, status, count in self.db.execute(
            "SELECT bot, status, COUNT(*) FROM faults GROUP BY bot, status ORDER BY bot, status"
        ):
            result[bot][status] = count
        return dict(result)

    def start_failures(self) -> dict[str, tuple[int, str]]:
        """bot -> (games it did not start in, the first reason): the ``no_start`` faults."""
        result: dict[str, tuple[int, str]] = {}
        for bot, count, detail in self.db.execute(
            "SELECT bot, COUNT(*), MIN(detail) FROM faults WHERE status = 'no_start' "
            "GROUP BY bot ORDER BY bot"
        ):
            result[bot] = (count, detail)
        return result

    def scheduled(self) -> tuple[int, int]:
        """(matches, games) in the matches table: those scheduled so far (a league schedules
        in waves; the referee keeps the totals in meta, ``matches_total``/``games_total``)."""
        matches, games = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(games), 0) FROM matches"
        ).fetchone()
        return matches, games

    def all_logs(self) -> dict[int, dict[str, str]]:
        """match index -> bot -> its output in that match, for every match with any."""
        result: dict[int, dict[str, str]] = defaultdict(dict)
        for match_index, bot, text in self.db.execute(
            "SELECT match_index, bot, text FROM logs ORDER BY match_index"
        ):
            result[match_index][bot] = text
        return dict(result)


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        if kind is None:
            self.db.execute("COMMIT")
        else:
            self.db.execute("ROLLBACK")


def _game_rounds(stats: Any) -> int:
    table = stats.get("table") if isinstance(stats, dict) else None
    rounds = table.get("rounds") if isinstance(table, dict) else None
    return rounds if isinstance(rounds, int) else 0


def aggregate(records: Iterable[GameRecord], names: Iterable[str] = ()) -> dict[str, BotAggregate]:
    """Per-bot aggregates of ``records``; ``names`` lists bots to include even without games."""
    totals = Aggregates(names)
    for record in records:
        totals.add(record)
    return totals.result()


class Aggregates:
    """:func:`aggregate` kept up to date game by game (the live leaderboard adds the games as
    they finish, never all of them again)."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self.games: Counter[str] = Counter()
        self.points: Counter[str] = Counter()
        self.rounds: Counter[str] = Counter()
        self.wins: Counter[str] = Counter()
        self.faulted: Counter[str] = Counter()
        self.ranks: dict[str, Counter[int]] = defaultdict(Counter)
        self.faults: dict[str, Counter[str]] = defaultdict(Counter)
        self.counts: dict[str, Counter[str]] = defaultdict(Counter)
        self.order = list(dict.fromkeys(names))
        self.seen = set(self.order)

    def name(self, name: str) -> None:
        """Include ``name`` even without games."""
        if name not in self.seen:
            self.seen.add(name)
            self.order.append(name)

    def add(self, record: GameRecord) -> None:
        game_rounds = _game_rounds(record.stats)
        seat_stats = record.stats.get("seats") if isinstance(record.stats, dict) else None
        if not isinstance(seat_stats, list):
            seat_stats = None
        faulted_seats = {fault.seat for fault in record.faults}
        for fault in record.faults:
            if 0 <= fault.seat < len(record.seats):
                self.faults[record.seats[fault.seat]][fault.status.value] += 1
        for seat, name in enumerate(record.seats):
            if name not in self.seen:
                self.seen.add(name)
                self.order.append(name)
            self.games[name] += 1
            self.points[name] += record.totals[seat]
            self.rounds[name] += game_rounds
            self.ranks[name][record.ranks[seat]] += 1
            self.wins[name] += record.ranks[seat] == 1
            self.faulted[name] += seat in faulted_seats
            if seat_stats is not None and seat < len(seat_stats):
                one = seat_stats[seat]
                if type(one) is dict:
                    bucket = self.counts[name]
                    for key, value in one.items():
                        if type(value) is int:  # the counts: not the rates, nor a bool
                            bucket[key] += value

    def result(self) -> dict[str, BotAggregate]:
        return {
            name: BotAggregate(
                name=name,
                games=self.games[name],
                points=self.points[name],
                rounds=self.rounds[name],
                wins=self.wins[name],
                ranks=tuple(sorted(self.ranks[name].items())),
                faults=tuple(sorted(self.faults[name].items())),
                faulted_games=self.faulted[name],
                counts=tuple(sorted(self.counts[name].items())),
            )
            for name in self.order
        }
