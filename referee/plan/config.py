"""Tournament configuration: a YAML file, validated whole before anything runs.

Every mistake is reported at once, each with the file, the line and the key that holds it
(``config.yaml:12: key `bots[2].command`: ...``), as one :class:`ConfigError`. Paths in the
file are relative to the file. The result is a frozen :class:`TourneyConfig`.

``DEMO_CONFIG`` is the quickstart tournament shipped inside the package; its bot files are the
example bots installed with ``ohseven.example_bots``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import yaml
from ohseven.core.rules import GAMES, PLAYER_RANGE, InvalidRulesError, Rules
from ohseven.referee.records import BotSpec, TimeControl
from ohseven.referee.sandbox.process import (
    MODES as SANDBOX_MODES,  # the sandbox owns its modes and limits
)
from ohseven.referee.sandbox.process import Limits

__all__ = [
    "ConfigError",
    "BotEntry",
    "ScheduleConfig",
    "SandboxSettings",
    "RatingsConfig",
    "StopRule",
    "TourneyConfig",
    "load_config",
    "load_config_text",
    "demo_config",
    "DEMO_CONFIG",
    "SCHEDULE_TYPES",
    "SANDBOX_MODES",
    "LIMIT_KEYS",
    "CLUSTER_BOTS",
    "is_cluster_address",
    "changed_keys",
]

SCHEDULE_TYPES = ("round-robin", "gauntlet", "league")
#: ``schedule.deals``: a deal of its own for every game, or each deal once per seat rotation
DEAL_MODES = ("independent", "duplicate")
#: how bots reach Dask workers: the same paths on every worker, or shipped from the referee
CLUSTER_BOTS = ("shared", "ship")
#: resource limits of a bot: the fields of ``sandbox.Limits``; all positive integers but ``cpus``.
LIMIT_KEYS = tuple(field.name for field in attrs.fields(Limits))
#: limits that are positive numbers (the others are positive integers)
_NUMBER_LIMITS = ("cpus",)

#: The quickstart: the three example bots, a small round-robin of Oh-Seven.
DEMO_CONFIG = """\
name: quickstart
game: oh-seven
table_size: [2, 3]
bots:
  - name: random
    file: random_bot.py
  - name: heuristic
    file: heuristic_bot.py
  - name: montecarlo
    file: montecarlo_bot.py
    args: [--samples, "60"]
schedule:
  type: round-robin
  repeats: 1
  games_per_table: 4
time_control:
  move_seconds: 0.3
  bank_seconds: 5.0
  start_seconds: 10.0
sandbox:
  mode: unsandboxed
