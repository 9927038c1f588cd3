"""The parsers of the configuration's sections (``name`` and ``game``, ``rules``, ``table_size``,
``bots``, ``schedule``, ``time_control``, ``sandbox``, ``ratings`` and the run's top-level
keys), each reporting its mistakes at their keys, and the bounds that keep every valid
configuration playable."""

from __future__ import annotations

import functools
import hashlib
import math
import os
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from ohseven.core.rules import GAMES, OPTIONS, PLAYER_RANGE, InvalidRulesError, Rules
from ohseven.referee.plan.config import (
    CLUSTER_BOTS,
    DEAL_MODES,
    LIMIT_KEYS,
    SCHEDULE_TYPES,
    SITE_LOGS,
    BotEntry,
    RatingsConfig,
    SandboxSettings,
    ScheduleConfig,
    ServerConfig,
    StopRule,
    is_cluster_address,
)
from ohseven.referee.plan.document import (
    Document,
    Reader,
    is_int,
    is_pos_int,
    is_pos_number,
    is_str,
)
from ohseven.referee.records import BotSpec, TimeControl
from ohseven.referee.sandbox.paths import bot_folder, extra_path_problem
from ohseven.referee.sandbox.settings import LIMIT_MAXIMA
from ohseven.referee.sandbox.settings import MODES as SANDBOX_MODES
from ohseven.referee.sandbox.staging import STAGE_MAX_MB, StageLimits

#: limits that are positive numbers (the others are positive integers)
_NUMBER_LIMITS = ("cpus",)


TOP_KEYS = (
    "name",
    "game",
    "rules",
    "table_size",
    "bots",
    "schedule",
    "time_control",
    "sandbox",
    "ratings",
    "workers",
    "output",
    "seed",
    "reveal_seeds",
    "replays",
    "cluster",
    "cluster_bots",
    "staging",
    "site_logs",
    "server",
)
BOT_KEYS = ("name", "file", "args", "command", "directory", "limits", "ponder", "author")
#: bounds that keep every configuration that validates playable: a clock within a day (the
#: referee computes deadlines and integers of milliseconds from it) and a schedule within a
#: lifetime (schedules are iterated, never held whole; the games played are held in memory)
MAX_MOVE_SECONDS = 3600
MAX_BANK_SECONDS = 86400
MAX_START_SECONDS = 600
MAX_REPEATS = 10_000
MAX_GAMES_PER_TABLE = 10_000
MAX_SCHEDULED_GAMES = 50_000_000
#: ``schedule.stop``: the highest confidence (a bound of ln(c / (1 - c)), about 9.2) and margin
MAX_STOP_CONFIDENCE = 0.9999
MAX_STOP_MARGIN = 1000


