"""The end of a competition (``ohseven-referee final``): submissions stop for good, the top
``server.final_bots`` active bots of the league play a round-robin among themselves on deals
the league never used, its results are published apart from the league's, and the secret is
revealed when the configuration says ``reveal_seeds``.

- **Once begun, for good.** The chosen bots and the moment are recorded in ``server.sqlite``
  (meta ``final``) before any game: from then on the server refuses uploads, plays no more
  league games (it serves the results), and a resumed final plays the same bots.
- **Fresh deals.** The final's secret is ``HMAC-SHA256(league secret, "ohseven-final")``,
  kept in ``OUTPUT/final/secret.key``: its deals are independent of every league deal, and
  anyone can check them once the league's secret is revealed.
- **Its own tournament.** The final is a round-robin (``final_games``: the least number of its
  games, in whole round-robins) played by ``run_tournament`` in ``OUTPUT/final`` (its own
  database, ``leaderboard.json`` and static site, named "<name> final"): a kill loses no
  finished game, the same command resumes it, and the results do not depend on the number of
  workers (each game's deal and seating follow from the secret and its place alone).
- **The reveal.** Once the final is complete, with ``reveal_seeds``, ``OUTPUT/final/reveal.json``
  names the league's secret and its SHA-256, the commitment published from the start
  (``/api/commitment``); the final's ``leaderboard.json`` names its own secret and seeds.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
import time
from pathlib import Path
from typing import Any

import attrs
from ohseven.referee.files import write_json_atomic
from ohseven.referee.plan.config import BotEntry, ScheduleConfig, TourneyConfig
from ohseven.referee.plan.schedule import schedule_size
from ohseven.referee.results.archive import load_tournament
from ohseven.referee.results.leaderboard import leaderboard
from ohseven.referee.results.store import DB_NAME
from ohseven.referee.secret import SECRET_NAME, load_secret
from ohseven.referee.server.db import ServerDB
from ohseven.referee.server.final_pages import FINAL_NAME, REVEAL_NAME, revealed
from ohseven.referee.server.league import entry
from ohseven.referee.server.service import server_lock
from ohseven.referee.site.publish import publish
from ohseven.referee.tournament.run import TourneyOutcome, run_tournament, tournament_secret

__all__ = [
    "FINAL_NAME",
    "REVEAL_NAME",
    "FinalError",
    "FinalDoneError",
    "final_secret",
    "final_folder",
    "choose_bots",
    "run_final",
    "revealed",
]


class FinalError(ValueError):
    """The final cannot be played (no league, too few bots)."""


class FinalDoneError(FinalError):
    """The final is complete already."""


def final_folder(output: str | os.PathLike[str]) -> Path:
    return Path(output) / FINAL_NAME


def final_secret(secret: bytes) -> bytes:
    """The final's secret, from the league's: no league deal is one of the final's."""
    return hmac.digest(secret, b"ohseven-final", hashlib.sha256)


def choose_bots(config: TourneyConfig, db: ServerDB) -> list[str]:
    """The top ``server.final_bots`` active bots (house bots and each author's playing
    version) in the league's order (its leaderboard from every finished game)."""
    board = leaderboard(load_tournament(config.output))
    active = set(config.bot_names) | {version.name for version in db.active()}
    ranked = [row["name"] for row in board["bots"] if row["name"] in active]
    return ranked[: config.server.final_bots]


def _final_config(
    config: TourneyConfig, db: ServerDB, bots: list[str]
) -> tuple[TourneyConfig, Any]:
    """The final's configuration (its house bots) and the roster adding its uploaded ones."""
    versions = {version.name: version for version in db.versions()}
    house = [bot for bot in config.bots if bot.name in bots]
    uploaded: list[BotEntry] = [entry(config, versions[name]) for name in bots if name in versions]
    per_table = config.schedule.games_per_table
    one = attrs.evolve(
        config,
        schedule=ScheduleConfig(type="round-robin", repeats=1, games_per_table=per_table),
        bots=(*house, *uploaded),
    )
    games_once = schedule_size(one)[1]
    repeats = max(1, math.ceil(config.server.final_games / max(1, games_once)))
    document = {
        key: value for key, value in config.document.items() if key not in ("seed", "server")
    }
    document.update(
        name=f"{config.name} final",
        schedule={"type": "round-robin", "repeats": repeats, "games_per_table": per_table},
        bots=[{"name": name} for name in bots],
    )
    final = attrs.evolve(
        config,
        name=f"{config.name} final",
        schedule=ScheduleConfig(type="round-robin", repeats=repeats, games_per_table=per_table),
        bots=tuple(house),
        output=str(final_folder(config.output)),
        seed=None,
        document=document,
        left_out=(),
    )
    return final, lambda staged: attrs.evolve(staged, bots=(*staged.bots, *uploaded))


def _keep_secret(folder: Path, secret: bytes) -> None:
    """Write the final's secret (mode 0600) unless it is there: a resume reads it back."""
    folder.mkdir(parents=True, exist_ok=True)
    if load_secret(folder) is not None:
        return
    path = folder / SECRET_NAME
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, secret.hex().encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)


def run_final(
    config: TourneyConfig, *, workers: int | None = None, quiet: bool = True
) -> TourneyOutcome:
    """Begin (or resume) the final of the league of ``config``; raise :class:`FinalError`."""
    output = Path(config.output)
    if not (output / DB_NAME).exists():
        raise FinalError(
            f"no league in {output} (no {DB_NAME}): serve the competition before its final"
        )
    with server_lock(output):  # no league plays while the final does
        return _run_final(config, output, workers, quiet)


def _run_final(
    config: TourneyConfig, output: Path, workers: int | None, quiet: bool
) -> TourneyOutcome:
    db = ServerDB(output)
    try:
        state = db.final_state()
        if state is not None and state.get("done"):
            raise FinalDoneError(
                f"the final is complete already: its results are in {final_folder(output)}"
            )
        if state is None:
            bots = choose_bots(config, db)
            if len(bots) < min(config.table_sizes):
                raise FinalError(
                    f"{len(bots)} active bot{'s' * (len(bots) != 1)} for the final, fewer than a "
                    f"table of {min(config.table_sizes)}: raise server.final_bots (now "
                    f"{config.server.final_bots}) or let more bots join the league"
                )
            state = {"began": time.time(), "bots": bots}
            db.set_final_state(state)  # submissions end here, for good
        bots = list(state["bots"])
        secret = tournament_secret(config, output)
        final, roster = _final_config(config, db, bots)
        _keep_secret(final_folder(output), final_secret(secret))
        outcome = run_tournament(final, workers=workers, quiet=quiet, roster=roster, site=True)
        if not outcome.complete:
            return outcome
        publish(output)  # the league's site, as it ends
        if config.reveal_seeds:
            write_json_atomic(
                final_folder(output) / REVEAL_NAME,
                {
                    "secret": secret.hex(),
                    "sha256": hashlib.sha256(secret).hexdigest(),
                    "final_secret": final_secret(secret).hex(),
                    "how": "sha256 is the commitment published before the event "
                    "(/api/commitment); every league deal is HMAC-SHA256(secret, ...) and the "
                    "final's secret is HMAC-SHA256(secret, 'ohseven-final')",
                },
            )
        db.set_final_state({**state, "done": time.time()})
        return outcome
    finally:
        db.close()
