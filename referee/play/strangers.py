"""Connections to a bot's endpoint with no accepted hello (:class:`Strangers`).

A bot's first message must be a hello with its secret; until then the referee reads at most
``STRANGER_FRAMES`` frames per connection (a hello among them is answered), and each frame
beyond is a ``protocol`` fault of the bot whose process opened the connection, found by the
peer's uid or, failing that, up its process tree (:func:`opener`).
"""

from __future__ import annotations

from collections.abc import Sequence

import zmq
from ohseven.referee.play.connection import Hello, decode
from ohseven.referee.play.contestant import Contestant

__all__ = ["Strangers", "STRANGER_FRAMES", "opener"]

#: Frames a connection may send before a hello of it is accepted; beyond, each is a
#: ``protocol`` fault of the bot that opened it (when the referee can tell which one).
STRANGER_FRAMES = 32


class Strangers:
    """The routing ids with no accepted hello: the frames read of each and who opened it."""

    def __init__(self) -> None:
        self.seen: dict[bytes, tuple[int, Contestant | None]] = {}

    def read(
        self, rid: bytes, parts: list[zmq.Frame], bots: Sequence[Contestant]
    ) -> Hello | Contestant | None:
        """One message (``parts``) of ``rid``: a hello to answer, the bot to fault for a
        frame beyond ``STRANGER_FRAMES`` (when it can be told), or None (dropped)."""
        count, bot = self.seen.get(rid) or (0, None)
        if not count:
            bot = opener(parts[0], bots)
        self.seen[rid] = (count + 1, bot)
        if count < STRANGER_FRAMES:
            if len(parts) == 1:
                message = decode(parts[0].bytes)
                if type(message) is Hello:
                    return message
            return None
        return bot

    def count(self, rid: bytes) -> int:
        """The messages of ``rid`` read so far."""
        return self.seen.get(rid, (0, None))[0]

    def forget(self, rid: bytes) -> None:
        """``rid`` said an accepted hello (or belongs to a bot now)."""
        self.seen.pop(rid, None)


def opener(frame: zmq.Frame, bots: Sequence[Contestant]) -> Contestant | None:
    """The bot whose process sent ``frame`` (by the peer's uid, else its process tree)."""
    try:  # "host:uid:gid:pid" of the process that connected (SO_PEERCRED)
        _, uid, _, pid = str(frame.get("Peer-Address")).rsplit(":", 3)
        uid_n, pid_n = int(uid), int(pid)
    except (ValueError, zmq.ZMQError):
        return None
    running = [(bot, bot.process) for bot in bots if bot.process is not None]
    owners = [bot for bot, process in running if process.uid == uid_n]
    if len(owners) == 1 and len({process.uid for _, process in running}) == len(running):
        return owners[0]
    roots = {process.pid: bot for bot, process in running if process.pid}
    for _ in range(64):  # up the process tree to a bot's process
        if pid_n in roots:
            return roots[pid_n]
        try:
            with open(f"/proc/{pid_n}/stat") as handle:
                pid_n = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return None
        if pid_n <= 1:
            return None
    return None
