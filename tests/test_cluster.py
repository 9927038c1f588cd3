"""Tournaments on a real Dask cluster on loopback: a ``dask scheduler`` and two ``dask worker``.

The bots are deterministic (the fixed-style bots below and the example heuristic bot), so a
tournament gives the same leaderboard wherever its matches are played. (The example random bot
is not used: under the referee it seeds itself from the OS, so no two runs agree.)
The runners below are imported by the workers (their PYTHONPATH holds this folder).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXED_BOT_SOURCE
from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.core.rules import Rules
from ohseven.referee.plan.config import ConfigError
from ohseven.referee.plan.loader import example_bots_dir, load_config, load_config_text
from ohseven.referee.plan.run_plan import RunPlan, sandbox_config
from ohseven.referee.plan.schedule import SchedulePlan, build_schedule
from ohseven.referee.play.match import play_match
from ohseven.referee.records import BotSpec, MatchSpec
from ohseven.referee.results.board import LEADERBOARD_NAME, Leaderboard
from ohseven.referee.results.store import Store
from ohseven.referee.tournament.cluster import (
    ClusterError,
    ClusterPool,
    bundle_directory,
    localize_spec,
    unpack_bundle,
)
from ohseven.referee.tournament.pool import Job, MatchEnded
from ohseven.referee.tournament.run import STAGING_NAME, run_tournament, tournament_secret

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')

DASK = shutil.which("dask", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
HERE = Path(__file__).resolve().parent
ALLOWED_FAILURES = 1  # the test scheduler's: a match that kills 2 workers fails
KILLER_MATCH = "m00001"


CONFIG = """
name: spread
game: oh-seven
table_size: 3
bots:
  - {{name: low, file: bots/low.py}}
  - {{name: hash, file: bots/hash.py}}
  - {{name: heuristic, file: {heuristic}}}
{extra}schedule: {{type: round-robin, games_per_table: {games}}}
time_control: {{move_seconds: 5, bank_seconds: 20, start_seconds: 30}}
sandbox: {{mode: {mode}}}
seed: 5
replays: true
output: out
{cluster}"""

#: a gauntlet of the example heuristic bot against three random bots, with a stopping rule
GAUNTLET = """
name: stopping
game: oh-seven
table_size: 3
bots:
  - {{name: heuristic, file: {bots}/heuristic_bot.py}}
  - {{name: field-a, file: {bots}/random_bot.py}}
  - {{name: field-b, file: {bots}/random_bot.py}}
  - {{name: field-c, file: {bots}/random_bot.py}}
schedule:
  type: gauntlet
  candidates: [heuristic]
  repeats: 4
  stop: {{margin: 4, min_games: 6}}
