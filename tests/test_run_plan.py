"""The run plan: a configuration resolved once into what a run needs."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from ohseven.referee.plan.loader import demo_config
from ohseven.referee.plan.run_plan import RunPlan, sandbox_config
from ohseven.referee.plan.schedule import schedule_size
from ohseven.referee.sandbox.settings import SandboxConfig


def test_resolved_from_the_configuration(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    plan = RunPlan.resolve(config, b"s" * 32)
    assert plan.name == config.name
    assert plan.output == Path(config.output)
    assert plan.secret == b"s" * 32
    assert plan.bots == tuple(bot.spec for bot in config.bots)
    assert (plan.matches_total, plan.games_total) == schedule_size(config)
    assert plan.sandbox == sandbox_config(config)
    assert plan.time_control == config.time_control
    assert plan.league is (config.schedule.type == "league")
    assert plan.workers == max(1, config.workers)
    assert plan.cluster == config.cluster
    assert (plan.replay_dir is not None) is config.replays


def test_the_command_line_overrides(tmp_path: Path) -> None:
    config = attrs.evolve(demo_config(tmp_path), replays=True)
    sandbox = SandboxConfig(mode="unsandboxed")
    plan = RunPlan.resolve(config, b"s" * 32, workers=3, cluster="tcp://h:1", sandbox=sandbox)
    assert (plan.workers, plan.cluster, plan.sandbox) == (3, "tcp://h:1", sandbox)
    assert plan.replay_dir == Path(config.output) / "replays"


def test_frozen(tmp_path: Path) -> None:
    plan = RunPlan.resolve(demo_config(tmp_path), b"s" * 32)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        plan.workers = 2  # type: ignore[misc]
