"""The server's league (``server.league``) and unrated queue (``server.unrated``) as they speak
to the organiser's terminal: a real ``serve`` whose real stderr is read. Names and error texts
that carry control characters or line breaks are printed on one line, escaped
(``terminal.printable``): nothing they hold can forge a line of the server's log, retitle the
window or clear the screen."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from ohseven.referee.server.db import ServerDB
from test_server import free_port, wait_for, write_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # real processes

#: a line the server writes itself when it stops: a message must not be able to forge it
FORGED = "stopped: every finished game and upload is kept"


def test_names_and_errors_reach_the_terminal_on_one_escaped_line(tmp_path: Path) -> None:
    """league.py printed the league's name and each failed match's reason, unrated.py each
    failed request's error (naming the bots it asked for) as they were: the command line's
    guard escapes the control characters, but a line break went through, so a name or an error
    text could write a line of its own into the organiser's log."""
    port = free_port()
    config = write_config(tmp_path, port, games=3)
    config.write_text(
        config.read_text().replace("name: live\n", f'name: "live\\n{FORGED}\\e]0;pwned\\a"\n', 1)
    )
    with ServerDB(tmp_path / "out") as db:  # a request of a bot that left the league since
        db.add_author("ann")
        db.add_unrated("ann", "random", [f"gone\n{FORGED}\x1b[2J", "random-2"], 1)
    log = tmp_path / "serve.log"
    with log.open("w") as handle:
        process = subprocess.Popen(
            [sys.executable, "-m", "ohseven.referee.cli", "serve", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=handle,
        )
    try:
        wait_for(lambda: "the league is complete" in log.read_text(errors="replace"))
        wait_for(lambda: "warning: unrated request 1" in log.read_text(errors="replace"))
    finally:
        process.terminate()
        assert process.wait(timeout=120) == 0, log.read_text(errors="replace")
    text = log.read_text(errors="replace")
    assert "\x1b" not in text and "\x07" not in text
    lines = text.splitlines()
    assert lines.count(FORGED) == 1, text  # the server's own, when it stopped
    complete = next(line for line in lines if "the league is complete" in line)
    assert complete.startswith(f"live\\x0a{FORGED}\\x1b]0;pwned\\x07: the league is complete")
    warning = next(line for line in lines if line.startswith("warning: unrated request 1"))
    assert f"gone\\x0a{FORGED}\\x1b[2J" in warning and "no longer plays" in warning
