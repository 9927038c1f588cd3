"""The run plan: a tournament's configuration resolved once into what its run needs.

:class:`RunPlan` is built by :meth:`RunPlan.resolve` from the configuration (with its bots
staged), the tournament's secret and the command line's overrides, and handed down to the run
loop (``tournament.run``) and below it (the feeds, ``results.board.Leaderboard``): the sandbox
settings, the staged bots, the secret, the schedule (``schedule.SchedulePlan``) and its size,
the stopping rule, the ratings' settings, what the leaderboard publishes, the output paths and
the pool's shape are read from it, not from the YAML's shape. :func:`sandbox_config` is the one
place the sandbox section becomes ``sandbox.SandboxConfig``.
"""

from __future__ import annotations

from pathlib import Path

import attrs
from ohseven.referee.plan import stopping
from ohseven.referee.plan.config import RatingsConfig, TourneyConfig
from ohseven.referee.plan.schedule import SchedulePlan
from ohseven.referee.records import BotSpec, TimeControl
from ohseven.referee.sandbox.settings import Limits, SandboxConfig

__all__ = ["RunPlan", "sandbox_config"]


def sandbox_config(config: TourneyConfig) -> SandboxConfig:
    """The ``sandbox.SandboxConfig`` of the tournament (limits not given keep their defaults)."""
    limits = Limits(**dict(config.sandbox.limits))  # type: ignore[arg-type]  # checked by config
    return SandboxConfig(
        mode=config.sandbox.mode,
        limits=limits,
        ponder=config.sandbox.ponder,
        extra_paths=config.sandbox.extra_paths,
    )


@attrs.frozen
class RunPlan:
    """What one run of a tournament plays with, resolved once (see the module's docstring)."""

    #: the tournament's name (shown)
    name: str
    #: the tournament's folder (database, secret, leaderboard, site)
    output: Path
    #: local worker processes (at least 1; the run lowers it to the matches left)
    workers: int
    #: a league (bots join and leave) rather than a round-robin or a gauntlet
    league: bool
    #: the Dask scheduler's address that plays the matches, or None for local workers
    cluster: str | None
    #: how bots reach the cluster's workers (``config.CLUSTER_BOTS``)
    cluster_bots: str
    #: the bots' sandbox
    sandbox: SandboxConfig
    #: what the matches are drawn from: the schedule, the rules, the clock, the staged bots
    schedule: SchedulePlan
    #: the secret every deal and seating is drawn from
    secret: bytes
    #: the matches and games of the whole schedule (a league's: so far)
    matches_total: int
    games_total: int
    #: where the raw replays go (private: they name their seeds), or None for none
    replay_dir: Path | None
    #: a gauntlet's stopping rule over its schedule (``stopping.Plan``), or None
    stopping: stopping.Plan | None = None
    #: how the games are rated (``ratings``)
    ratings: RatingsConfig = RatingsConfig()
    #: what the leaderboard publishes: the organiser's seed (or None) and whether the seeds
    #: are revealed once complete, the configuration as read and its digest
    seed: int | None = None
    reveal_seeds: bool = False
    document: dict = attrs.field(factory=dict, eq=False)
    digest: str = ""

    @property
    def time_control(self) -> TimeControl:
        return self.schedule.time_control

    @property
    def bots(self) -> tuple[BotSpec, ...]:
        """The bots as staged (private copies under the output folder)."""
        return self.schedule.bots

    @property
    def bot_names(self) -> tuple[str, ...]:
        return self.schedule.bot_names

    @property
    def game(self) -> str:
        return self.schedule.rules.game

    @classmethod
    def resolve(
        cls,
        config: TourneyConfig,
        secret: bytes,
        *,
        workers: int | None = None,
        cluster: str | None = None,
        sandbox: SandboxConfig | None = None,
    ) -> RunPlan:
        """The plan of ``config`` (its bots already staged) and ``secret``; ``workers``,
        ``cluster`` and ``sandbox`` override the configuration's (the command line's)."""
        output = Path(config.output)
        schedule = SchedulePlan.of(config)
        matches_total, games_total = schedule.size()
        return cls(
            name=config.name,
            output=output,
            workers=max(1, workers or config.workers),
            league=schedule.kind == "league",
            cluster=cluster or config.cluster,
            cluster_bots=config.cluster_bots,
            sandbox=sandbox if sandbox is not None else sandbox_config(config),
            schedule=schedule,
            secret=secret,
            matches_total=matches_total,
            games_total=games_total,
            replay_dir=output / "replays" if config.replays else None,
            stopping=stopping.plan_of(schedule),
            ratings=config.ratings,
            seed=config.seed,
            reveal_seeds=config.reveal_seeds,
            document=config.document,
            digest=config.digest,
        )
