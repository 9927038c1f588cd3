"""The terminal while a tournament runs: a progress bar with ETA and the live leaderboard."""

from __future__ import annotations

from typing import Any

from ohseven.referee.plan.config import TourneyConfig
from ohseven.referee.terminal import console, markup

__all__ = ["Display", "print_board"]


def _verdict_text(verdict: dict | None, repeats: int) -> str:
    """A candidate's stopping verdict in the terminal: "better, stopped +9.67 (3/8)" (its
    difference of points per game to the field, after 3 of 8 repeats)."""
    if verdict is None:
        return ""
    stopped = ", stopped" if verdict["stopped"] else ""
    difference = verdict["difference"]
    shown = "" if difference is None else f" {difference:+.2f}"
    return f"{verdict['status']}{stopped}{shown} ({verdict['repeats']}/{repeats})"


class Display:
    """A rich progress bar with ETA and a live leaderboard; silent when ``quiet``."""

    def __init__(self, config: TourneyConfig, total: int, done: int, quiet: bool) -> None:
        self.quiet = quiet
        self.live = None
        if quiet:
            return
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

        self.console = console(stderr=True)
        self.progress = Progress(
            TextColumn(f"[bold]{markup(config.name)}[/] games"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
        )
        self.task = self.progress.add_task("games", total=total, completed=done)
        self._group = Group
        self.table = self._table(None)
        self.live = Live(
            Group(self.progress, self.table),
            console=self.console,
            refresh_per_second=4,
            transient=False,
        )

    def _table(self, document: dict | None) -> Any:
        from rich.table import Table

        table = Table(title="leaderboard", expand=False)
        columns = ("#", "bot", "score", "mu ± sigma", "P(>next)", "games", "pts/game (95% CI)")
        rule = (document or {}).get("stopping")
        for column in (*columns, "wins", "faults", *(("SPRT",) if rule else ())):
            table.add_column(column, justify="left" if column in ("bot", "SPRT") else "right")
        for bot in (document or {}).get("bots", []):
            interval = bot.get("points_per_game_ci")
            points = "-" if bot["points_per_game"] is None else f"{bot['points_per_game']:.2f}"
            if interval is not None:
                points += f" [{interval[0]:.2f}, {interval[1]:.2f}]"
            superiority = bot.get("superiority_next")
            table.add_row(
                bot.get("place", str(bot["rank"])),
                markup(bot["name"]),
                f"{bot['score']:.2f}",
                f"{bot['mu']:.2f} ± {bot['sigma']:.2f}",
                "" if superiority is None else f"{100 * superiority:.0f}%",
                str(bot["games"]),
                points,
                str(bot["wins"]),
                str(sum(bot["faults"].values())),
                *((_verdict_text(bot.get("sprt"), rule["repeats"]),) if rule else ()),
            )
        return table

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
            self.live.update(self._group(self.progress, self._table(document)))

    def message(self, text: str) -> None:
        if self.live is not None:
            self.console.print(markup(text, lines=True))


def print_board(document: dict) -> None:
    """Print the leaderboard ``document`` (``leaderboard.json``) as the live display shows it."""
    display = Display.__new__(Display)
    console().print(display._table(document))