replays: true
"""


class ConfigError(ValueError):
    """A configuration file with mistakes; ``errors`` lists each as ``file:line: key `k`: ...``."""

    def __init__(self, source: str, errors: list[str]) -> None:
        self.source = source
        self.errors = list(errors)
        count = len(self.errors)
        head = f"{source}: {count} error{'s' if count != 1 else ''} in the configuration"
        super().__init__("\n".join([head, *(f"  {error}" for error in self.errors)]))


@attrs.frozen
class BotEntry:
    """A bot of the tournament: its spec, and the sandbox limits it overrides."""

    spec: BotSpec
    limits: tuple[tuple[str, int | float], ...] = ()

    @property
    def name(self) -> str:
        return self.spec.name


@attrs.frozen
class StopRule:
    """A gauntlet's stopping rule (``schedule.stop``; see ``stopping``): stop a candidate once
    its points per game against the field are settled (better, worse or within ``margin``)."""

    confidence: float = 0.95
    #: the difference of points per game (candidate minus the field) that matters
    margin: float = 1.0
    #: games of the candidate (in complete repeats) before any decision
    min_games: int = 30


@attrs.frozen
class ScheduleConfig:
    type: str = "round-robin"
    repeats: int = 1
    games_per_table: int = 1
    candidates: tuple[str, ...] = ()
    deals: str = "independent"
    #: a league's budget of games (0 for the other types)
    games: int = 0
    #: a gauntlet's stopping rule, or None (every repeat is played)
    stop: StopRule | None = None


@attrs.frozen
class SandboxSettings:
    """The sandbox mode, the limits given in the file (others keep the sandbox's defaults) and
    whether bots may run between their turns (``ponder``, see ``sandbox.SandboxConfig``)."""

    mode: str = "bwrap"
    limits: tuple[tuple[str, int | float], ...] = ()
    ponder: bool = False
    extra_paths: tuple[str, ...] = ()  # absolute host paths shown read-only to every bot


@attrs.frozen
class RatingsConfig:
    fault_ranks_last: bool = True
    draw_probability: float | None = None  # None: the game's estimate (see ``ratings``)


@attrs.frozen
class TourneyConfig:
    name: str
    rules: Rules
    table_sizes: tuple[int, ...]
    bots: tuple[BotEntry, ...]
    schedule: ScheduleConfig = ScheduleConfig()
    time_control: TimeControl = TimeControl()
    sandbox: SandboxSettings = SandboxSettings()
    ratings: RatingsConfig = RatingsConfig()
    workers: int = 1
    output: str = "out"
    #: the organiser's seed; None (the default): a random secret kept in the output (``secret``)
    seed: int | None = None
    replays: bool = False
    #: publish the secret and every game's seed once the tournament is complete
    reveal_seeds: bool = False
    #: a Dask scheduler's address (``tcp://HOST:8786``), or None for the local pool
    cluster: str | None = None
    cluster_bots: str = "shared"
    source: str = "<config>"
    #: digest of everything that decides the results (not workers, output, cluster or source;
    #: for a league, not the bots nor the budget of games either: see ``changed_keys``)
    digest: str = ""
    #: (name, digest of the bot's entry and program) of every bot: a league refuses a bot
    #: that changed under the same name
    bot_fingerprints: tuple[tuple[str, str], ...] = ()
    #: the document as read, as plain data (stored with the tournament)
    document: dict = attrs.field(factory=dict, eq=False)
    #: (bot name, ``staging.tree_digest`` of its staged files): part of ``digest``
    bot_digests: tuple[tuple[str, str], ...] = ()

    @property
    def bot_names(self) -> tuple[str, ...]:
        return tuple(bot.name for bot in self.bots)

    @property
    def game(self) -> str:
        return self.rules.game


# --------------------------------------------------------------------------- YAML with lines


class _Document:
    """A composed YAML document as plain data plus the line of every key path."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines: dict[str, int] = {}
        self._errors: list[tuple[int, str]] = []
        self._collections: set[int] = set()

    @property
    def errors(self) -> list[str]:
        """Every error so far, in the order of the file."""
        return [text for _, text in sorted(self._errors, key=lambda item: item[0])]

    def error(self, path: str, message: str) -> None:
        line = self.line(path)
        where = f"{self.source}:{line}" if line else self.source
        text = f"{where}: key `{path}`: {message}" if path else f"{where}: {message}"
        self._errors.append((line or 0, text))

    def line(self, path: str) -> int | None:
        while path:
            if path in self.lines:
                return self.lines[path]
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
        return self.lines.get("")

    def convert(self, node: yaml.Node, path: str) -> Any:
        self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode | yaml.SequenceNode):
            # an alias is the same node again: expanding it could grow the document
            # exponentially (a "billion laughs"), so a collection may appear only once
            if id(node) in self._collections:
                self.error(path, "YAML aliases of maps or lists (`*name`) are not supported")
                return None
            self._collections.add(id(node))
        if isinstance(node, yaml.MappingNode):
            result: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
                if not isinstance(key, str):
                    self.lines[path + ".?"] = key_node.start_mark.line + 1
                    self.error(path + ".?", "keys must be plain words")
                    continue
                child = f"{path}.{key}" if path else key
                self.lines[child] = key_node.start_mark.line + 1
                if key in result:
                    self.error(child, "given twice")
                    continue
                result[key] = self.convert(value_node, child)
            return result
        if isinstance(node, yaml.SequenceNode):
            items = []
            for index, item in enumerate(node.value):
                child = f"{path}[{index}]"
                self.lines[child] = item.start_mark.line + 1
                items.append(self.convert(item, child))
            return items
        return yaml.SafeLoader.construct_object(_CONSTRUCTOR, node, deep=True)


