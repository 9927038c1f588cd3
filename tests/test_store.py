"""The tournament database: real SQLite files, committed games, resume, aggregates."""

from __future__ import annotations

import errno
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from ohseven.core.rules import competition_ranks
from ohseven.referee.files import DB_NAME
from ohseven.referee.records import Fault, FaultStatus, GameRecord
from ohseven.referee.results.store import (
    Aggregates,
    DamagedStoreError,
    Store,
    StoreError,
    StoreIOError,
    aggregate,
    database_error,
)

MATCHES = [(0, "m00000", ("a", "b"), 0, 2), (1, "m00001", ("a", "c"), 2, 2)]
#: a private user and mount namespace, where the test may mount a small filesystem
UNSHARE = ["unshare", "--user", "--map-root-user", "--mount"]
#: run on a fresh tmpfs (argv[2]): copy the database of argv[1] onto it, open it once with space
#: left, fill the disk, open it again, free the space, open it a third time; print what was seen
FULL_DISK_SCRIPT = """
import json, os, shutil, sys
from ohseven.referee.files import DB_NAME
from ohseven.referee.results.store import Store

source, disk = sys.argv[1:3]
shutil.copy(os.path.join(source, DB_NAME), disk)
seen = {"before": sorted(os.listdir(disk))}
with Store.open(disk, create=False) as opened:
    seen["opened_with_space"] = opened.digest == "abc"
fd = os.open(os.path.join(disk, "filler"), os.O_WRONLY | os.O_CREAT)
try:
    while True:
        os.write(fd, bytes(1 << 16))
except OSError as error:
    seen["filled"] = error.errno
os.close(fd)
stat = os.statvfs(disk)
seen["free"] = stat.f_bavail * stat.f_frsize
try:
    Store.open(disk, create=False).close()
except Exception as error:
    cause = error.__context__
    seen.update(error=type(error).__name__, errno=getattr(error, "errno", None))
    seen.update(text=str(cause), cause=getattr(cause, "sqlite_errorname", ""))
os.remove(os.path.join(disk, "filler"))
with Store.open(disk) as opened:
    seen["after"] = {"games": len(opened.games()), "digest": opened.digest}
print(json.dumps(seen))
"""


def game(match: str, index: int, seats, totals, faults=(), stats=None) -> GameRecord:
    return GameRecord(
        match,
        index,
        100 + index,
        tuple(seats),
        tuple(totals),
        competition_ranks(totals),
        tuple(faults),
        stats or {},
        None,
        1.5,
    )


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path) as opened:
        assert opened.setup(
            digest="abc", config={"name": "t"}, secret_fingerprint="f1", matches=MATCHES
        )
        yield opened


class TestTournament:
    def test_wal_and_meta(self, store: Store, tmp_path: Path) -> None:
        """The file is in WAL mode and holds the config, its digest, the secret's fingerprint and
        schema version."""
        db = sqlite3.connect(tmp_path / DB_NAME)
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        meta = store.meta()
        assert meta["config_digest"] == "abc" and meta["secret_fingerprint"] == "f1"
        assert (store.path.stat().st_mode & 0o777) == 0o600  # it names every game's seed
        assert meta["schema_version"] == "1" and '"name": "t"' in meta["config"]

    def test_same_digest_resumes_other_digest_is_refused(self, store: Store) -> None:
        """setup again with the same digest is a resume; another digest raises StoreError."""
        assert (
            store.setup(digest="abc", config={}, secret_fingerprint="f1", matches=MATCHES) is False
        )
        with pytest.raises(StoreError, match="another tournament"):
            store.setup(digest="xyz", config={}, secret_fingerprint="f1", matches=MATCHES)

    def test_another_secret_is_refused(self, store: Store) -> None:
        """The same tournament from another secret (a changed `seed`) is refused by name."""
        with pytest.raises(StoreError, match="key `seed`"):
            store.setup(digest="abc", config={}, secret_fingerprint="f2", matches=MATCHES)

    def test_open_without_create(self, tmp_path: Path) -> None:
        """Opening a folder without a database for reading raises StoreError."""
        with pytest.raises(StoreError, match="no tournament database"):
            Store.open(tmp_path / "none", create=False)


