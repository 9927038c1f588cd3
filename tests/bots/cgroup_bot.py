"""A hostile (or measuring) bot for the cgroup tests, written against PROTOCOL.md.

``cgroup_bot.py MODE [ARG]``; every mode plays the first legal move (the first ``count``
cards of a pass) and prints ``RESULT <word> <value>`` lines the tests read from its log:

- ``quick``: answers at once.
- ``work N``: N loop iterations of pure CPU per decision; prints ``RESULT work <ms>`` (the
  wall time of that work) for each decision.
- ``slow MS``: sleeps MS milliseconds per decision (no CPU).
- ``burn N``: answers at once but first starts N processes, each in a session of its own
  (``setsid``: each its own autogroup without cgroups), that burn CPU for ever.
- ``memfd MB N``: N processes (itself and N-1 children) each hold MB in memfd files (8 MB
  each: ``RLIMIT_FSIZE`` bounds one file); it plays once each holds (or was refused) its
  share, or one of them is gone (killed at the limit).
- ``tmpfs MB N``: the same in files of the scratch tmpfs.
- ``oom AT MB``: plays, and on its request number AT forks; both processes map MB of memory
  and touch it; it replies once both have (or the child is gone).
- ``oomchild AT MB``: plays, and on its request number AT forks a child that forks again;
  both map MB of memory and touch it; it replies once the child is gone.
- ``stamp MS``: computes MS milliseconds per decision; prints ``RESULT stamp <kind> <start>
  <end>`` (the wall clock in ns, which every sandbox shares) for each: when it ran.
- ``ponder``: a child process burns CPU for ever; prints ``RESULT idle <cpu> <wall>`` at
  shutdown: the CPU seconds the child used, and the wall seconds that passed, from each of
  the bot's replies to its next request (while it owed no decision).
"""

import contextlib
import mmap
import os
import select
import sys
import threading
import time

from wire_loop import first_legal, play

MODE = sys.argv[1] if len(sys.argv) > 1 else "quick"
ARGS = sys.argv[2:]


def result(word, value=""):
    os.write(1, f"RESULT {word} {value}\n".encode())


def burn():
    while True:
        pass


SHARES = os.pipe()  # a byte from each process that holds (or was refused) its share


def hold(kind, megabytes):
    """Hold ``megabytes`` in a memfd or a scratch file, 1 MB at a time; report, then sleep."""
    chunk = b"x" * (1 << 20)
    fd = -1
    for i in range(megabytes):
        if i % 8 == 0:  # a new file every 8 MB: RLIMIT_FSIZE bounds each one
            if kind == "memfd":
                fd = os.memfd_create("hog")
            else:
                fd = os.open(f"/tmp/hog-{os.getpid()}-{i}", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            os.write(fd, chunk)
        except OSError as error:
            result("refused", f"{i} {error!r}")
            break
    else:
        result("held", megabytes)
    os.write(SHARES[1], b"x")
    time.sleep(3600)


def wait_for_shares(processes):
    """Until every process holds its share (or was refused it), or a child is gone."""
    count, deadline = 0, time.monotonic() + 30
    while count < processes and time.monotonic() < deadline:
        ready, _, _ = select.select([SHARES[0]], [], [], 0.05)
        if ready:
            count += len(os.read(SHARES[0], 64))
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(-1, os.WNOHANG)[0]:
                return


def cpu_of(pid):
    """The CPU seconds process ``pid`` ran (nanosecond resolution)."""
    with open(f"/proc/{pid}/schedstat") as stat:
        return int(stat.read().split()[0]) / 1e9


def spawn(n, target, *args):
    for _ in range(n):
        if os.fork() == 0:
            try:
                os.setsid()
                target(*args)
            finally:
                os._exit(0)


def main() -> int:
    if MODE == "burn":
        spawn(int(ARGS[0]), burn)
    elif MODE in ("memfd", "tmpfs"):
        megabytes, processes = int(ARGS[0]), int(ARGS[1])
        spawn(processes - 1, hold, MODE, megabytes)
        threading.Thread(target=hold, args=(MODE, megabytes), daemon=True).start()
        wait_for_shares(processes)
    elif MODE == "ponder":  # a process, so that the GIL does not delay the main thread
        burner = os.fork()
        if burner == 0:
            burn()
    idle = [0.0, 0.0]  # CPU and wall seconds of the ponder child while the bot owed nothing
    replied = None  # (cpu, wall) at the last reply

    def decide(message, count):
        nonlocal replied
        if replied is not None:
            idle[0] += cpu_of(burner) - replied[0]
            idle[1] += time.monotonic() - replied[1]
        move = first_legal(message)
        if MODE == "work":
            started = time.monotonic()
            total = 0
            for i in range(int(ARGS[0])):
                total += i * i
            result("work", f"{(time.monotonic() - started) * 1000:.3f}")
        elif MODE == "oom" and count == int(ARGS[0]):
            touched, done = os.pipe()
            child = os.fork()
            area = mmap.mmap(-1, int(ARGS[1]) << 20)
            for offset in range(0, len(area), 4096):
                area[offset] = 1
            if child == 0:
                os.write(done, b"x")
                time.sleep(3600)
            os.close(done)
            os.read(touched, 1)  # it replies once the child holds its share too (or is gone)
        elif MODE == "oomchild" and count == int(ARGS[0]):
            child = os.fork()
            if child == 0:
                os.fork()  # two processes, each under the address-space limit
                area = mmap.mmap(-1, int(ARGS[1]) << 20)
                for offset in range(0, len(area), 4096):
                    area[offset] = 1
                time.sleep(1)  # both hold at once
                os._exit(0)
            os.waitpid(child, 0)
        elif MODE == "slow":
            time.sleep(int(ARGS[0]) / 1000)
        elif MODE == "stamp":
            started = time.time_ns()
            while time.time_ns() < started + int(ARGS[0]) * 1_000_000:
                pass
            result("stamp", f"{message['kind']} {started} {time.time_ns()}")
        if MODE == "ponder":
            replied = (cpu_of(burner), time.monotonic())
        return move

    count = play(decide)
    if MODE == "ponder":
        result("idle", f"{idle[0]:.4f} {idle[1]:.4f}")
    result("requests", count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