time_control: {{move_seconds: 5, bank_seconds: 20, start_seconds: 30}}
sandbox: {{mode: unsandboxed}}
seed: 5
output: out
"""


def write_tournament(
    folder: Path,
    *,
    games: int = 1,
    mode: str = "unsandboxed",
    four: bool = True,
    cluster: str = "",
) -> Path:
    """A tournament of 3 bots (1 match) or 4 (4 matches), its bot files beside it."""
    (folder / "bots").mkdir(parents=True, exist_ok=True)
    for style in ("low", "hash"):
        (folder / "bots" / f"{style}.py").write_text(FIXED_BOT_SOURCE.format(style=style))
    extra = "  - {name: hash2, file: bots/hash.py}\n" if four else ""
    heuristic = example_bots_dir() / "heuristic_bot.py"
    text = CONFIG.format(heuristic=heuristic, extra=extra, games=games, mode=mode, cluster=cluster)
    path = folder / "t.yaml"
    path.write_text(text)
    return path


def leaderboard(config_path: Path) -> dict:
    return json.loads((config_path.parent / "out" / LEADERBOARD_NAME).read_text())


def local_leaderboard(folder: Path, **kwargs: Any) -> dict:
    """The leaderboard of the tournament played by the local pool."""
    config = load_config(write_tournament(folder, **kwargs))
    outcome = run_tournament(config, workers=2)
    assert outcome.complete
    faults = {bot["name"]: bot["faults"] for bot in outcome.leaderboard["bots"] if bot["faults"]}
    assert not faults, faults
    return outcome.leaderboard


# --------------------------------------------------------------------------- runners (workers)


def marking_runner(spec: MatchSpec, *, on_game: Any = None, **kwargs: Any) -> Any:
    """play_match that leaves ``<match id>.<worker pid>`` in $MARKERS and pauses between games."""
    Path(os.environ["MARKERS"], f"{spec.match_id}.{os.getpid()}").touch()

    def slow(record: Any) -> None:
        time.sleep(0.4)
        if on_game is not None:
            on_game(record)

    return play_match(spec, on_game=slow, **kwargs)


def killing_runner(spec: MatchSpec, **kwargs: Any) -> Any:
    """play_match, except that match KILLER_MATCH ends the worker process playing it."""
    if spec.match_id == KILLER_MATCH:
        Path(os.environ["MARKERS"], f"{spec.match_id}.{os.getpid()}").touch()
        os._exit(1)
    return play_match(spec, **kwargs)


# --------------------------------------------------------------------------- the cluster


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = Path("/proc", entry, "stat").read_text()
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def importable_here() -> dict[str, str]:
    """An environment whose Python imports this module (the runners above)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
    return env


class LoopbackCluster:
    """A ``dask scheduler`` and ``dask worker`` processes on 127.0.0.1, each in its own session."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.markers = folder / "markers"
        self.cache = folder / "bot-cache"
        self.markers.mkdir()
        self.scheduler_file = folder / "scheduler.json"
        self.workers: list[subprocess.Popen] = []
        self.started = 0
        env = importable_here()  # the scheduler unpickles the tasks, runners included
        env["DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES"] = str(ALLOWED_FAILURES)
        self.scheduler = self._spawn(
            [
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(self.scheduler_file),
            ],
            "scheduler",
            env,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError, KeyError):
                self.address = json.loads(self.scheduler_file.read_text())["address"]
                break
            assert self.scheduler.poll() is None, "the dask scheduler exited"
            time.sleep(0.1)
        else:
            raise AssertionError("the dask scheduler did not start")

    def _spawn(self, args: list[str], log: str, env: dict[str, str]) -> subprocess.Popen:
        assert DASK is not None, "the dask command is missing (pip install 'ohseven[cluster]')"
        with open(self.folder / f"{log}.log", "ab") as out:
            return subprocess.Popen(
                [DASK, *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )

    def add_worker(self) -> None:
        self.started += 1
        env = importable_here()
        env["MARKERS"] = str(self.markers)
        env["OHSEVEN_BOT_CACHE"] = str(self.cache)
        name = f"w{self.started}"
        args = ["worker", "--scheduler-file", str(self.scheduler_file), "--host", "127.0.0.1"]
        args += ["--nthreads", "1", "--resources", "match=1", "--no-dashboard", "--name", name]
        args += ["--local-directory", str(self.folder / name)]
        self.workers.append(self._spawn(args, name, env))

    def ensure_workers(self, count: int = 2) -> None:
        """Replace dead worker processes until ``count`` run and the scheduler sees them."""
        import distributed

        self.workers = [worker for worker in self.workers if worker.poll() is None]
        while len(self.workers) < count:
            self.add_worker()
        with distributed.Client(self.address, timeout=30, set_as_default=False) as client:
            deadline = time.monotonic() + 60
            while len(client.scheduler_info(n_workers=-1)["workers"]) != count:
                assert time.monotonic() < deadline, "the workers did not register"
                time.sleep(0.1)

    def kill_worker_of(self, pid: int) -> None:
        """SIGKILL the whole ``dask worker`` whose process is ``pid``: nanny, worker and the
        bots it started (in sessions of their own), as when its machine goes down."""
        group = os.getpgid(pid)
        assert group != os.getpgrp()
        assert group in {worker.pid for worker in self.workers}
        doomed = descendants(group)
        os.killpg(group, signal.SIGKILL)
        for child in doomed:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)

    def close(self) -> None:
        processes = [*self.workers, self.scheduler]
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(5)


def readable_folder() -> Path:
    """A temporary folder bots can read: when the referee is root they run as another uid,
    and pytest's own temporary folders are private to root."""
    folder = Path(tempfile.mkdtemp(prefix="ohseven-cluster-"))
    folder.chmod(0o755)
    return folder


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    folder = readable_folder()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def loopback() -> Iterator[LoopbackCluster]:
    folder = readable_folder()
    cluster = LoopbackCluster(folder)
    try:
        yield cluster
    finally:
        cluster.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def cluster(loopback: LoopbackCluster) -> LoopbackCluster:
    """The module's cluster with two live workers and no markers."""
    loopback.ensure_workers(2)
    for marker in loopback.markers.iterdir():
        marker.unlink()
    return loopback


