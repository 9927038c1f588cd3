"""The check queue: each uploaded version is checked by ``ohseven-referee check-bot`` (run as
a child process, in the configuration's sandbox, with its time control) one at a time in a
thread of its own, so that a slow or hostile bot's check never stalls the league or the HTTP
server. A version's report (``check-bot --json``, with the bot's own output on a failure) is
stored for its author; a passed check is remembered by the content digest and the settings it
ran with, so the same bot is not checked twice (across runs too). The queue is bounded: an
upload that finds it full is refused (``QueueFullError``) and may be sent again later.

The stored trees (``uploads``) are removed once no version needs them (:meth:`CheckQueue.sweep`):
a failed version's as soon as its report is stored, an upload's refused after it was unpacked
at once, and at start-up every tree no version names (a server killed between unpacking an
upload and recording it). ``lock`` orders this with the server's uploads: a tree is recorded as
a version, or removed, under it."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

from ohseven.referee.plan.config import TourneyConfig
from ohseven.referee.server.db import ServerDB, Version
from ohseven.referee.server.uploads import (
    discard,
    stored_digests,
    uploads_root,
    version_folder,
)
from ohseven.referee.terminal import printable

__all__ = ["QueueFullError", "CheckQueue", "check_key", "CHECK_DECISIONS", "timeout_report"]

#: about how many decisions ``check-bot --game GAME`` asks a bot (measured: its report's
#: ``decisions`` summed over the checks; tests/test_checks.py keeps these true within 10%)
CHECK_DECISIONS = {"oh-seven": 1130, "oh-hell": 615}


class QueueFullError(RuntimeError):
    """The check queue holds its maximum of versions waiting."""


def _settings(config: TourneyConfig) -> list[str]:
    """The ``check-bot`` options the configuration decides."""
    options = [
        "--game",
        config.game,
        "--sandbox",
        config.sandbox.mode,
        "--move-timeout",
        str(config.time_control.move_seconds),
        "--bank",
        str(config.time_control.bank_seconds),
    ]
    for path in config.sandbox.extra_paths:
        options += ["--extra-path", path]
    return options


def timeout_report(config: TourneyConfig, timeout: float, stderr: str) -> dict[str, Any]:
    """The report of a check stopped at ``timeout`` (``server.check_timeout``): the limit, and
    what it means for a bot's time per decision in its check."""
    decisions = CHECK_DECISIONS.get(config.game, sum(CHECK_DECISIONS.values()))
    average = timeout / decisions
    return {
        "passed": False,
        "error": (
            f"the check took more than {timeout:g} s, this server's limit (check_timeout): "
            f"check-bot asks about {decisions} decisions, so a bot must answer in about "
            f"{average * 1000:.0f} ms a decision on average to be checked here (a league game "
            f"allows {config.time_control.move_seconds:g} s a decision and a bank); make it "
            "think less (view.time_ms is the time it has), or ask the organiser"
        ),
        "limit": {"check_timeout": timeout, "decisions": decisions},
        "stderr": stderr,
    }


def check_key(config: TourneyConfig, version: Version) -> str:
    """What a check's verdict depends on: the bot's content and command, and the settings."""
    # its command as its author wrote it: a league folder moved keeps its remembered checks
    what = json.dumps([version.digest, version.shown_command(), _settings(config)])
    return hashlib.sha256(what.encode()).hexdigest()


