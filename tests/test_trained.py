"""example_bots/trained: the saved policy loads, trains, and plays a sandboxed match."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from ohseven.core.rules import Rules
from ohseven.example_bots.trained import train, trained_bot
from ohseven.example_bots.trained.mlp import MLP
from ohseven.referee.play.match import play_match
from ohseven.referee.records import BotSpec, MatchSpec, TimeControl
from ohseven.referee.sandbox.settings import SandboxConfig
from ohseven.sdk import Bot, PolicyBot, local_game
from ohseven.sdk.observation import ACTIONS, OBS_SIZE

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = str(ROOT / "example_bots" / "random_bot.py")


def test_the_saved_policy_loads_and_plays_legally() -> None:
    """policy.npz fits the layout; the trained bot plays strict local games of both games."""
    net = MLP.load(trained_bot.POLICY)
    assert net.w1.shape[0] == OBS_SIZE and net.w2.shape[1] == ACTIONS
    assert trained_bot.TrainedBot.name == trained_bot.BOT_NAME == "trained"
    for game, players in (("oh-seven", 4), ("oh-hell", 3)):
        bots = [trained_bot.TrainedBot()] + [Bot(s) for s in range(players - 1)]
        assert len(local_game(bots, game=game, seed=7).totals) == players


def test_a_policy_for_another_layout_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "old.npz"
    np.savez(path, w1=np.zeros((10, 4)), b1=np.zeros(4), w2=np.zeros((4, ACTIONS)), b2=np.zeros(2))
    with pytest.raises(ValueError, match="trained for another layout"):
        MLP.load(path)


def test_training_saves_a_policy_that_plays(tmp_path: Path) -> None:
    """A few seconds of training write a policy file PolicyBot plays."""
    out = tmp_path / "policy.npz"
    code = train.main(
        ["--minutes", "0.02", "--batch", "2", "--hidden", "4", "--no-match", "--out", str(out)]
    )
    assert code == 0 and out.exists()
    net = MLP.load(out)
    assert net.w1.shape == (OBS_SIZE, 4)
    assert not np.allclose(net.w2, 0)  # at least one update was made
    bots = [PolicyBot(net)] + [Bot(s) for s in range(3)]
    assert len(local_game(bots, seed=3).totals) == 4


@pytest.mark.slow
def test_the_trained_bot_plays_a_sandboxed_match_without_faults() -> None:
    """Under bubblewrap, the trained bot (numpy, its policy file beside it) plays real games
    against random bots, with no fault of any kind."""
    bots = (BotSpec("trained", (sys.executable, trained_bot.__file__)),) + tuple(
        BotSpec(f"random{i}", (sys.executable, RANDOM_BOT)) for i in range(1, 4)
    )
    spec = MatchSpec(
        match_id="trained-bwrap",
        rules=Rules.make("oh-seven"),
        bots=bots,
        seatings=((0, 1, 2, 3), (3, 0, 1, 2)),
        seeds=(11, 12),
        time_control=TimeControl(move_seconds=2.0, bank_seconds=10.0, start_seconds=30.0),
        fallback_seed=1,
    )
    result = play_match(spec, sandbox=SandboxConfig())
    assert len(result.games) == 2
    assert all(record.faults == () for record in result.games), result.logs["trained"]
    assert os.path.exists(trained_bot.POLICY)
