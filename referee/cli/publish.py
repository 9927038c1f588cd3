"""Rebuild the leaderboards (JSON, CSV, Markdown) and the static HTML site of a tournament."""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

from ohseven.referee.files import DB_NAME
from ohseven.referee.results.archive import PublishError
from ohseven.referee.results.store import database_error
from ohseven.referee.site.publish import publish
from ohseven.referee.terminal import printable

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "directory",
        metavar="DIR",
        help="the tournament's output directory (the one holding tournament.sqlite)",
    )
    parser.add_argument("--quiet", action="store_true", help="print nothing on success")


def run(args: argparse.Namespace) -> int:
    directory = Path(args.directory)
    try:
        written = publish(directory)
    except PublishError as error:
        print(f"ohseven-referee publish: {printable(error)}", file=sys.stderr)
        return 1
    except sqlite3.DatabaseError as error:
        problem = database_error(directory / DB_NAME, error)
        print(f"ohseven-referee publish: {printable(problem)}", file=sys.stderr)
        return 1
    except OSError as error:
        print(
            printable(f"ohseven-referee publish: cannot write into {directory}: {error}"),
            file=sys.stderr,
        )
        return 1
    if not args.quiet:
        print(f"{len(written)} files written; open {(directory / 'index.html').resolve().as_uri()}")
    return 0
