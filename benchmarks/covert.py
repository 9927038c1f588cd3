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
  ``/proc/meminfo``.

Figures are raw bits per second (one bit per slot), the error rate, and the capacity of a
binary symmetric channel with that error rate (``bits/s * (1 - H(error))``): what an attacker
with coding could carry. Other work on the machine is noise for every channel.

    python benchmarks/covert.py [--bits N] [--channels cpu,threads,files,memory]
                                [--slots-ms 10,25,50,100] [--seed K]
"""

from __future__ import annotations

import argparse
import math
import os
import random
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
}


# --------------------------------------------------------------------------- inside a sandbox


def _wait_until(moment: float) -> None:
    while True:
        left = moment - time.time()
        if left <= 0:
            return
        time.sleep(min(left, 0.05) if left > 0.002 else 0)


def _sender(channel: str, slot: float, start: float, bits: str) -> None:
    threading.stack_size(1 << 18)
    child = channel == "cpu" and os.fork() == 0  # two busy processes: the machine's 2 cores
    for index, bit in enumerate(bits):
        begin = start + index * slot
        _wait_until(begin)
        end = begin + slot
        if bit == "0":
            continue
        if channel == "cpu":
            while time.time() < end:
                pass
        elif channel == "threads":
            stop = threading.Event()
            threads = [threading.Thread(target=stop.wait) for _ in range(40)]  # < processes
            for thread in threads:
                thread.start()
            _wait_until(end - slot * 0.1)
            stop.set()
            for thread in threads:
                thread.join()
        elif channel == "files":
            handles = [open(os.devnull, "rb") for _ in range(200)]  # noqa: SIM115
            _wait_until(end - slot * 0.1)
            for handle in handles:
                handle.close()
        elif channel == "memory":
            hoard = b"\1" * (192 << 20)
            _wait_until(end - slot * 0.1)
            del hoard
    if child:
        os._exit(0)


def _sample(channel: str) -> float:
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


def _receiver(channel: str, slot: float, start: float, count: int) -> None:
    for index in range(count):
        begin = start + index * slot
        _wait_until(begin + slot * 0.3)
        until = begin + slot * 0.8
        if channel == "cpu":
            loops = 0
            while time.time() < until:
                loops += 1
            value = -loops  # contended: fewer loops
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
    start = time.time() + 3.0  # both sandboxes are up by then
    here = os.path.abspath(__file__)
    sockets = tempfile.mkdtemp(prefix="ohseven-covert-")
    common = [sys.executable, here, "--role"]
    roles = {
        "sender": [*common, "sender", channel, str(slot), str(start), "".join(map(str, bits))],
        "receiver": [*common, "receiver", channel, str(slot), str(start), str(len(bits))],
    }
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
    ones = [values[i] for i, b in enumerate(PREAMBLE) if b]
    zeros = [values[i] for i, b in enumerate(PREAMBLE) if not b]
    threshold = (sum(ones) / len(ones) + sum(zeros) / len(zeros)) / 2
    sign = 1 if sum(ones) > sum(zeros) else -1
    decoded = [int(sign * (values[len(PREAMBLE) + i] - threshold) > 0) for i in range(len(payload))]
    errors = sum(a != b for a, b in zip(decoded, payload, strict=True)) / len(payload)
    rate = 1 / slot
    return rate, errors, rate * (1 - _entropy(errors))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bits", type=int, default=64, help="payload bits per run (default 64)")
    parser.add_argument("--channels", default="cpu,threads,files,memory")
    parser.add_argument("--slots-ms", default=None, help="slot lengths (default: per channel)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--role", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.role:
        role, channel, slot, start, extra = args.role
        if role == "sender":
            _sender(channel, float(slot), float(start), extra)
        else:
            _receiver(channel, float(slot), float(start), int(extra))
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
            found = measure(channel, slot_ms, payload)
            if found is None:
                print(f"{channel:<8} {slot_ms:>7}  blocked: the sandbox hides it")
                continue
            rate, errors, capacity = found
            print(f"{channel:<8} {slot_ms:>7} {rate:>7.0f} {errors:>7.1%} {capacity:>16.1f}")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