@functools.lru_cache(maxsize=256)
def file_digest(path: Path) -> str:
    # cached within a load: many bots of a league run the same file
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def _bot(reader: Reader, data: Any, path: str, base: Path) -> tuple[BotEntry | None, str]:
    doc = reader.doc
    if not isinstance(data, dict):
        doc.error(path, f"expected a mapping with name and file or command, not {data!r}")
        return None, ""
    reader.keys(data, path, BOT_KEYS)
    name = reader.get(data, path, "name", is_str, "a non-empty name", required=True)
    file = reader.get(data, path, "file", is_str, "a path to the bot's program")
    command = reader.get(
        data,
        path,
        "command",
        lambda v: is_str(v) or (isinstance(v, list) and v and all(is_str(x) for x in v)),
        "a command line (a string or a list of words)",
    )
    directory = reader.get(data, path, "directory", is_str, "a directory")
    args = reader.get(
        data,
        path,
        "args",
        lambda v: isinstance(v, list) and all(isinstance(x, str | int | float) for x in v),
        "a list of arguments for the program of `file`",
        [],
    )
    if args and file is None:
        doc.error(f"{path}.args", "`args` go with `file`; put them in `command` instead")
    limits = _limits(reader, data.get("limits"), f"{path}.limits")
    ponder = reader.get(data, path, "ponder", lambda v: isinstance(v, bool), "true or false")
    fingerprint = ""
    argv: tuple[str, ...] | None = None
    if file is not None and command is not None:
        doc.error(f"{path}.command", "give either `file` or `command`, not both")
    elif file is not None:
        target = (base / file).resolve()
        if not target.is_file():
            doc.error(f"{path}.file", f"no such file: {file} (looked for {target})")
        elif target.suffix == ".py":
            argv = (sys.executable, str(target))
        elif not os.access(target, os.X_OK):
            doc.error(f"{path}.file", f"{file} is not executable (chmod +x it, or use `command`)")
        else:
            argv = (str(target),)
        fingerprint = file_digest(target)
        if argv is not None:
            argv = (*argv, *(str(arg) for arg in args))
        if directory is None and argv is not None:
            directory = str(target.parent)
    elif command is not None:
        words = shlex.split(command) if isinstance(command, str) else list(command)
        if words:
            # every word naming a path relative to the config (the program, a script, a jar)
            # is made absolute: the referee's working directory must not matter
            for index, word in enumerate(words):
                here = base / word
                if not word.startswith("-") and not Path(word).is_absolute() and here.exists():
                    if index == 0 and os.sep not in word:
                        continue  # a bare program name is looked up in PATH
                    words[index] = str(here.resolve())
            if words[0].endswith(".py") and Path(words[0]).is_file():
                words.insert(0, sys.executable)  # a script runs with the referee's Python
            argv = tuple(words)
        else:
            doc.error(f"{path}.command", "empty command")
    elif "file" not in data and "command" not in data:
        doc.error(path, "missing key `file` or `command` (how to start the bot)")
    if directory is not None and "directory" in data:
        target_dir = (base / directory).resolve()
        if not target_dir.is_dir():
            doc.error(f"{path}.directory", f"no such directory: {directory}")
        directory = str(target_dir)
    if name is None or argv is None:
        return None, fingerprint
    author = reader.get(data, path, "author", is_str, "a text (who wrote the bot)")
    entry = BotEntry(BotSpec(name, argv, directory, limits, ponder), limits, author)
    return entry, fingerprint


def _limits(reader: Reader, data: Any, path: str) -> tuple[tuple[str, int | float], ...]:
    if data is None:
        return ()
    if not isinstance(data, dict):
        reader.doc.error(path, f"expected a mapping of limits, not {data!r}")
        return ()
    reader.keys(data, path, LIMIT_KEYS)
    values = []
    for key in LIMIT_KEYS:
        most = LIMIT_MAXIMA[key]
        number = key in _NUMBER_LIMITS

        def valid(value: Any, most: int = most, number: bool = number) -> bool:
            return (is_pos_number(value) if number else is_pos_int(value)) and value <= most

        expected = (
            f"a positive number, at most {most:,}" if number else f"an integer from 1 to {most:,}"
        )
        value = reader.get(data, path, key, valid, expected)
        if value is not None:
            values.append((key, value))
    return tuple(values)


def _scheduled_games(
    stype: str, bots: int, candidates: int, sizes: tuple[int, ...], repeats: int, per_table: int
) -> int:
    """The number of games the schedule will hold, counted without building it."""
    total = 0
    for size in sizes:
        if stype == "gauntlet":
            tables = candidates * math.comb(bots - candidates, size - 1)
        else:
            tables = math.comb(bots, size)
        total += tables * size * per_table
    return total * repeats


def _stop_rule(reader: Reader, sched: dict, stype: str | None, repeats: int) -> StopRule | None:
    """``schedule.stop`` of a gauntlet (None when not given), every mistake at its key."""
    if sched.get("stop") is None:
        return None
    doc, path = reader.doc, "schedule.stop"
    data = sched["stop"]
    if not isinstance(data, dict):
        doc.error(path, f"expected a mapping of confidence, margin and min_games, not {data!r}")
        return None
    if stype != "gauntlet":
        doc.error(path, "only a gauntlet has a stopping rule (a candidate stops playing)")
        return None
    reader.keys(data, path, ("confidence", "margin", "min_games"))
    if repeats == 1 and sched.get("repeats") in (None, 1):  # (a bad `repeats` is its own error)
        doc.error(
            path,
            "a candidate can stop only between repeats of the gauntlet: with `repeats: 1` it "
            "never would (raise `schedule.repeats`)",
        )
    default = StopRule()
    confidence = reader.get(
        data,
        path,
        "confidence",
        lambda v: is_pos_number(v) and 0.5 < v <= MAX_STOP_CONFIDENCE,
        f"a probability above 0.5 and at most {MAX_STOP_CONFIDENCE}",
        default.confidence,
    )
    margin = reader.get(
        data,
        path,
        "margin",
        lambda v: is_pos_number(v) and v <= MAX_STOP_MARGIN,
        f"a positive number of points per game, at most {MAX_STOP_MARGIN}",
        required=True,
    )
    min_games = reader.get(
        data,
        path,
        "min_games",
        lambda v: is_int(v) and 2 <= v <= MAX_SCHEDULED_GAMES,
        f"an integer from 2 to {MAX_SCHEDULED_GAMES:,}",
        default.min_games,
    )
    if margin is None:
        return None
    return StopRule(float(confidence), float(margin), min_games)


