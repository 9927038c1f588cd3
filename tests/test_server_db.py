"""The server's database (``server.db``): tokens kept only hashed, versions numbered per bot,
the active version of each bot, checks remembered by key, and its survival of a reopen."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import attrs
import pytest
from ohseven.referee.server.db import (
    AuthorExistsError,
    ServerDB,
    ServerDBError,
    UnknownAuthorError,
)


def test_authors_and_tokens(tmp_path: Path) -> None:
    with ServerDB(tmp_path) as db:
        token = db.add_author("alice")
        assert db.author_of_token(token) == "alice"
        assert db.author_of_token(token + "x") is None
        assert token.encode() not in (tmp_path / "server.sqlite").read_bytes()
        assert hashlib.sha256(token.encode()).hexdigest().encode() in (
            tmp_path / "server.sqlite"
        ).read_bytes() or db.token_mark("alice")
        with pytest.raises(AuthorExistsError):
            db.add_author("alice")
        with pytest.raises(ServerDBError, match="author name"):
            db.add_author("../x")
        mark = db.token_mark("alice")
        db.revoke_author("alice")
        assert db.author_of_token(token) is None and db.token_mark("alice") is None
        with pytest.raises(UnknownAuthorError):
            db.revoke_author("alice")
        renewed = db.renew_author("alice")
        assert db.author_of_token(renewed) == "alice" and db.token_mark("alice") != mark
        assert not db.is_organiser("alice")
        db.add_author("org", organiser=True)
        assert db.is_organiser("org")


def test_versions_and_the_active_one(tmp_path: Path) -> None:
    with ServerDB(tmp_path) as db:
        db.add_author("alice")
        one = db.add_version("alice", "mc", "d1", ("python3", "a.py"), 10, 1)
        two = db.add_version("alice", "mc", "d2", ("python3", "a.py"), 10, 1)
        other = db.add_version("alice", "xb", "d3", ("./x",), 10, 1)
        assert (one.name, two.name, other.name) == ("alice/mc v1", "alice/mc v2", "alice/xb v1")
        assert [v.id for v in db.queued()] == [one.id, two.id, other.id]
        db.set_state(one.id, "passed", {"passed": True})
        assert [v.name for v in db.active()] == ["alice/mc v1"]
        db.set_state(two.id, "failed", {"passed": False})
        assert [v.name for v in db.active()] == ["alice/mc v1"]  # a failing version never plays
        three = db.add_version("alice", "mc", "d1", ("python3", "a.py"), 10, 1)
        db.set_state(three.id, "checking")
        assert db.requeue_interrupted() == 1
        db.set_state(three.id, "passed", {"passed": True})
        assert [v.name for v in db.active()] == ["alice/mc v3"]
        assert "report" not in one.public() and "command" not in one.public()
        # d2's only version failed: its tree is needed no more; d1 and d3 play or wait
        assert db.kept_digests() == {"d1", "d3"}
        db.set_state(other.id, "failed", {"passed": False})
        assert db.kept_digests() == {"d1"}
        db.remember_check("k", True, {"passed": True})
    with ServerDB(tmp_path) as db:  # all of it on disk
        assert db.remembered_check("k") == (True, {"passed": True})
        assert db.version(three.id).report == {"passed": True}  # type: ignore[union-attr]
        assert db.uploads_since("alice", 0) == 4
        assert db.key("session") == db.key("session")


def test_a_version_runs_from_where_its_files_are_now(tmp_path: Path) -> None:
    """A stored command names the paths of its upload's moment: a league folder moved or
    copied (or another environment's Python) still runs the version's own files."""
    digest = "ab" * 32
    then = f"/srv/old/out/.uploads/{digest}/bot"
    command = ("/opt/old-venv/bin/python", f"{then}/main.py", "--fast", f"{then}/data/w.txt")
    with ServerDB(tmp_path) as db:
        db.add_author("alice")
        version = db.add_version("alice", "mc", digest, command, 10, 2)
    now = tmp_path / "copy" / ".uploads" / digest / "bot"
    assert version.argv(now) == (
        sys.executable,
        str(now / "main.py"),
        "--fast",
        str(now / "data" / "w.txt"),
    )
    assert version.shown_command() == ["python3", "main.py", "--fast", "data/w.txt"]
    started = ("node", f"{then}/bot.js")  # a program found on PATH stays as it was written
    other = attrs.evolve(version, command=started)
    assert other.argv(now) == ("node", str(now / "bot.js"))


def test_the_check_queue_takes_authors_in_turn(tmp_path: Path) -> None:
    """The queue was checked in upload order: an author who sent ten slow bots (a check may
    last ``check_timeout``, 15 minutes) kept every other author's upload waiting hours. Each
    author's first waiting version now comes before anyone's second."""
    with ServerDB(tmp_path) as db:
        for name in ("mallory", "alice", "bob"):
            db.add_author(name)
        flood = [db.add_version("mallory", f"slow{i}", f"d{i}", ("./x",), 1, 1) for i in range(4)]
        alice = db.add_version("alice", "mc", "da", ("./x",), 1, 1)
        bob = [db.add_version("bob", "b", f"db{i}", ("./x",), 1, 1) for i in range(2)]
        order = [v.id for v in db.queued()]
        assert order == [
            flood[0].id, alice.id, bob[0].id, flood[1].id, bob[1].id, flood[2].id, flood[3].id
        ]  # fmt: skip
        db.set_state(flood[0].id, "failed", {"passed": False})  # checked: mallory's next waits
        assert [v.id for v in db.queued()][:3] == [alice.id, bob[0].id, flood[1].id]
        db.set_state(alice.id, "passed", {"passed": True})
        assert [v.id for v in db.queued()][:3] == [bob[0].id, flood[1].id, bob[1].id]
