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

``--table``: the same CPU contention channel where it matters, between two colluding bots at
one real table, played by the real referee (``play_match``, the default bwrap sandbox): the
sender spends each of its passes and bids busy in two processes for a one (and keeps them busy
for the same time after it answers, in case the referee lets it run at rest), idle for
a zero; the receiver counts loops for the same time in each of its passes and bids. Measured
with ``ponder`` off (the default: the referee freezes a bot that owes no decision and asks
simultaneous decisions one seat at a time) and on (a trusted opt-in: the bots of a pass or a
bid compute at once, as every bot did before). Bits per second there are per second of play.

``--table-cache``: the page cache where it matters, between two colluding bots at one real
table (the default bwrap sandbox, ``ponder`` off: they never run at once, the cache keeps what
each did). At each of its decisions the sender signals the next ``--per-decision`` bits, and
at each of its own the receiver reads the bits of the sender's decision before, by timing its
first read (or lookup) of each bit's page (or name). Variants, each before and after its
defence in the same run:

- ``read``: the sender reads page ``i`` of a large system file for a one (its pages dropped
  first: the attacker's best case); the receiver times its own first read of the page. After:
  the file is loaded by the referee and held in memory (``mlock``: on a machine that pages out
  idle memory on its own, as this development VM does, merely warmed pages do not stay; see
  ``benchmarks/pagecache.py``), so a read changes nothing;
- ``evict``: the file is warmed; the sender drops page ``i`` for a one
  (``posix_fadvise(DONTNEED)``); the receiver times its read. Before: the seccomp filter without
  the cache advice refusals; after: the filter of this tree;
- ``dentry``: the sender looks up a name that does not exist in a system folder for a one
  (the kernel remembers the miss); the receiver times its own lookup of the name. No defence:
  measured once.

``--tables``: CPU contention between bots of two different tables played at once (two
matches, as two workers would play them, each a colluder against a random bot, ponder off):
each colluder takes most of its time for each decision, the sender busy in two processes in a
clock slot for a one, the receiver counting loops; a slot the receiver did not run in is a
guess. Each row is followed by the same channel between two sandboxed bots running at once
outside any table (``cpu`` above), measured in the same run.

Figures are raw bits per second (one bit per slot), the error rate, and the capacity of a
binary symmetric channel with that error rate (``bits/s * (1 - H(error))``): what an attacker
with coding could carry; ``static`` when the receiver's figure never moved (the sandbox shows
a fixed value: then the error rate would only be the share of ones in the payload). Other
work on the machine is noise for every channel.

    python benchmarks/covert.py [--bits N] [--channels cpu,threads,files,memory,sysinfo,...]
                                [--slots-ms 10,25,50,100] [--seed K]
    python benchmarks/covert.py --table [--bits N] [--seed K]
    python benchmarks/covert.py --table-cache [--variants read,evict,dentry]
                                [--per-decision N] [--bits N] [--seed K]
    python benchmarks/covert.py --tables [--slots-ms 50] [--bits N] [--seed K]
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import random
import stat
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
ROLES = ("sender", "receiver")


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


def _table_bot(role: str, bits: str, slot: float) -> None:
    """A colluding bot at a real table (raw protocol, first legal move): see ``--table``."""
    import msgpack
    import zmq

    sock = zmq.Context().socket(zmq.DEALER)
    sock.connect(os.environ["OHSEVEN_ENDPOINT"])
    sock.send(
        msgpack.packb({"type": "hello", "protocol": 1, "secret": os.environ["OHSEVEN_SECRET"]})
    )
    sock.recv()
    index = 0
    while True:
        message = msgpack.unpackb(sock.recv())
        if message["type"] == "shutdown":
            return
        if message["type"] != "request":
            continue
        legal = message["legal"]
        move = legal[: message["count"]] if message["kind"] == "pass" else legal[0]
        if message["kind"] in ("pass", "bid") and index < len(bits):
            until = time.time() + slot
            if role == "receiver":
                loops = 0
                while time.time() < until:
                    loops += 1
                os.write(1, f"SLOT {index} {-loops}\n".encode())
            elif bits[index] == "1":
                if os.fork() == 0:  # busy on until a slot after the answer
                    while time.time() < until + slot:
                        pass
                    os._exit(0)
                while time.time() < until:
                    pass
            else:
                time.sleep(slot)
            index += 1
        sock.send(msgpack.packb({"type": "move", "id": message["id"], "move": move}))
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass


def measure_table(
    payload: list[int], ponder: bool, slot_ms: int = 20
) -> tuple[float, float, float]:
    """(bits/s of play, error rate, capacity bits/s) of CPU contention between two bots at one
    real table (``--table``)."""
    bits = "".join(map(str, PREAMBLE + payload))
    return _play_pair(
        lambda role: ("--table-bot", role, bits, str(slot_ms)), bits, payload, ponder=ponder
    )


def _slots(log: str) -> dict[int, float]:
    """The receiver's figure of each slot (bit) it reported."""
    return {
        int(index): float(value)
        for line in log.splitlines()
        if line.startswith("SLOT ")
        for index, value in [line.split()[1:]]
    }


def _cache_bot(role: str, variant: str, bits: str, per: int, target: str) -> None:
    """A colluding bot at a real table for ``--table-cache`` (raw protocol, first legal move)."""
    import msgpack
    import zmq

    sock = zmq.Context().socket(zmq.DEALER)
    sock.connect(os.environ["OHSEVEN_ENDPOINT"])
    sock.send(
        msgpack.packb({"type": "hello", "protocol": 1, "secret": os.environ["OHSEVEN_SECRET"]})
    )
    sock.recv()
    handle = open(target, "rb") if variant != "dentry" else None  # noqa: SIM115
    decision = 0
    while True:
        message = msgpack.unpackb(sock.recv())
        if message["type"] == "shutdown":
            return
        if message["type"] != "request":
            continue
        legal = message["legal"]
        move = legal[: message["count"]] if message["kind"] == "pass" else legal[0]
        chunk = decision if role == "sender" else decision - 1
        for index in range(max(chunk, 0) * per, min((chunk + 1) * per, len(bits))):
            if chunk < 0:
                break
            if role == "sender" and bits[index] == "1":
                _cache_send(variant, handle, index, target)
            elif role == "receiver":
                value = _cache_time(variant, handle, index, target)
                os.write(1, f"SLOT {index} {value}\n".encode())
        decision += 1
        sock.send(msgpack.packb({"type": "move", "id": message["id"], "move": move}))


def _cache_send(variant: str, handle, index: int, target: str) -> None:  # type: ignore[no-untyped-def]
    if variant == "read":
        os.pread(handle.fileno(), 1, index * 64 * PAGE)
    elif variant == "evict":
        with contextlib.suppress(OSError):
            # the bit's whole stride: a large folio is dropped whole or not at all
            os.posix_fadvise(handle.fileno(), index * 64 * PAGE, 64 * PAGE, os.POSIX_FADV_DONTNEED)
    else:
        with contextlib.suppress(OSError):
            os.stat(f"{target}-{index}")


def _cache_time(variant: str, handle, index: int, target: str) -> float:  # type: ignore[no-untyped-def]
    """Minus how long the first read (lookup) of the bit's page (name) took: higher, a one
    for ``read`` (cached by the sender), a zero for ``evict``; the sign is the decoder's."""
    began = time.perf_counter()
    if variant == "dentry":
        with contextlib.suppress(OSError):
            os.stat(f"{target}-{index}")
    else:
        os.pread(handle.fileno(), 1, index * 64 * PAGE)
    return -(time.perf_counter() - began)


@contextlib.contextmanager
def _pinned(path: str):  # type: ignore[no-untyped-def]
    """``path`` loaded by the referee and locked in memory (``mlock`` faults every page in and
    keeps it) while the block runs."""
    import ctypes
    import mmap

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]  # fmt: skip
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    finally:
        os.close(fd)
    if libc.mlock(ctypes.c_void_p(address), ctypes.c_size_t(size)) != 0:
        raise OSError(ctypes.get_errno(), f"mlock {path}")
    try:
        yield
    finally:
        libc.munmap(ctypes.c_void_p(address), ctypes.c_size_t(size))