def _section(reader: Reader, data: dict, key: str) -> dict:
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        reader.doc.error(key, f"expected a mapping, not {value!r}")
        return {}
    return value


def read_name_and_game(reader: Reader, data: dict) -> tuple[str | None, str | None]:
    """``name`` (a directory name) and ``game``."""
    doc = reader.doc
    name = reader.get(data, "", "name", is_str, "a non-empty name", required=True)
    if name is not None and (os.sep in name or name in (".", "..")):
        doc.error("name", f"{name!r} is used as a directory name: no slashes")
    game = reader.get(
        data, "", "game", lambda v: v in GAMES, f"one of {', '.join(GAMES)}", required=True
    )
    return name, game


def read_rules(reader: Reader, data: dict, game: str | None) -> Rules | None:
    """The ``rules`` section: each option checked on its own, then all of them together."""
    doc = reader.doc
    rules = None
    options = _section(reader, data, "rules")
    if game is not None:
        for key, (default, _) in OPTIONS[game].items():
            reader.defaults[f"rules.{key}"] = default
        for key, value in options.items():
            try:
                Rules.make(game, {key: value})
            except InvalidRulesError as error:
                doc.error(f"rules.{key}", str(error))
        try:
            rules = Rules.make(game, options)
        except InvalidRulesError as error:
            if not any(e for e in doc.errors if "key `rules." in e):
                doc.error("rules", str(error))
    return rules


def read_table_sizes(reader: Reader, data: dict, game: str | None) -> tuple[int, ...]:
    """``table_size``: the sizes, sorted, each one the game is played by."""
    doc = reader.doc
    sizes_raw = reader.get(
        data,
        "",
        "table_size",
        lambda v: is_pos_int(v) or (isinstance(v, list) and v and all(is_pos_int(x) for x in v)),
        "a number of players, or a list of them",
        required=True,
    )
    table_sizes: tuple[int, ...] = ()
    if sizes_raw is not None:
        table_sizes = tuple(sorted(set([sizes_raw] if is_int(sizes_raw) else sizes_raw)))
        if game is not None:
            low, high = PLAYER_RANGE[game]
            for size in table_sizes:
                if not low <= size <= high:
                    doc.error(
                        "table_size", f"{game} is played by {low} to {high} players, not {size}"
                    )
    return table_sizes


@attrs.frozen
class BotList:
    """What the ``bots`` section gave: the valid entries and what the later sections check."""

    bots: list[BotEntry]
    keys: list[str]  # each valid entry's key, ``bots[i]``
    fingerprints: dict[str, str]  # bot name -> the fingerprint of its files
    raw: list  # the entries as written (valid or not)
    seen: dict[str, int]  # each name -> the index of its first entry


def read_bots(reader: Reader, data: dict, base: Path) -> BotList:
    """The ``bots`` list: each entry, and no name twice."""
    doc = reader.doc
    bots: list[BotEntry] = []
    bot_keys: list[str] = []
    fingerprints: dict[str, str] = {}
    bots_raw = reader.get(
        data, "", "bots", lambda v: isinstance(v, list) and v, "a list of bots", required=True
    )
    seen: dict[str, int] = {}
    for index, item in enumerate(bots_raw or []):
        entry, fingerprint = _bot(reader, item, f"bots[{index}]", base)
        name_of = item.get("name") if isinstance(item, dict) else None
        if isinstance(name_of, str):
            if name_of in seen:
                doc.error(f"bots[{index}].name", f"duplicate bot name {name_of!r}")
            seen.setdefault(name_of, index)
            fingerprints[name_of] = fingerprint
        if entry is not None:
            bots.append(entry)
            bot_keys.append(f"bots[{index}]")
    return BotList(bots, bot_keys, fingerprints, bots_raw or [], seen)


