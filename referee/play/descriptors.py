"""The referee's file descriptors: enough for every connection its bots can open.

Every connection a bot opens to its endpoint costs the referee a descriptor, and libzmq aborts
the whole process when it cannot accept one: the referee raises its own limit
(:func:`raise_fd_limit`) and starts bots in groups that cannot exhaust what is left together
(:func:`bot_capacity` of each, grouped by :func:`start_groups`).
"""

from __future__ import annotations

import os
import resource
import warnings
from collections.abc import Sequence

from ohseven.referee.sandbox.settings import SandboxConfig

__all__ = [
    "FD_RESERVE",
    "FD_PER_BOT",
    "raise_fd_limit",
    "open_descriptors",
    "bot_capacity",
    "start_groups",
]

#: Descriptors the referee keeps for itself on top of what the bots can make it hold.
FD_RESERVE = 256
#: The referee's own descriptors per bot: pipes, pidfd, uid lock, socket.
FD_PER_BOT = 16


def raise_fd_limit(needed: int = 0) -> int:
    """Raise this process's ``RLIMIT_NOFILE`` soft limit to the hard one (as root, the hard one
    too, up to ``needed`` and the kernel's ``fs.nr_open``); return the soft limit now.

    The limit must cover what the bots can open (``processes`` x ``open_files`` each), not the
    usual 1024.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard
    if needed > hard and os.geteuid() == 0:
        try:
            with open("/proc/sys/fs/nr_open") as handle:
                ceiling = int(handle.read())
        except (OSError, ValueError):
            ceiling = 1 << 20
        target = max(hard, min(needed, ceiling))
    if target == resource.RLIM_INFINITY:
        target = max(soft, needed)
    if target > soft or target > hard:
        for limits in ((target, target), (hard, hard)):
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, limits)
                break
            except (ValueError, OSError):
                continue
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def open_descriptors() -> int:
    """The descriptors this process holds now (0 when ``/proc`` cannot tell)."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 0


def bot_capacity(config: SandboxConfig) -> int:
    """The descriptors one bot can cost the referee: every connection its processes can hold,
    each in one of its descriptors or in flight in a Unix socket (``SCM_RIGHTS``: the kernel
    bounds a uid's descriptors in flight by its ``RLIMIT_NOFILE``)."""
    limits = config.limits
    return (limits.processes + 1) * limits.open_files + FD_PER_BOT


def start_groups(needs: Sequence[tuple[str, int]]) -> list[list[int]]:
    """The bots ((name, :func:`bot_capacity`) each) in groups started together, by index:
    until its hello a bot may open as many connections as it has descriptors (its endpoint's
    file is removed at the hello), so the bots of a group must not be able to exhaust the
    referee's descriptors together. A bot that alone could is warned of, and started alone."""
    room = resource.getrlimit(resource.RLIMIT_NOFILE)[0] - open_descriptors() - FD_RESERVE
    groups: list[list[int]] = []
    used = room + 1
    for index, (name, need) in enumerate(needs):
        if need > room:
            warnings.warn(
                f"bot {name!r} could open {need} connections before its hello "
                f"(processes x open_files) but the referee has {room} descriptors to "
                "spare: a connection flood could stop it; raise its hard limit "
                "(ulimit -Hn) or lower those limits",
                RuntimeWarning,
                stacklevel=3,
            )
        if used + need > room and (not groups or groups[-1]):
            groups.append([])
            used = 0
        groups[-1].append(index)
        used += need
    return groups
