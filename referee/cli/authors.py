"""Manage a competition's authors: ``authors add NAME CONFIG.yaml`` prints a new token once.

Only the token's SHA-256 hash is kept, in the server's database (``server.sqlite`` in the
configuration's output folder), so a lost token cannot be shown again: ``authors revoke NAME``
ends it (with the author's sessions; their bots stop playing, their games stay) and
``authors add NAME CONFIG.yaml --renew`` issues a new one. ``authors list`` shows them all.
Works while the server runs.
"""

from __future__ import annotations

import argparse
import sys
import time

from ohseven.referee.plan.config import ConfigError
from ohseven.referee.plan.loader import load_config
from ohseven.referee.server.db import ServerDB, ServerDBError

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = sub.add_parser("add", help="register an author and print their token (once)")
    add.add_argument("name", help="the author's name: 1 to 32 of a-z, 0-9, _ and -")
    add.add_argument("config", help="the competition's YAML file")
    add.add_argument(
        "--organiser",
        action="store_true",
        help="this account reads every bot's private pages (logs, fault details, reports)",
    )
    add.add_argument(
        "--renew", action="store_true", help="a new token for a revoked author (same name)"
    )
    listing = sub.add_parser("list", help="list the authors")
    listing.add_argument("config", help="the competition's YAML file")
    revoke = sub.add_parser("revoke", help="end an author's token and sessions")
    revoke.add_argument("name")
    revoke.add_argument("config", help="the competition's YAML file")


def _when(stamp: float | None) -> str:
    return "-" if stamp is None else time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(stamp))


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 2
    with ServerDB(config.output) as db:
        try:
            if args.action == "add":
                if args.renew:
                    token = db.renew_author(args.name)
                else:
                    token = db.add_author(args.name, organiser=args.organiser)
                print(token)
                print(
                    f"(the token of {args.name}: give it to them now, it is not kept and cannot "
                    "be shown again)",
                    file=sys.stderr,
                )
            elif args.action == "revoke":
                db.revoke_author(args.name)
                print(f"revoked {args.name}: their token and sessions no longer work")
            else:
                versions = db.versions()
                print(f"{'author':<32} {'role':<9} {'created':<20} {'revoked':<20} uploads")
                for author in db.authors():
                    count = sum(1 for v in versions if v.author == author.name)
                    role = "organiser" if author.organiser else "author"
                    print(
                        f"{author.name:<32} {role:<9} {_when(author.created):<20} "
                        f"{_when(author.revoked):<20} {count}"
                    )
        except ServerDBError as error:
            print(f"ohseven-referee authors: {error}", file=sys.stderr)
            return 1
    return 0
