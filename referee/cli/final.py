"""End a competition: stop submissions, play the final among the league's top bots, publish,
reveal the secret.

``ohseven-referee final CONFIG.yaml`` (with the server stopped: the final takes its folder)
closes submissions for good (a server started again refuses uploads and plays no more league
games: it serves the results), chooses the top ``server.final_bots`` active bots of the league,
and plays a round-robin among them (at least ``server.final_games`` games, in whole
round-robins) on deals derived from the secret that the league never used. The final's results
go to OUTPUT/final (its own leaderboard.json and static site, apart from the league's); the
league's site is published again; with ``reveal_seeds`` the secret is revealed in
OUTPUT/final/reveal.json and on the server (/api/commitment, /final), where its SHA-256 can be
checked against the commitment published from the start. Stopped or killed, the same command
resumes the final with the same bots; the results do not depend on --workers.
Exit status: 0 complete; 1 a final already complete, a server running, or stopped before the
end; 2 bad input (no league, too few bots, a configuration that is not a league or that has
settings fit for trusted bots only, as `serve` refuses it; an unusable sandbox).
"""

from __future__ import annotations

import argparse
import sys

from ohseven.referee.cli.competition import load_competition, missing_server_extra
from ohseven.referee.results.store import StoreError
from ohseven.referee.tournament.errors import TourneyError

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", help="the competition's YAML file (the one `serve` runs)")
    parser.add_argument(
        "--workers", type=int, default=None, help="worker processes (default: the config's)"
    )


def run(args: argparse.Namespace) -> int:
    config = load_competition(args.config, "final", args.workers)
    if config is None:
        return 2
    try:  # the `server` extra (Starlette, uvicorn) is needed by the server's commands alone
        from ohseven.referee.server.final import FinalDoneError, FinalError, run_final
        from ohseven.referee.server.service import ServeError
    except ModuleNotFoundError as error:
        return missing_server_extra("final", error)
    try:
        outcome = run_final(config, workers=args.workers, quiet=True)
    except FinalDoneError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except FinalError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (ServeError, TourneyError, StoreError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if not outcome.complete:
        print(
            f"stopped after {outcome.played_games} games of the final; run the same command "
            "to resume",
            file=sys.stderr,
        )
        return 1
    print(f"{config.name}: the final is complete ({outcome.games} games)")
    for row in outcome.leaderboard["bots"]:
        print(f"  {row.get('place') or row['rank']}. {row['name']}  score {row['score']:.2f}")
    output = config.output
    print(f"results: {output}/final (leaderboard.json, index.html); the league's: {output}")
    if config.reveal_seeds:
        print(f"the secret is revealed: {output}/final/reveal.json")
    return 0
