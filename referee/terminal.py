"""What reaches the organiser's terminal. A bot's bytes (its output, its exception texts, the
names and labels it chose, the files in its folder) are text the referee prints, and a terminal
obeys the control sequences in what it prints: a window title (OSC 0), a clipboard write
(OSC 52), a cleared screen, a hyperlink, a rewritten line. This module owns their escaping:
:func:`printable` writes every control character (C0 but newline and tab, DEL, C1, bidirectional
overrides, lone surrogates) as a visible Python escape (``\\x1b``); :func:`markup` also escapes
rich's markup (``[bold]``, ``[link=...]``) for text given to rich; :func:`guarded` makes every
command's ``sys.stdout`` and ``sys.stderr`` escape what is written through them (the command line
runs inside it), and :func:`console` is the rich console that writes the referee's own styles
past that guard, to be given only escaped text."""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["GuardedStream", "console", "guarded", "markup", "printable"]

# C0 (not tab or newline: those are kept in multi-line text), DEL, C1, the bidirectional
# embeddings, overrides and isolates (which reorder what is shown), the line and paragraph
# separators, and lone surrogates (undecodable bytes, which no terminal encoding can write)
_UNSAFE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff"
_MULTILINE = re.compile(f"[{_UNSAFE}]")
_ONE_LINE = re.compile(f"[{_UNSAFE}\t\n]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object, *, lines: bool = True) -> str:
    """``text`` (made a string) with every control character written as an escape (``\\x1b``,
    ``\\x9b``, ``\\u202e``); newline and tab are kept when ``lines`` (a multi-line text)."""
    return (_MULTILINE if lines else _ONE_LINE).sub(_escaped, str(text))


#: what rich reads as a tag after ``[`` (rich.markup's RE_TAGS), and an opening with the
#: backslashes before it
_TAG = re.compile(r"[a-z#/@][^[]*?]")
_OPENING = re.compile(r"(\\*)\[")


def markup(text: object, *, lines: bool = False) -> str:
    """``text`` for a rich renderable that reads markup (a table's cell, ``Console.print``):
    printable (on one line unless ``lines``), and its ``[...]`` taken literally."""
    shown = printable(text, lines=lines)

    def opening(match: re.Match[str]) -> str:
        # rich reads ``\\[`` as ``[`` in plain text and halves the backslashes before a tag:
        # each ``[`` escaped so that its backslashes show as written (rich's own ``escape``
        # leaves ``\\[`` before anything but a tag, which then loses its backslash)
        backslashes = len(match.group(1))
        if _TAG.match(shown, match.end()):
            return "\\" * (2 * backslashes + 1) + "["
        return "\\" * backslashes + "\\["

    escaped = _OPENING.sub(opening, shown)
    if escaped.endswith("\\") and not escaped.endswith("\\\\"):
        escaped += "\\"  # as rich's escape: a last backslash escapes nothing that follows
    return escaped


class GuardedStream(io.TextIOBase):
    """A text stream writing :func:`printable` text to ``stream`` (it keeps newline and tab)."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__()
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(printable(text))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", "utf-8")

    def __getattr__(self, name: str) -> Any:  # buffer, errors, ...: the stream's
        return getattr(self.stream, name)


def _unguarded(stream: IO[str]) -> IO[str]:
    return stream.stream if isinstance(stream, GuardedStream) else stream


@contextlib.contextmanager
def guarded() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` escape every control character written to them until
    the end of the block (then they are restored)."""
    saved = sys.stdout, sys.stderr
    sys.stdout = GuardedStream(_unguarded(sys.stdout))
    sys.stderr = GuardedStream(_unguarded(sys.stderr))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def console(*, stderr: bool = False) -> Console:
    """A rich console on the command's real stdout (stderr): its own styles reach the terminal;
    every text of a bot given to it must go through :func:`markup` first. Emoji codes are left
    as written (a bot named ``:smile:`` reads so, not 😄: rich has no escape for them)."""
    from rich.console import Console  # the referee extra's, as in :func:`markup`

    return Console(file=_unguarded(sys.stderr if stderr else sys.stdout), emoji=False)