def markers(cluster: LoopbackCluster) -> list[tuple[str, int]]:
    return sorted(
        (name.rsplit(".", 1)[0], int(name.rsplit(".", 1)[1]))
        for name in os.listdir(cluster.markers)
    )


# --------------------------------------------------------------------------- tests


class TestSameLeaderboard:
    def test_cluster_run_equals_local_run(self, cluster: LoopbackCluster, tmp_path: Path) -> None:
        """Matches on two Dask workers: leaderboard.json identical to the local pool's."""
        local = local_leaderboard(tmp_path / "local")
        config = load_config(
            write_tournament(tmp_path / "dask", cluster=f"cluster: {cluster.address}")
        )
        outcome = run_tournament(config)
        assert outcome.complete and not outcome.failed
        assert outcome.leaderboard == local == leaderboard(tmp_path / "dask" / "t.yaml")
        assert local["games_played"] == 12
        replays = sorted(os.listdir(tmp_path / "dask" / "out" / "replays"))
        assert replays == sorted(os.listdir(tmp_path / "local" / "out" / "replays"))
        with Store.open(tmp_path / "dask" / "out", create=False) as store:
            paths = {game.record.replay_path for game in store.games()}
        assert paths == {str(tmp_path / "dask" / "out" / "replays" / name) for name in replays}

    def test_a_gauntlet_stops_its_candidates_as_the_local_pool_does(
        self, cluster: LoopbackCluster, tmp_path: Path
    ) -> None:
        """A gauntlet with a stopping rule on two Dask workers: the same games, the same
        candidate stopped after the same repeat, the same leaderboard as the local pool."""
        boards = []
        for name, where in (("local", None), ("dask", cluster.address)):
            folder = tmp_path / name
            folder.mkdir()
            (folder / "g.yaml").write_text(GAUNTLET.format(bots=example_bots_dir()))
            outcome = run_tournament(load_config(folder / "g.yaml"), workers=2, cluster=where)
            assert outcome.complete and not outcome.failed
            boards.append(outcome.leaderboard)
        assert boards[0] == boards[1]
        rows = {bot["name"]: bot for bot in boards[0]["bots"]}
        assert rows["heuristic"]["sprt"]["stopped"] and boards[0]["games_total"] < 4 * 9

    def test_shipped_bots_are_run_from_the_workers_cache(
        self, cluster: LoopbackCluster, tmp_path: Path
    ) -> None:
        """cluster_bots: ship unpacks each bot directory by hash on the workers; bots run there."""
        local = local_leaderboard(tmp_path / "local", four=False)
        path = write_tournament(tmp_path / "dask", four=False, cluster="cluster_bots: ship")
        config = load_config(path)
        outcome = run_tournament(config, cluster=cluster.address)
        assert outcome.leaderboard == local
        # what is shipped is the bot's staged copy (its own files: see ``staging``)
        staged = next(Path(config.output, STAGING_NAME).glob("*/*/low.py")).parent
        digest, _ = bundle_directory(staged)
        assert (cluster.cache / digest / "low.py").is_file()
        with Store.open(config.output, create=False) as store:
            log = store.logs(0)["low"]
        assert f"running {cluster.cache / digest / 'low.py'}" in log
        assert str(tmp_path) not in log

    def test_bwrap_sandbox_on_the_workers(self, cluster: LoopbackCluster, tmp_path: Path) -> None:
        """Bots sandboxed by bubblewrap on the workers: same leaderboard as a local bwrap run."""
        local = local_leaderboard(tmp_path / "local", four=False, mode="bwrap")
        config = load_config(write_tournament(tmp_path / "dask", four=False, mode="bwrap"))
        outcome = run_tournament(config, cluster=cluster.address)
        assert outcome.leaderboard == local
        assert not any(bot["faults"] for bot in local["bots"])


