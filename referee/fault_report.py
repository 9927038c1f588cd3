"""Faults as a bot's author reads them: one step from the fix.

Every fault is shown where it happened: the replay file and the move number (from 1, as
``replay`` and the viewer count), so the next command is ``replay FILE --bot BOT --at MOVE``
(:func:`replay_command`). Repeated faults are grouped by (status, location): the location is
the bot's own line a traceback ends in, else the fault's first line with its numbers and cards
taken out, so one bug met 200 times is one group with a count and its first games
(:func:`group_faults`). Tracebacks show the bot's files by the paths its author knows, not the
referee's staged copy (:func:`author_paths`); a public page shows no host path at all
(:func:`public_paths`). ``match``, ``check-bot``, ``replay`` and the site all use these.
"""

from __future__ import annotations

import re
import shlex
import signal
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
from ohseven.core.faults import Fault

__all__ = [
    "FaultSite",
    "FaultGroup",
    "SHOWN_GROUPS",
    "FIRST_SHOWN",
    "exit_text",
    "author_paths",
    "public_paths",
    "location",
    "group_faults",
    "where",
    "replay_command",
    "render_groups",
    "site_data",
]

#: kinds of fault (groups) listed per bot in a terminal report
SHOWN_GROUPS = 5
#: the first occurrences named for a group
FIRST_SHOWN = 3
#: lines of a fault's detail shown in a terminal report (a traceback's end is kept)
DETAIL_LINES = 14

# a bot's staged copy: ``<tmp>/ohseven-stage-xxxx/<token>/`` (match, check-bot, replay) or
# ``<output>/.bots/<token>/`` (a tournament); what follows is the bot's own folder
_STAGED = re.compile(r"(?:/[^\s\"'/]+)*/(?:ohseven-stage-[A-Za-z0-9_]+|\.bots)/[0-9a-f]{32}/")
_ABSOLUTE = re.compile(r"(?<![\w.~:/-])(?:/[\w.@+~-]+)+/?")
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)(?:, in (\S+))?', re.MULTILINE)
_LIBRARY = ("site-packages", "dist-packages", "/lib/python", "<frozen", "/ohseven/sdk/")
_CARD = re.compile(r"\b(?:10|[2-9TJQKA])[CDHS]\b")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def exit_text(code: int) -> str:
    """How a process ended, signals named: "exited with code 134 (SIGABRT: killed by signal
    6)"; a shell or the sandbox reports a child killed by signal N as code 128 + N."""
    number = -code if code < 0 else code - 128 if code > 128 else 0
    try:
        name = signal.Signals(number).name if number else ""
    except ValueError:
        name = ""
    if code < 0:
        return f"was killed by {name or f'signal {number}'}"
    if name:
        return f"exited with code {code} ({name}: killed by signal {number})"
    return f"exited with code {code}"


def author_paths(text: str) -> str:
    """``text`` with the referee's staged copy of a bot's files shown as the bot's own folder
    (``bots/keybot.py``, not ``/tmp/ohseven-stage-x1/4e1f.../bots/keybot.py``)."""
    return _STAGED.sub("", text)


def public_paths(text: str) -> str:
    """``text`` for a public page: staged copies as the bot's own folder, and every other
    absolute path cut to its last two parts (``…/sdk/bot.py``): no path of the host."""

    def cut(found: re.Match[str]) -> str:
        parts = [part for part in found.group(0).split("/") if part]
        return "…/" + "/".join(parts[-2:]) if len(parts) > 2 else found.group(0)

    return _ABSOLUTE.sub(cut, author_paths(text))


def location(status: str, detail: str) -> str:
    """Where a fault comes from, the same for every occurrence of one bug: the last line of
    the bot's own code in its traceback (``bots/keybot.py:11 in choose_play``), else the
    detail's first line without its numbers, cards and quoted values."""
    frames = _FRAME.findall(author_paths(detail))
    if frames:
        own = [frame for frame in frames if not any(mark in frame[0] for mark in _LIBRARY)]
        path, line, function = (own or frames)[-1]
        return f"{path}:{line}" + (f" in {function}" if function else "")
    first = (detail.strip().splitlines() or [""])[0]
    first = re.sub(r"'[^']*'|\"[^\"]*\"|\([^()]*\)|\[[^\[\]]*\]", "…", first)
    first = _NUMBER.sub("N", _CARD.sub("C", first))
    return first[:100]