def read_schedule(
    reader: Reader, data: dict, table_sizes: tuple[int, ...], listed: BotList
) -> ScheduleConfig:
    """The ``schedule`` section, checked against the tables and the bots, and its size."""
    doc = reader.doc
    bots_raw, seen = listed.raw, listed.seen
    pool = len(bots_raw)
    sched = _section(reader, data, "schedule")
    reader.keys(
        sched,
        "schedule",
        ("type", "repeats", "games_per_table", "candidates", "deals", "games", "stop"),
    )
    stype = reader.get(
        sched,
        "schedule",
        "type",
        lambda v: v in SCHEDULE_TYPES,
        f"one of {', '.join(SCHEDULE_TYPES)}",
        default="round-robin",
    )
    repeats = reader.get(
        sched,
        "schedule",
        "repeats",
        lambda v: is_pos_int(v) and v <= MAX_REPEATS,
        f"an integer from 1 to {MAX_REPEATS}",
        1,
    )
    deals = reader.get(
        sched,
        "schedule",
        "deals",
        lambda v: v in DEAL_MODES,
        f"one of {', '.join(DEAL_MODES)}",
        default="independent",
    )
    per_table = reader.get(
        sched,
        "schedule",
        "games_per_table",
        lambda v: is_pos_int(v) and v <= MAX_GAMES_PER_TABLE,
        f"an integer from 1 to {MAX_GAMES_PER_TABLE}",
        1,
    )
    candidates = reader.get(
        sched,
        "schedule",
        "candidates",
        lambda v: isinstance(v, list) and all(is_str(x) for x in v),
        "a list of bot names",
        [],
    )
    budget = reader.get(
        sched,
        "schedule",
        "games",
        lambda v: is_pos_int(v) and v <= MAX_SCHEDULED_GAMES,
        f"an integer from 1 to {MAX_SCHEDULED_GAMES:,}",
        0,
    )
    if stype == "league":
        if "games" not in sched:
            doc.error("schedule", "a league needs `games` (its budget of games)")
        elif budget and table_sizes and budget < min(table_sizes) * per_table:
            doc.error(
                "schedule.games",
                f"{budget} games is less than one table ({min(table_sizes)} players x "
                f"{per_table} games per table)",
            )
        if "repeats" in sched:
            doc.error("schedule.repeats", "a league has no repeats: raise `games` instead")
    elif "games" in sched:
        doc.error("schedule.games", "only a league has a budget of `games`")
    if stype == "gauntlet":
        if not candidates:
            doc.error("schedule", "a gauntlet needs `candidates` (names of the bots tested)")
        for index, candidate in enumerate(candidates):
            if candidate not in seen:
                doc.error(f"schedule.candidates[{index}]", f"no bot named {candidate!r}")
        if len(set(candidates)) != len(candidates):
            doc.error("schedule.candidates", "a candidate is listed twice")
        field = pool - len(set(candidates))
        for size in table_sizes:
            if bots_raw and candidates and size - 1 > field:
                doc.error(
                    "table_size",
                    f"a gauntlet table of {size} needs {size - 1} field bots; "
                    f"there are {field} besides the candidates",
                )
    else:
        if candidates:
            doc.error("schedule.candidates", "only a gauntlet has candidates")
        for size in table_sizes:
            if bots_raw and size > pool:
                doc.error("table_size", f"a table of {size} needs {size} bots; there are {pool}")
    stop = _stop_rule(reader, sched, stype, repeats)

    if pool and table_sizes and not doc.errors and stype != "league":
        games = _scheduled_games(stype, pool, len(set(candidates)), table_sizes, repeats, per_table)
        if games > MAX_SCHEDULED_GAMES:
            doc.error(
                "schedule",
                f"{games:,} games scheduled; at most {MAX_SCHEDULED_GAMES:,} (fewer `repeats`, "
                "`games_per_table` or table sizes)",
            )
    return ScheduleConfig(stype, repeats, per_table, tuple(candidates), deals, budget, stop)