_CONSTRUCTOR = yaml.SafeLoader("")


# --------------------------------------------------------------------------- typed getters


class _Reader:
    def __init__(self, doc: _Document) -> None:
        self.doc = doc

    def keys(self, data: dict, path: str, allowed: tuple[str, ...]) -> None:
        for key in data:
            if key not in allowed:
                child = f"{path}.{key}" if path else key
                self.doc.error(child, f"unknown key; expected one of {', '.join(allowed)}")

    def get(
        self,
        data: dict,
        path: str,
        key: str,
        check: Callable[[Any], object],  # truthy: valid
        expected: str,
        default: Any = None,
        required: bool = False,
    ) -> Any:
        child = f"{path}.{key}" if path else key
        if key not in data or data[key] is None:
            if required:
                self.doc.error(path, f"missing key `{key}` ({expected})")
            return default
        value = data[key]
        if not check(value):
            self.doc.error(child, f"expected {expected}, not {value!r}")
            return default
        return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_pos_int(value: Any) -> bool:
    return _is_int(value) and value > 0


def _is_pos_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def _is_str(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


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
)
BOT_KEYS = ("name", "file", "args", "command", "directory", "limits", "ponder")
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

#: keys that do not change the games: left out of the digest. The seed is left out too, so the
#: published digest cannot be searched for a short seed; the store checks the secret apart.
NOT_IN_DIGEST = ("workers", "output", "cluster", "cluster_bots", "seed", "reveal_seeds")


def _fixed_part(data: dict) -> dict:
    """What a league may not change once it started: everything in the digest but the bots and
    the budget of games (bots join and leave; the budget can grow)."""
    fixed = {k: v for k, v in data.items() if k not in NOT_IN_DIGEST and k != "bots"}
    schedule = fixed.get("schedule")
    if isinstance(schedule, dict):
        fixed["schedule"] = {k: v for k, v in schedule.items() if k != "games"}
    return fixed


def _flatten(value: Any, path: str, out: dict[str, Any]) -> dict[str, Any]:
    if isinstance(value, dict) and value:
        for key, inner in value.items():
            _flatten(inner, f"{path}.{key}" if path else str(key), out)
    else:
        out[path] = value
    return out


def changed_keys(old: dict, new: dict) -> list[tuple[str, Any, Any]]:
    """(key, old value, new value) of every key of a league's fixed part (rules, table sizes,
    time control, deals...) that differs between two configuration documents; a missing key
    is None."""
    before, after = (
        _flatten(json.loads(json.dumps(_fixed_part(d), sort_keys=True, default=str)), "", {})
        for d in (old, new)
    )
    return [
        (key, before.get(key), after.get(key))
        for key in sorted(set(before) | set(after))
        if before.get(key) != after.get(key)
    ]


_CLUSTER_ADDRESS = re.compile(r"(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})")


def is_cluster_address(value: Any) -> bool:
    """Whether ``value`` is a Dask scheduler address: ``tcp://HOST:PORT`` or ``tls://HOST:PORT``."""
    match = _CLUSTER_ADDRESS.fullmatch(value) if isinstance(value, str) else None
    return match is not None and 0 < int(match.group(3)) < 65536


