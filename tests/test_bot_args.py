"""``bot_args``: how BOT arguments become bots, and how much of a bot's output a fault shows."""

from __future__ import annotations

import os
import sys

from ohseven.referee.cli.bot_args import bot_specs, output_tail

BOT = os.path.join(os.path.dirname(__file__), "bots", "match_bot.py")


class TestBotSpecs:
    def test_names(self):
        """Bots are named by file stem without _bot, duplicates numbered."""
        specs = bot_specs([BOT, BOT, f"{sys.executable} {BOT} crash"])
        assert [s.name for s in specs] == ["match", "match#2", "match#3"]
        assert specs[0].command == (sys.executable, os.path.abspath(BOT))
        assert specs[2].command == (sys.executable, BOT, "crash")

    def test_a_script_with_arguments_runs_with_our_python(self):
        """A quoted `.py` bot with arguments runs with the referee's Python, not its shebang."""
        (spec,) = bot_specs([f"{BOT} crash 5"])
        assert spec.command == (sys.executable, os.path.abspath(BOT), "crash", "5")


class TestOutputTail:
    def test_the_last_lines_are_kept_and_the_cut_is_marked(self):
        """At most the last lines and characters of the output, marked when cut."""
        text = "\n".join(f"line {i}" for i in range(100))
        tail = output_tail(text, lines=3)
        assert tail == "…line 97\nline 98\nline 99"
        assert output_tail("short\n") == "short"
        assert len(output_tail("x" * 5000, chars=100)) == 101