class TestWorkerDeath:
    def test_killed_worker_match_runs_again_elsewhere(
        self, cluster: LoopbackCluster, tmp_path: Path
    ) -> None:
        """SIGKILL of a worker mid-match: the match is played again; each match is stored once."""
        local = local_leaderboard(tmp_path / "local")
        config = load_config(write_tournament(tmp_path / "dask"))
        killed: list[tuple[str, int]] = []
        over = threading.Event()

        def kill_first_match() -> None:
            while not markers(cluster):
                if over.wait(0.02):
                    return
            match_id, pid = markers(cluster)[0]
            time.sleep(0.2)  # inside its first game
            cluster.kill_worker_of(pid)
            killed.append((match_id, pid))

        killer = threading.Thread(target=kill_first_match)
        killer.start()
        try:
            outcome = run_tournament(
                config,
                cluster=cluster.address,
                runner=marking_runner,
                sandbox=sandbox_config(config),
            )
        finally:
            over.set()
            killer.join()
        assert outcome.leaderboard == local
        match_id, pid = killed[0]
        runs = [run for run in markers(cluster) if run[0] == match_id]
        assert len(runs) == 2 and pid in {run[1] for run in runs}  # started, killed, played again
        with Store.open(config.output, create=False) as store:
            assert set(store.match_status().values()) == {"done"}
            per_match = [game.match_index for game in store.games()]
        assert sorted(per_match) == [index for index in range(4) for _ in range(3)]

    def test_match_that_kills_every_worker_fails_and_the_rest_goes_on(
        self, cluster: LoopbackCluster, tmp_path: Path
    ) -> None:
        """A match whose worker dies every time is stored failed with the reason; others count."""
        reference = load_config(write_tournament(tmp_path / "local"))
        run_tournament(reference, workers=2)
        config = load_config(write_tournament(tmp_path / "dask"))
        outcome = run_tournament(
            config, cluster=cluster.address, runner=killing_runner, sandbox=sandbox_config(config)
        )
        assert [match_id for match_id, _ in outcome.failed] == [KILLER_MATCH]
        assert "died while playing it" in outcome.failed[0][1]
        assert len(markers(cluster)) == ALLOWED_FAILURES + 1
        with Store.open(config.output, create=False) as store:
            assert store.match_status() == {0: "done", 1: "failed", 2: "done", 3: "done"}
            assert list(store.failures()) == [1]
        expected = Leaderboard(
            RunPlan.resolve(reference, tournament_secret(reference, Path(reference.output))),
            12,
            matches_total=4,
        )
        expected.matches_done = 3  # the failed match is not done
        with Store.open(reference.output, create=False) as store:
            for game in store.games():
                if game.match_index != 1:
                    expected.add(game.canonical_index, game.record)
        assert outcome.leaderboard == expected.document()
        assert not outcome.complete and outcome.leaderboard["games_played"] == 9


