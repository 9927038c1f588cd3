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

from ohseven.referee.plan.config import ConfigError, is_cluster_address
from ohseven.referee.plan.loader import load_config
from ohseven.referee.plan.run_plan import sandbox_config
from ohseven.referee.plan.sections import is_listen_address
from ohseven.referee.results.store import StoreError
from ohseven.referee.sandbox.settings import SandboxError, check_sandbox
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
    try:
        config = load_config(args.config)
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 2
    if config.schedule.type != "league":
        print(
            f"{args.config}: `serve` plays a league (schedule: {{type: league, games: N}}), "
            f"not a {config.schedule.type}",
            file=sys.stderr,
        )
        return 2
    if config.for_trusted_bots:  # uploaded bots are nobody's to vouch for
        for reason in config.for_trusted_bots:
            print(reason, file=sys.stderr)
        print(
            f"{args.config}: `serve` plays bots that anyone may upload, so it refuses the "
            "settings above, which are for trusted bots only (see SECURITY.md)",
            file=sys.stderr,
        )
        return 2
    if args.listen is not None and not is_listen_address(args.listen):
        print(f"--listen {args.listen}: expected HOST:PORT, like 127.0.0.1:8707", file=sys.stderr)
        return 2
    if args.cluster is not None and not is_cluster_address(args.cluster):
        print(
            f"--cluster {args.cluster}: expected an address like tcp://HOST:8786", file=sys.stderr
        )
        return 2
    if args.workers is not None and args.workers < 1:
        print(f"--workers {args.workers}: expected 1 or more", file=sys.stderr)
        return 2
    if config.sandbox.mode != "unsandboxed":
        try:
            check_sandbox(sandbox_config(config))
        except SandboxError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    try:  # the `server` extra (Starlette, uvicorn) is needed by this command alone
        from ohseven.referee.server.service import ServeError, serve
    except ModuleNotFoundError as error:
        print(
            f"ohseven-referee serve needs the server's dependencies ({error.name} is missing): "
            "pip install 'ohseven[server]'",
            file=sys.stderr,
        )
        return 2
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
