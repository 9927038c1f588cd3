"""The clean stop a signal asks for (``tournament.stop_signals``), in real processes: the stop
is a KeyboardInterrupt to every handler, a second signal cannot cut it short, and a process
that caught it exits with its own code even when it struck inside a string ``exec`` (where a
bare KeyboardInterrupt makes CPython kill the process with SIGINT at exit)."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

STOPPED_INSIDE_EXEC = """
import os, signal, sys
from ohseven.referee.tournament.stop_signals import stop_on

def bare(signum, frame):
    raise KeyboardInterrupt

with stop_on(signal.SIGTERM) as received:
    if sys.argv[1] == "bare":
        signal.signal(signal.SIGTERM, bare)
    try:  # a dataclass made by a late import runs such an exec
        exec("import os, signal; os.kill(os.getpid(), signal.SIGTERM); sum(range(10**7))")
    except KeyboardInterrupt:
        print("caught", received)
"""

SECOND_SIGNAL = """
import os, signal
from ohseven.referee.tournament.stop_signals import stop_on

before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
with stop_on(signal.SIGINT, signal.SIGTERM) as received:
    try:
        os.kill(os.getpid(), signal.SIGINT)
        sum(range(10**7))
    except KeyboardInterrupt:
        os.kill(os.getpid(), signal.SIGTERM)  # ignored while the stop goes on
        os.kill(os.getpid(), signal.SIGINT)
        sum(range(10**7))
        print("stopped cleanly", received)
# restored as they were (a job started in the background by a shell inherits SIGINT ignored)
assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
"""


def run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60
    )


@pytest.mark.slow
def test_a_stop_caught_inside_exec_leaves_the_exit_code_alone() -> None:
    result = run(STOPPED_INSIDE_EXEC, "stop_on")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"caught [{int(signal.SIGTERM)}]"
    # the reason for the subclass: a bare KeyboardInterrupt, caught the same way, kills it
    bare = run(STOPPED_INSIDE_EXEC, "bare")
    assert bare.stdout.strip() == "caught []"
    assert bare.returncode == -signal.SIGINT


@pytest.mark.slow
def test_the_first_signal_stops_and_the_next_are_ignored_until_the_block_ends() -> None:
    result = run(SECOND_SIGNAL)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"stopped cleanly [{int(signal.SIGINT)}]"
