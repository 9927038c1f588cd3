"""The server's own database (``server.sqlite`` beside the tournament's): authors with their
tokens stored only as SHA-256 hashes, uploaded bot versions with their state and check report,
check results remembered by content digest, and the key that signs sessions.

Every write is one committed transaction with ``synchronous=FULL``: an upload acknowledged to
its author survives a SIGKILL of the server the moment after.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

__all__ = [
    "SERVER_DB_NAME",
    "NAME_PATTERN",
    "ServerDBError",
    "AuthorExistsError",
    "UnknownAuthorError",
    "Author",
    "Version",
    "ServerDB",
    "hash_token",
    "new_token",
    "version_name",
]

SERVER_DB_NAME = "server.sqlite"
#: the meta key of the final's state
FINAL_META = "final"
#: author and bot names: short, lower case, safe in a URL and a file name
NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")

#: a version's states: queued -> checking -> passed | failed (| error: the check did not run)
STATES = ("queued", "checking", "passed", "failed", "error")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS authors (
    name TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    created REAL NOT NULL,
    revoked REAL,
    organiser INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS versions (
    id INTEGER PRIMARY KEY,
    author TEXT NOT NULL REFERENCES authors(name),
    bot TEXT NOT NULL,
    version INTEGER NOT NULL,
    digest TEXT NOT NULL,
    command TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    files INTEGER NOT NULL,
    uploaded REAL NOT NULL,
    state TEXT NOT NULL DEFAULT 'queued',
    report TEXT,
    checked REAL,
    UNIQUE (author, bot, version)
);
CREATE INDEX IF NOT EXISTS versions_state ON versions(state);
CREATE INDEX IF NOT EXISTS versions_uploaded ON versions(author, uploaded);
CREATE TABLE IF NOT EXISTS unrated (
    id INTEGER PRIMARY KEY,
    author TEXT NOT NULL REFERENCES authors(name),
    bot TEXT NOT NULL,
    opponents TEXT NOT NULL,
    games INTEGER NOT NULL,
    requested REAL NOT NULL,
    state TEXT NOT NULL DEFAULT 'queued',
    result TEXT
);
CREATE TABLE IF NOT EXISTS checks (
    key TEXT PRIMARY KEY,
    passed INTEGER NOT NULL,
    report TEXT NOT NULL
);
"""


class ServerDBError(Exception):
    """A request the server's database refuses (an unknown author, a name taken...)."""


class AuthorExistsError(ServerDBError):
    pass


class UnknownAuthorError(ServerDBError, LookupError):
    pass


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    """A fresh token: 32 random bytes, URL-safe."""
    return secrets.token_urlsafe(32)


def version_name(author: str, bot: str, version: int) -> str:
    """The rated name of a version: ``alice/mcbot v3``."""
    return f"{author}/{bot} v{version}"


@attrs.frozen
class Author:
    name: str
    created: float
    revoked: float | None
    organiser: bool = False

    @property
    def active(self) -> bool:
        return self.revoked is None


@attrs.frozen
class Version:
    id: int
    author: str
    bot: str
    version: int
    digest: str
    command: tuple[str, ...]
    bytes: int
    files: int
    uploaded: float
    state: str
    report: dict | None
    checked: float | None

    @property
    def name(self) -> str:
        return version_name(self.author, self.bot, self.version)

    def public(self) -> dict[str, Any]:
        """What anyone may read of it: no command, no files, no report."""
        return {
            "name": self.name,
            "author": self.author,
            "bot": self.bot,
            "version": self.version,
            "state": self.state,
            "uploaded": self.uploaded,
        }

    def argv(self, folder: str | os.PathLike[str]) -> tuple[str, ...]:
        """The command that starts this version from ``folder``, where its files are now.

        The stored command names the paths of the upload's moment (``bot_command``: its files
        under the uploads folder, the referee's Python first): its words naming the upload's
        files are taken from ``folder`` and its interpreter is this referee's Python, so a
        league folder moved, copied or restored elsewhere (or a rebuilt environment) runs the
        same bot, never a path the sandbox does not show it."""
        return tuple(self._words(str(folder), sys.executable))

    def shown_command(self) -> list[str]:
        """The command as its author wrote it: the words naming the upload's files relative
        to its top, the referee's Python as ``python3`` (no path of the server shown)."""
        return self._words(None, "python3")

    def _words(self, folder: str | None, python: str) -> list[str]:
        marker = f"/{self.digest}/bot/"
        words = []
        for index, word in enumerate(self.command):
            if marker in word:
                relative = word.split(marker, 1)[1]
                word = relative if folder is None else os.path.join(folder, relative)
            elif index == 0 and os.path.isabs(word):
                # bot_command's only absolute first word outside the upload: the interpreter
                word = python
            words.append(word)
        return words

    def private(self) -> dict[str, Any]:
        """What its author reads: everything, the check's whole report included (its command
        as shown here too: check-bot's names the server's paths)."""
        report = self.report
        if isinstance(report, dict) and "command" in report:
            report = {**report, "command": self.shown_command()}
        return {
            **self.public(),
            "id": self.id,
            "digest": self.digest,
            "command": self.shown_command(),
            "bytes": self.bytes,
            "files": self.files,
            "checked": self.checked,
            "report": report,
        }