@functools.lru_cache(maxsize=256)
def _file_digest(path: Path) -> str:
    # cached within a load: many bots of a league run the same file
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def _bot(reader: _Reader, data: Any, path: str, base: Path) -> tuple[BotEntry | None, str]:
    doc = reader.doc
    if not isinstance(data, dict):
        doc.error(path, f"expected a mapping with name and file or command, not {data!r}")
        return None, ""
    reader.keys(data, path, BOT_KEYS)
    name = reader.get(data, path, "name", _is_str, "a non-empty name", required=True)
    file = reader.get(data, path, "file", _is_str, "a path to the bot's program")
    command = reader.get(
        data,
        path,
        "command",
        lambda v: _is_str(v) or (isinstance(v, list) and v and all(_is_str(x) for x in v)),
        "a command line (a string or a list of words)",
    )
    directory = reader.get(data, path, "directory", _is_str, "a directory")
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
        fingerprint = _file_digest(target)
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
    return BotEntry(BotSpec(name, argv, directory, limits, ponder), limits), fingerprint


def _staged_digests(
    doc: _Document,
    bots: list[BotEntry],
    keys: list[str],
    output: Path,
    source: str,
    mode: str,
) -> dict[str, str]:
    """The ``staging.tree_digest`` of each bot's copy; errors (a bot's folder inside the output
    folder, a private path the sandbox shows every bot) go to ``doc``."""
    from ohseven.referee.sandbox import staging
    from ohseven.referee.sandbox.process import _python_paths

    private = staging.referee_paths(str(output), source)
    if mode == "bwrap":  # unsandboxed bots see every file their uid can read anyway
        shown = _python_paths()
        for key, what in (("output", "the output folder"), ("", "the configuration file")):
            try:
                staging.check_views({what: private[what]} if what in private else {}, shown)
            except staging.StagingError as error:
                doc.error(key, str(error))
    try:
        plans = staging.plan_bots([bot.spec for bot in bots], private=private)
        # by what the copy holds: the clones of a league (one folder, one command) share one
        digests: dict[Any, str] = {}
        named = {}
        for bot, plan in zip(bots, plans, strict=True):
            content = None if plan is None else (plan.source, plan.excluded, plan.files)
            if content not in digests:
                digests[content] = staging.tree_digest(plan)
            named[bot.name] = digests[content]
        return named
    except staging.StagingError as error:
        key = keys[error.index] if error.index is not None else ""
        doc.error(key, str(error))
        return {}


def _limits(reader: _Reader, data: Any, path: str) -> tuple[tuple[str, int | float], ...]:
    if data is None:
        return ()
    if not isinstance(data, dict):
        reader.doc.error(path, f"expected a mapping of limits, not {data!r}")
        return ()
    reader.keys(data, path, LIMIT_KEYS)
    values = []
    for key in LIMIT_KEYS:
        if key in _NUMBER_LIMITS:
            value = reader.get(data, path, key, _is_pos_number, "a positive number")
        else:
            value = reader.get(data, path, key, _is_pos_int, "a positive integer")
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


def _stop_rule(reader: _Reader, sched: dict, stype: str | None, repeats: int) -> StopRule | None:
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
        lambda v: _is_pos_number(v) and 0.5 < v <= MAX_STOP_CONFIDENCE,
        f"a probability above 0.5 and at most {MAX_STOP_CONFIDENCE}",
        default.confidence,
    )
    margin = reader.get(
        data,
        path,
        "margin",
        lambda v: _is_pos_number(v) and v <= MAX_STOP_MARGIN,
        f"a positive number of points per game, at most {MAX_STOP_MARGIN}",
        required=True,
    )
    min_games = reader.get(
        data,
        path,
        "min_games",
        lambda v: _is_int(v) and 2 <= v <= MAX_SCHEDULED_GAMES,
        f"an integer from 2 to {MAX_SCHEDULED_GAMES:,}",
        default.min_games,
    )
    if margin is None:
        return None
    return StopRule(float(confidence), float(margin), min_games)


def _section(reader: _Reader, data: dict, key: str) -> dict:
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        reader.doc.error(key, f"expected a mapping, not {value!r}")
        return {}
    return value


