"""What a sandbox is asked for: its modes, a bot's resource limits (:class:`Limits`), how bots
are run (:class:`SandboxConfig`), the errors of a sandbox that cannot be had or a bot that cannot
start, and :func:`check_sandbox`, which tells whether this machine can run bots so."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable

import attrs

__all__ = [
    "Limits",
    "SandboxConfig",
    "SandboxError",
    "BotStartError",
    "check_sandbox",
    "MODES",
    "LIMIT_MAXIMA",
]

MODES = ("bwrap", "unsandboxed")


_INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`, Fedora: `dnf install "
    "bubblewrap`), or run trusted bots without a sandbox with the explicit opt-in mode "
    '"unsandboxed"'
)


#: The largest value of each limit (the kernel's and the machine's bounds are far below most of
#: these; a larger number is a typo, and some would overflow what prlimit and cgroups take).
LIMIT_MAXIMA: dict[str, int] = {
    "memory_mb": 1 << 20,  # 1 TiB
    "cpu_seconds": 7 * 86400,
    "processes": 1 << 16,
    "file_size_mb": 1 << 20,
    "open_files": 1 << 20,  # the kernel's default fs.nr_open
    "log_bytes": 1 << 30,
    "scratch_mb": 1 << 20,
    "cpus": 1024,
}


def _positive(instance: object, attribute: attrs.Attribute, value: float) -> None:
    if not 0 < value <= LIMIT_MAXIMA[attribute.name]:
        raise ValueError(
            f"{attribute.name} must be from 1 to {LIMIT_MAXIMA[attribute.name]:,}, got {value!r}"
        )


@attrs.frozen
class Limits:
    """Resource limits of one bot: of all its processes together (its cgroup), and of each
    process (rlimits).

    ``memory_mb`` is the bot's TOTAL memory: everything its processes hold together, memfd
    files, shared memory and its scratch tmpfs included, without swap (the cgroup's memory
    limit); exceeding it is an OOM kill, the fault ``limit``. It is also each process's
    ``RLIMIT_AS`` (address space, not resident memory: runtimes that reserve large virtual
    areas, such as the JVM or Go, need a larger value), the only memory limit where cgroups
    cannot be had. ``cpus`` is how many cores the bot may use at most (a float; its cgroup's
    CPU quota), and every bot has the same CPU weight. ``cpu_seconds`` is ``RLIMIT_CPU`` of
    each process for the whole match. ``processes`` is the cgroup's count of the bot's
    processes and threads (``pids.max``), and ``RLIMIT_NPROC``, a per-bot limit only when the
    bot has its own uid (the referee is root). ``scratch_mb`` bounds the private tmpfs of the
    bwrap mode. ``log_bytes`` is how much of the bot's stdout+stderr is kept: the first and
    last halves; the middle is discarded and marked.
    """

    memory_mb: int = attrs.field(default=1024, validator=_positive)
    cpu_seconds: int = attrs.field(default=600, validator=_positive)
    processes: int = attrs.field(default=64, validator=_positive)
    file_size_mb: int = attrs.field(default=16, validator=_positive)
    open_files: int = attrs.field(default=128, validator=_positive)
    log_bytes: int = attrs.field(default=65536, validator=_positive)
    scratch_mb: int = attrs.field(default=64, validator=_positive)
    cpus: float = attrs.field(default=1.0, converter=float, validator=_positive)


def _as_tuple(paths: Iterable[str]) -> tuple[str, ...]:
    return tuple(paths)


def _mode_valid(instance: object, attribute: attrs.Attribute, value: str) -> None:
    if value not in MODES:
        raise ValueError(f"sandbox mode must be one of {', '.join(MODES)}, got {value!r}")


@attrs.frozen
class SandboxConfig:
    """How bots are run.

    ``uid`` is the unprivileged uid/gid bots run as when the referee is root and
    ``uid_pool_size`` is 0. With ``uid_pool_size > 0`` (the default), each running bot takes a
    uid of its own from ``[uid_pool_start, uid_pool_start + uid_pool_size)``, held with a lock
    file so that concurrent referee processes never share one; these uids need no account.
    ``bwrap`` is the bubblewrap program (a name looked up in PATH, or a path). ``extra_paths``
    are further host paths made visible read-only at the same place (a JVM under /opt, say).
    ``ponder`` lets a bot run while it owes no decision; off (the default), its processes are
    frozen from its reply to its next request, so it thinks on its own clock only.
    """

    mode: str = attrs.field(default="bwrap", validator=_mode_valid)
    limits: Limits = Limits()
    uid: int = 65534
    uid_pool_start: int = 0x70000000
    uid_pool_size: int = 4096
    bwrap: str = "bwrap"
    extra_paths: tuple[str, ...] = attrs.field(default=(), converter=_as_tuple)
    ponder: bool = False


class SandboxError(RuntimeError):
    """The sandbox cannot be used on this machine (a missing tool, an unusable kernel feature)."""


class BotStartError(OSError):
    """A bot process could not be started (its command is missing, the sandbox failed)."""


def is_root() -> bool:
    return os.geteuid() == 0


def which(program: str) -> str | None:
    if os.sep in program:
        return program if os.path.isfile(program) and os.access(program, os.X_OK) else None
    return shutil.which(program)


def check_sandbox(config: SandboxConfig) -> None:
    """Raise :class:`SandboxError` with a clear message if ``config`` cannot run bots here."""
    if not sys.platform.startswith("linux"):
        raise SandboxError(f"bots can only be run on Linux, not on {sys.platform}")
    for tool in ("prlimit", "setpriv") if is_root() else ("prlimit",):
        if which(tool) is None:
            raise SandboxError(
                f"{tool} was not found in PATH; it is part of util-linux "
                "(Debian/Ubuntu: `apt-get install util-linux`)"
            )
    if config.mode == "bwrap" and which(config.bwrap) is None:
        raise SandboxError(
            f"the sandbox program bubblewrap ({config.bwrap!r}) was not found: {_INSTALL_HINT}"
        )
