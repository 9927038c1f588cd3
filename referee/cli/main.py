"""``ohseven-referee``: the command line. Each subcommand lives in the module that owns it."""

from __future__ import annotations

import argparse
import os
import sys
from types import ModuleType

from ohseven.referee.terminal import guarded, printable

__all__ = ["main", "build_parser"]

#: the referee's own dependencies (the ``referee`` extra), which a bot does not need
REFEREE_DEPENDENCIES = ("trueskill", "yaml", "rich", "jinja2", "numpy", "scipy")


class MissingDependencyError(ImportError):
    """The referee's dependencies are not installed (only the core and the SDK are)."""


def commands() -> dict[str, ModuleType]:
    """Subcommand -> the module that owns it (``configure(parser)`` and ``run(args) -> int``)."""
    # deferred: the commands need the referee extra; without it, --help says what to install
    try:
        from ohseven.referee.cli import authors as authors_cli
        from ohseven.referee.cli import check_bot, simulate
        from ohseven.referee.cli import final as final_cli
        from ohseven.referee.cli import match as match_cli
        from ohseven.referee.cli import play as play_cli
        from ohseven.referee.cli import publish as publish_cli
        from ohseven.referee.cli import replay as replay_cli
        from ohseven.referee.cli import serve as serve_cli
        from ohseven.referee.cli import submit as submit_cli
        from ohseven.referee.cli import tourney as tourney_cli
        from ohseven.referee.cli import view as view_cli
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] in REFEREE_DEPENDENCIES:
            raise MissingDependencyError(
                f"ohseven-referee needs the referee's dependencies ({error.name} is missing): "
                "pip install 'ohseven[referee]'"
            ) from error
        raise
    return {
        "simulate": simulate,
        "match": match_cli,
        "play": play_cli,
        "check-bot": check_bot,
        "tourney": tourney_cli,
        "publish": publish_cli,
        "view": view_cli,
        "replay": replay_cli,
        "serve": serve_cli,
        "authors": authors_cli,
        "submit": submit_cli,
        "final": final_cli,
    }


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ohseven-referee",
        description="Referee for Oh-Seven and Oh Hell bots: "
        "simulate, match, play, check-bot, tourney, publish, view, replay, serve, authors, "
        "submit, final.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command, module in commands().items():
        # the summary is the docstring's whole first paragraph (a sentence may wrap a line)
        doc = " ".join((module.__doc__ or "").strip().split("\n\n")[0].split()) or None
        command_parser = sub.add_parser(command, help=doc, description=module.__doc__)
        module.configure(command_parser)
        command_parser.set_defaults(run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    # a bot's text reaches the terminal in many messages: escaped wherever it is printed, and
    # once more here, for every command, whatever the message (see ``terminal``)
    with guarded():
        return _guarded_main(argv)


def _guarded_main(argv: list[str] | None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (``| head``): stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _main(argv: list[str] | None) -> int:
    try:
        parser = build_parser()
    except MissingDependencyError as error:
        print(f"ohseven-referee: {printable(error)}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
