"""The command-line arguments that name bots and what comes with them (``--extra-path``, the
time control, the resource and staging limits, a printed seed), and how much of a bot's output
a fault shows: shared by every command that runs bots (``match``, ``check-bot``, ``replay``,
``play``)."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import sys
from collections import Counter
from collections.abc import Callable, Sequence

import attrs
from ohseven.referee.records import BotSpec, TimeControl
from ohseven.referee.sandbox.paths import bot_folder, extra_path_problem
from ohseven.referee.sandbox.settings import LIMIT_MAXIMA, Limits
from ohseven.referee.sandbox.staging import STAGE_MAX_MB, StageLimits
from ohseven.referee.secret import random_seed
from ohseven.referee.terminal import printable

__all__ = [
    "BotArgumentError",
    "TAIL_LINES",
    "TAIL_CHARS",
    "add_extra_path_argument",
    "add_limit_arguments",
    "sandbox_limits",
    "stage_limits",
    "add_time_control_arguments",
    "announce_seed",
    "bot_specs",
    "extra_paths",
    "output_tail",
]

#: how much of a faulting bot's own output ``match`` and ``check-bot`` show: its last lines
TAIL_LINES = 20
TAIL_CHARS = 2000
#: the first error line kept above an output's tail: at most this long
ERROR_LINE_CHARS = 300
# a line that says what failed: "Error: ...", "SomethingError: ...", "Exception in thread",
# "error: ...", "fatal error", "panic: ...", "Traceback (most recent call last):"
_ERROR_LINE = re.compile(
    r"^.*(?:\b\w*(?:Error|Exception)\b|\berror:|\bfatal\b|^panic:|^Traceback ).*$",
    re.MULTILINE | re.IGNORECASE,
)


class BotArgumentError(ValueError):
    """A BOT argument that names no runnable bot."""


def add_extra_path_argument(parser: argparse.ArgumentParser) -> None:
    """``--extra-path``, shared by the commands that run bots."""
    parser.add_argument(
        "--extra-path",
        action="append",
        default=[],
        metavar="PATH",
        help="an absolute host path the sandbox shows the bots read-only (repeatable): an "
        "interpreter or library installed outside /usr, e.g. /opt/jdk",
    )


def extra_paths(
    paths: Sequence[str], bots: Sequence[BotSpec], output: str | None = None
) -> tuple[str, ...]:
    """The ``--extra-path`` values, checked: absolute, existing, never showing a bot another
    bot's folder or the output folder (raises :class:`BotArgumentError`)."""
    protected: dict[str, str | None] = {"the output folder": output}
    for spec in bots:
        protected[f"the folder of bot {spec.name}"] = bot_folder(spec.command, spec.directory)
    for path in paths:
        problem = extra_path_problem(path, protected)
        if problem is not None:
            raise BotArgumentError(f"--extra-path: {problem}")
    return tuple(paths)


#: what each limit flag sets (the tournament configuration's key of the same name)
_LIMIT_HELP = {
    "memory_mb": "the bot's total memory, all its processes together, and each process's "
    "address space (a JVM or Go runtime reserves more than its heap: see docs/BOTS.md)",
    "cpus": "cores the bot may use at most (a fraction allowed)",
    "cpu_seconds": "CPU seconds of each process for the whole match",
    "processes": "processes and threads of the bot",
    "open_files": "open files of each process",
    "file_size_mb": "the largest file a process may write",
    "scratch_mb": "the bot's private /tmp",
    "log_bytes": "how much of the bot's output is kept",
}


