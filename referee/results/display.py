"""The terminal while a tournament runs: a progress bar with ETA and the live leaderboard.

The leaderboard is laid out for the width it is printed at (80 columns when the output is not
a terminal): one line per bot, the name column widened first (a name too long for it is cut in
the middle, and never so that two bots read the same), then the other columns in order of use
while they fit. A wider terminal shows more columns, never longer lines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs
from ohseven.referee.terminal import console, markup, printable
from rich import box
from rich.console import Group
from rich.live import Live
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

__all__ = ["Display", "print_board", "board_table", "short_names", "BoardView"]

#: the room the name column gets before the optional columns (more if any is left after them)
NAME_FIRST = 24
#: the gap between two columns (the table's padding and separator)
GAP = 2
ELLIPSIS = "…"
#: the line under the table: what the columns that need it mean
CAPTION = "score = mu - 3 sigma, the ranking; ±: a 95% interval; =N: a place shared"


def _verdict_text(verdict: dict | None, repeats: int, compact: bool = False) -> str:
    """A candidate's stopping verdict in the terminal: "better, stopped +9.67 (3/8)" (its
    difference of points per game to the field, after 3 of 8 repeats), or compact
    "better/stop +9.67 3/8"."""
    if verdict is None:
        return ""
    difference = verdict["difference"]
    shown = "" if difference is None else f" {difference:+.2f}"
    if compact:
        stopped = "/stop" if verdict["stopped"] else ""
        return f"{verdict['status']}{stopped}{shown} {verdict['repeats']}/{repeats}"
    stopped = ", stopped" if verdict["stopped"] else ""
    return f"{verdict['status']}{stopped}{shown} ({verdict['repeats']}/{repeats})"


def _cut(name: str, width: int, head: int) -> str:
    """``name`` in ``width`` characters: its first ``head`` and its last characters around an
    ellipsis (unchanged when it fits)."""
    if len(name) <= width:
        return name
    if width <= 1:
        return ELLIPSIS[:width]
    tail = width - 1 - head
    return name[:head] + ELLIPSIS + (name[-tail:] if tail > 0 else "")


def short_names(names: Sequence[str], width: int) -> dict[str, str]:
    """Each of ``names`` in at most ``width`` characters, cut in the middle (the start and the
    end of a name tell versions apart: ``mybot-v1``, ``mybot-v2``); where two cut names would
    read the same, the cut moves until they differ, as far as ``width`` allows."""
    width = max(1, width)
    shown = {}
    long = [name for name in names if len(name) > width]
    for name in names:
        shown[name] = name if len(name) <= width else ""
    if not long:
        return shown
    # the head gets half the room (rounded up) at first; on a clash, every split is tried
    # from there (the end of a name, where versions are, kept as long as possible)
    half = (width - 1 + 1) // 2
    splits = [half, *(h for h in range(half - 1, -1, -1)), *range(half + 1, width)]
    taken = {name for name in names if len(name) <= width}
    for name in sorted(long):
        rivals = [other for other in long if other != name]
        for head in splits:
            text = _cut(name, width, head)
            clash = text in taken or any(
                _cut(other, width, head) == text and other in rivals for other in rivals
            )
            if not clash:
                break
        else:
            text = _cut(name, width, half)
        shown[name] = text
        taken.add(text)
    return shown


@attrs.frozen
class _Column:
    header: str
    cell: Callable[[dict], str]
    right: bool = True  # justified right (numbers)


def _interval(bot: dict) -> str:
    """Points per game and the half-width of its 95% interval (Student's t: symmetric)."""
    points = bot.get("points_per_game")
    if points is None:
        return "-"
    interval = bot.get("points_per_game_ci")
    if interval is None:
        return f"{points:.2f}"
    return f"{points:.2f}±{(interval[1] - interval[0]) / 2:.2f}"


def _place(bot: dict) -> str:
    return str(bot.get("place", bot["rank"]))


def _superiority(bot: dict) -> str:
    value = bot.get("superiority_next")
    return "" if value is None else f"{100 * value:.0f}%"


def _separate(bot: dict) -> str:
    value = bot.get("games_to_separate")
    return "" if value is None or value == 0 else f"+{value}"


def _rate(key: str) -> Callable[[dict], str]:
    def cell(bot: dict) -> str:
        value = bot.get(key)
        return "-" if value is None else f"{100 * value:.0f}%"

    return cell


def _number(key: str, digits: int) -> Callable[[dict], str]:
    def cell(bot: dict) -> str:
        value = bot.get(key)
        return "-" if value is None else f"{value:.{digits}f}"

    return cell


def _faults(bot: dict) -> str:
    total = bot.get("faults_total")
    return str(sum(bot["faults"].values()) if total is None else total)


#: always shown (the name is the second of them)
_FIRST = (
    _Column("#", _place),
    _Column("score", _number("score", 2)),
    _Column("pts/game ±95%", _interval),
    _Column("faults", _faults),
)
#: shown while they fit, in this order
_MORE = (
    _Column("games", lambda bot: str(bot["games"])),
    _Column("P>next", _superiority),
    _Column("wins", lambda bot: str(bot["wins"])),
    _Column("mu±sigma", lambda bot: f"{bot['mu']:.2f}±{bot['sigma']:.2f}"),
    _Column("avg rank", _number("average_rank", 2)),
    _Column("win%", _rate("win_rate")),
    _Column("to separate", _separate),
)


def _sprt_columns(rule: dict | None) -> tuple[_Column, _Column] | None:
    if not rule:
        return None
    repeats = rule["repeats"]
    return (
        _Column("SPRT", lambda bot: _verdict_text(bot.get("sprt"), repeats, True), False),
        _Column("SPRT", lambda bot: _verdict_text(bot.get("sprt"), repeats), False),
    )


def _width(column: _Column, bots: Sequence[dict]) -> int:
    return max(len(column.header), *(len(column.cell(bot)) for bot in bots))


def _layout(document: dict, width: int) -> tuple[list[_Column], int, list[int]]:
    """The columns that fit in ``width`` (the name column's position is 1), the name column's
    width, and each chosen column's width."""
    bots = document.get("bots") or []
    names = [bot["name"] for bot in bots]
    longest = max([len("bot"), *map(len, names)])
    sprt = _sprt_columns(document.get("stopping"))
    first = list(_FIRST) + ([sprt[0]] if sprt else [])
    widths = {id(c): _width(c, bots) for c in (*first, *_MORE, *(sprt or ()))}
    chosen = list(first)

    def used(columns: list[_Column], name: int) -> int:
        return sum(widths[id(c)] for c in columns) + name + GAP * len(columns)

    name = max(3, min(longest, NAME_FIRST, width - used(chosen, 0)))
    for column in _MORE:
        if used([*chosen, column], name) <= width:
            chosen.append(column)
    if sprt and used(chosen, name) - widths[id(sprt[0])] + widths[id(sprt[1])] <= width:
        chosen[chosen.index(sprt[0])] = sprt[1]
    name = max(name, min(longest, width - used(chosen, 0)))
    chosen.insert(1, _Column("bot", lambda bot: bot["name"], False))
    return chosen, name, [name if i == 1 else widths[id(c)] for i, c in enumerate(chosen)]


def board_table(document: dict | None, width: int) -> Any:
    """The leaderboard ``document`` as a rich table for a terminal ``width`` columns wide."""
    document = document or {}
    # a name is shown as written: its control characters escaped, its "[...]" no markup
    bots = [
        {**bot, "name": printable(bot["name"], lines=False)} for bot in document.get("bots") or []
    ]
    document = {**document, "bots": bots}
    columns, name_width, widths = _layout(document, width)
    names = short_names([bot["name"] for bot in bots], name_width)
    table = Table(
        title="leaderboard",
        title_justify="left",
        caption=CAPTION,
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        pad_edge=False,
        show_edge=False,
        expand=False,
    )
    for column, size in zip(columns, widths, strict=True):
        table.add_column(
            column.header,
            justify="right" if column.right else "left",
            no_wrap=True,
            min_width=size,
            max_width=size,
        )
    for bot in bots:
        table.add_row(
            *(Text(names[bot["name"]]) if c.header == "bot" else c.cell(bot) for c in columns)
        )
    return table


class BoardView:
    """A leaderboard laid out again for the width of every render (a resized terminal, or 80
    columns for a log)."""

    def __init__(self, document: dict | None) -> None:
        self.document = document

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        yield board_table(self.document, options.max_width)


class Display:
    """A rich progress bar with ETA and a live leaderboard; silent when ``quiet``."""

    def __init__(self, name: str, total: int, done: int, quiet: bool) -> None:
        self.quiet = quiet
        self.live = None
        if quiet:
            return

        self.console = console(stderr=True)
        self.progress = Progress(
            TextColumn(f"[bold]{markup(name)}[/] games"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
        )
        self.task = self.progress.add_task("games", total=total, completed=done)
        self._group = Group
        self.table = BoardView(None)
        self.live = Live(
            Group(self.progress, self.table),
            console=self.console,
            refresh_per_second=4,
            transient=False,
        )

    def __enter__(self) -> Display:
        if self.live is not None:
            self.live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)

    def advance(self, games: int) -> None:
        if self.live is not None:
            self.progress.update(self.task, advance=games)

    def total(self, games: int) -> None:
        if self.live is not None:
            self.progress.update(self.task, total=games)

    def board(self, document: dict) -> None:
        if self.live is not None:
            self.live.update(self._group(self.progress, BoardView(document)))

    def message(self, text: str) -> None:
        if self.live is not None:
            self.console.print(markup(text, lines=True))


def print_board(document: dict) -> None:
    """Print the leaderboard ``document`` (``leaderboard.json``) as the live display shows it,
    at the terminal's width (80 columns when stdout is not a terminal)."""
    console().print(BoardView(document))
