"""Serve a competition: a league played continuously while authors submit bots, read live.

``ohseven-referee serve CONFIG.yaml`` plays the `league` of the configuration (its bots are the
house bots) with every author's passing upload, and serves the live leaderboard, games and bot
pages, a JSON API and the authors' pages (see docs/SERVER.md). It listens on loopback
(``server.listen``, default 127.0.0.1:8707; put a TLS reverse proxy in front to open it).
Ctrl-C or SIGTERM stops it cleanly; after any stop, a SIGKILL included, the same command
resumes the league, the check queue and the API.
"""

from __future__ import annotations

import argparse
import sys

from ohseven.referee.cli.competition import load_competition, missing_server_extra
from ohseven.referee.plan.config import is_cluster_address
from ohseven.referee.plan.sections import is_listen_address
from ohseven.referee.results.store import StoreError
from ohseven.referee.tournament.errors import TourneyError

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", help="the competition's YAML file (a `league` schedule)")
    parser.add_argument(
        "--listen",
        metavar="HOST:PORT",
        default=None,
        help="the address to listen on (default: the config's `server.listen`, 127.0.0.1:8707)",
    )
    parser.add_argument(
        "--cluster",
        metavar="ADDRESS",
        default=None,
        help="play the matches on the Dask scheduler at ADDRESS (tcp://HOST:8786); uploads "
        "need `cluster_bots: shared` (see docs/CLUSTER.md)",
    )
    parser.add_argument(
        "--workers", type=int, default=None, help="worker processes (default: the config's)"
    )


def run(args: argparse.Namespace) -> int:
    config = load_competition(
        args.config,
        "serve",
        args.workers,
        checks=(
            None
            if args.listen is None or is_listen_address(args.listen)
            else f"--listen {args.listen}: expected HOST:PORT, like 127.0.0.1:8707",
            None
            if args.cluster is None or is_cluster_address(args.cluster)
            else f"--cluster {args.cluster}: expected an address like tcp://HOST:8786",
        ),
    )
    if config is None:
        return 2
    try:  # the `server` extra (Starlette, uvicorn) is needed by the server's commands alone
        from ohseven.referee.server.service import ServeError, serve
    except ModuleNotFoundError as error:
        return missing_server_extra("serve", error)
    try:
        serve(
            config,
            listen=args.listen,
            cluster=args.cluster,
            workers=args.workers,
            announce=lambda line: print(line, flush=True),
        )
    except (ServeError, TourneyError, StoreError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0
