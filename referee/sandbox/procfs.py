"""The machine-wide files of ``/proc`` as a sandbox shows them: replaced by static contents of
the sandbox's own (as LXCFS does for containers), or hidden.

``/proc`` inside the sandbox is the sandbox's own (its PID namespace), but many of its files
describe the whole machine: the number of tasks and the load (``loadavg``), the CPU time of
every core and the processes running (``stat``), free memory (``meminfo``, ``zoneinfo``,
``vmstat``), disk and interrupt counts, the CPU's frequency (``cpuinfo``), the pressure
stall figures, the uptime's idle time. Another bot changes them at will (threads, busy loops,
memory, reads), so each would carry bits from one sandbox to another. The sandbox binds
instead a static file of plausible content in place of each one that a runtime reads
(Python's ``os.cpu_count()`` counts the ``cpu`` lines of ``stat`` when ``/sys`` is hidden;
Node.js reads ``meminfo``, ``loadavg``, ``stat`` and ``cpuinfo``): the memory is the bot's own
limit, the counters never move. The others are bound empty, and the folders of such figures
(``pressure``, ``fs``) are hidden under an empty read-only tmpfs.
"""

from __future__ import annotations

import functools
import os
import re

__all__ = ["HIDDEN_DIRS", "proc_files"]

#: folders of machine-wide figures, hidden under an empty read-only tmpfs: the pressure stall
#: information, the file systems' own (free blocks of ext4 groups...), the counts of open
#: files, inodes and dentries
HIDDEN_DIRS = ("/proc/pressure", "/proc/fs", "/proc/sys/fs")
#: machine-wide counters nothing needs to start: bound empty
_EMPTY = (
    "vmstat",
    "zoneinfo",
    "buddyinfo",
    "pagetypeinfo",
    "diskstats",
    "interrupts",
    "softirqs",
    "schedstat",
    "locks",
    "key-users",
    "slabinfo",
    "sched_debug",
    "timer_list",
)
_CPU_TIMES = "100 0 100 10000 0 0 0 0 0 0"  # user nice system idle...: static, never moving


def proc_files(memory_mb: int) -> dict[str, bytes]:
    """``/proc`` path -> the content bound in its place, for a bot of ``memory_mb`` (only the
    files this machine has: a mount needs its target)."""
    files = {
        "/proc/loadavg": b"0.00 0.00 0.00 1/1 1\n",
        "/proc/uptime": b"1000.00 1000.00\n",
        "/proc/meminfo": _meminfo(memory_mb),
        "/proc/stat": _stat(),
        "/proc/cpuinfo": _cpuinfo(),
        "/proc/sys/kernel/random/entropy_avail": b"256\n",
        **{f"/proc/{name}": b"" for name in _EMPTY},
    }
    return {path: data for path, data in files.items() if os.path.exists(path)}


def _meminfo(memory_mb: int) -> bytes:
    """The bot's memory limit as the machine's memory, all of it free, no swap."""
    total = memory_mb * 1024
    lines = {
        "MemTotal": total, "MemFree": total, "MemAvailable": total, "Buffers": 0,
        "Cached": 0, "SwapCached": 0, "Active": 0, "Inactive": 0, "Shmem": 0,
        "SwapTotal": 0, "SwapFree": 0, "Dirty": 0, "Writeback": 0, "AnonPages": 0,
        "Mapped": 0, "Slab": 0, "SReclaimable": 0, "SUnreclaim": 0, "KernelStack": 0,
        "PageTables": 0, "CommitLimit": total, "Committed_AS": 0,
        "VmallocTotal": 34359738367, "VmallocUsed": 0, "VmallocChunk": 0,
        "HugePages_Total": 0, "HugePages_Free": 0, "Hugepagesize": 2048,
    }  # fmt: skip
    text = "".join(
        f"{key + ':':<16}{value:>8}" + ("" if key.startswith("HugePages_") else " kB") + "\n"
        for key, value in lines.items()
    )
    return text.encode()


@functools.lru_cache(maxsize=1)
def _stat() -> bytes:
    """A ``cpu`` line per core of the machine (a count the bot may know: it is in
    ``sched_getaffinity``), the counters fixed, the boot time the machine's (a constant)."""
    boot = 0
    try:
        with open("/proc/stat", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("btime "):
                    boot = int(line.split()[1])
    except (OSError, ValueError):
        pass
    cores = os.cpu_count() or 1
    lines = [f"cpu  {_CPU_TIMES}"]
    lines += [f"cpu{core} {_CPU_TIMES}" for core in range(cores)]
    lines += [
        "intr 0", "ctxt 0", f"btime {boot}", "processes 1", "procs_running 1",
        "procs_blocked 0", "softirq 0",
    ]  # fmt: skip
    return ("\n".join(lines) + "\n").encode()


@functools.lru_cache(maxsize=1)
def _cpuinfo() -> bytes:
    """The machine's ``cpuinfo`` as it was once, its frequency fixed (it moves with the load:
    ``cpu MHz`` of every core would show how busy the others keep it)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return b""
    text = re.sub(r"^(cpu MHz\s*:\s*).*$", r"\g<1>1000.000", text, flags=re.M)
    return text.encode()
