"""Play a tournament's matches on a Dask cluster instead of the local worker processes.

``cluster: tcp://HOST:8786`` in the configuration (or ``tourney --cluster ADDRESS``) hands the
matches to :class:`ClusterPool`, which has the local pool's interface (``pool.Pool``:
``submit``, ``close_input``, ``results``, ``reap``, ``alive``, ``stop``, ``join``). Everything
else stays on the referee host: the database, the ratings, the leaderboard, the replays. Dask is
imported only here, and only when a cluster is used (``pip install 'ohseven[cluster]'``).

- One Dask task per match, with ``resources={"match": 1}`` and ``pure=False``: a worker started
  with ``--resources match=N`` plays at most N matches at once (N = its cores, or fewer for
  bots that use several). At most as many tasks are in flight as the cluster offers ``match``
  slots, so a worker holds only the matches it is playing.
- A worker that dies mid-match: the scheduler runs the match again on another worker, from its
  start. A match whose workers die ``distributed.scheduler.allowed-failures`` + 1 times (a
  scheduler setting, default 3) ends with ``KilledWorker``: it is reported ``failed`` with the
  reason and the tournament goes on (a rerun plays it again).
- A match's games come back together when its task finishes (``as_completed``), so a match is
  recorded exactly once whatever happened to its workers; the referee writes them at once.
- Bots, ``cluster_bots: shared``: the configuration's paths exist on every worker (a shared
  filesystem). ``ship``: each bot's directory is zipped on the referee host, keyed by the hash
  of its content, and handed to every worker (present and future) by a worker plugin that
  unpacks it once per worker; the command's paths into that directory are rewritten. Either
  way a command run by the referee's Python runs with the worker's Python.
- The sandbox configuration travels with each match: bwrap and the limits apply on the
  workers exactly as locally (each worker needs bubblewrap, as the referee host would).
- Replays are written by the worker into a temporary directory and sent back with the result.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import io
import os
import queue
import shutil
import socket
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse
import uuid
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from ohseven.referee.files import write_atomic
from ohseven.referee.play.descriptors import raise_fd_limit
from ohseven.referee.records import BotSpec, GameRecord, MatchSpec
from ohseven.referee.sandbox.paths import bot_folder
from ohseven.referee.sandbox.settings import SandboxConfig
from ohseven.referee.tournament.errors import TourneyError
from ohseven.referee.tournament.pool import Job, MatchEnded, MatchFailed, PoolResult, Runner

__all__ = [
    "ClusterError",
    "ClusterPool",
    "ClusterJob",
    "ClusterPlayed",
    "MATCH_RESOURCE",
    "BUNDLE_LIMIT_BYTES",
    "BOT_CACHE_ENV",
    "bot_cache_dir",
    "bundle_directory",
    "unpack_bundle",
    "localize_spec",
    "run_match",
]

#: the Dask resource a match holds while it is played (workers: ``--resources match=N``)
MATCH_RESOURCE = "match"
#: the largest bot directory ``cluster_bots: ship`` sends (files summed, before compression)
BUNDLE_LIMIT_BYTES = 256 * 2**20
_SKIPPED_DIRS = frozenset({"__pycache__", ".git"})
#: where workers unpack shipped bots (default: ``<temporary directory>/ohseven-bots-<uid>``)
BOT_CACHE_ENV = "OHSEVEN_BOT_CACHE"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class ClusterError(TourneyError):
    """A cluster that cannot be used: Dask missing, no scheduler, no worker with match slots."""


# --------------------------------------------------------------------------- shipping bots


def _unreachable(address: str, error: object) -> ClusterError:
    return ClusterError(
        f"cannot reach the Dask scheduler at {address}: {error}. Start it with "
        "`dask scheduler` (see docs/CLUSTER.md), or drop `cluster` to play locally"
    )


def check_reachable(address: str, seconds: float = 5.0) -> None:
    """Raise :class:`ClusterError` unless the scheduler's port at ``address`` accepts a TCP
    connection within ``seconds`` (tried again while refused: a scheduler may be starting).
    ``tourney --fresh`` asks before it discards anything."""
    parts = urllib.parse.urlsplit(address)
    deadline = time.monotonic() + seconds
    while True:
        try:
            with socket.create_connection((parts.hostname, parts.port), timeout=seconds):
                return
        except (OSError, ValueError) as error:
            if time.monotonic() >= deadline or not isinstance(error, ConnectionRefusedError):
                raise _unreachable(address, error) from None
        time.sleep(0.2)


def bundle_directory(
    directory: str | os.PathLike[str], *, limit: int = BUNDLE_LIMIT_BYTES
) -> tuple[str, bytes]:
    """A deterministic zip of ``directory`` (no ``__pycache__``/``.git``) and its content hash.

    Equal contents give equal bytes and hash (names sorted, times fixed, permissions kept).
    Raises :class:`ClusterError` when the files add up to more than ``limit`` bytes.
    """
    root = Path(directory)
    entries: list[tuple[str, int, Path]] = []
    total = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(name for name in dirs if name not in _SKIPPED_DIRS)
        for name in sorted(files):
            path = Path(folder, name)
            if not path.is_file():  # a dangling link, a socket
                continue
            total += path.stat().st_size
            if total > limit:
                raise ClusterError(
                    f"bot directory {root} holds more than {limit // 2**20} MB; "
                    "`cluster_bots: ship` sends it to every worker: give the bot a smaller "
                    "`directory`, or use a shared filesystem (`cluster_bots: shared`)"
                )
            entries.append((path.relative_to(root).as_posix(), path.stat().st_mode, path))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, mode, path in entries:
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o100000 | (mode & 0o777)) << 16
            archive.writestr(info, path.read_bytes())
    data = buffer.getvalue()
    return hashlib.sha256(data).hexdigest()[:32], data


_UNPACK_LOCK = threading.Lock()


def bot_cache_dir() -> Path:
    """The directory of unpacked bots on this host, shared by its workers (keyed by hash).

    ``$OHSEVEN_BOT_CACHE``, else ``<temporary directory>/ohseven-bots-<uid>``; created
    world-readable (bots may run as another uid) and refused unless it is a real directory
    owned by us, so that no other user can plant a bot in it.
    """
    path = Path(
        os.environ.get(BOT_CACHE_ENV) or Path(tempfile.gettempdir(), f"ohseven-bots-{os.geteuid()}")
    )
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o755, parents=True)
    info = path.lstat()
    if not path.is_dir() or path.is_symlink() or info.st_uid != os.geteuid():
        raise ClusterError(f"the bot cache {path} is not a directory owned by us")
    if info.st_mode & 0o022:
        raise ClusterError(f"the bot cache {path} is writable by others: chmod go-w it")
    return path


def unpack_bundle(data: bytes, target: str | os.PathLike[str]) -> Path:
    """Unpack a :func:`bundle_directory` zip into ``target`` unless it is already there.

    The files are extracted beside it and renamed into place, so ``target`` is complete or
    absent even when several threads or processes unpack at once.
    """
    final = Path(target)
    with _UNPACK_LOCK:
        if final.is_dir():
            return final
        final.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                for info in archive.infolist():
                    path = Path(archive.extract(info, staging))
                    if not info.is_dir():  # readable by the bot's own uid, executable if it was
                        path.chmod(((info.external_attr >> 16) & 0o755) | 0o444)
            for folder, _, _ in os.walk(staging):
                Path(folder).chmod(0o755)
            try:
                staging.rename(final)
            except OSError:  # another process got there first
                if not final.is_dir():
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return final


def _bot_directory(bot: BotSpec) -> str | None:
    """The directory the sandbox would expose to ``bot`` (see ``sandbox.BotProcess``)."""
    return bot_folder(bot.command, bot.directory)


def _rebase(word: str, directories: Iterable[str], local: str) -> str:
    for directory in directories:
        if word == directory:
            return local
        if word.startswith(directory.rstrip(os.sep) + os.sep):
            return local + word[len(directory.rstrip(os.sep)) :]
    return word


def localize_spec(
    spec: MatchSpec,
    *,
    referee_python: str,
    python: str = sys.executable,
    unpacked: Mapping[str, str] | None = None,
) -> MatchSpec:
    """``spec`` as a worker runs it.

    A command starting with ``referee_python`` starts with ``python`` instead; with
    ``unpacked`` (bot directory on the referee host -> where the worker unpacked it) each bot's
    directory, and every word of its command inside it, points at the unpacked copy.
    """
    bots = []
    for bot in spec.bots:
        command = list(bot.command)
        if command and command[0] == referee_python:
            command[0] = python
        directory = bot.directory
        host_dir = _bot_directory(bot) if unpacked else None
        if unpacked and host_dir is not None and host_dir in unpacked:
            local = unpacked[host_dir]
            aliases = {host_dir, *([bot.directory] if bot.directory else [])}
            names = sorted(aliases, key=len, reverse=True)
            command = [_rebase(word, names, local) for word in command]
            directory = local
        bots.append(attrs.evolve(bot, command=tuple(command), directory=directory))
    return attrs.evolve(spec, bots=tuple(bots))


def _plugin_class() -> type:
    """The worker plugin that unpacks shipped bots (a Dask class: made on first use)."""
    from distributed.diagnostics.plugin import WorkerPlugin  # deferred: the optional cluster extra

    class BotBundlePlugin(WorkerPlugin):
        """Unpacks one bot directory into ``<worker local directory>/ohseven-bots/<hash>``."""

        idempotent = True

        def __init__(self, digest: str, data: bytes) -> None:
            self.digest = digest
            self.data = data
            self.name = f"ohseven-bot-{digest}"

        def setup(self, worker: Any) -> None:
            unpack_bundle(self.data, bot_cache_dir() / self.digest)

    BotBundlePlugin.__module__ = __name__
    BotBundlePlugin.__qualname__ = "BotBundlePlugin"
    return BotBundlePlugin


def __getattr__(name: str) -> Any:  # pickled plugins find their class by name on the workers
    if name == "BotBundlePlugin":
        cls = _plugin_class()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------- on the worker


@attrs.frozen
class ClusterJob:
    """What a Dask task needs to play one match (plain data, pickled to the worker)."""

    index: int
    spec: MatchSpec
    sandbox: SandboxConfig | None
    runner: Runner
    referee_python: str
    replays: bool = False
    #: bot directory on the referee host -> content hash of its shipped bundle
    bundles: tuple[tuple[str, str], ...] = ()


@attrs.frozen
class ClusterPlayed:
    """A match played on a worker: its games, its bots' logs, and its replays (file name ->
    JSON bytes; each record's ``replay_path`` is that name)."""

    games: tuple[GameRecord, ...]
    logs: dict[str, str]
    replays: dict[str, bytes]