class TestGames:
    def test_game_round_trip_in_canonical_order(self, store: Store) -> None:
        """Games come back equal to what was written, in canonical order."""
        second = game("m00001", 0, "ac", (3, 3), [Fault(1, FaultStatus.TIMEOUT, "slow")])
        first = game("m00000", 1, "ba", (7, -2), stats={"table": {"rounds": 7}})
        store.start_match(1)
        store.add_game(2, 1, second)
        store.start_match(0)
        store.add_game(1, 0, first)
        stored = store.games()
        assert [g.canonical_index for g in stored] == [1, 2]
        assert [g.record for g in stored] == [first, second]
        assert store.add_game(1, 0, first) is False  # written once only

    def test_each_game_is_committed_at_once(self, store: Store, tmp_path: Path) -> None:
        """Another connection sees a game as soon as add_game returns."""
        store.start_match(0)
        store.add_game(0, 0, game("m00000", 0, "ab", (1, 2)))
        other = sqlite3.connect(tmp_path / DB_NAME)
        assert other.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 1

    def test_restarting_a_match_discards_its_partial_games(self, store: Store) -> None:
        """start_match on a half-played match removes its games, faults and logs."""
        store.start_match(0)
        store.add_game(0, 0, game("m00000", 0, "ab", (1, 2), [Fault(0, FaultStatus.CRASH)]))
        assert store.unfinished_matches() == [0, 1]
        store.start_match(0)
        assert store.games() == [] and store.faults_by_status() == {}

    def test_failing_a_match_discards_its_games_and_keeps_why(self, store: Store) -> None:
        """fail_match removes the match's games and faults, marks it failed, keeps the reason."""
        store.start_match(0)
        store.add_game(0, 0, game("m00000", 0, "ab", (1, 2), [Fault(0, FaultStatus.CRASH)]))
        store.start_match(1)
        store.add_game(2, 1, game("m00001", 0, "ab", (3, 4)))
        store.fail_match(0, "worker lost")
        assert [g.canonical_index for g in store.games()] == [2]
        assert store.faults_by_status() == {}
        assert store.match_status() == {0: "failed", 1: "running"}
        assert store.failures() == {0: "worker lost"}

    def test_finish_needs_every_game(self, store: Store) -> None:
        """A match is marked done only when all its games are written; logs are kept."""
        store.start_match(0)
        store.add_game(0, 0, game("m00000", 0, "ab", (1, 2)))
        with pytest.raises(StoreError, match="1 of its 2 games"):
            store.finish_match(0)
        store.add_game(1, 0, game("m00000", 1, "ba", (1, 2)))
        store.finish_match(0, {"a": "hello"})
        assert store.match_status() == {0: "done", 1: "pending"}
        assert store.logs(0) == {"a": "hello"}
        assert store.unfinished_matches() == [1]

    def test_scheduled_and_every_match_logs(self, store: Store) -> None:
        """The matches and games scheduled, and every match's logs in one query."""
        assert store.scheduled() == (2, 4)
        assert store.all_logs() == {}
        for index, match_id in ((0, "m00000"), (1, "m00001")):
            store.start_match(index)
            for g in range(2):
                store.add_game(2 * index + g, index, game(match_id, g, "ab", (1, 2)))
        store.finish_match(0, {"a": "hello", "b": "bye"})
        store.finish_match(1, {"a": "again"})
        assert store.all_logs() == {0: {"a": "hello", "b": "bye"}, 1: {"a": "again"}}

    def test_games_read_every_field_back(self, store: Store) -> None:
        """A game's record read back (its JSON columns parsed at once) equals the one written."""
        record = game(
            "m00000", 0, "ab", (3, -1), [Fault(1, FaultStatus.TIMEOUT, "slow")], {"x": [1, 2.5]}
        )
        store.start_match(0)
        store.add_game(0, 0, record)
        (stored,) = store.games()
        assert (stored.canonical_index, stored.match_index, stored.record) == (0, 0, record)


