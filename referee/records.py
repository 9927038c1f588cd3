"""The values that cross module boundaries: bots, time control, matches and their results.

``match`` produces them, ``schedule`` and ``tourney`` consume them, ``store`` persists them.
Every value is frozen and made of plain data so that it pickles to worker processes (and Dask
workers) and converts to JSON with :func:`attrs.asdict`.
"""

from __future__ import annotations

import attrs
from ohseven.core.faults import Fault, FaultStatus
from ohseven.core.rules import Rules
from ohseven.core.table import DEFAULT_BANK_SECONDS, DEFAULT_MOVE_SECONDS

__all__ = [
    "Fault",
    "FaultStatus",
    "BotSpec",
    "TimeControl",
    "MatchSpec",
    "GameRecord",
    "MatchResult",
]


@attrs.frozen
class BotSpec:
    """A bot: its display name and the command line that starts it.

    ``directory`` is what the sandbox exposes to the bot read-only (its own files); ``None``
    means the directory of the command's script. ``limits`` override the match's sandbox
    limits for this bot only, and ``ponder`` (when not None) the sandbox's ``ponder``.
    """

    name: str
    command: tuple[str, ...]
    directory: str | None = None
    #: sandbox limits this bot overrides: (``sandbox.Limits`` field, value) pairs
    limits: tuple[tuple[str, int | float], ...] = ()
    ponder: bool | None = None


@attrs.frozen
class TimeControl:
    """A per-decision limit plus a per-game bank: time over ``move_seconds`` is drawn from the
    bank, and a decision times out when it exceeds ``move_seconds`` plus what is left of it."""

    move_seconds: float = DEFAULT_MOVE_SECONDS
    bank_seconds: float = DEFAULT_BANK_SECONDS
    start_seconds: float = 10.0  # for the process to start and say hello


@attrs.frozen
class MatchSpec:
    """One table playing ``len(seatings)`` games.

    ``seatings[g][s]`` is the index into ``bots`` of the bot in seat ``s`` of game ``g``;
    ``seeds[g]`` is the seed of game ``g`` (equal seeds replay the same deals: duplicate play).
    """

    match_id: str
    rules: Rules
    bots: tuple[BotSpec, ...]
    seatings: tuple[tuple[int, ...], ...]
    seeds: tuple[int, ...]
    time_control: TimeControl = TimeControl()
    fallback_seed: int = 0


@attrs.frozen
class GameRecord:
    """The outcome of one game; ``seats[s]`` is the name of the bot in seat ``s``."""

    match_id: str
    game_index: int
    seed: int
    seats: tuple[str, ...]
    totals: tuple[int, ...]
    ranks: tuple[int, ...]
    faults: tuple[Fault, ...] = ()
    stats: dict = attrs.field(factory=dict)  # see ``stats.game_statistics``
    replay_path: str | None = None
    seconds: float = 0.0


@attrs.frozen
class MatchResult:
    spec: MatchSpec
    games: tuple[GameRecord, ...]
    logs: dict = attrs.field(factory=dict)  # bot name -> truncated stdout/stderr of its process