class _Cancelled(BaseException):
    """Raised between games in a match whose task the referee cancelled."""


def _worker_context() -> tuple[Any, Any]:
    try:
        from distributed import get_worker  # deferred: the optional cluster extra

        worker = get_worker()
        return worker, worker.get_current_task()
    except (ImportError, ValueError, KeyError):  # not in a Dask task (a direct call)
        return None, None


def _check_paths(spec: MatchSpec, worker_name: str) -> str | None:
    for bot in spec.bots:
        paths = [word for word in bot.command[:1] if os.path.isabs(word)]
        paths += [bot.directory] if bot.directory else []
        for path in paths:
            if not os.path.exists(path):
                return (
                    f"bot {bot.name!r}: {path} does not exist on Dask worker {worker_name}. "
                    "`cluster_bots: shared` needs the same paths on every worker (a shared "
                    "filesystem); or set `cluster_bots: ship` to send the bots to the workers"
                )
    return None


def run_match(job: ClusterJob) -> ClusterPlayed | MatchFailed | None:
    """Play ``job``'s match on this worker (the Dask task): a :class:`ClusterPlayed`, a
    :class:`~.pool.MatchFailed` (``error``) when it could not be played, or None when the
    referee cancelled the task between two games."""
    raise_fd_limit()
    worker, key = _worker_context()
    unpacked: dict[str, str] = {}
    if job.bundles:
        base = bot_cache_dir()
        for directory, digest in job.bundles:
            local = base / digest
            if not local.is_dir():
                why = f"bot directory {directory} was not shipped to this worker"
                return MatchFailed(job.index, "error", why)
            unpacked[directory] = str(local)
    spec = localize_spec(job.spec, referee_python=job.referee_python, unpacked=unpacked)
    name = str(getattr(worker, "address", "") or "here")
    problem = _check_paths(spec, name)
    if problem:
        return MatchFailed(job.index, "error", problem)

    def on_game(record: GameRecord) -> None:
        if worker is None:
            return
        state = worker.state.tasks.get(key)
        if state is None or state.state in ("cancelled", "released", "forgotten"):
            raise _Cancelled()

    with tempfile.TemporaryDirectory(prefix="ohseven-replays-") as replay_dir:
        try:
            result = job.runner(
                spec,
                sandbox=job.sandbox,
                replay_dir=replay_dir if job.replays else None,
                on_game=on_game,
            )
        except _Cancelled:
            return None
        except Exception:
            return MatchFailed(
                job.index, "error", f"on Dask worker {name}:\n{traceback.format_exc()}"
            )
        games, replays = [], {}
        for record in result.games:
            if record.replay_path and os.path.isfile(record.replay_path):
                file_name = os.path.basename(record.replay_path)
                replays[file_name] = Path(record.replay_path).read_bytes()
                record = attrs.evolve(record, replay_path=file_name)
            games.append(record)
    return ClusterPlayed(tuple(games), dict(result.logs), replays)