def read_time_control(reader: Reader, data: dict) -> TimeControl:
    """The ``time_control`` section (each value not given: ``TimeControl``'s default)."""
    tc = _section(reader, data, "time_control")
    reader.keys(tc, "time_control", ("move_seconds", "bank_seconds", "start_seconds"))
    default_tc = TimeControl()
    return TimeControl(
        move_seconds=float(
            reader.get(
                tc,
                "time_control",
                "move_seconds",
                lambda v: is_pos_number(v) and v <= MAX_MOVE_SECONDS,
                f"a positive number of seconds, at most {MAX_MOVE_SECONDS}",
                default_tc.move_seconds,
            )
        ),
        bank_seconds=float(
            reader.get(
                tc,
                "time_control",
                "bank_seconds",
                lambda v: (is_pos_number(v) or v == 0) and v <= MAX_BANK_SECONDS,
                f"a number of seconds from 0 to {MAX_BANK_SECONDS}",
                default_tc.bank_seconds,
            )
        ),
        start_seconds=float(
            reader.get(
                tc,
                "time_control",
                "start_seconds",
                lambda v: is_pos_number(v) and v <= MAX_START_SECONDS,
                f"a positive number of seconds, at most {MAX_START_SECONDS}",
                default_tc.start_seconds,
            )
        ),
    )


def read_sandbox(reader: Reader, data: dict) -> SandboxSettings:
    """The ``sandbox`` section: its mode, pondering, extra paths and limits."""
    sb = _section(reader, data, "sandbox")
    reader.keys(sb, "sandbox", ("mode", "ponder", "extra_paths", *LIMIT_KEYS))
    mode = reader.get(
        sb, "sandbox", "mode", lambda v: v in SANDBOX_MODES, f"one of {', '.join(SANDBOX_MODES)}"
    )
    extra_paths = reader.get(
        sb,
        "sandbox",
        "extra_paths",
        lambda v: isinstance(v, list) and all(is_str(x) for x in v),
        "a list of absolute paths",
        [],
    )
    return SandboxSettings(
        mode=mode or "bwrap",
        limits=_limits(
            reader,
            {k: v for k, v in sb.items() if k in LIMIT_KEYS},  # others: reported above
            "sandbox",
        ),
        ponder=reader.get(
            sb, "sandbox", "ponder", lambda v: isinstance(v, bool), "true or false", False
        ),
        extra_paths=tuple(extra_paths),
    )


def read_ratings(reader: Reader, data: dict) -> RatingsConfig:
    """The ``ratings`` section."""
    rt = _section(reader, data, "ratings")
    reader.keys(rt, "ratings", ("fault_ranks_last", "draw_probability"))
    return RatingsConfig(
        fault_ranks_last=reader.get(
            rt, "ratings", "fault_ranks_last", lambda v: isinstance(v, bool), "true or false", True
        ),
        draw_probability=reader.get(
            rt,
            "ratings",
            "draw_probability",
            lambda v: isinstance(v, int | float) and not isinstance(v, bool) and 0 < v < 1,
            "a probability strictly between 0 and 1",
        ),
    )


_LISTEN = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})")


def is_listen_address(value: Any) -> bool:
    """Whether ``value`` is ``HOST:PORT`` (an IPv6 host in brackets), the port 1 to 65535."""
    match = _LISTEN.fullmatch(value) if isinstance(value, str) else None
    return match is not None and 0 < int(match.group(2)) < 65536


def read_server(reader: Reader, data: dict) -> ServerConfig:
    """The ``server`` section (``serve``): each key a positive number, ``listen`` an address."""
    sv = _section(reader, data, "server")
    keys = tuple(field.name for field in attrs.fields(ServerConfig))
    reader.keys(sv, "server", keys)
    defaults = ServerConfig()
    values: dict[str, Any] = {}
    check: Callable[[Any], object]
    for field in attrs.fields(ServerConfig):
        default = getattr(defaults, field.name)
        if field.name == "listen":
            check, what = is_listen_address, "HOST:PORT, like 127.0.0.1:8707"
        elif isinstance(default, bool):
            check, what = (lambda v: isinstance(v, bool)), "true or false"
        elif isinstance(default, float):
            check, what = is_pos_number, "a positive number"
        elif field.name == "final_games":
            check, what = (lambda v: is_int(v) and v >= 0), "an integer >= 0"
        else:
            check, what = is_pos_int, "a positive integer"
        values[field.name] = reader.get(sv, "server", field.name, check, what, default)
    if isinstance(values["check_timeout"], int):
        values["check_timeout"] = float(values["check_timeout"])
    return ServerConfig(**values)


