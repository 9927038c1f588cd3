"""The server's league: ``run_tournament`` played again and again on the configuration's bots
(the house bots) plus every author's active version, until the budget of games is spent or the
server stops. Bots join and leave between waves (``LeagueFeed``'s roster); a version that
passed its check plays from the next wave and its bot's earlier version leaves (retired: its
games and rating stay). The site is not published here: the server shows it live."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

import attrs
from ohseven.referee.plan.config import BotEntry, TourneyConfig
from ohseven.referee.records import BotSpec
from ohseven.referee.server.db import ServerDB, Version
from ohseven.referee.server.uploads import version_folder
from ohseven.referee.terminal import printable
from ohseven.referee.tournament.run import TourneyOutcome, run_tournament

__all__ = ["League", "roster_of", "entry"]


def roster_of(db: ServerDB) -> Callable[[TourneyConfig], TourneyConfig]:
    """The roster function of ``run_tournament``: the house configuration plus each author's
    active version (a private copy already: stored by the server, never staged again)."""

    def roster(house: TourneyConfig) -> TourneyConfig:
        taken = set(house.bot_names)
        entries = [entry(house, v) for v in db.active() if v.name not in taken]
        return attrs.evolve(house, bots=(*house.bots, *entries))

    return roster


def entry(config: TourneyConfig, version: Version) -> BotEntry:
    """The bot of an uploaded version: it runs from its stored folder; its author's other bots
    never sit at its table."""
    folder = version_folder(config.output, version.digest)
    spec = BotSpec(version.name, version.argv(folder), str(folder))
    return BotEntry(spec, author=version.author)


class League:
    """Plays the league in the calling thread (the main one: Ctrl-C and SIGTERM stop it)."""

    def __init__(
        self,
        config: TourneyConfig,
        db: ServerDB,
        *,
        workers: int | None = None,
        cluster: str | None = None,
        board_interval: float = 0.5,
    ) -> None:
        self.config, self.db = config, db
        self.workers, self.cluster, self.board_interval = workers, cluster, board_interval
        self.stopping = threading.Event()
        self.complete = threading.Event()
        self.outcome: TourneyOutcome | None = None

    def run(self) -> None:
        """Play until the budget is spent (then wait for the stop) or a stop; a failed match
        is retried by the next round (as a rerun of ``tourney`` would)."""
        roster = roster_of(self.db)
        while not self.stopping.is_set():
            outcome = run_tournament(
                self.config,
                workers=self.workers,
                quiet=True,
                cluster=self.cluster,
                roster=roster,
                site=False,
                board_interval=self.board_interval,
            )
            self.outcome = outcome
            if outcome.interrupted:
                return
            if outcome.complete:
                self.complete.set()
                print(
                    f"{printable(self.config.name, lines=False)}: the league is complete "
                    f"({outcome.games} games); still serving its results",
                    file=sys.stderr,
                )
                self.stopping.wait()
                return
            for match_id, reason in outcome.failed:
                # (one line each, every control character escaped: ``terminal``)
                shown = printable(f"match {match_id} failed: {reason}", lines=False)
                print(f"{shown}; played again", file=sys.stderr)
            self.stopping.wait(2.0)