# --------------------------------------------------------------------------- on the referee


class _Results:
    """The pool's result queue: ``get`` raises the pool's failure once the queue is drained."""

    def __init__(self) -> None:
        self._queue: queue.Queue[PoolResult] = queue.Queue()
        self.error: BaseException | None = None

    def put(self, item: PoolResult) -> None:
        self._queue.put(item)

    def get(self, timeout: float | None = None) -> PoolResult:
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            if self.error is not None:
                raise self.error from None
            raise


class ClusterPool:
    """Matches played as Dask tasks; results, as matches finish, on :attr:`results`.

    ``submit(job)`` queues a match (a :class:`~.pool.Job`); the pool's thread keeps as many in
    flight as the cluster has ``match`` slots and puts a :class:`~.pool.MatchEnded` or a
    :class:`~.pool.MatchFailed` (``failed``: the match kept killing its workers; ``error``: the
    runner raised) on :attr:`results`. ``bots`` are the bots of the tournament, shipped to the
    workers when ``bot_mode`` is ``"ship"``.
    """

    def __init__(
        self,
        address: str,
        *,
        bots: Sequence[BotSpec] = (),
        bot_mode: str = "shared",
        connect_seconds: float = 20.0,
        slot_patience: float = 60.0,
    ) -> None:
        try:
            import distributed  # deferred: the optional cluster extra (~0.5 s to import)
        except ImportError:
            raise ClusterError(
                "a cluster needs Dask: pip install 'ohseven[cluster]' (on the referee host and "
                "on every worker)"
            ) from None
        self.address = address
        self.bot_mode = bot_mode
        self.slot_patience = slot_patience
        self.results = _Results()
        self._distributed = distributed
        self._jobs: collections.deque[Job] = collections.deque()
        self._inflight: dict[Any, tuple[Job, ClusterJob]] = {}
        self._closed = False
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._slots = (0, 0.0)  # (match slots, when counted)
        self._bundles: dict[str, str] = {}  # bot directory -> content hash
        self._plugins: list[str] = []
        try:
            self.client = distributed.Client(address, timeout=connect_seconds, set_as_default=False)
        except (OSError, TimeoutError) as error:
            raise _unreachable(address, error) from None
        try:
            if bot_mode == "ship":
                self._ship(bots)
        except BaseException:
            self.client.close()
            raise
        self._thread = threading.Thread(target=self._feed, name="ohseven-cluster", daemon=True)
        self._thread.start()

    # -- the local pool's interface

    def submit(self, job: Job) -> None:
        with self._lock:
            self._jobs.append(job)

    def close_input(self) -> None:
        with self._lock:
            self._closed = True

    def reap(self) -> list[tuple[int, str]]:
        """Nothing: a match whose Dask workers died is run again by the scheduler, and one that
        kept killing them arrives on :attr:`results` as ``failed``."""
        return []

    def alive(self) -> int:
        """Dask replaces dead workers and reschedules their matches itself: the pool is whole
        while its thread runs (a lost scheduler is raised by ``results.get``)."""
        return sys.maxsize if self._thread.is_alive() or self.results.error is None else 0

    def stop(self, grace: float = 10.0) -> None:
        """Cancel every match (each stops after its current game) and disconnect."""
        self._stopping.set()
        with self._lock:
            futures = list(self._inflight)
            self._jobs.clear()
        with contextlib.suppress(Exception):
            self.client.cancel(futures, force=True)
        self._thread.join(grace)
        self._disconnect()

    def join(self) -> None:
        self._thread.join()
        self._disconnect()

    # -- shipping

    def _ship(self, bots: Sequence[BotSpec]) -> None:
        plugin_class = _plugin_class()
        for bot in bots:
            directory = _bot_directory(bot)
            if directory is None or directory in self._bundles:
                continue
            digest, data = bundle_directory(directory)
            self._bundles[directory] = digest
            plugin = plugin_class(digest, data)
            if plugin.name not in self._plugins:
                self.client.register_plugin(plugin)
                self._plugins.append(plugin.name)

    def _job(self, job: Job) -> ClusterJob:
        bundles = []
        for bot in job.spec.bots:
            directory = _bot_directory(bot) if self.bot_mode == "ship" else None
            if directory in self._bundles:
                bundles.append((directory, self._bundles[directory]))
        return ClusterJob(
            index=job.index,
            spec=job.spec,
            sandbox=job.sandbox,
            runner=job.runner,
            referee_python=sys.executable,
            replays=job.replay_dir is not None,
            bundles=tuple(dict.fromkeys(bundles)),
        )

    # -- the feeding thread

    def _match_slots(self) -> int:
        count, when = self._slots
        now = time.monotonic()
        if now - when >= 1.0:
            workers = self.client.scheduler_info(n_workers=-1).get("workers", {})
            count = int(
                sum(
                    (info.get("resources") or {}).get(MATCH_RESOURCE, 0)
                    for info in workers.values()
                )
            )
            self._slots = (count, now)
        return count

    def _feed(self) -> None:
        try:
            self._run()
        except BaseException as error:  # noqa: BLE001 - reported through results.get
            if not self._stopping.is_set():
                self.results.error = (
                    error
                    if isinstance(error, ClusterError)
                    else ClusterError(
                        f"lost the Dask cluster at {self.address}: {error!r}; rerun the same "
                        "command to resume"
                    )
                )

    def _run(self) -> None:
        completed = self._distributed.as_completed(loop=self.client.loop)
        starved_since: float | None = None
        unreachable_since: float | None = None
        while not self._stopping.is_set():
            if self.client.status != "running":
                unreachable_since = unreachable_since or time.monotonic()
                if time.monotonic() - unreachable_since > self.slot_patience:
                    raise ClusterError(
                        f"lost the Dask scheduler at {self.address} for over "
                        f"{self.slot_patience:.0f} s; rerun the same command to resume"
                    )
                self._stopping.wait(0.2)
                continue
            unreachable_since = None
            slots = self._match_slots()
            with self._lock:
                pending = len(self._jobs)
                if not pending and not self._inflight and self._closed:
                    return
                while self._jobs and len(self._inflight) < slots:
                    job = self._jobs.popleft()
                    task = self._job(job)
                    future = self.client.submit(
                        run_match,
                        task,
                        key=f"ohseven-{task.spec.match_id}-{uuid.uuid4().hex[:8]}",
                        resources={MATCH_RESOURCE: 1},
                        pure=False,
                    )
                    self._inflight[future] = (job, task)
                    completed.add(future)
            if slots == 0 and (pending or self._inflight):
                starved_since = starved_since or time.monotonic()
                if time.monotonic() - starved_since > self.slot_patience:
                    raise ClusterError(
                        f"no Dask worker at {self.address} offers the `{MATCH_RESOURCE}` "
                        f"resource (waited {self.slot_patience:.0f} s): start workers with "
                        f"`dask worker {self.address} --resources {MATCH_RESOURCE}=CORES`"
                    )
            else:
                starved_since = None
            if completed.has_ready():
                for future in completed.next_batch(block=False):
                    self._collect(future)
            else:
                self._stopping.wait(0.05)

    def _collect(self, future: Any) -> None:
        with self._lock:
            job, task = self._inflight.pop(future)
        index = job.index
        try:
            if future.status == "finished":
                outcome = future.result()
                if isinstance(outcome, ClusterPlayed):
                    games = _save_replays(outcome.games, outcome.replays, job.replay_dir)
                    self.results.put(MatchEnded(index, games, outcome.logs))
                elif isinstance(outcome, MatchFailed):
                    self.results.put(outcome)
            elif future.status == "error":
                error = future.exception()
                if isinstance(error, self._distributed.KilledWorker):
                    self.results.put(MatchFailed(index, "failed", _killed_reason(error)))
                else:
                    text = "".join(traceback.format_exception(error)).rstrip()
                    self.results.put(MatchFailed(index, "error", f"the Dask task raised:\n{text}"))
            elif future.status == "lost" and not self._stopping.is_set():
                # the match finished, but the worker holding its result died before we fetched
                # it: play it again (nothing of it was recorded, so it is recorded once)
                with self._lock:
                    self._jobs.appendleft(job)
            elif not self._stopping.is_set():  # cancelled by someone else
                self.results.put(MatchFailed(index, "error", f"the Dask task was {future.status}"))
        finally:
            future.release()

    def _disconnect(self) -> None:
        if getattr(self, "_disconnected", False):
            return
        self._disconnected = True
        with contextlib.suppress(Exception):
            for name in self._plugins:
                self.client.unregister_worker_plugin(name)
        with contextlib.suppress(Exception):
            self.client.close(timeout=10)


def _save_replays(
    games: Sequence[GameRecord], replays: Mapping[str, bytes], replay_dir: str | None
) -> tuple[GameRecord, ...]:
    """Write the replays a worker sent back into ``replay_dir``; records point at them."""
    saved = []
    for record in games:
        name = record.replay_path
        if replay_dir is not None and name is not None and name in replays:
            path = Path(replay_dir, name)
            write_atomic(path, replays[name], mode=0o600)
            record = attrs.evolve(record, replay_path=str(path))
        elif name is not None:
            record = attrs.evolve(record, replay_path=None)
        saved.append(record)
    return tuple(saved)


def _killed_reason(error: BaseException) -> str:
    tries = getattr(error, "allowed_failures", None)
    last = getattr(getattr(error, "last_worker", None), "address", None) or "?"
    count = f"{tries + 1} " if isinstance(tries, int) else ""
    return (
        f"every Dask worker that played this match died while playing it ({count}workers, "
        f"the last {last}; distributed.scheduler.allowed-failures): see the workers' logs"
    )
