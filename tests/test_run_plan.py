"""The run plan: a configuration resolved once into what a run needs, and read below the run
loop instead of the configuration."""

from __future__ import annotations

import ast
from pathlib import Path

import attrs
import pytest
from ohseven.referee.plan.config import BotEntry
from ohseven.referee.plan.loader import demo_config, load_config_text
from ohseven.referee.plan.run_plan import RunPlan, sandbox_config
from ohseven.referee.plan.schedule import SchedulePlan, schedule_size
from ohseven.referee.plan.stopping import plan_of
from ohseven.referee.records import BotSpec
from ohseven.referee.sandbox.settings import SandboxConfig

REFEREE = Path(__file__).resolve().parent.parent / "referee"


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
    assert plan.schedule == SchedulePlan.of(config)
    assert plan.stopping is None and plan.stopping == plan_of(plan.schedule)
    assert plan.ratings == config.ratings and plan.game == config.game
    assert (plan.seed, plan.reveal_seeds) == (config.seed, config.reveal_seeds)
    assert (plan.document, plan.digest) == (config.document, config.digest)


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


def gauntlet(tmp: Path) -> str:
    (tmp / "b.py").write_text("")
    return (
        "name: g\ngame: oh-hell\ntable_size: [3, 4]\nbots:\n"
        + "".join(f"  - {{name: {n}, file: b.py, author: {a}}}\n" for n, a in BOTS)
        + "schedule: {type: gauntlet, candidates: [z, y], repeats: 3, games_per_table: 2,"
        + " deals: duplicate, stop: {margin: 2}}\n"
        + "time_control: {move_seconds: 2}\n"
    )


BOTS = [("z", "ann"), ("y", "bob"), ("f1", "ann"), ("f2", "cy"), ("f3", "dee"), ("f4", "eve")]


def test_the_schedule_plan_reads_the_schedule_once(tmp_path: Path) -> None:
    """Every field of the schedule's plan is the configuration's; its size is the one counted
    from the configuration, authors kept apart; the gauntlet's stopping rule is resolved."""
    config = load_config_text(gauntlet(tmp_path), base_dir=tmp_path)
    schedule = SchedulePlan.of(config)
    assert schedule.kind == "gauntlet" and schedule.rules == config.rules
    assert schedule.time_control == config.time_control
    assert schedule.table_sizes == config.table_sizes == (3, 4)
    assert (schedule.games_per_table, schedule.repeats, schedule.deals) == (2, 3, "duplicate")
    assert schedule.candidates == ("z", "y") and schedule.stop == config.schedule.stop
    assert schedule.bots == tuple(bot.spec for bot in config.bots)
    assert dict(schedule.authors) == dict(BOTS)
    assert schedule.size() == schedule_size(config)
    plan = RunPlan.resolve(config, b"s" * 32)
    assert plan.stopping is not None and plan.stopping == plan_of(schedule)
    assert plan.stopping.candidates == ("y", "z") and plan.stopping.waves == 3


def test_a_league_roster_changes_only_the_bots(tmp_path: Path) -> None:
    """A league's next wave (``serve``'s roster adds bots) is the plan of the configuration
    the roster gives: the same schedule with more bots."""
    text = gauntlet(tmp_path).replace(
        "schedule: {type: gauntlet, candidates: [z, y], repeats: 3, games_per_table: 2,"
        " deals: duplicate, stop: {margin: 2}}",
        "schedule: {type: league, games: 40}",
    )
    config = load_config_text(text, base_dir=tmp_path)
    base = SchedulePlan.of(config)
    joined = BotEntry(BotSpec("new", ("true",), str(tmp_path)), author="x")
    later = SchedulePlan.of(attrs.evolve(config, bots=(*config.bots, joined)))
    assert later.bot_names == (*base.bot_names, "new") and ("new", "x") in later.authors
    assert attrs.evolve(later, bots=base.bots, authors=base.authors) == base
    assert RunPlan.resolve(config, b"s" * 32).league and later.size() == (0, 40)


def test_below_the_run_loop_no_module_reads_the_configuration() -> None:
    """``TourneyConfig`` is named only where a configuration is read or resolved (``plan``'s
    config, loader, run_plan and the schedule's resolver), by the run loop that resolves it
    (``tournament/run.py``) and above it (the command line, the server): the feeds, the
    leaderboard, the stopping rule and every other module read the plan."""
    naming = set()
    for path in REFEREE.rglob("*.py"):
        nodes = ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if any(
            isinstance(node, ast.Name)
            and node.id == "TourneyConfig"
            or isinstance(node, ast.ClassDef)
            and node.name == "TourneyConfig"
            for node in nodes
        ):
            naming.add(path.relative_to(REFEREE).as_posix())
    above = {name for name in naming if name.startswith(("cli/", "server/"))}
    assert naming - above == {
        "plan/config.py",
        "plan/loader.py",
        "plan/run_plan.py",
        "plan/schedule.py",
        "tournament/run.py",
    }
