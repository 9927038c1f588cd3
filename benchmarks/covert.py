"""Bandwidth of the covert channels left between two sandboxed bots, measured.

Two bots run at the same time in two real sandboxes (bubblewrap, other uids, their own PID,
IPC and network namespaces, the referee's seccomp filter): a sender that is given a random
message and a receiver that is given nothing. They share no file they can lock or watch (see
SECURITY.md), only the machine. For each channel and slot length, the sender modulates
something global during each slot (a one bit) or not (a zero bit); the receiver samples what it
can see of it in the middle of the slot. Both agree on the slots through the clock, which is
the machine's. A known preamble of alternating bits calibrates the threshold; the payload's
bits decoded against it give the error rate. Channels:

- ``cpu``: two busy processes of the sender (a one) slow the receiver's own counting loop;
- ``threads``: 40 threads of the sender (a one) show in the machine-wide count of tasks in
  ``/proc/loadavg`` (its fourth field);
- ``files``: 200 open files of the sender (a one) show in ``/proc/sys/fs/file-nr``;
- ``memory``: 192 MB touched by the sender (a one) show in ``MemAvailable`` of
  ``/proc/meminfo``;
- ``sysinfo``: the sender's 40 threads in the task count of the ``sysinfo()`` syscall;
- ``stat``: the sender's two busy processes in ``procs_running`` of ``/proc/stat``;
- ``idle``: the same, in how fast the idle time of ``/proc/uptime`` grows;
- ``pressure``: the same, in how fast the CPU stall time of ``/proc/pressure/cpu`` grows;
- ``cpuinfo``: the same, in the cores' frequency (``cpu MHz`` of ``/proc/cpuinfo``);
- ``pagecache``: the sender reads page ``i`` of a large system file that nobody reads (the
  benchmark evicts its pages first) for a one in slot ``i``; the receiver times its own first
  read of that page (a cached page is read in microseconds, another from the disk): the
  channel by which a bot's process of one rotation would tell the next one a deal.

- ``table``: not two bare sandboxes but two colluding bots at a real table (Oh-Seven, with two
  copies of the example random bot), through the real referee (``play_match``, the default
  sandbox settings): the sender burns CPU in the slots of a one whenever it can run, the
  receiver times its own loop whenever it owes a decision (``tests/bots/colluder.py``, the pair
  of the test ``test_cgroups.py::TestCollusion``). The payload repeats; only the slots the
  receiver saw count, and its rate is those slots per second of play. ``--code DIR`` measures
  the same beside it with another checkout (``DIR/.venv/bin/python``: its referee and its
  scheduling), in the same run; the ``overlap`` column is how long the two ran at once.

Figures are raw bits per second (one bit per slot), the error rate, and the capacity of a
binary symmetric channel with that error rate (``bits/s * (1 - H(error))``): what an attacker
with coding could carry; ``static`` when the receiver's figure never moved (the sandbox shows
a fixed value: then the error rate would only be the share of ones in the payload). Other
work on the machine is noise for every channel.

    python benchmarks/covert.py [--bits N] [--channels cpu,threads,files,memory,sysinfo,...]
                                [--slots-ms 10,25,50,100] [--seed K] [--games N] [--code DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import stat
import subprocess
import sys
import tempfile
import threading
import time

PREAMBLE = [1, 0] * 8
# slot lengths each channel is measured at by default (ms)
DEFAULT_SLOTS = {
    "cpu": (25, 100, 250),
    "threads": (5, 10, 25),
    "files": (5, 10, 25),
    "memory": (100, 250),
    "sysinfo": (10, 25),
    "stat": (25, 100),
    "idle": (50, 250),
    "pressure": (100, 250),
    "cpuinfo": (100, 250),
    "pagecache": (5, 25),
    "table": (25, 100),
}
#: what the sender does for each channel: busy processes, threads, open files, memory, reads
_SENDS = {
    "cpu": "busy", "stat": "busy", "idle": "busy", "pressure": "busy", "cpuinfo": "busy",
    "threads": "threads", "sysinfo": "threads", "files": "files", "memory": "memory",
    "pagecache": "pages",
}  # fmt: skip
#: channels whose figure is a counter: the receiver reads how fast it grows in its window
_COUNTERS = ("idle", "pressure")
PAGE = 4096


# --------------------------------------------------------------------------- inside a sandbox


def _wait_until(moment: float) -> None:
    while True:
        left = moment - time.time()
        if left <= 0:
            return
        time.sleep(min(left, 0.05) if left > 0.002 else 0)


def _sender(channel: str, slot: float, start: float, bits: str, target: str) -> None:
    threading.stack_size(1 << 18)
    kind = _SENDS[channel]
    child = kind == "busy" and os.fork() == 0  # two busy processes: the machine's 2 cores
    for index, bit in enumerate(bits):
        begin = start + index * slot
        _wait_until(begin)
        end = begin + slot
        if bit == "0":
            continue
        if kind == "pages":
            with open(target, "rb") as handle:
                os.pread(handle.fileno(), PAGE, index * 64 * PAGE)
        elif kind == "busy":
            while time.time() < end:
                pass
        elif kind == "threads":
            stop = threading.Event()
            threads = [threading.Thread(target=stop.wait) for _ in range(40)]  # < processes
            for thread in threads:
                thread.start()
            _wait_until(end - slot * 0.1)
            stop.set()
            for thread in threads:
                thread.join()
        elif kind == "files":
            handles = [open(os.devnull, "rb") for _ in range(200)]  # noqa: SIM115
            _wait_until(end - slot * 0.1)
            for handle in handles:
                handle.close()
        elif kind == "memory":
            hoard = b"\1" * (192 << 20)
            _wait_until(end - slot * 0.1)
            del hoard
    if child:
        os._exit(0)


def _sample(channel: str) -> float:
    if channel == "sysinfo":
        import ctypes
        import platform
        import struct

        info = ctypes.create_string_buffer(128)
        number = {"x86_64": 99, "aarch64": 179}[platform.machine()]
        if ctypes.CDLL(None, use_errno=True).syscall(number, info) != 0:
            raise OSError(ctypes.get_errno(), "sysinfo() refused")
        return float(struct.unpack_from("H", info.raw, 80)[0])  # procs, after 10 longs
    if channel == "stat":
        with open("/proc/stat") as handle:
            for line in handle:
                if line.startswith("procs_running "):
                    return float(line.split()[1])
        raise OSError("no procs_running")
    if channel == "idle":
        with open("/proc/uptime") as handle:
            return float(handle.read().split()[1])
    if channel == "pressure":
        with open("/proc/pressure/cpu") as handle:
            return float(handle.readline().split("total=")[1])
    if channel == "cpuinfo":
        with open("/proc/cpuinfo") as handle:
            speeds = [float(line.split(":")[1]) for line in handle if line.startswith("cpu MHz")]
        return sum(speeds) / len(speeds)
    if channel == "threads":
        with open("/proc/loadavg") as handle:
            return float(handle.read().split()[3].split("/")[1])
    if channel == "files":
        with open("/proc/sys/fs/file-nr") as handle:
            return float(handle.read().split()[0])
    with open("/proc/meminfo") as handle:
        for line in handle:
            if line.startswith("MemAvailable:"):
                return -float(line.split()[1])  # more used: higher
    raise RuntimeError("no MemAvailable")


def _receiver(channel: str, slot: float, start: float, count: int, target: str) -> None:
    for index in range(count):
        begin = start + index * slot
        _wait_until(begin + slot * 0.3)
        until = begin + slot * 0.8
        if channel == "cpu":
            loops = 0
            while time.time() < until:
                loops += 1
            value = -loops  # contended: fewer loops
        elif channel == "pagecache":
            _wait_until(until)  # the sender's read is done
            with open(target, "rb") as handle:
                began = time.perf_counter()
                os.pread(handle.fileno(), PAGE, index * 64 * PAGE)
                value = -(time.perf_counter() - began)  # cached (a one): faster
        elif channel in _COUNTERS:
            try:
                first, since = _sample(channel), time.time()
            except OSError as error:
                os.write(1, f"BLOCKED {error}\n".encode())
                return
            _wait_until(until)
            value = (_sample(channel) - first) / max(time.time() - since, 1e-6)
            if channel == "idle":
                value = -value  # busy: the idle time grows slower
        else:
            try:
                values = [_sample(channel)]
            except OSError as error:  # the sandbox hides it
                os.write(1, f"BLOCKED {error}\n".encode())
                return
            while time.time() < until:
                values.append(_sample(channel))
                time.sleep(slot / 20)
            values.sort()
            value = values[len(values) // 2]
        os.write(1, f"SLOT {index} {value}\n".encode())


# --------------------------------------------------------------------------- the referee side


def _entropy(p: float) -> float:
    return 0.0 if p <= 0 or p >= 1 else -p * math.log2(p) - (1 - p) * math.log2(1 - p)


def measure(channel: str, slot_ms: int, payload: list[int]) -> tuple[float, float, float] | None:
    """(bits/s, error rate, capacity bits/s) of ``channel`` with slots of ``slot_ms``; None if
    the sandbox hides what the receiver would read."""
    from ohseven.referee.sandbox.process import BotProcess
    from ohseven.referee.sandbox.settings import SandboxConfig

    slot = slot_ms / 1000
    bits = PREAMBLE + payload
    target = _evicted(len(bits)) if channel == "pagecache" else "-"
    start = time.time() + 3.0  # both sandboxes are up by then
    here = os.path.abspath(__file__)
    sockets = tempfile.mkdtemp(prefix="ohseven-covert-")
    common = [sys.executable, here, "--role"]
    roles = {
        "sender": [*common, "sender", channel, str(slot), str(start), "".join(map(str, bits))],
        "receiver": [*common, "receiver", channel, str(slot), str(start), str(len(bits))],
    }
    for command in roles.values():
        command.append(target)
    bots = []
    for role, command in roles.items():
        socket_dir = os.path.join(sockets, role)
        os.mkdir(socket_dir)
        bots.append(
            BotProcess(
                command,
                name=role,
                bot_dir=None,
                socket_dir=socket_dir,
                # one malloc arena, small stacks: 40 threads fit in the address space limit
                env={"MALLOC_ARENA_MAX": "1"},
                config=SandboxConfig(),
            )
        )
    try:
        for bot in bots:
            bot.start()
        deadline = start + len(bits) * slot + 10
        for bot in bots:
            bot.wait(max(1.0, deadline - time.time()))
        log = bots[1].log()
    finally:
        for bot in bots:
            bot.kill()
    if "BLOCKED " in log:
        return None
    values: dict[int, float] = {}
    for line in log.splitlines():
        if line.startswith("SLOT "):
            _, index, value = line.split()
            values[int(index)] = float(value)
    if len(values) != len(bits):
        raise RuntimeError(f"{channel}: the receiver reported {len(values)} of {len(bits)}:\n{log}")
    if len(set(values.values())) == 1:  # the figure never moved: it carries nothing
        return 1 / slot, math.nan, 0.0
    ones = sorted(values[i] for i, b in enumerate(PREAMBLE) if b)
    zeros = sorted(values[i] for i, b in enumerate(PREAMBLE) if not b)
    # between the medians: one slot the machine stalled moves no threshold
    high, low = ones[len(ones) // 2], zeros[len(zeros) // 2]
    threshold = (high + low) / 2
    sign = 1 if high > low else -1
    decoded = [int(sign * (values[len(PREAMBLE) + i] - threshold) > 0) for i in range(len(payload))]
    errors = sum(a != b for a, b in zip(decoded, payload, strict=True)) / len(payload)
    rate = 1 / slot
    return rate, errors, rate * (1 - _entropy(errors))


HERE = os.path.dirname(os.path.abspath(__file__))
COLLUDER = os.path.join(HERE, os.pardir, "tests", "bots", "colluder.py")
RANDOM_BOT = os.path.join(HERE, os.pardir, "example_bots", "random_bot.py")


def at_table(slot_ms: int, payload: list[int], games: int) -> dict:
    """The ``table`` channel: two colluders at one real table (with this interpreter's
    referee). Returns the slots the receiver saw, their errors, the seconds of play and how
    long the two bots ran at once."""
    from ohseven.core.rules import Rules
    from ohseven.referee.play.match import play_match
    from ohseven.referee.records import BotSpec, MatchSpec, TimeControl
    from ohseven.referee.sandbox.settings import Limits, SandboxConfig

    slot, start, bits = slot_ms / 1000, time.time(), "".join(map(str, payload))
    colluder = (sys.executable, os.path.abspath(COLLUDER))
    spec = MatchSpec(
        match_id="covert",
        rules=Rules.make("oh-seven"),
        bots=(
            BotSpec("send", (*colluder, "send", str(slot), str(start), bits)),
            BotSpec("receive", (*colluder, "receive", str(slot), str(start))),
            BotSpec("random2", (sys.executable, os.path.abspath(RANDOM_BOT))),
            BotSpec("random3", (sys.executable, os.path.abspath(RANDOM_BOT))),
        ),
        seatings=((0, 1, 2, 3),) * games,
        seeds=tuple(range(1, games + 1)),
        time_control=TimeControl(move_seconds=1.0, bank_seconds=5.0),
    )
    # the default settings; only more of the bots' output is kept (their measurements)
    result = play_match(spec, sandbox=SandboxConfig(limits=Limits(log_bytes=4 << 20)))
    faults = [fault for record in result.games for fault in record.faults]
    if faults:
        raise RuntimeError(f"table: faults in the match: {faults[:3]}")
    logs = result.logs
    values = {
        int(index): float(rate)
        for _, index, rate in (
            line.split() for line in logs["receive"].splitlines() if line.startswith("SLOT ")
        )
    }
    runs = {
        name: [
            (float(a), float(b))
            for _, a, b in (line.split() for line in logs[name].splitlines() if line[:4] == "RUN ")
        ]
        for name in ("send", "receive")
    }
    both = sum(max(0.0, min(b, d) - max(a, c)) for a, b in runs["send"] for c, d in runs["receive"])
    seconds = sum(record.seconds for record in result.games)
    ones = sorted(v for i, v in values.items() if payload[i % len(payload)])
    zeros = sorted(v for i, v in values.items() if not payload[i % len(payload)])
    errors = 0
    if ones and zeros:  # fewer loops when the sender burns beside the receiver: a one
        threshold = (ones[len(ones) // 2] + zeros[len(zeros) // 2]) / 2
        sign = 1 if ones[len(ones) // 2] > zeros[len(zeros) // 2] else -1
        errors = sum(
            int(sign * (v - threshold) > 0) != payload[i % len(payload)] for i, v in values.items()
        )
    else:
        errors = len(values) // 2  # one kind of bit only: the receiver can but guess
    return {"slots": len(values), "errors": errors, "seconds": seconds, "overlap": both}


def at_table_in(code: str, slot_ms: int, payload: list[int], games: int) -> dict:
    """:func:`at_table` with ``code``'s referee (its own interpreter and install)."""
    python = os.path.join(code, ".venv", "bin", "python")
    if not os.access(python, os.X_OK):
        raise SystemExit(f"--code {code}: no {python}")
    out = subprocess.run(
        [python, os.path.abspath(__file__), "--table-child", str(slot_ms), json.dumps(payload)]
        + [str(games)],
        capture_output=True,
        text=True,
        check=False,
        cwd=code,
    )
    if out.returncode != 0:
        raise RuntimeError(f"--code {code}: the match failed:\n{out.stderr[-4000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _table_row(label: str, found: dict) -> str:
    seen, seconds = found["slots"], max(found["seconds"], 1e-9)
    error = found["errors"] / seen if seen else 0.5
    rate = seen / seconds
    capacity = rate * (1 - _entropy(error))
    return (
        f"{label:<16} {rate:>7.1f} {error:>7.1%} {capacity:>16.2f}   "
        f"overlap {found['overlap'] * 1000:.1f} ms in {seconds:.1f} s of play"
    )


def _evicted(pages: int) -> str:
    """The largest file under /usr/share (data that nothing here reads; a large program under
    /usr/lib may be running), its pages evicted from the page cache (the attacker's best case:
    every page it uses starts uncached)."""
    biggest, size = "", 0
    for top, _, names in os.walk("/usr/share"):
        for name in names:
            path = os.path.join(top, name)
            with contextlib.suppress(OSError):
                info = os.lstat(path)
                if stat.S_ISREG(info.st_mode) and info.st_size > size:
                    biggest, size = path, info.st_size
    if size < pages * 64 * PAGE:
        raise RuntimeError(f"no file under /usr/share of {pages * 64 * PAGE} bytes")
    fd = os.open(biggest, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return biggest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bits", type=int, default=64, help="payload bits per run (default 64)")
    parser.add_argument("--channels", default=",".join(DEFAULT_SLOTS))
    parser.add_argument("--slots-ms", default=None, help="slot lengths (default: per channel)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--games", type=int, default=2, help="games per match (table)")
    parser.add_argument(
        "--code", action="append", default=[], help="another checkout measured beside (table)"
    )
    parser.add_argument("--role", nargs=6, help=argparse.SUPPRESS)
    parser.add_argument("--table-child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.table_child:
        slot_ms, payload, games = args.table_child
        print(json.dumps(at_table(int(slot_ms), json.loads(payload), int(games))))
        return 0
    if args.role:
        role, channel, slot, start, extra, target = args.role
        if role == "sender":
            _sender(channel, float(slot), float(start), extra, target)
        else:
            _receiver(channel, float(slot), float(start), int(extra), target)
        return 0
    rng = random.Random(args.seed)
    with open("/proc/loadavg") as handle:
        print(f"load average at the start: {handle.read().split()[0]} on {os.cpu_count()} cores")
    print(f"{'channel':<8} {'slot ms':>7} {'bits/s':>7} {'errors':>7} {'capacity bits/s':>16}")
    for channel in args.channels.split(","):
        slots = DEFAULT_SLOTS[channel]
        if args.slots_ms:
            slots = tuple(int(x) for x in args.slots_ms.split(","))
        for slot_ms in slots:
            payload = [rng.randrange(2) for _ in range(args.bits)]
            if channel == "table":
                try:
                    found = at_table(slot_ms, payload, args.games)
                    print(_table_row(f"table {slot_ms:>10}", found))
                    for code in args.code:
                        found = at_table_in(code, slot_ms, payload, args.games)
                        name = os.path.basename(os.path.normpath(code))
                        print(_table_row(f"  {name} {slot_ms:>5}", found))
                except RuntimeError as error:
                    print(f"{channel:<8} {slot_ms:>7}  failed: {str(error).splitlines()[0]}")
                sys.stdout.flush()
                continue
            try:
                found = measure(channel, slot_ms, payload)
            except RuntimeError as error:  # a receiver the loaded machine held back
                print(f"{channel:<8} {slot_ms:>7}  failed: {str(error).splitlines()[0]}")
                continue
            if found is None:
                print(f"{channel:<8} {slot_ms:>7}  blocked: the sandbox hides it")
                continue
            rate, errors, capacity = found
            if math.isnan(errors):
                print(f"{channel:<8} {slot_ms:>7}  static: the figure never moves (0 bits)")
                continue
            print(f"{channel:<8} {slot_ms:>7} {rate:>7.0f} {errors:>7.1%} {capacity:>16.1f}")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