@contextlib.contextmanager
def _old_filter():  # type: ignore[no-untyped-def]
    """The seccomp filter as it was before it refused the cache advice."""
    from ohseven.referee.sandbox import seccomp

    saved = dict(seccomp.CACHE_ADVICE), dict(seccomp.MADVISE_DENIED)
    seccomp.CACHE_ADVICE.clear()
    seccomp.MADVISE_DENIED.clear()
    try:
        yield
    finally:
        seccomp.CACHE_ADVICE.update(saved[0])
        seccomp.MADVISE_DENIED.update(saved[1])


def measure_table_cache(
    payload: list[int], variant: str, defended: bool, per: int
) -> tuple[float, float, float]:
    """(bits/s of play, error rate, capacity bits/s) of the page cache (or the names cache)
    between two bots at one real table (``--table-cache``)."""
    bits = "".join(map(str, PREAMBLE + payload))
    if variant == "dentry":
        target = os.path.join("/usr/share", f"ohseven-covert-{random.getrandbits(64):x}")
        guard: contextlib.AbstractContextManager = contextlib.nullcontext()
    else:
        target = _evicted(len(bits))
        if variant == "evict":
            _touch(target, len(bits))
            guard = contextlib.nullcontext() if defended else _old_filter()
        else:
            guard = _pinned(target) if defended else contextlib.nullcontext()
    with guard:
        return _play_pair(
            lambda role: ("--cache-bot", role, variant, bits, str(per), target), bits, payload
        )


def _touch(path: str, count: int) -> None:
    """Read the page of each of ``count`` bits (small folios, which a one-page drop drops
    whole: what the receiver would do at its first decision)."""
    with open(path, "rb") as handle:
        for index in range(count):
            os.pread(handle.fileno(), 1, index * 64 * PAGE)


def _play_pair(  # type: ignore[no-untyped-def]
    argv, bits: str, payload: list[int], ponder: bool = False
) -> tuple[float, float, float]:
    """Play the two colluders (``argv(role)``: their arguments to this script) at one real
    table until the receiver reported every bit; decode its figures."""
    from ohseven.core.rules import Rules
    from ohseven.referee.play.match import play_match
    from ohseven.referee.records import BotSpec, MatchSpec, TimeControl
    from ohseven.referee.sandbox.settings import SandboxConfig

    here = os.path.abspath(__file__)
    games = 1
    while True:
        spec = MatchSpec(
            match_id="covert",
            rules=Rules.make("oh-seven"),
            bots=tuple(BotSpec(role, (sys.executable, here, *argv(role))) for role in ROLES),
            seatings=tuple(((0, 1), (1, 0))[g % 2] for g in range(games)),
            seeds=tuple(range(1, games + 1)),
            time_control=TimeControl(move_seconds=1.0, bank_seconds=5.0, start_seconds=10.0),
        )
        began = time.monotonic()
        result = play_match(spec, sandbox=SandboxConfig(mode="bwrap", ponder=ponder))
        seconds = time.monotonic() - began
        values = _slots(result.logs["receiver"])
        if len(values) == len(bits):
            return _decoded(values, payload, len(bits) / seconds)
        games *= 2  # not enough decisions yet for the message


def _tables_bot(role: str, bits: str, slot: float, start: float) -> None:
    """A colluder at its own table for ``--tables``: it keeps each decision for 0.6 s while
    the message lasts, the sender busy in two processes in the slots of its ones (by the
    clock, whenever it runs), the receiver counting loops in the middle of each slot."""
    import msgpack
    import zmq

    end = start + len(bits) * slot
    if role == "sender" and os.fork() == 0:  # the second busy process: frozen with the bot
        _modulate(bits, slot, start, end)
        os._exit(0)
    sock = zmq.Context().socket(zmq.DEALER)
    sock.connect(os.environ["OHSEVEN_ENDPOINT"])
    sock.send(
        msgpack.packb({"type": "hello", "protocol": 1, "secret": os.environ["OHSEVEN_SECRET"]})
    )
    sock.recv()
    while True:
        message = msgpack.unpackb(sock.recv())
        if message["type"] == "shutdown":
            return
        if message["type"] != "request":
            continue
        legal = message["legal"]
        move = legal[: message["count"]] if message["kind"] == "pass" else legal[0]
        until = min(time.time() + 0.6, end)
        if role == "sender":
            _modulate(bits, slot, start, until)
        else:
            _count(slot, start, until, len(bits))
        sock.send(msgpack.packb({"type": "move", "id": message["id"], "move": move}))