@attrs.frozen
class RunSettings:
    """The top-level keys of how the tournament runs and what it writes."""

    workers: int | None
    output: str | None  # as written (None: ``out/<name>``)
    seed: int | None
    reveal_seeds: bool
    replays: bool
    cluster: str | None
    cluster_bots: str
    site_logs: str = "complete"


#: the most local worker processes a run may ask for (each runs a match and its bots)
MAX_WORKERS = 1024


def read_run_settings(reader: Reader, data: dict) -> RunSettings:
    """``workers``, ``output``, ``seed``, ``reveal_seeds``, ``replays``, ``cluster``,
    ``cluster_bots``, ``site_logs``."""
    workers = reader.get(
        data,
        "",
        "workers",
        lambda v: is_pos_int(v) and v <= MAX_WORKERS,
        f"a positive integer, at most {MAX_WORKERS} (each worker is a process with its bots)",
        None,
    )
    output_raw = reader.get(data, "", "output", is_str, "a directory")
    seed = reader.get(data, "", "seed", lambda v: is_int(v) and v >= 0, "an integer >= 0", None)
    reveal_seeds = reader.get(
        data, "", "reveal_seeds", lambda v: isinstance(v, bool), "true or false", False
    )
    replays = reader.get(data, "", "replays", lambda v: isinstance(v, bool), "true or false", False)
    cluster = reader.get(
        data, "", "cluster", is_cluster_address, "a Dask scheduler address like tcp://HOST:8786"
    )
    cluster_bots = reader.get(
        data,
        "",
        "cluster_bots",
        lambda v: v in CLUSTER_BOTS,
        f"one of {', '.join(CLUSTER_BOTS)}",
        "shared",
    )
    site_logs = reader.get(
        data,
        "",
        "site_logs",
        lambda v: v in SITE_LOGS,
        f"one of {', '.join(SITE_LOGS)}",
        "complete",
    )
    return RunSettings(
        workers,
        output_raw,
        seed,
        reveal_seeds,
        replays,
        cluster,
        cluster_bots,
        site_logs,
    )


def read_staging(reader: Reader, data: dict) -> StageLimits:
    """The ``staging`` section: how many MB of files (apparent sizes) a bot's copy may hold
    (``bot_mb``) and all the bots' copies together (``total_mb``)."""
    section = _section(reader, data, "staging")
    reader.keys(section, "staging", ("bot_mb", "total_mb"))
    default = StageLimits()

    def valid(value: Any) -> bool:
        return is_pos_int(value) and value <= STAGE_MAX_MB

    expected = f"an integer from 1 to {STAGE_MAX_MB:,}"
    bot_mb = reader.get(section, "staging", "bot_mb", valid, expected, default.bot_bytes >> 20)
    total_mb = reader.get(
        section, "staging", "total_mb", valid, expected, default.total_bytes >> 20
    )
    return attrs.evolve(
        default,
        bot_bytes=bot_mb << 20,
        total_bytes=total_mb << 20,
        bot_key="key `staging.bot_mb`",
        total_key="key `staging.total_mb`",
    )


def read_output(
    doc: Document, name: str, output_raw: str | None, base: Path, out_base: Path
) -> Path:
    """The output directory: ``output`` from ``base``, else ``out/<name>`` under ``out_base``;
    not a file."""
    default_output = out_base / "out" / name
    output = (base / output_raw).resolve() if output_raw is not None else default_output
    if output.exists() and not output.is_dir():
        doc.error("output" if output_raw is not None else "name", f"{output} is not a folder")
    return output


def check_extra_paths(doc: Document, paths: list[str], output: str, bots: list) -> None:
    """Each extra path exists and shows no bot the output or another bot's folder."""
    protected: dict[str, str | None] = {"the output folder": output}
    for entry in bots:
        spec = entry.spec
        protected[f"the folder of bot {spec.name}"] = bot_folder(spec.command, spec.directory)
    for index, path in enumerate(paths):
        problem = extra_path_problem(path, protected)
        if problem is not None:
            doc.error(f"sandbox.extra_paths[{index}]", problem)