def load_config_text(
    text: str,
    *,
    source: str = "<config>",
    base_dir: str | os.PathLike[str] = ".",
    output_base: str | os.PathLike[str] | None = None,
) -> TourneyConfig:
    """Parse and validate a configuration; raise :class:`ConfigError` listing every mistake.

    Relative paths are taken from ``base_dir``; the default output directory is
    ``out/<name>`` under ``output_base`` (``base_dir`` when not given).
    """
    _file_digest.cache_clear()  # a file may have changed since the last load
    base = Path(base_dir).resolve()
    out_base = Path(output_base).resolve() if output_base is not None else base
    doc = _Document(source)
    data = _parse(doc, text)
    reader = _Reader(doc)
    reader.keys(data, "", TOP_KEYS)
    # each section in turn, so that the errors come in the order they always have
    name, game = _name_and_game(reader, data)
    rules = _rules(reader, data, game)
    table_sizes = _table_sizes(reader, data, game)
    listed = _bots(reader, data, base)
    schedule = _schedule(reader, data, table_sizes, listed)
    time_control = _time_control(reader, data)
    sandbox = _sandbox(reader, data)
    ratings = _ratings(reader, data)
    run = _run_settings(reader, data)
    output = None if name is None else _output(doc, name, run.output, base, out_base)
    if output is not None:
        _check_extra_paths(doc, list(sandbox.extra_paths), str(output), listed.bots)
    if doc.errors:
        raise ConfigError(source, doc.errors)
    assert name is not None and rules is not None and output is not None
    # what decides the results is the bots' staged copies (see ``staging``), not just a file
    staged = _staged_digests(doc, listed.bots, listed.keys, output, source, sandbox.mode)
    listed.fingerprints.update(staged)
    if doc.errors:
        raise ConfigError(source, doc.errors)
    digest, bot_fingerprints = _digests(data, schedule.type, listed)
    return TourneyConfig(
        name=name,
        rules=rules,
        table_sizes=table_sizes,
        bots=tuple(listed.bots),
        schedule=schedule,
        time_control=time_control,
        sandbox=sandbox,
        ratings=ratings,
        workers=run.workers or os.cpu_count() or 1,
        output=str(output),
        seed=run.seed,
        replays=run.replays,
        reveal_seeds=run.reveal_seeds,
        cluster=run.cluster,
        cluster_bots=run.cluster_bots,
        source=source,
        digest=digest,
        bot_fingerprints=bot_fingerprints,
        document=data,
        bot_digests=tuple(staged.items()),
    )


def _parse(doc: _Document, text: str) -> dict:
    """The YAML document as plain data (a mapping at the top), its lines noted in ``doc``."""
    source = doc.source
    try:
        # libyaml's parser when PyYAML has it: a league's thousand bots parse in milliseconds
        node = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        raise ConfigError(source, [f"{source}{line}: not valid YAML: {problem}"]) from None
    if node is None:
        raise ConfigError(source, [f"{source}: the file is empty"])
    data = doc.convert(node, "")
    if not isinstance(data, dict):
        raise ConfigError(source, [f"{source}:1: expected a mapping of keys at the top"])
    return data


def _name_and_game(reader: _Reader, data: dict) -> tuple[str | None, str | None]:
    """``name`` (a directory name) and ``game``."""
    doc = reader.doc
    name = reader.get(data, "", "name", _is_str, "a non-empty name", required=True)
    if name is not None and (os.sep in name or name in (".", "..")):
        doc.error("name", f"{name!r} is used as a directory name: no slashes")
    game = reader.get(
        data, "", "game", lambda v: v in GAMES, f"one of {', '.join(GAMES)}", required=True
    )
    return name, game


def _rules(reader: _Reader, data: dict, game: str | None) -> Rules | None:
    """The ``rules`` section: each option checked on its own, then all of them together."""
    doc = reader.doc
    rules = None
    options = _section(reader, data, "rules")
    if game is not None:
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