def _bounded(most: int, number: type) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = number(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, not {text!r}") from None
        if not 0 < value <= most:
            raise argparse.ArgumentTypeError(f"expected 1 to {most:,}, not {text}")
        return value

    return parse


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """A flag for each of a bot's resource limits and for the size of its staged copy, as a
    tournament configuration sets them (``sandbox:`` and ``staging.bot_mb``), so that a bot
    can be checked as it would play."""
    group = parser.add_argument_group(
        "limits", "each bot's resource limits, as a tournament's `sandbox:` section sets them"
    )
    defaults = Limits()
    for key, text in _LIMIT_HELP.items():
        number = float if key == "cpus" else int
        group.add_argument(
            "--" + key.replace("_", "-"),
            type=_bounded(LIMIT_MAXIMA[key], number),
            default=getattr(defaults, key),
            metavar="N",
            help=f"{text} (default %(default)s)",
        )
    group.add_argument(
        "--stage-mb",
        type=_bounded(STAGE_MAX_MB, int),
        default=StageLimits().bot_bytes >> 20,
        metavar="MB",
        help="the most a bot's files may hold (apparent sizes), as `staging.bot_mb` "
        "(default %(default)s)",
    )
    group.add_argument(
        "--stage-total-mb",
        type=_bounded(STAGE_MAX_MB, int),
        default=None,
        metavar="MB",
        help="the most the files of all the bots together may hold, as `staging.total_mb` "
        f"(default {StageLimits().total_bytes >> 20}, or --stage-mb if larger)",
    )


def sandbox_limits(args: argparse.Namespace) -> Limits:
    """The limits of :func:`add_limit_arguments`' flags."""
    return Limits(**{key: getattr(args, key) for key in _LIMIT_HELP})


def stage_limits(args: argparse.Namespace) -> StageLimits:
    """The staging limits of :func:`add_limit_arguments`' ``--stage-mb`` and
    ``--stage-total-mb``."""
    per_bot = args.stage_mb << 20
    if args.stage_total_mb is None:
        total = max(StageLimits().total_bytes, per_bot)
    else:
        total = args.stage_total_mb << 20
    return attrs.evolve(
        StageLimits(),
        bot_bytes=per_bot,
        total_bytes=total,
        bot_key="--stage-mb",
        total_key="--stage-total-mb",
    )


def add_time_control_arguments(parser: argparse.ArgumentParser) -> None:
    """``--move-timeout`` and ``--bank``, shared by the commands that run bots."""
    parser.add_argument(
        "--move-timeout",
        type=float,
        default=TimeControl().move_seconds,
        metavar="SECONDS",
        help="time per decision (default %(default)s)",
    )
    parser.add_argument(
        "--bank",
        type=float,
        default=TimeControl().bank_seconds,
        metavar="SECONDS",
        help="extra time per game, drawn when a decision runs over (default %(default)s)",
    )


def _command(argument: str) -> tuple[str, ...]:
    if argument.endswith(".py") and os.path.isfile(argument):
        return (sys.executable, os.path.abspath(argument))
    if os.path.isfile(argument) and os.access(argument, os.X_OK):
        return (os.path.abspath(argument),)
    try:
        command = tuple(shlex.split(argument))
    except ValueError as error:
        raise BotArgumentError(f"bot {argument!r}: {error}") from None
    if not command:
        raise BotArgumentError("an empty bot command")
    program = command[0]
    if os.sep in program:
        if not os.path.isfile(program):
            raise BotArgumentError(f"bot {argument!r}: no such file {program}")
    elif len(command) == 1 and not shutil.which(program):
        raise BotArgumentError(f"bot {argument!r}: no such bot file or command")
    elif not shutil.which(program):
        raise BotArgumentError(f"bot {argument!r}: command {program!r} not found")
    if program == "python" or program.startswith("python3"):
        command = (sys.executable, *command[1:])
    elif program.endswith(".py") and os.path.isfile(program):  # a script with its arguments
        command = (sys.executable, os.path.abspath(program), *command[1:])
    return command


def _stem(command: Sequence[str]) -> str:
    """The name of a bot: its file's stem without a ``_bot`` suffix (``random_bot.py``: random)."""
    path = next((arg for arg in command[1:] if os.path.isfile(arg)), command[0])
    stem = os.path.splitext(os.path.basename(path))[0]
    for suffix in ("_bot", "-bot"):
        if stem.endswith(suffix) and len(stem) > len(suffix):
            stem = stem[: -len(suffix)]
    return stem or "bot"


def bot_specs(arguments: Sequence[str]) -> tuple[BotSpec, ...]:
    """The bots of the BOT arguments, named by file stem and deduplicated (``random#2``)."""
    specs = []
    seen: Counter[str] = Counter()
    for argument in arguments:
        command = _command(argument)
        stem = _stem(command)
        seen[stem] += 1
        name = stem if seen[stem] == 1 else f"{stem}#{seen[stem]}"
        specs.append(BotSpec(name, command))
    return tuple(specs)


def announce_seed(seed: int | None, option: str = "--seed") -> int:
    """``seed``, or a fresh random one; printed (stderr) so that any run can be replayed. A
    short seed given here is not warned about: ``match``, ``check-bot`` and ``play`` are
    development tools, where ``--seed 3`` replays the same deals; the secrecy of a tournament's
    seed is ``tourney``'s warning (``secret.short_seed_warning``)."""
    if seed is None:
        seed = random_seed()
        print(f"seed {seed} (run again with {option} {seed} to replay the deals)", file=sys.stderr)
    return seed


def output_tail(text: str, lines: int = TAIL_LINES, chars: int = TAIL_CHARS) -> str:
    """The end of a bot's captured output: at most ``lines`` lines and ``chars`` characters,
    marked with "…" when something before it was left out, its control characters escaped
    (``terminal.printable``: it is printed, and in ``--json`` read by other programs). When
    the first error line of the output is left out (Node's ``Error: Cannot find module
    'zeromq'`` above a long stack, a JVM's first exception), it is kept above the tail."""
    text = text.rstrip()
    kept = text.splitlines()[-lines:]
    tail = "\n".join(kept)
    if len(tail) > chars:
        tail = tail[-chars:]
    if tail == text:
        return printable(tail)
    first = _ERROR_LINE.search(text[: len(text) - len(tail)])
    if first is None:
        return printable("…" + tail)
    return printable(f"{first.group(0).strip()[:ERROR_LINE_CHARS]}\n…\n{tail}")
