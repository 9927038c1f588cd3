"""``ohseven-referee play``'s arguments (referee.cli.play): a bad one is one clear line and exit
status 2, never a traceback, before any bot starts."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from ohseven.referee.cli.play import ListenError, parse_listen

RANDOM_BOT = str(Path(__file__).resolve().parent.parent / "example_bots" / "random_bot.py")


class TestListen:
    @pytest.mark.parametrize(
        ("text", "address"),
        [("127.0.0.1:0", ("127.0.0.1", 0)), ("localhost:8000", ("localhost", 8000)),
         ("[::1]:9000", ("::1", 9000))],
    )  # fmt: skip
    def test_host_and_port(self, text, address):
        assert parse_listen(text) == address

    @pytest.mark.parametrize("text", ["8000", "host:", ":80", "host:http", "h:70000", ""])
    def test_anything_else_is_refused(self, text):
        with pytest.raises(ListenError, match="expected HOST:PORT"):
            parse_listen(text)


@pytest.mark.slow  # a real command (it checks the sandbox before refusing)
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seat", "3", RANDOM_BOT, RANDOM_BOT], "--seat 3: a table of 3 has seats 0 to 2"),
        (["--name", "random", RANDOM_BOT], "--name 'random': choose a printable name"),
        (["--game", "oh-hell", RANDOM_BOT], "oh-hell is played by 3 to 7 players, not 2"),
        (["--rule", "max_hand=x", "--game", "oh-hell", RANDOM_BOT, RANDOM_BOT],
         "max_hand='x': expected an integer from 0 to 15"),
        (["--games", "0", RANDOM_BOT], "--games must be at least 1, not 0"),
        (["--web", "--listen", "nowhere", RANDOM_BOT], "--listen 'nowhere': expected HOST:PORT"),
        (["no_such_bot.py"], "no_such_bot.py"),
    ],
)  # fmt: skip
def test_a_bad_argument_is_one_clear_line(args, message):
    out = subprocess.run(
        [sys.executable, "-m", "ohseven.referee.cli", "play", *args],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert out.returncode == 2, out.stdout + out.stderr
    assert message in out.stderr
    assert "Traceback" not in out.stderr and "Starting" not in out.stdout


@pytest.mark.slow  # a real command
def test_a_taken_address_is_said_before_any_bot_starts():
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = taken.getsockname()[1]
        out = subprocess.run(
            [sys.executable, "-m", "ohseven.referee.cli", "play", "--web", "--listen",
             f"127.0.0.1:{port}", RANDOM_BOT, RANDOM_BOT],
            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    finally:
        taken.close()
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"--listen 127.0.0.1:{port}: Address already in use" in out.stderr
    assert "Starting" not in out.stdout
