"""``ohseven-referee`` itself: its commands, and how it ends when its reader goes away."""

from __future__ import annotations

import subprocess
import sys

import pytest
from ohseven.referee.cli import main as cli

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')


class TestCommands:
    def test_every_command_is_listed_with_its_module(self):
        """The commands are imported statically; each has a configure and a run."""
        commands = cli.commands()
        assert set(commands) >= {"simulate", "match", "check-bot", "tourney", "publish", "view"}
        for module in commands.values():
            assert callable(module.configure) and callable(module.run)

    def test_each_summary_is_the_whole_first_paragraph(self):
        """A summary whose sentence wraps a line is listed whole in ``--help``, not cut."""
        parser = cli.build_parser()
        summaries = {
            action.dest: action.help
            for group in parser._subparsers._group_actions  # type: ignore[union-attr]
            for action in group._choices_actions  # type: ignore[attr-defined]
        }
        for command, module in cli.commands().items():
            paragraph = " ".join((module.__doc__ or "").strip().split("\n\n")[0].split())
            assert summaries[command] == paragraph
            assert summaries[command].endswith(".")


class TestBrokenPipe:
    def test_a_closed_reader_ends_the_command_quietly(self):
        """Output into a pipe nobody reads any more (``| head``) ends the command with status
        141 and no traceback."""
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ohseven.referee.cli",
                "simulate",
                "--games",
                "3",
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()
        err = process.stderr.read().decode()
        assert process.wait(timeout=60) == 141, err
        assert "Traceback" not in err and "BrokenPipe" not in err, err