class TestAggregates:
    def test_per_bot_aggregates(self, store: Store) -> None:
        """Games, points, wins, rank distribution, faults by status and summed raw counts."""
        counts = {"rounds": 7, "zero_bids": 2, "top_bids": 1, "fills": 3, "points": 8}
        store.start_match(0)
        store.add_game(
            0,
            0,
            game(
                "m00000",
                0,
                "ab",
                (10, 4),
                [Fault(1, FaultStatus.TIMEOUT)],
                {"table": {"rounds": 7}, "seats": [counts, {"rounds": 7}]},
            ),
        )
        store.add_game(1, 0, game("m00000", 1, "ba", (6, 6), stats={"table": {"rounds": 7}}))
        result = aggregate((g.record for g in store.games()), ["a", "b", "c"])
        a, b, c = result["a"], result["b"], result["c"]
        assert (a.games, a.points, a.wins, a.rounds) == (2, 16, 2, 14)
        assert a.ranks == ((1, 2),) and b.ranks == ((1, 1), (2, 1))
        assert a.points_per_game == 8 and a.points_per_round == 16 / 14
        assert b.faults == (("timeout", 1),) and b.faulted_games == 1
        assert a.rates()["zero_bid_rate"] == 2 / 7 and a.rates()["bid_fill_rate"] == 3 / 7
        assert c.games == 0 and c.points_per_game is None
        assert store.faults_by_status() == {"b": {"timeout": 1}}

    def test_counts_from_real_game_statistics(self, store: Store) -> None:
        """Aggregates read stats.game_statistics: fill + overflow + underfill rates sum to 1."""
        import random

        from ohseven.core.rules import new_game
        from ohseven.referee.stats import game_statistics

        engine = new_game("oh-seven", 2, 9)
        rng = random.Random(9)
        while not engine.is_over:
            for seat in list(engine.to_act):
                engine.push(seat, rng.choice(list(engine.legal_moves(seat))))
        totals = engine.result().totals
        store.start_match(0)
        store.add_game(0, 0, game("m00000", 0, "ab", totals, stats=game_statistics(engine)))
        a = aggregate(g.record for g in store.games())["a"]
        assert a.rounds == 7 and a.count("rounds") == 7
        rates = a.rates()
        assert rates["bid_fill_rate"] + rates["overflow_rate"] + rates["underfill_rate"] == 1

    def test_kept_game_by_game_in_any_order_they_are_the_same(self) -> None:
        """``Aggregates`` (the live leaderboard's) gives ``aggregate`` of the same games
        whatever the order they are added in, with bots named before their games."""
        import random

        rng = random.Random(3)
        records = []
        for index in range(60):
            seats = rng.sample("abcde", 3)
            totals = [rng.randint(0, 20) for _ in seats]
            faults = [Fault(rng.randrange(3), FaultStatus.TIMEOUT)] if index % 7 == 0 else []
            counts = {"rounds": 7, "fills": rng.randint(0, 7), "rate": 0.5, "flag": True}
            stats = {"table": {"rounds": 7}, "seats": [dict(counts) for _ in seats]}
            records.append(game(f"m{index}", 0, seats, totals, faults, stats))
        expected = aggregate(records, ["z", "a"])
        kept = Aggregates(["z"])
        kept.name("a")
        for record in rng.sample(records, len(records)):
            kept.add(record)
        assert kept.result() == {name: expected[name] for name in kept.result()}
        assert set(kept.result()) == set(expected)


class TestDatabaseErrors:
    """What an SQLite error means for the organiser; intact games are never called lost."""

    def error(self, text: str, name: str) -> sqlite3.OperationalError:
        found = sqlite3.OperationalError(text)
        found.sqlite_errorname = name  # as SQLite sets it
        return found

    @pytest.mark.slow
    def test_a_shm_file_that_cannot_be_made_on_a_full_disk_is_a_full_disk(
        self, store: Store, tmp_path: Path
    ) -> None:
        """A real full disk: a 32 MB tmpfs (mounted in a private mount namespace) holds a closed
        tournament database, then a file fills it. Opening the database needs a new ``-shm``
        file, which SQLite cannot grow: it says "disk I/O error" (SQLITE_IOERR_SHMSIZE), not
        "full". The store reports the full disk (ENOSPC: free space and resume), not damage;
        once the filler is removed the same database opens with its games intact."""
        store.start_match(0)
        store.add_game(0, 0, game("m00000", 0, "ab", (1, 2)))
        store.add_game(1, 0, game("m00000", 1, "ba", (3, 4)))
        store.close()  # the last connection: SQLite removes the -wal and -shm files
        disk = tmp_path / "disk"
        disk.mkdir()
        if subprocess.run(UNSHARE + ["true"], capture_output=True).returncode != 0:
            pytest.skip("no private mount namespace here (unshare --user --mount refused)")
        proc = subprocess.run(
            UNSHARE
            + ["sh", "-euc", 'mount -t tmpfs -o size=32m tmpfs "$1"; exec "$2" -c "$3" "$4" "$1"']
            + ["sh", str(disk), sys.executable, FULL_DISK_SCRIPT, str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        seen = json.loads(proc.stdout)
        assert seen["opened_with_space"] and seen["filled"] == errno.ENOSPC, seen
        assert not any(name.endswith("-shm") for name in seen["before"]), seen
        assert seen["free"] < 64 << 10, seen
        assert seen["cause"].startswith("SQLITE_IOERR") and "full" not in seen["text"], seen
        assert seen["error"] == "OSError" and seen["errno"] == errno.ENOSPC, seen
        assert seen["after"] == {"games": 2, "digest": "abc"}, seen

    def test_an_io_error_with_space_left_is_not_damage(self, tmp_path: Path) -> None:
        problem = database_error(
            tmp_path / DB_NAME, self.error("unable to open database file", "SQLITE_CANTOPEN")
        )
        assert isinstance(problem, StoreIOError) and not isinstance(problem, DamagedStoreError)
        text = str(problem)
        assert "damaged" not in text.replace("not known to be damaged", "")
        assert "lost" not in text and "fresh" not in text and "move it away" not in text

    def test_a_corrupt_file_is_damage_and_no_advice_loses_games_silently(
        self, tmp_path: Path
    ) -> None:
        problem = database_error(
            tmp_path / DB_NAME, self.error("file is not a database", "SQLITE_NOTADB")
        )
        assert isinstance(problem, DamagedStoreError) and "backup" in str(problem)
        assert "games are then lost" not in str(problem)
