"""``terminal``: nothing a bot sends reaches the organiser's terminal raw. The escaping itself,
then every command that prints a bot's text, run as a real command on a real hostile bot in the
real sandbox (``tests/bots/hostile_bot.py terminal``), its bytes read from real pipes."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.referee.terminal import GuardedStream, guarded, markup, printable
from rich.console import Console

HOSTILE = Path(__file__).parent / "bots" / "hostile_bot.py"
RANDOM_BOT = Path(__file__).parent.parent / "example_bots" / "random_bot.py"
#: the bot's file name, hence its name in ``match`` and ``check-bot``: a title and markup
EVIL_NAME = "ev[reverse]il\x1b]0;T\x07\u202e"

# what a terminal would obey: C0 but newline and tab, DEL, C1 (as characters)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def assert_clean(data: bytes) -> None:
    """``data`` (a command's stdout or stderr) holds no byte a terminal takes as a control."""
    text = data.decode("utf-8", errors="replace")  # a raw 0x9b byte is not UTF-8: U+FFFD
    assert b"\x9b" not in data.replace(b"\xc2\x9b", b"")  # raw 8-bit CSI
    found = _CONTROL.search(text)
    assert found is None, f"raw {found.group()!r} at {found.start()}: {text[:4000]}"


def shown_escaped(data: bytes) -> bool:
    """The bot's own sequences are in ``data``, escaped (the command did print its text)."""
    text = data.decode("utf-8", errors="replace")
    return "\\x1b]52;c;cHduZWQ=\\x07" in text and "\\x9b31mC1" in text


class TestPrintable:
    def test_control_characters_are_escaped_visibly(self):
        assert printable("a\x1b]0;t\x07b") == "a\\x1b]0;t\\x07b"
        assert printable("\x9b2J \u202e \ud800") == "\\x9b2J \\u202e \\ud800"
        assert printable("line\n\tnext\r") == "line\n\tnext\\x0d"
        assert printable("one\nline\t", lines=False) == "one\\x0aline\\x09"
        assert printable("é ♠ 7♦ …") == "é ♠ 7♦ …"  # printable text is left alone

    @settings(deadline=None)  # the first example imports rich: no deadline on a loaded machine
    @given(st.text())
    def test_nothing_a_terminal_obeys_is_left(self, text):
        shown = printable(text)
        assert _CONTROL.search(shown) is None
        assert not any(0xD800 <= ord(c) <= 0xDFFF for c in shown)
        assert shown.count("\n") == text.count("\n")
        assert "\n" not in printable(text, lines=False)

    @settings(deadline=None)
    @given(st.text())
    def test_markup_is_shown_as_written(self, text):
        out = io.StringIO()
        Console(file=out, width=10_000, highlight=False).print(markup(text), end="")
        expected = printable(text, lines=False)
        if re.search(r"(?<!\\)\\$", expected):  # rich doubles a single trailing backslash
            expected += "\\"
        expected = expected.rstrip(" ")
        assert out.getvalue().rstrip(" ") == expected

    @pytest.mark.parametrize("text", ["\\[", "a\\\\[b", "\\[bold]x", "\\\\[/]", "[\\", "\\ "])
    def test_backslashes_before_a_bracket_are_shown(self, text):
        out = io.StringIO()
        Console(file=out, width=10_000, highlight=False).print(markup(text), end="")
        assert out.getvalue().rstrip(" ").startswith(text.rstrip(" "))

    def test_a_guarded_stream_escapes_what_is_written(self):
        out = io.StringIO()
        stream = GuardedStream(out)
        print("bot: \x1b[2J\nnext", file=stream)
        assert out.getvalue() == "bot: \\x1b[2J\nnext\n"

    def test_guarded_restores_the_streams(self):
        before = sys.stdout, sys.stderr
        with guarded():
            assert isinstance(sys.stdout, GuardedStream)
            with guarded():  # nested: guarded once, not escaped twice
                assert not isinstance(sys.stdout.stream, GuardedStream)
        assert (sys.stdout, sys.stderr) == before


# --------------------------------------------------------------------------- real commands


@pytest.fixture
def folder():
    """A folder the bots can read (as root the referee runs them as another uid, and pytest's
    own temporary folders are private to root)."""
    path = Path(tempfile.mkdtemp(prefix="ohseven-terminal-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def evil_bot(folder: Path) -> Path:
    """The hostile bot under a file name that is itself an attack (the bot's name)."""
    path = folder / f"{EVIL_NAME}_bot.py"
    shutil.copy(HOSTILE, path)
    return path


def referee(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "ohseven.referee.cli", *args],
        capture_output=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "400"},  # rich: a table's names on one line
    )


@pytest.mark.slow
class TestCommands:
    def test_check_bot(self, folder):
        """Its output before the hello, its exception text, its name: all escaped."""
        bot = evil_bot(folder)
        command = f"{shlex.quote(sys.executable)} {shlex.quote(str(bot))} terminal play"
        done = referee(
            "check-bot", "--game", "oh-hell", "--max-failures", "1", "--seed", "1", command
        )
        assert done.returncode == 1, done.stderr.decode(errors="replace")
        assert_clean(done.stdout)
        assert_clean(done.stderr)
        assert shown_escaped(done.stdout)
        assert "RuntimeError" in done.stdout.decode()  # its exception text was shown

    def test_match(self, folder):
        """The table (rich, markup taken literally), the faults, the last output: escaped."""
        bot = evil_bot(folder)
        command = f"{shlex.quote(sys.executable)} {shlex.quote(str(bot))} terminal play"
        done = referee(
            "match", "--game", "oh-hell", "--games", "1", "--seed", "2", command,
            str(RANDOM_BOT), str(RANDOM_BOT),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        assert_clean(done.stdout)
        assert_clean(done.stderr)
        assert shown_escaped(done.stdout)
        out = done.stdout.decode()
        assert "ev[reverse]il\\x1b]0;T\\x07\\u202e" in out  # the name: as written, in the table
        assert "[reverse]MARKUP[/reverse]" in out and "[link=https://evil.example]" in out

    def test_emoji_codes_in_a_bots_name_are_shown_as_written(self, folder):
        """A bot named ``:smile:`` (its file's name) reads so in the match table and the live
        leaderboard, not as an emoji (rich's consoles replace the codes by default)."""
        bot = folder / "a:smile:b:thumbs_up:_bot.py"
        shutil.copy(RANDOM_BOT, bot)
        done = referee("match", "--games", "1", "--seed", "2", str(bot), str(RANDOM_BOT))
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        out = done.stdout.decode()
        assert "a:smile:b:thumbs_up:" in out
        assert "\U0001f604" not in out and "\U0001f44d" not in out
        config = folder / "t.yaml"
        shutil.copy(RANDOM_BOT, folder / "random_bot.py")
        config.write_text(
            "name: emoji\ngame: oh-seven\ntable_size: 2\nbots:\n"
            '  - {name: ":smile:", file: random_bot.py}\n  - {name: r, file: random_bot.py}\n'
            "schedule: {type: round-robin, games_per_table: 1}\noutput: out\n"
        )
        done = referee("tourney", str(config), cwd=folder)
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        for stream in (done.stdout.decode(), done.stderr.decode()):
            assert "\U0001f604" not in stream
        assert ":smile:" in done.stderr.decode()

    def test_match_json_is_escaped_too(self, folder):
        bot = evil_bot(folder)
        command = f"{shlex.quote(sys.executable)} {shlex.quote(str(bot))} terminal play"
        done = referee(
            "match", "--json", "--game", "oh-hell", "--games", "1", "--seed", "2", command,
            str(RANDOM_BOT), str(RANDOM_BOT),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        assert_clean(done.stdout)
        (evil,) = [b for b in json.loads(done.stdout)["bots"] if b["name"].startswith("ev[")]
        assert _CONTROL.search(evil["output_tail"]) is None
        assert "\\x1b]52;c;" in evil["output_tail"]

    def test_tourney_start_check(self, folder):
        """A bot that fails the start check: its name and output in the refusal, escaped."""
        shutil.copy(HOSTILE, folder / "hostile_bot.py")
        shutil.copy(RANDOM_BOT, folder / "random_bot.py")
        config = folder / "t.yaml"
        config.write_text(
            "name: terminal\ngame: oh-hell\ntable_size: 3\nbots:\n"
            '  - {name: "ev[reverse]il\\e]0;T\\a", file: hostile_bot.py, '
            "args: [terminal, start]}\n"
            "  - {name: r1, file: random_bot.py}\n  - {name: r2, file: random_bot.py}\n"
            "schedule: {type: round-robin, games_per_table: 1}\noutput: out\n"
        )
        done = referee("tourney", "--check", str(config), cwd=folder)
        assert done.returncode == 2, done.stderr.decode(errors="replace")
        assert_clean(done.stdout)
        assert_clean(done.stderr)
        assert shown_escaped(done.stderr)
        assert "ev[reverse]il\\x1b]0;T\\x07" in done.stderr.decode()

    def test_tourney_live_display(self, folder):
        """The live leaderboard (rich) and the final one: a bot's name as written, escaped."""
        shutil.copy(RANDOM_BOT, folder / "random_bot.py")
        config = folder / "t.yaml"
        config.write_text(
            'name: "live[blink]\\e[2J"\ngame: oh-hell\ntable_size: 3\nbots:\n'
            '  - {name: "ev[reverse]il\\e]0;T\\a", file: random_bot.py}\n'
            "  - {name: r1, file: random_bot.py}\n  - {name: r2, file: random_bot.py}\n"
            "schedule: {type: round-robin, games_per_table: 1}\noutput: out\n"
        )
        done = referee("tourney", str(config), cwd=folder)
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        assert_clean(done.stderr)  # the live display
        assert "ev[reverse]il\\x1b]0;T\\x07" in done.stderr.decode()
        assert "live[blink]\\x1b[2J" in done.stderr.decode()
        done = referee("tourney", "--quiet", str(config), cwd=folder)  # the final board
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        assert_clean(done.stdout)
        assert "ev[reverse]il\\x1b]0;T\\x07" in done.stdout.decode()

    def test_replay_asks_the_bot(self, folder):
        """``replay --bot``: the bot's answer, fault and output, escaped."""
        replays = folder / "replays"
        done = referee(
            "match", "--game", "oh-hell", "--games", "1", "--seed", "3", "--replays",
            str(replays), str(RANDOM_BOT), str(RANDOM_BOT), str(RANDOM_BOT),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        (replay,) = replays.glob("*.json")
        bot = evil_bot(folder)
        command = f"{shlex.quote(sys.executable)} {shlex.quote(str(bot))} terminal play"
        done = referee("replay", str(replay), "--at", "1", "--bot", command)
        assert_clean(done.stdout)
        assert_clean(done.stderr)
        assert shown_escaped(done.stdout + done.stderr)


def test_the_guard_covers_every_command(capsys):
    """An error message naming a file the organiser was given (a bot's file name) is escaped
    even where no site escaped it: ``main`` runs every command guarded."""
    from ohseven.referee.cli.main import main

    missing = os.path.join(tempfile.gettempdir(), "no-such\x1b]52;c;eA==\x07.yaml")
    assert main(["tourney", "--check", missing]) == 2
    out, err = capsys.readouterr()
    assert "\x1b" not in err and "\\x1b]52;c;eA==\\x07" in err
