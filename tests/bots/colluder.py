"""One of two colluding bots at one table, trying to talk through the CPU they share.

Written against PROTOCOL.md (no SDK). ``colluder.py ROLE SLOT_S START [BITS]``; it plays the
first legal move (the first ``count`` cards of a pass) after thinking ``THINK_MS``
(environment, default 30 ms) in each play, and ``SET_THINK_MS`` (default 300 ms) in each pass
and bid (Oh-Seven's simultaneous decisions, where both colluders are asked at the same time
unless the referee asks one at a time). Time is cut into slots of ``SLOT_S`` seconds
from ``START`` (the machine's clock, which both bots read); slot ``i`` carries bit
``BITS[i % len(BITS)]``.

- ``send``: two busy processes burn CPU in each slot of a one, whenever they can run (they
  sleep through the slots of a zero); each logs the stretches of wall time it ran.
- ``receive``: a thread counts loops whenever it can run. While the bot owes a decision (it
  cannot be frozen then), the loops per second it achieved in each slot are its figure for
  that slot: fewer when the sender burns beside it.

At shutdown it prints ``RUN a b`` for each stretch it ran without a break (by the machine's
clock, ``CLOCK_REALTIME``; between its first request and its last reply: the start-up and the
shutdown are not game time), and the receiver ``SLOT i loops_per_second``.
"""

import os
import sys
import threading
import time

from wire_loop import first_legal, play

ROLE, SLOT, START = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
BITS = sys.argv[4] if len(sys.argv) > 4 else "1"
THINK = float(os.environ.get("THINK_MS", "30")) / 1000
SET_THINK = float(os.environ.get("SET_THINK_MS", "300")) / 1000
GAP = 0.0003  # a longer break between two clock reads: the loop did not run meanwhile
RUNS = "/tmp/runs"  # the scratch: the busy processes' stretches, one file each


def slot_of(moment):
    return int((moment - START) // SLOT)


def burn(path):
    """Burn in the slots of a one; append each stretch that ran unbroken to ``path``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    began = last = time.time()
    while True:
        now = time.time()
        if now - last > GAP:
            if last > began:
                os.write(fd, f"{began:.6f} {last:.6f}\n".encode())
            began = now
        last = now
        index = slot_of(now)
        if BITS[index % len(BITS)] == "0":
            if last > began:
                os.write(fd, f"{began:.6f} {last:.6f}\n".encode())
            time.sleep(max(0.0, START + (index + 1) * SLOT - time.time()))
            began = last = time.time()


class Counter:
    """The receiver's loop: its unbroken stretches, and per slot the loops and the seconds it
    counted while the bot owed a decision."""

    def __init__(self):
        self.owing = False
        self.runs = []
        self.loops = {}
        self.seconds = {}

    def run(self):
        began = last = time.time()
        while True:
            chunk_start, loops, owing = last, 0, self.owing
            while loops < 2000:
                now = time.time()
                if now - last > GAP:
                    break
                last = now
                loops += 1
            if now - last > GAP:  # a break: the stretch ends, this chunk counts as it stands
                if last > began:
                    self.runs.append((began, last))
                began = now
            if owing and self.owing and last > chunk_start:
                index = slot_of(chunk_start)
                # the whole chunk's wall time, breaks included: the sender takes the CPU
                self.loops[index] = self.loops.get(index, 0) + loops
                self.seconds[index] = self.seconds.get(index, 0.0) + (now - chunk_start)
            last = now


def main():
    counter = Counter()
    if ROLE == "send":
        os.makedirs(RUNS, exist_ok=True)
        for number in range(2):
            if os.fork() == 0:
                try:
                    burn(os.path.join(RUNS, str(number)))
                finally:
                    os._exit(0)
    else:
        threading.Thread(target=counter.run, daemon=True).start()
    first = last = None

    def decide(message, _number):
        nonlocal first, last
        counter.owing = True
        if first is None:
            first = time.time()
        move = first_legal(message)
        time.sleep(SET_THINK if message["kind"] in ("pass", "bid") else THINK)
        counter.owing = False
        last = time.time()
        return move

    play(decide)
    report(counter, first, last)
    return 0


def report(counter, first, last):
    runs = list(counter.runs)
    if ROLE == "send" and os.path.isdir(RUNS):
        for name in os.listdir(RUNS):
            with open(os.path.join(RUNS, name)) as handle:
                runs += [tuple(map(float, line.split())) for line in handle if line.strip()]
    lines = []
    if first is not None and last is not None:
        for began, ended in sorted(runs):
            began, ended = max(began, first), min(ended, last)
            if ended > began:
                lines.append(f"RUN {began:.6f} {ended:.6f}")
    for index in sorted(counter.loops):
        if counter.seconds[index] > 0:
            lines.append(f"SLOT {index} {counter.loops[index] / counter.seconds[index]:.0f}")
    os.write(1, ("\n".join(lines) + "\n").encode())


if __name__ == "__main__":
    sys.exit(main())