@attrs.frozen
class FaultSite:
    """One fault where it happened."""

    status: str
    detail: str
    replay: str | None = None  # the replay file of its game (None: none saved)
    move: int | None = None  # the decision it cost, from 1 (None: outside a decision)
    round: int | None = None  # from 1
    trick: int | None = None  # from 1; None outside the play
    game: str = ""  # how the game is named where no replay is (``game 2``, ``check 5``)

    @classmethod
    def of(
        cls, fault: Fault | Mapping[str, Any], replay: str | None = None, game: str = ""
    ) -> FaultSite:
        """From a :class:`~ohseven.core.faults.Fault` or its dict form."""
        get = fault.get if isinstance(fault, dict) else lambda key: getattr(fault, key, None)
        status = get("status")
        return cls(
            str(getattr(status, "value", status)),
            str(get("detail") or ""),
            replay,
            get("move"),
            get("round"),
            get("trick"),
            game,
        )


@attrs.frozen
class FaultGroup:
    """Faults of one (status, location): how many, in how many games, the first of them."""

    status: str
    location: str
    count: int
    games: int
    first: tuple[FaultSite, ...]


def group_faults(sites: Iterable[FaultSite], keep: int = FIRST_SHOWN) -> list[FaultGroup]:
    """``sites`` grouped by (status, location), the largest group first (then the first met),
    each with its first ``keep`` faults."""
    groups: dict[tuple[str, str], list[FaultSite]] = {}
    for site in sites:
        groups.setdefault((site.status, location(site.status, site.detail)), []).append(site)
    ordered = sorted(groups.items(), key=lambda item: -len(item[1]))  # stable: first met first
    return [
        FaultGroup(
            status,
            place,
            len(found),
            len({(site.replay, site.game) for site in found}),
            tuple(found[:keep]),
        )
        for (status, place), found in ordered
    ]


def where(site: FaultSite) -> str:
    """ "move 23 (round 1, trick 4) of DIR/m-game000.json", without a replay "game 2, move 23
    (round 1, trick 4)"."""
    position = ", ".join(
        text
        for text in (
            "" if site.round is None else f"round {site.round}",
            "" if site.trick is None else f"trick {site.trick}",
        )
        if text
    )
    text = "" if site.move is None else f"move {site.move}"
    text = f"{text} ({position})" if text and position else text or position
    if site.replay is not None:
        return f"{text} of {site.replay}" if text else site.replay
    if site.game:
        return f"{site.game}, {text}" if text else site.game
    return text or "outside a decision"


def replay_command(site: FaultSite, bot: str) -> str | None:
    """``ohseven-referee replay FILE --bot BOT --at N``: the command that asks the bot the
    decision of ``site`` again (None when it has no replay or no move)."""
    if site.replay is None or site.move is None:
        return None
    return (
        f"ohseven-referee replay {shlex.quote(site.replay)} --bot {shlex.quote(bot)} "
        f"--at {site.move}"
    )


#: what runtimes say when an allocation fails (Python, the JVM, C++, Go, glibc, Node.js)
_OUT_OF_MEMORY = (
    "MemoryError",
    "OutOfMemoryError",
    "std::bad_alloc",
    "out of memory",
    "Cannot allocate memory",
    "pthread_create failed",
    "heap out of memory",
)


def _hint(status: str, detail: str, tail: str = "") -> str:
    """What a fault's text alone does not say: which limit a memory error meets (seen in its
    detail, or in the bot's own output when it did not even start)."""
    said = detail if status != "no_start" else f"{detail}\n{tail}"
    if any(words in said for words in _OUT_OF_MEMORY) or (
        status == "limit" and "memory" in detail.lower()
    ):
        return (
            "the sandbox limits a bot's memory, all its processes together, and each process's "
            "address space (memory_mb, 1024 MB by default: `--memory-mb` of match and "
            "check-bot, `sandbox.memory_mb` or a bot's `limits` in a tournament's "
            "configuration, see docs/CONFIG.md and docs/BOTS.md)"
        )
    return ""


