"""Reading a tournament's configuration: a YAML file, validated whole before anything runs.

Every mistake is reported at once, each with the file, the line and the key that holds it
(``config.yaml:12: key `bots[2].command`: ...``), as one :class:`ConfigError`. Paths in the
file are relative to the file. The result is a frozen :class:`TourneyConfig`.

``DEMO_CONFIG`` is the quickstart tournament shipped inside the package; its bot files are the
example bots installed with ``ohseven.example_bots``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ohseven import example_bots
from ohseven.referee.plan.config import ConfigError, TourneyConfig
from ohseven.referee.plan.digests import config_digests, staged_digests
from ohseven.referee.plan.document import Document, Reader, parse
from ohseven.referee.plan.sections import (
    TOP_KEYS,
    check_extra_paths,
    file_digest,
    read_bots,
    read_name_and_game,
    read_output,
    read_ratings,
    read_rules,
    read_run_settings,
    read_sandbox,
    read_schedule,
    read_server,
    read_staging,
    read_table_sizes,
    read_time_control,
)

__all__ = ["load_config", "load_config_text", "demo_config", "example_bots_dir", "DEMO_CONFIG"]


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
    file_digest.cache_clear()  # a file may have changed since the last load
    base = Path(base_dir).resolve()
    out_base = Path(output_base).resolve() if output_base is not None else base
    doc = Document(source)
    data = parse(doc, text)
    reader = Reader(doc)
    reader.keys(data, "", TOP_KEYS)
    # each section in turn, so that the errors come in the order they always have
    name, game = read_name_and_game(reader, data)
    rules = read_rules(reader, data, game)
    table_sizes = read_table_sizes(reader, data, game)
    listed = read_bots(reader, data, base)
    schedule = read_schedule(reader, data, table_sizes, listed)
    time_control = read_time_control(reader, data)
    sandbox = read_sandbox(reader, data)
    ratings = read_ratings(reader, data)
    run = read_run_settings(reader, data)
    limits = read_staging(reader, data)

    server = read_server(reader, data)
    output = None if name is None else read_output(doc, name, run.output, base, out_base)
    if output is not None:
        check_extra_paths(doc, list(sandbox.extra_paths), str(output), listed.bots)
    if doc.errors:
        raise ConfigError(source, doc.errors)
    assert name is not None and rules is not None and output is not None
    # what decides the results is the bots' staged copies (see ``staging``), not just a file
    league = schedule.type == "league"
    staged, left_out = staged_digests(
        doc, listed.bots, listed.keys, output, source, sandbox.mode, limits, league
    )
    if left_out:  # a league goes on without them (as if they had left it)
        pairs = list(zip(listed.keys, listed.bots, strict=True))
        listed.keys[:] = [key for key, bot in pairs if bot.name not in left_out]
        listed.bots[:] = [bot for bot in listed.bots if bot.name not in left_out]
    listed.fingerprints.update(staged)
    if doc.errors:
        raise ConfigError(source, doc.errors)
    digest, bot_fingerprints = config_digests(data, schedule.type, listed, reader.defaults)
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
        defaults=dict(reader.defaults),
        key_lines=dict(doc.lines),
        bot_digests=tuple(staged.items()),
        staging=limits,
        site_logs=run.site_logs,
        left_out=tuple(left_out.items()),
        server=server,
    )


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