class TestLostResults:
    def test_a_result_lost_with_its_worker_is_played_again(
        self, cluster: LoopbackCluster, tmp_path: Path
    ) -> None:
        """A match whose finished result died with its worker is submitted again, not failed."""

        class LostFuture:  # what Dask reports when the worker holding a result died
            status = "lost"

            def release(self) -> None:
                pass

        config = load_config(write_tournament(tmp_path))
        match = build_schedule(SchedulePlan.of(config), b"test secret")[0]
        job = Job(match.index, match.spec, sandbox_config(config), None, play_match)
        pool = ClusterPool(cluster.address)
        try:
            with pool._lock:
                pool._inflight[LostFuture()] = (job, None)
            pool._collect(next(iter(pool._inflight)))
            pool.close_input()
            result = pool.results.get(timeout=120)
            assert isinstance(result, MatchEnded) and result.index == match.index
            assert len(result.games) == match.games
        finally:
            pool.stop()


class TestClusterErrors:
    def test_unreachable_scheduler_is_a_clear_error(self) -> None:
        """No scheduler at the address: ClusterError naming it, no traceback."""
        with pytest.raises(ClusterError, match=r"cannot reach the Dask scheduler at tcp://127"):
            ClusterPool("tcp://127.0.0.1:9", connect_seconds=1)

    def test_no_worker_with_match_slots_is_reported(self, tmp_path: Path) -> None:
        """A scheduler without a worker offering `match`: an error naming the worker flag."""
        bare = LoopbackCluster(tmp_path)
        try:
            config = load_config(write_tournament(tmp_path))
            match = build_schedule(SchedulePlan.of(config), b"test secret")[0]
            pool = ClusterPool(bare.address, slot_patience=0.5)
            try:
                pool.submit(Job(match.index, match.spec, None, None, play_match))
                pool.close_input()
                deadline = time.monotonic() + 30
                with pytest.raises(ClusterError, match=r"--resources match=CORES"):
                    while time.monotonic() < deadline:
                        with contextlib.suppress(queue.Empty):
                            pool.results.get(timeout=0.25)
            finally:
                pool.stop()
        finally:
            bare.close()

    def test_cli_rejects_a_bad_address(self, tmp_path: Path) -> None:
        """tourney --cluster with a malformed address exits 2 with the expected form."""
        path = write_tournament(tmp_path)
        process = subprocess.run(
            [
                sys.executable,
                "-m",
                "ohseven.referee.cli",
                "tourney",
                str(path),
                "--cluster",
                "x",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert process.returncode == 2
        assert "--cluster x: expected an address like tcp://HOST:8786" in process.stderr


class TestConfigKeys:
    def test_cluster_keys_are_read_and_left_out_of_the_digest(self, tmp_path: Path) -> None:
        """cluster and cluster_bots do not change what a tournament is (its digest)."""
        plain = load_config(write_tournament(tmp_path / "a"))
        path = write_tournament(tmp_path / "b", cluster="cluster: tcp://sched.lan:8786\n")
        path.write_text(path.read_text() + "cluster_bots: ship\n")
        spread = load_config(path)
        assert (spread.cluster, spread.cluster_bots) == ("tcp://sched.lan:8786", "ship")
        assert (plain.cluster, plain.cluster_bots) == (None, "shared")
        assert spread.digest == plain.digest

    def test_bad_values_are_reported_with_their_lines(self, tmp_path: Path) -> None:
        """A malformed address and an unknown bot mode: one error each, with the line."""
        text = write_tournament(tmp_path).read_text()
        text += "cluster: sched.lan\ncluster_bots: rsync\n"
        with pytest.raises(ConfigError) as caught:
            load_config_text(text, source="t.yaml", base_dir=tmp_path)
        lines = len(text.splitlines())
        assert caught.value.errors == [
            f"t.yaml:{lines - 1}: key `cluster`: expected a Dask scheduler address like "
            "tcp://HOST:8786, not 'sched.lan'",
            f"t.yaml:{lines}: key `cluster_bots`: expected one of shared, ship, not 'rsync'",
        ]


class TestBundles:
    def test_bundle_is_deterministic_and_skips_caches(self, tmp_path: Path) -> None:
        """Equal trees give equal zips and hashes; __pycache__ is left out; a change shows."""
        for name in ("a", "b"):
            (tmp_path / name / "sub").mkdir(parents=True)
            (tmp_path / name / "bot.py").write_text("print(1)\n")
            (tmp_path / name / "sub" / "data.txt").write_text("x")
            (tmp_path / name / "__pycache__").mkdir()
            (tmp_path / name / "__pycache__" / f"{name}.pyc").write_bytes(os.urandom(8))
            time.sleep(0.01)
        first, second = bundle_directory(tmp_path / "a"), bundle_directory(tmp_path / "b")
        assert first == second
        assert zipfile.ZipFile(__import__("io").BytesIO(first[1])).namelist() == [
            "bot.py",
            "sub/data.txt",
        ]
        (tmp_path / "b" / "sub" / "data.txt").write_text("y")
        assert bundle_directory(tmp_path / "b")[0] != first[0]

    def test_too_large_a_directory_is_refused(self, tmp_path: Path) -> None:
        """Over the limit: ClusterError that names the directory and the way out."""
        (tmp_path / "big.bin").write_bytes(b"\0" * 2048)
        with pytest.raises(ClusterError, match=r"cluster_bots: shared"):
            bundle_directory(tmp_path, limit=1024)

    @settings(max_examples=25, deadline=None)
    @given(
        files=st.dictionaries(
            st.lists(st.sampled_from(["a", "b", "c.py", "d"]), min_size=1, max_size=3).map(
                "/".join
            ),
            st.tuples(st.binary(max_size=64), st.booleans()),
            min_size=1,
            max_size=6,
        )
    )
    def test_unpack_restores_files_and_modes(self, files: dict, tmp_path_factory: Any) -> None:
        """Bundle then unpack: the same files, the same bytes, executables still executable."""
        source = tmp_path_factory.mktemp("src")
        written = {}
        for name, (data, executable) in files.items():
            path = source / name
            if any(parent.is_file() for parent in path.parents) or path.is_dir():
                continue  # a name that is a prefix of another
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            path.chmod(0o755 if executable else 0o644)
            written[name] = (data, executable)
        _, data = bundle_directory(source)
        target = unpack_bundle(data, tmp_path_factory.mktemp("dst") / "bundle")
        found = {
            path.relative_to(target).as_posix(): path
            for path in target.rglob("*")
            if path.is_file()
        }
        assert sorted(found) == sorted(written)
        for name, (content, executable) in written.items():
            assert found[name].read_bytes() == content
            assert bool(found[name].stat().st_mode & 0o100) == executable
        assert unpack_bundle(b"not a zip", target) == target  # already there: left alone


class TestLocalize:
    def test_commands_point_into_the_unpacked_copy(self) -> None:
        """The referee's Python becomes the worker's; paths in the bot directory are rebased."""
        spec = MatchSpec(
            match_id="m00000",
            rules=Rules.make("oh-seven", {}),
            bots=(
                BotSpec("a", ("/ref/python", "/home/u/bots/a.py", "--x", "/etc/x"), "/home/u/bots"),
                BotSpec("b", ("/usr/bin/b",), None),
            ),
            seatings=((0, 1),),
            seeds=(1,),
        )
        local = localize_spec(
            spec,
            referee_python="/ref/python",
            python="/w/python",
            unpacked={"/home/u/bots": "/cache/abc"},
        )
        assert local.bots[0] == BotSpec(
            "a", ("/w/python", "/cache/abc/a.py", "--x", "/etc/x"), "/cache/abc"
        )
        assert local.bots[1] == spec.bots[1]
        assert localize_spec(spec, referee_python="/other").bots == spec.bots