def _table_sizes(reader: _Reader, data: dict, game: str | None) -> tuple[int, ...]:
    """``table_size``: the sizes, sorted, each one the game is played by."""
    doc = reader.doc
    sizes_raw = reader.get(
        data,
        "",
        "table_size",
        lambda v: _is_pos_int(v) or (isinstance(v, list) and v and all(_is_pos_int(x) for x in v)),
        "a number of players, or a list of them",
        required=True,
    )
    table_sizes: tuple[int, ...] = ()
    if sizes_raw is not None:
        table_sizes = tuple(sorted(set([sizes_raw] if _is_int(sizes_raw) else sizes_raw)))
        if game is not None:
            low, high = PLAYER_RANGE[game]
            for size in table_sizes:
                if not low <= size <= high:
                    doc.error(
                        "table_size", f"{game} is played by {low} to {high} players, not {size}"
                    )
    return table_sizes


@attrs.frozen
class _BotList:
    """What the ``bots`` section gave: the valid entries and what the later sections check."""

    bots: list[BotEntry]
    keys: list[str]  # each valid entry's key, ``bots[i]``
    fingerprints: dict[str, str]  # bot name -> the fingerprint of its files
    raw: list  # the entries as written (valid or not)
    seen: dict[str, int]  # each name -> the index of its first entry


def _bots(reader: _Reader, data: dict, base: Path) -> _BotList:
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
    return _BotList(bots, bot_keys, fingerprints, bots_raw or [], seen)


def _schedule(
    reader: _Reader, data: dict, table_sizes: tuple[int, ...], listed: _BotList
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
        lambda v: _is_pos_int(v) and v <= MAX_REPEATS,
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
        lambda v: _is_pos_int(v) and v <= MAX_GAMES_PER_TABLE,
        f"an integer from 1 to {MAX_GAMES_PER_TABLE}",
        1,
    )
    candidates = reader.get(
        sched,
        "schedule",
        "candidates",
        lambda v: isinstance(v, list) and all(_is_str(x) for x in v),
        "a list of bot names",
        [],
    )
    budget = reader.get(
        sched,
        "schedule",
        "games",
        lambda v: _is_pos_int(v) and v <= MAX_SCHEDULED_GAMES,
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


def _time_control(reader: _Reader, data: dict) -> TimeControl:
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
                lambda v: _is_pos_number(v) and v <= MAX_MOVE_SECONDS,
                f"a positive number of seconds, at most {MAX_MOVE_SECONDS}",
                default_tc.move_seconds,
            )
        ),
        bank_seconds=float(
            reader.get(
                tc,
                "time_control",
                "bank_seconds",
                lambda v: (_is_pos_number(v) or v == 0) and v <= MAX_BANK_SECONDS,
                f"a number of seconds from 0 to {MAX_BANK_SECONDS}",
                default_tc.bank_seconds,
            )
        ),
        start_seconds=float(
            reader.get(
                tc,
                "time_control",
                "start_seconds",
                lambda v: _is_pos_number(v) and v <= MAX_START_SECONDS,
                f"a positive number of seconds, at most {MAX_START_SECONDS}",
                default_tc.start_seconds,
            )
        ),
    )


def _sandbox(reader: _Reader, data: dict) -> SandboxSettings:
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
        lambda v: isinstance(v, list) and all(_is_str(x) for x in v),
        "a list of absolute paths",
        [],
    )
    return SandboxSettings(
        mode=mode or "bwrap",
        limits=_limits(
            reader,
            {k: v for k, v in sb.items() if k not in ("mode", "ponder", "extra_paths")},
            "sandbox",
        ),
        ponder=reader.get(
            sb, "sandbox", "ponder", lambda v: isinstance(v, bool), "true or false", False
        ),
        extra_paths=tuple(extra_paths),
    )


def _ratings(reader: _Reader, data: dict) -> RatingsConfig:
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


@attrs.frozen
class _RunSettings:
    """The top-level keys of how the tournament runs and what it writes."""

    workers: int | None
    output: str | None  # as written (None: ``out/<name>``)
    seed: int | None
    reveal_seeds: bool
    replays: bool
    cluster: str | None
    cluster_bots: str