def _places(sites: Sequence[FaultSite], more: int) -> list[str]:
    """Where ``sites`` were, a line per game: "at rp/m-game000.json: move 10 (round 1, trick
    4), move 26 (round 2, trick 4)", then how many more."""
    lines: list[str] = []
    games: dict[str, list[FaultSite]] = {}
    for site in sites:
        games.setdefault(site.replay or site.game, []).append(site)
    outside: list[str] = []  # games whose faults were outside a decision (a failed start)
    for game, found in games.items():
        placed = [site for site in found if site.move is not None or site.round is not None]
        if not placed:
            outside.append(game)
            continue
        moves = ", ".join(where(attrs.evolve(site, replay=None, game="")) for site in placed)
        lines.append(f"at {game}: {moves}" if game else f"at {moves}")
    if outside:
        lines.append("in " + ", ".join(game or "a game" for game in outside))
    if more > 0:
        lines[-1] += f" (and {more} more)"
    return lines


def _detail_lines(detail: str, limit: int = DETAIL_LINES) -> list[str]:
    lines = author_paths(detail).rstrip().splitlines() or [""]
    if len(lines) <= limit:
        return lines
    return [lines[0], "…", *lines[-(limit - 2) :]]


def render_groups(
    name: str,
    groups: Sequence[FaultGroup],
    tail: str,
    bot: str | None = None,
    *,
    shown: int = SHOWN_GROUPS,
    save_hint: str = "",
    unit: str = "game",
) -> list[str]:
    """Text lines for a bot's fault ``groups`` and its last output ``tail``: per group its
    status, count and location, the first fault's detail (a traceback once, with the author's
    paths), where the first faults were, and the command that asks the first one again (for
    ``bot``, the bot's argument as given). ``save_hint``: shown when no fault has a replay
    (how to save them); ``unit``: what a game is called (``check`` in ``check-bot``). The
    output tail is left out when every group carries the bot's own
    report (``bot_error``: the traceback is in it)."""
    total = sum(group.count for group in groups)
    games = sum(group.games for group in groups)
    kinds = f", {len(groups)} kinds" if len(groups) > 1 else ""
    lines = [
        f"{name}: {total} fault{'s' if total != 1 else ''}{kinds}"
        + (f" in {games} {unit}{'s' if games != 1 else ''}" if games else "")
    ]
    replayed = False
    for group in groups[:shown]:
        times = f" x{group.count}" if group.count > 1 else ""
        in_games = f" in {group.games} {unit}s" if group.games > 1 else ""
        lines.append(f"  {group.status}{times}{in_games}: {group.location}")
        first = group.first[0]
        lines.extend(f"    {line}" for line in _detail_lines(first.detail))
        more = group.count - len(group.first)
        lines.extend(f"    {text}" for text in _places(group.first, more))
        hint = _hint(group.status, first.detail, tail)
        if hint:
            lines.append(f"    hint: {hint}")
        command = None if bot is None else replay_command(first, bot)
        if command is not None:
            replayed = True
            lines.append(f"    ask it again: {command}")
    if len(groups) > shown:
        rest = sum(group.count for group in groups[shown:])
        lines.append(f"  ... and {len(groups) - shown} other kinds ({rest} faults; all in --json)")
    if not replayed and save_hint and any(g.first[0].move is not None for g in groups):
        lines.append(f"  {save_hint}")
    if all(group.status == "bot_error" for group in groups):
        return lines
    if tail:
        lines.append("  its last output (stdout and stderr):")
        lines.extend(f"  | {line}" for line in author_paths(tail).splitlines())
    else:
        lines.append("  (it wrote no output)")
    return lines


def site_data(site: FaultSite) -> dict[str, Any]:
    """A fault as plain data (``--json``): status, detail, replay, move, round, trick."""
    return {
        "status": site.status,
        "detail": author_paths(site.detail),
        "replay": site.replay,
        "move": site.move,
        "round": site.round,
        "trick": site.trick,
    }
