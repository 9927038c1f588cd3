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


class TestOutputTailErrors:
    #: Node's output when a module is missing, with a long stack (its first lines say why)
    NODE = (
        "node:internal/modules/cjs/loader:1080\n  throw err;\n  ^\n\n"
        "Error: Cannot find module 'zeromq'\nRequire stack:\n- bots/bot.js\n"
        + "".join(f"    at frame{i} (node:internal/modules/cjs/loader:{i})\n" for i in range(40))
        + "{\n  code: 'MODULE_NOT_FOUND'\n}\n\nNode.js v20.20.2\n"
    )

    def test_the_first_error_line_is_kept_above_the_tail(self):
        tail = output_tail(self.NODE)
        first, ellipsis, *rest = tail.splitlines()
        assert first == "Error: Cannot find module 'zeromq'" and ellipsis == "…"
        assert rest[-1] == "Node.js v20.20.2" and len(rest) == 20

    def test_a_short_output_is_whole_and_a_long_one_without_error_marked(self):
        assert output_tail("hello\nworld\n") == "hello\nworld"
        tail = output_tail("".join(f"line {i}\n" for i in range(50)))
        assert tail.startswith("…line 30") and tail.endswith("line 49")