def _run_settings(reader: _Reader, data: dict) -> _RunSettings:
    """``workers``, ``output``, ``seed``, ``reveal_seeds``, ``replays``, ``cluster``,
    ``cluster_bots``."""
    workers = reader.get(data, "", "workers", _is_pos_int, "a positive integer", None)
    output_raw = reader.get(data, "", "output", _is_str, "a directory")
    seed = reader.get(data, "", "seed", lambda v: _is_int(v) and v >= 0, "an integer >= 0", None)
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
    return _RunSettings(workers, output_raw, seed, reveal_seeds, replays, cluster, cluster_bots)


def _output(doc: _Document, name: str, output_raw: str | None, base: Path, out_base: Path) -> Path:
    """The output directory: ``output`` from ``base``, else ``out/<name>`` under ``out_base``;
    not a file."""
    default_output = out_base / "out" / name
    output = (base / output_raw).resolve() if output_raw is not None else default_output
    if output.exists() and not output.is_dir():
        doc.error("output" if output_raw is not None else "name", f"{output} is not a folder")
    return output


def _digests(
    data: dict, stype: str | None, listed: _BotList
) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The configuration's digest (what decides the results) and each bot's fingerprint."""
    fingerprints = listed.fingerprints
    if stype == "league":  # bots may join and leave: each is checked apart (bot_fingerprints)
        decisive = _fixed_part(data)
    else:
        decisive = {k: v for k, v in data.items() if k not in NOT_IN_DIGEST}
        decisive["_bot_files"] = fingerprints
    entries = {
        item["name"]: item for item in listed.raw if isinstance(item, dict) and "name" in item
    }
    bot_fingerprints = tuple(
        (
            bot.name,
            hashlib.sha256(
                json.dumps(
                    [entries.get(bot.name), fingerprints.get(bot.name, "")],
                    sort_keys=True,
                    default=str,
                ).encode()
            ).hexdigest()[:16],
        )
        for bot in listed.bots
    )
    digest = hashlib.sha256(json.dumps(decisive, sort_keys=True, default=str).encode()).hexdigest()[
        :16
    ]
    return digest, bot_fingerprints


def _check_extra_paths(doc: _Document, paths: list[str], output: str, bots: list) -> None:
    """Each extra path exists and shows no bot the output or another bot's folder."""
    from ohseven.referee.sandbox.process import bot_folder, extra_path_problem

    protected: dict[str, str | None] = {"the output folder": output}
    for entry in bots:
        spec = entry.spec
        protected[f"the folder of bot {spec.name}"] = bot_folder(spec.command, spec.directory)
    for index, path in enumerate(paths):
        problem = extra_path_problem(path, protected)
        if problem is not None:
            doc.error(f"sandbox.extra_paths[{index}]", problem)


def load_config(path: str | os.PathLike[str]) -> TourneyConfig:
    """Read and validate the configuration file at ``path``."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(str(path), [f"{path}: cannot read: {error.strerror}"]) from None
    except UnicodeDecodeError:
        raise ConfigError(str(path), [f"{path}: not a UTF-8 text file"]) from None
    return load_config_text(text, source=str(path), base_dir=file.resolve().parent)


def example_bots_dir() -> Path:
    """The directory of the installed example bots."""
    from ohseven import example_bots

    return Path(example_bots.__file__).resolve().parent


def demo_config(output_base: str | os.PathLike[str] = ".") -> TourneyConfig:
    """The embedded quickstart, its bots taken from the installed example bots.

    The example bots are ours, so the demo runs them in the bubblewrap sandbox where it is
    installed and, as an explicit choice made here, unsandboxed where it is not.
    """
    text = DEMO_CONFIG
    if shutil.which("bwrap") is not None:
        text = text.replace("mode: unsandboxed", "mode: bwrap")
    return load_config_text(
        text, source="<demo>", base_dir=example_bots_dir(), output_base=output_base
    )