class CheckQueue:
    """Checks the queued versions of ``db`` one by one; ``on_change`` is called after each
    verdict (the league then plays a passed version from its next wave)."""

    def __init__(
        self,
        db: ServerDB,
        config: TourneyConfig,
        *,
        capacity: int = 20,
        timeout: float = 300.0,
        on_change: Callable[[], None] = lambda: None,
    ) -> None:
        self.db, self.config, self.capacity, self.timeout = db, config, capacity, timeout
        self.on_change = on_change
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.child: subprocess.Popen[bytes] | None = None
        self.thread = threading.Thread(target=self._loop, name="check-queue", daemon=True)
        #: held while an upload's tree is recorded as a version (``app.Server.store_lock``) and
        #: while a tree is taken away (:meth:`sweep`)
        self.lock = threading.Lock()

    def start(self) -> None:
        """Requeue the checks a stop cut short and remove every tree no version needs (before
        the server takes uploads: a tree not recorded yet is one a stop left behind)."""
        self.db.requeue_interrupted()
        self.sweep()
        self.thread.start()

    def sweep(self, digests: Iterable[str] | None = None) -> list[str]:
        """Remove the stored trees of ``digests`` (every stored one when None) that no version
        needs (``ServerDB.kept_digests``); the digests removed."""
        root = uploads_root(self.config.output)
        moved = []
        with self.lock:
            kept = self.db.kept_digests()
            wanted = stored_digests(root) if digests is None else set(digests)
            for digest in sorted(wanted - kept):
                gone = discard(root, digest)
                if gone is not None:
                    moved.append((digest, gone))
        for _digest, gone in moved:  # (outside the lock: no upload waits for the disk)
            shutil.rmtree(gone, ignore_errors=True)
        return [digest for digest, _gone in moved]

    def stop(self) -> None:
        """Stop: the check running is killed and stays queued for the next start."""
        self.stopping.set()
        self.wake.set()
        child = self.child
        if child is not None and child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
        self.thread.join(timeout=30)

    def admit(self) -> None:
        """Raise :class:`QueueFullError` when no more version may wait."""
        if len(self.db.queued()) >= self.capacity:
            raise QueueFullError(
                f"the check queue is full ({self.capacity} versions waiting); send it again "
                "in a few minutes"
            )

    def notify(self) -> None:
        self.wake.set()

    def _loop(self) -> None:
        while not self.stopping.is_set():
            queued = self.db.queued()
            if not queued:
                self.wake.wait(5.0)
                self.wake.clear()
                continue
            version = queued[0]
            self.db.set_state(version.id, "checking")
            try:
                state, report = self._check(version)
            except (OSError, ValueError) as error:  # check-bot did not start: not the queue's end
                print(
                    printable(f"warning: the check of {version.name}: {error}", lines=False),
                    file=sys.stderr,
                )
                state = "error"
                report = {"passed": False, "error": "the check could not run; ask the organiser"}
            if self.stopping.is_set():
                break  # stays `checking`: queued again at the next start
            self.db.set_state(version.id, state, report)
            if state != "passed":  # its report is stored: the author reads that, not the files
                self.sweep([version.digest])
            self.on_change()

    def _check(self, version: Version) -> tuple[str, dict[str, Any]]:
        key = check_key(self.config, version)
        remembered = self.db.remembered_check(key)
        if remembered is not None:
            passed, report = remembered
            return ("passed" if passed else "failed"), report
        argv = [
            sys.executable,
            "-m",
            "ohseven.referee.cli",
            "check-bot",
            "--json",
            *_settings(self.config),
            shlex.join(version.argv(version_folder(self.config.output, version.digest))),
        ]
        try:
            self.child = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # killed as a group on a stop or a timeout
            )
            try:
                out, err = self.child.communicate(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.child.pid, signal.SIGKILL)
                _out, err = self.child.communicate()
                stderr = err.decode("utf-8", "replace")[-4000:]
                return "failed", timeout_report(self.config, self.timeout, stderr)
            code = self.child.returncode
        finally:
            self.child = None
        stderr = err.decode("utf-8", "replace")[-4000:]
        if code in (0, 1):
            try:
                data: Any = json.loads(out)
            except ValueError:
                data = None
            if isinstance(data, dict):
                data["stderr"] = stderr
                self.db.remember_check(key, code == 0, data)
                return ("passed" if code == 0 else "failed"), data
        return "failed", {"passed": False, "error": f"check-bot exited {code}", "stderr": stderr}
