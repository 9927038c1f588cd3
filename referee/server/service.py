"""``serve``: the HTTP server (uvicorn, in a thread) and the league (in the main thread, where
Ctrl-C and SIGTERM stop it as they stop ``tourney``), with the check queue and the live view
beside them. Everything a client was told is on disk: a SIGKILL loses no acknowledged upload
and no finished game, and the same command resumes the league, the queue and the API."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import uvicorn
from ohseven.referee.plan.config import TourneyConfig
from ohseven.referee.server.app import Server, create_app
from ohseven.referee.server.checks import CheckQueue
from ohseven.referee.server.connections import BodyGuard, uvicorn_config
from ohseven.referee.server.db import ServerDB
from ohseven.referee.server.league import League
from ohseven.referee.server.live import LiveView
from ohseven.referee.server.unrated import UnratedQueue
from ohseven.referee.server.uploads import clean_partial, uploads_root
from ohseven.referee.tournament.run import tournament_secret
from ohseven.referee.tournament.stop_signals import stop_on

__all__ = ["ServeError", "serve", "server_lock", "split_listen"]


#: how long a server waits for the folder's lock (held by a stopped server's last workers)
LOCK_WAIT_SECONDS = 20.0
#: the least time between two of the run loop's ``leaderboard.json`` (see ``serve``)
BOARD_SECONDS = 120.0
#: the interpreter's thread switch interval while serving: the HTTP thread waits at most this
#: long for the GIL that the run loop or the live view hold (Python's default, 5 ms, queues
#: requests behind them for seconds at 100 a second)
SWITCH_SECONDS = 0.0005
#: what a multipart upload form adds to the file it carries, at most (bytes)
UPLOAD_FORM_SLACK = 65536


class ServeError(RuntimeError):
    """The server cannot start (the folder in use, the address taken)."""


def split_listen(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    return host.strip("[]"), int(port)


@contextlib.contextmanager
def server_lock(output: Path) -> Iterator[None]:
    output.mkdir(parents=True, exist_ok=True)
    handle = open(output / ".server.lock", "w")  # noqa: SIM115 - held while serving
    try:
        # the worker processes of a server just killed hold it until they notice (at once,
        # unless a bot keeps them busy): wait for them a little
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise ServeError(f"{output} is served by another running server") from None
                time.sleep(0.2)
        yield
    finally:
        handle.close()


def serve(
    config: TourneyConfig,
    *,
    listen: str | None = None,
    cluster: str | None = None,
    workers: int | None = None,
    announce: Callable[[str], None] = print,
) -> None:
    """Serve the league of ``config`` until SIGINT or SIGTERM; raise :class:`ServeError`."""
    output = Path(config.output)
    host, port = split_listen(listen or config.server.listen)
    with server_lock(output):
        db = ServerDB(output)
        clean_partial(uploads_root(output))
        live = LiveView(
            output,
            config.game,
            draw_probability=config.ratings.draw_probability,
            fault_ranks_last=config.ratings.fault_ranks_last,
        )
        checks = CheckQueue(
            db,
            config,
            capacity=config.server.check_queue,
            timeout=config.server.check_timeout,
        )
        # the commitment to the secret, published before any game (made now if it is new)
        secret = tournament_secret(config, output)
        commitment = hashlib.sha256(secret).hexdigest()
        unrated = UnratedQueue(db, config, secret)
        server = Server(config, db, live, checks, commitment, unrated)
        app = create_app(server)
        # uploads may be as large as the configured limit (the form's: a little more); every
        # other body is small
        upload = config.server.max_upload_bytes + UPLOAD_FORM_SLACK
        too_big = server.too_big()
        guarded = BodyGuard(
            app,
            {"/api/uploads": upload, "/me/upload": upload},
            refusals={"/api/uploads": too_big, "/me/upload": too_big},
        )
        web = uvicorn.Server(uvicorn_config(guarded, host, port))
        thread = threading.Thread(target=web.run, name="http", daemon=True)
        switch = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_SECONDS)
        with stop_on(signal.SIGINT, signal.SIGTERM):  # the first stops; the next are ignored
            try:
                live.start()
                checks.start()
                unrated.start()
                thread.start()
                while not web.started:
                    if not thread.is_alive():
                        raise ServeError(
                            f"cannot listen on {host}:{port} (in use, or not an address)"
                        )
                    thread.join(0.05)
                shown = f"[{host}]" if ":" in host else host
                announce(f"serving {config.name} on http://{shown}:{port}/ (Ctrl-C stops)")
                # the live view serves the leaderboard (results.incremental): the run loop's whole
                # leaderboard.json, seconds of CPU at 100,000 games in this process, is written
                # only now and then (and at the end), not as often as its cost allows
                league = League(
                    config, db, workers=workers, cluster=cluster, board_interval=BOARD_SECONDS
                )
                if db.final_state() is None:
                    league.run()
                else:  # the final has begun: the league is over, its results are served
                    announce(f"{config.name}: the final has begun; serving the results")
                    while True:
                        time.sleep(1.0)
            except KeyboardInterrupt:  # Ctrl-C or SIGTERM, at whatever point: stop cleanly
                pass
            finally:
                web.should_exit = True
                thread.join(timeout=10)
                checks.stop()
                unrated.stop()
                live.stop()
                db.close()
                sys.setswitchinterval(switch)
                print("stopped: every finished game and upload is kept", file=sys.stderr)
