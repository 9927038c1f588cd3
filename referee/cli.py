"""``ohseven-referee``: the command line. Each subcommand lives in the module that owns it."""

from __future__ import annotations

import argparse
import importlib
import sys

__all__ = ["main", "build_parser"]

#: subcommand -> module of ``ohseven.referee`` with ``configure(parser)`` and ``run(args) -> int``.
COMMANDS = {
    "simulate": "simulate",
    "match": "match_cli",
    "check-bot": "checkbot",
    "tourney": "tourney",
    "publish": "publish_cli",
    "view": "view_cli",
    "replay": "replay_cli",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ohseven-referee",
        description="Referee for Oh-Seven and Oh Hell bots: "
        "simulate, match, check-bot, tourney, publish, view, replay.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command, module_name in COMMANDS.items():
        try:
            module = importlib.import_module(f"ohseven.referee.{module_name}")
        except ModuleNotFoundError as error:
            if error.name == f"ohseven.referee.{module_name}":
                continue
            raise
        doc = (module.__doc__ or "").strip().splitlines()[0] if module.__doc__ else None
        command_parser = sub.add_parser(command, help=doc, description=module.__doc__)
        module.configure(command_parser)
        command_parser.set_defaults(run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