def _version(row: sqlite3.Row) -> Version:
    return Version(
        id=row["id"],
        author=row["author"],
        bot=row["bot"],
        version=row["version"],
        digest=row["digest"],
        command=tuple(json.loads(row["command"])),
        bytes=row["bytes"],
        files=row["files"],
        uploaded=row["uploaded"],
        state=row["state"],
        report=json.loads(row["report"]) if row["report"] else None,
        checked=row["checked"],
    )


class ServerDB:
    """The server's database in ``directory`` (the tournament's output folder). Safe to share
    between threads (one connection, one lock); other processes (``authors add`` while the
    server runs) use it at the same time through SQLite's own locking."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / SERVER_DB_NAME
        if not self.path.exists():  # the token hashes and the reports: the referee's alone
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600))
        self.db = sqlite3.connect(
            self.path, timeout=30, isolation_level=None, check_same_thread=False
        )
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")  # an acknowledged upload is on disk
        self.db.executescript(_SCHEMA)
        self.lock = threading.RLock()
        self.changes = 0  # commits made through this object (see ``mark``)

    def close(self) -> None:
        with self.lock:
            self.db.close()

    def __enter__(self) -> ServerDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
            self.changes += 1

    def mark(self) -> tuple[int, int]:
        """A value that changes whenever the database may have: a write of this server, or a
        commit of another connection (``authors revoke``, SQLite's ``data_version``). What the
        pages show of the bots' states is cached by it."""
        with self.lock:
            return self.changes, int(self.db.execute("PRAGMA data_version").fetchone()[0])

    def _rows(self, query: str, args: tuple = ()) -> list[sqlite3.Row]:
        with self.lock:
            return self.db.execute(query, args).fetchall()

    # -- keys

    def key(self, name: str) -> bytes:
        """A random 32-byte key kept in the database (made on first use): signs sessions."""
        with self._write() as db:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (name,)).fetchone()
            if row is not None:
                return bytes.fromhex(row[0])
            value = secrets.token_bytes(32)
            db.execute("INSERT INTO meta VALUES (?, ?)", (name, value.hex()))
            return value

    def meta(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self._write() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def final_state(self) -> dict[str, Any] | None:
        """``{"began", "bots", "done"?}`` once ``ohseven-referee final`` has begun (from then
        on no upload is accepted and the league plays no more), else None."""
        value = self.meta(FINAL_META)
        return json.loads(value) if value else None

    def set_final_state(self, state: dict[str, Any]) -> None:
        self.set_meta(FINAL_META, json.dumps(state))

    # -- authors

    def add_author(self, name: str, *, organiser: bool = False) -> str:
        """Register ``name`` (an ``organiser`` reads every bot's private pages); the token,
        returned once (only its hash is kept)."""
        if not NAME_PATTERN.fullmatch(name):
            raise ServerDBError(
                f"author name {name!r}: 1 to 32 of a-z, 0-9, '_' and '-', starting with a "
                "letter or digit"
            )
        token = new_token()
        with self._write() as db:
            if db.execute("SELECT 1 FROM authors WHERE name = ?", (name,)).fetchone():
                raise AuthorExistsError(
                    f"author {name!r} exists (a new token: authors revoke, then add --renew)"
                )
            db.execute(
                "INSERT INTO authors VALUES (?, ?, ?, NULL, ?)",
                (name, hash_token(token), time.time(), int(organiser)),
            )
        return token

    def renew_author(self, name: str) -> str:
        """A new token for a revoked author (the old one stays invalid)."""
        token = new_token()
        with self._write() as db:
            if not db.execute("SELECT 1 FROM authors WHERE name = ?", (name,)).fetchone():
                raise UnknownAuthorError(f"no author {name!r}")
            db.execute(
                "UPDATE authors SET token_hash = ?, revoked = NULL WHERE name = ?",
                (hash_token(token), name),
            )
        return token

    def revoke_author(self, name: str) -> None:
        with self._write() as db:
            cursor = db.execute(
                "UPDATE authors SET revoked = ? WHERE name = ? AND revoked IS NULL",
                (time.time(), name),
            )
            if cursor.rowcount == 0:
                known = db.execute("SELECT 1 FROM authors WHERE name = ?", (name,)).fetchone()
                raise UnknownAuthorError(
                    f"author {name!r} is already revoked" if known else f"no author {name!r}"
                )

    def authors(self) -> list[Author]:
        return [
            Author(row["name"], row["created"], row["revoked"], bool(row["organiser"]))
            for row in self._rows("SELECT * FROM authors ORDER BY name")
        ]

    def is_organiser(self, name: str) -> bool:
        rows = self._rows(
            "SELECT organiser FROM authors WHERE name = ? AND revoked IS NULL", (name,)
        )
        return bool(rows and rows[0]["organiser"])

    def author_of_token(self, token: str) -> str | None:
        """The active author whose token this is, or None."""
        rows = self._rows(
            "SELECT name FROM authors WHERE token_hash = ? AND revoked IS NULL",
            (hash_token(token),),
        )
        return rows[0]["name"] if rows else None

    def token_mark(self, author: str) -> str | None:
        """A value that changes when the author's token is revoked or renewed, or when they log
        out (sessions are signed with it: either ends their sessions); None when not active."""
        rows = self._rows(
            "SELECT token_hash FROM authors WHERE name = ? AND revoked IS NULL", (author,)
        )
        if not rows:
            return None
        ended = self._rows("SELECT value FROM meta WHERE key = ?", (f"sessions-ended:{author}",))
        return rows[0]["token_hash"][:16] + (ended[0]["value"] if ended else "")

    def end_sessions(self, author: str) -> None:
        """End every session of ``author`` (a log-out: a copied cookie is worth nothing after)."""
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                (f"sessions-ended:{author}", secrets.token_hex(8)),
            )

    # -- versions

    def add_version(
        self, author: str, bot: str, digest: str, command: tuple[str, ...], size: int, files: int
    ) -> Version:
        """Record an upload (already on disk) as the next version of ``author``'s ``bot``."""
        now = time.time()
        with self._write() as db:
            row = db.execute(
                "SELECT COALESCE(MAX(version), 0) FROM versions WHERE author = ? AND bot = ?",
                (author, bot),
            ).fetchone()
            cursor = db.execute(
                "INSERT INTO versions (author, bot, version, digest, command, bytes, files, "
                "uploaded) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (author, bot, row[0] + 1, digest, json.dumps(list(command)), size, files, now),
            )
            new_id = cursor.lastrowid
        found = self.version(int(new_id or 0))
        assert found is not None
        return found

    def version(self, version_id: int) -> Version | None:
        rows = self._rows("SELECT * FROM versions WHERE id = ?", (version_id,))
        return _version(rows[0]) if rows else None

    def versions(self, author: str | None = None) -> list[Version]:
        if author is None:
            rows = self._rows("SELECT * FROM versions ORDER BY id")
        else:
            rows = self._rows("SELECT * FROM versions WHERE author = ? ORDER BY id", (author,))
        return [_version(row) for row in rows]

    def uploads_since(self, author: str, since: float) -> int:
        rows = self._rows(
            "SELECT COUNT(*) FROM versions WHERE author = ? AND uploaded >= ?", (author, since)
        )
        return int(rows[0][0])

    def set_state(self, version_id: int, state: str, report: dict | None = None) -> None:
        assert state in STATES, state
        with self._write() as db:
            db.execute(
                "UPDATE versions SET state = ?, report = COALESCE(?, report), "
                "checked = CASE WHEN ? IN ('passed', 'failed', 'error') THEN ? ELSE checked END "
                "WHERE id = ?",
                (
                    state,
                    None if report is None else json.dumps(report),
                    state,
                    time.time(),
                    version_id,
                ),
            )

    def requeue_interrupted(self) -> int:
        """Checks cut short by a stop go back to the queue; how many."""
        with self._write() as db:
            return db.execute(
                "UPDATE versions SET state = 'queued' WHERE state = 'checking'"
            ).rowcount

    def queued(self) -> list[Version]:
        """The versions waiting for their check, in the order they are checked: authors in
        turn (each one's first waiting version before anyone's second; among those, the
        author whose last check ended earliest first), then by upload. In upload order, one
        author's ten slow bots kept every other author waiting for hours."""
        rows = self._rows(
            "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY author ORDER BY id) AS turn, "
            "(SELECT MAX(checked) FROM versions w WHERE w.author = v.author) AS served "
            "FROM versions v WHERE state = 'queued') "
            "ORDER BY turn, served IS NOT NULL, served, id"
        )
        return [_version(row) for row in rows]

    def kept_digests(self) -> set[str]:
        """The digests whose stored trees may still be needed: named by a version waiting for
        its check, being checked, or passed (the active version plays; a retired one is kept
        with the games it played). A failed version's tree is not needed (its report is
        stored; the same content uploaded again is unpacked again)."""
        rows = self._rows(
            "SELECT DISTINCT digest FROM versions WHERE state NOT IN ('failed', 'error')"
        )
        return {str(row[0]) for row in rows}

    def active(self) -> list[Version]:
        """The version of each bot that plays: its latest passed one."""
        rows = self._rows(
            "SELECT * FROM versions v WHERE state = 'passed' AND version = (SELECT MAX(version) "
            "FROM versions w WHERE w.author = v.author AND w.bot = v.bot AND w.state = 'passed') "
            "AND author IN (SELECT name FROM authors WHERE revoked IS NULL) ORDER BY id"
        )
        return [_version(row) for row in rows]

    # -- unrated games on request (``unrated``)

    def add_unrated(self, author: str, bot: str, opponents: list[str], games: int) -> int:
        with self._write() as db:
            cursor = db.execute(
                "INSERT INTO unrated (author, bot, opponents, games, requested) "
                "VALUES (?, ?, ?, ?, ?)",
                (author, bot, json.dumps(opponents), games, time.time()),
            )
            return int(cursor.lastrowid or 0)

    def unrated(self, request_id: int | None = None, author: str | None = None) -> list[dict]:
        """Requests (one by id, an author's, or all), oldest first."""
        query = "SELECT * FROM unrated"
        args: tuple[Any, ...] = ()
        if request_id is not None:
            query, args = query + " WHERE id = ?", (request_id,)
        elif author is not None:
            query, args = query + " WHERE author = ?", (author,)
        return [
            {
                "id": row["id"],
                "author": row["author"],
                "bot": row["bot"],
                "opponents": json.loads(row["opponents"]),
                "games": row["games"],
                "requested": row["requested"],
                "state": row["state"],
                "result": json.loads(row["result"]) if row["result"] else None,
            }
            for row in self._rows(query + " ORDER BY id", args)
        ]

    def pending_unrated(self, author: str | None = None) -> int:
        """Requests waiting or playing (of ``author``, or of all)."""
        query = "SELECT COUNT(*) FROM unrated WHERE state IN ('queued', 'playing')"
        if author is None:
            return int(self._rows(query)[0][0])
        return int(self._rows(query + " AND author = ?", (author,))[0][0])

    def set_unrated(self, request_id: int, state: str, result: dict | None = None) -> None:
        with self._write() as db:
            db.execute(
                "UPDATE unrated SET state = ?, result = COALESCE(?, result) WHERE id = ?",
                (state, None if result is None else json.dumps(result), request_id),
            )

    def requeue_unrated(self) -> None:
        """Requests cut short by a stop are played again (from their first game)."""
        with self._write() as db:
            db.execute("UPDATE unrated SET state = 'queued' WHERE state = 'playing'")

    # -- checks remembered by digest

    def remembered_check(self, key: str) -> tuple[bool, dict] | None:
        rows = self._rows("SELECT passed, report FROM checks WHERE key = ?", (key,))
        return (bool(rows[0]["passed"]), json.loads(rows[0]["report"])) if rows else None

    def remember_check(self, key: str, passed: bool, report: dict) -> None:
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO checks VALUES (?, ?, ?)",
                (key, int(passed), json.dumps(report)),
            )