def _modulate(bits: str, slot: float, start: float, until: float) -> None:
    while (now := time.time()) < until:
        index = int((now - start) // slot)
        edge = min(start + (index + 1) * slot, until)
        if 0 <= index < len(bits) and bits[index] == "1":
            while time.time() < edge:
                pass
        else:
            time.sleep(max(0.0, edge - time.time()))


def _count(slot: float, start: float, until: float, count: int) -> None:
    """Loops per second in the middle 60% of each slot wholly inside this decision."""
    while (now := time.time()) < until:
        index = int((now - start) // slot)
        begin, stop = start + (index + 0.2) * slot, start + (index + 0.8) * slot
        if index < 0 or now > begin or stop > until:
            time.sleep(max(0.0, min(start + (index + 1) * slot, until) - time.time()))
            continue
        _wait_until(begin)
        loops = 0
        while time.time() < stop:
            loops += 1
        if index < count:
            os.write(1, f"SLOT {index} {-loops / (stop - begin)}\n".encode())
        time.sleep(max(0.0, start + (index + 1) * slot - time.time()))


def _tables_match(role: str, bits: str, slot_ms: str, start: str) -> None:
    """One table of ``--tables`` (a worker): the colluder against a random bot; prints the
    colluder's log."""
    from ohseven.core.rules import Rules
    from ohseven.referee.play.match import play_match
    from ohseven.referee.records import BotSpec, MatchSpec, TimeControl
    from ohseven.referee.sandbox.settings import SandboxConfig

    here = os.path.abspath(__file__)
    other = os.path.join(os.path.dirname(os.path.dirname(here)), "example_bots", "random_bot.py")
    spec = MatchSpec(
        match_id=f"covert-{role}",
        rules=Rules.make("oh-seven"),
        bots=(
            BotSpec(role, (sys.executable, here, "--tables-bot", role, bits, slot_ms, start)),
            BotSpec("random", (sys.executable, other)),
        ),
        seatings=((0, 1), (1, 0)),
        seeds=(1, 2),
        time_control=TimeControl(move_seconds=1.0, bank_seconds=10.0, start_seconds=10.0),
    )
    result = play_match(spec, sandbox=SandboxConfig(mode="bwrap"))
    sys.stdout.write(result.logs[role])


def measure_tables(
    payload: list[int], slot_ms: int, seed: int
) -> tuple[float, float, float, float]:
    """(bits/s, error rate, capacity bits/s, share of slots the receiver saw) of CPU
    contention between bots of two tables played at once (``--tables``)."""
    import subprocess

    bits = "".join(map(str, PREAMBLE + payload))
    start = str(time.time() + 8.0)  # both tables' bots are up by then
    here = os.path.abspath(__file__)
    tables = [
        subprocess.Popen(
            [sys.executable, here, "--tables-match", role, bits, str(slot_ms), start],
            stdout=subprocess.PIPE,
            text=True,
        )
        for role in ROLES
    ]
    logs = [table.communicate(timeout=600)[0] for table in tables]
    values = _slots(logs[1])
    seen = len(values) / len(bits)
    guess = random.Random(seed)
    observed = list(values.values()) or [0.0]
    for index in range(len(bits)):  # a slot the receiver did not run in: a guess
        values.setdefault(index, guess.choice(observed))
    rate, errors, capacity = _decoded(values, payload, 1000 / slot_ms)
    return rate, errors, capacity, seen


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
    return _decoded(values, payload, 1 / slot)


def _decoded(
    values: dict[int, float], payload: list[int], rate: float
) -> tuple[float, float, float]:
    """(bits/s, error rate, capacity bits/s) of the receiver's ``values`` per slot (preamble
    first) decoded against ``payload``; the error rate is NaN when the figure never moved."""
    if len(set(values.values())) == 1:  # the figure never moved: it carries nothing
        return rate, math.nan, 0.0
    ones = sorted(values[i] for i, b in enumerate(PREAMBLE) if b)
    zeros = sorted(values[i] for i, b in enumerate(PREAMBLE) if not b)
    # between the medians: one slot the machine stalled moves no threshold
    high, low = ones[len(ones) // 2], zeros[len(zeros) // 2]
    threshold = (high + low) / 2
    sign = 1 if high > low else -1
    decoded = [int(sign * (values[len(PREAMBLE) + i] - threshold) > 0) for i in range(len(payload))]
    errors = sum(a != b for a, b in zip(decoded, payload, strict=True)) / len(payload)
    return rate, errors, rate * (1 - _entropy(errors))


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
    parser.add_argument(
        "--table", action="store_true", help="CPU contention between two bots at a real table"
    )
    parser.add_argument(
        "--table-cache",
        action="store_true",
        help="the page cache between two bots at a real table, before and after each defence",
    )
    parser.add_argument("--variants", default="read,evict,dentry", help="for --table-cache")
    parser.add_argument(
        "--per-decision", type=int, default=16, help="bits per decision for --table-cache"
    )
    parser.add_argument(
        "--tables",
        action="store_true",
        help="CPU contention between bots of two tables played at once (two workers)",
    )
    parser.add_argument("--role", nargs=6, help=argparse.SUPPRESS)
    parser.add_argument("--tables-bot", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--tables-match", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--cache-bot", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--table-bot", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.table_bot:
        role, bits, slot_ms = args.table_bot
        _table_bot(role, bits, int(slot_ms) / 1000)
        return 0
    if args.tables_bot:
        role, bits, slot_ms, start = args.tables_bot
        _tables_bot(role, bits, int(slot_ms) / 1000, float(start))
        return 0
    if args.tables_match:
        _tables_match(*args.tables_match)
        return 0
    if args.cache_bot:
        role, variant, bits, per, target = args.cache_bot
        _cache_bot(role, variant, bits, int(per), target)
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
    if args.tables:
        print(f"{'two tables':<12} {'bits/s':>7} {'errors':>7} {'capacity bits/s':>16} {'seen':>6}")
        for slot_ms in [int(x) for x in (args.slots_ms or "50,100").split(",")]:
            payload = [rng.randrange(2) for _ in range(args.bits)]
            rate, errors, capacity, seen = measure_tables(payload, slot_ms, args.seed)
            label = f"{slot_ms} ms slots"
            print(f"{label:<12} {rate:>7.1f} {errors:>7.1%} {capacity:>16.2f} {seen:>6.0%}")
            # the same run's reference: two sandboxed bots at once, outside any table
            found = measure("cpu", slot_ms, payload)
            if found is not None:
                rate, errors, capacity = found
                print(f"{'  no table':<12} {rate:>7.1f} {errors:>7.1%} {capacity:>16.2f}")
            sys.stdout.flush()
        return 0
    if args.table_cache:
        print(f"{'at a table':<26} {'bits/s':>7} {'errors':>7} {'capacity bits/s':>16}")
        for variant in args.variants.split(","):
            for defended in (False, True) if variant != "dentry" else (False,):
                payload = [rng.randrange(2) for _ in range(args.bits)]
                rate, errors, capacity = measure_table_cache(
                    payload, variant, defended, args.per_decision
                )
                label = f"{variant}, {'after' if defended else 'before'}"
                if variant == "dentry":
                    label = "dentry (no defence)"
                print(f"{label:<26} {rate:>7.1f} {errors:>7.1%} {capacity:>16.2f}", flush=True)
        return 0
    if args.table:
        print(f"{'at a table':<26} {'bits/s':>7} {'errors':>7} {'capacity bits/s':>16}")
        for ponder in (False, True):
            payload = [rng.randrange(2) for _ in range(args.bits)]
            rate, errors, capacity = measure_table(payload, ponder)
            label = "ponder on (trusted only)" if ponder else "ponder off (the default)"
            print(f"{label:<26} {rate:>7.1f} {errors:>7.1%} {capacity:>16.2f}")
        return 0
    print(f"{'channel':<8} {'slot ms':>7} {'bits/s':>7} {'errors':>7} {'capacity bits/s':>16}")
    for channel in args.channels.split(","):
        slots = DEFAULT_SLOTS[channel]
        if args.slots_ms:
            slots = tuple(int(x) for x in args.slots_ms.split(","))
        for slot_ms in slots:
            payload = [rng.randrange(2) for _ in range(args.bits)]
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
