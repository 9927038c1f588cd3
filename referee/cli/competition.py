"""What the competition's commands (``serve`` and ``final``) check before they start: both play
bots that anyone may upload in the league of a configuration, so both need a `league` schedule,
refuse the settings fit for trusted bots only (SECURITY.md), take ``--workers`` of 1 or more,
check the sandbox, and need the `server` extra. Each refusal is printed to stderr; the command
then exits with status 2."""

from __future__ import annotations

import sys

from ohseven.referee.plan.config import ConfigError, TourneyConfig
from ohseven.referee.plan.loader import load_config
from ohseven.referee.plan.run_plan import sandbox_config
from ohseven.referee.sandbox.settings import SandboxError, check_sandbox

__all__ = ["load_competition", "missing_server_extra"]


def load_competition(
    path: str, command: str, workers: int | None, *, checks: tuple[str | None, ...] = ()
) -> TourneyConfig | None:
    """The league configuration at ``path`` for ``ohseven-referee COMMAND``, or None once a
    refusal is printed. ``checks``: the command's own refusals of its options (None: fine),
    printed before the sandbox is checked."""
    try:
        config = load_config(path)
    except ConfigError as error:
        print(error, file=sys.stderr)
        return None
    if config.schedule.type != "league":
        print(
            f"{path}: `{command}` plays a competition's league (schedule: {{type: league, "
            f"games: N}}), not a {config.schedule.type}",
            file=sys.stderr,
        )
        return None
    if config.for_trusted_bots:  # uploaded bots are nobody's to vouch for
        for reason in config.for_trusted_bots:
            print(reason, file=sys.stderr)
        print(
            f"{path}: `{command}` plays bots that anyone may upload, so it refuses the "
            "settings above, which are for trusted bots only (see SECURITY.md)",
            file=sys.stderr,
        )
        return None
    refusals = [*checks]
    if workers is not None and workers < 1:
        refusals.append(f"--workers {workers}: expected 1 or more")
    for refusal in refusals:
        if refusal is not None:
            print(refusal, file=sys.stderr)
            return None
    if config.sandbox.mode != "unsandboxed":
        try:
            check_sandbox(sandbox_config(config))
        except SandboxError as error:
            print(f"error: {error}", file=sys.stderr)
            return None
    return config


def missing_server_extra(command: str, error: ModuleNotFoundError) -> int:
    """Say which dependency of the `server` extra (Starlette, uvicorn) is missing: exit 2."""
    print(
        f"ohseven-referee {command} needs the server's dependencies ({error.name} is missing): "
        "pip install 'ohseven[server]'",
        file=sys.stderr,
    )
    return 2
