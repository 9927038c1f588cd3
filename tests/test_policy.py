"""ohseven.sdk.policy: PolicyBot sees exactly the environment's observation, and plays."""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ohseven.env import ACTIONS, OBS_SIZE, raw_env
from ohseven.sdk import BotAnswerError, PolicyBot, local_game
from ohseven.sdk.observation import EncodeError

TABLES = [
    ("oh-seven", 3, {}),
    ("oh-seven", 5, {"passing": True}),
    ("oh-seven", 4, {"passing": True, "identical_top_bonus": False}),
    ("oh-hell", 4, {"hook": True}),
    ("oh-hell", 5, {"simultaneous_bids": True, "must_trump": True}),
    ("oh-hell", 3, {"hand_order": "down", "miss_scores_tricks": True}),
]


class Recording:
    """A random policy that keeps what it was shown and what it chose."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seen: list[tuple[list[float], list[int], int]] = []

    def __call__(self, observation: list[float], mask: list[int]) -> int:
        assert len(observation) == OBS_SIZE and len(mask) == ACTIONS
        action = self.rng.choice([a for a in range(ACTIONS) if mask[a]])
        self.seen.append((observation, mask, action))
        return action


class TestSameAsTheEnvironment:
    @settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(table=st.sampled_from(TABLES), seed=st.integers(0, 2**32 - 1))
    def test_policy_bots_see_the_environments_observations(self, table, seed) -> None:
        """PolicyBots play a local game (the referee's loop, their views folded from the
        requests); the environment then plays the same deal with the same actions: at each
        decision of each seat, the observation and the mask are the same numbers."""
        game, players, rules = table
        policies = [Recording(seed + s) for s in range(players)]
        result = local_game([PolicyBot(p) for p in policies], game=game, seed=seed, options=rules)
        env = raw_env(game, players, rules)
        env.reset(seed=seed)
        turns = [iter(p.seen) for p in policies]
        decisions = 0
        for agent in env.agent_iter():
            obs, _, done, _, _ = env.last()
            if done:
                env.step(None)
                continue
            observation, mask, action = next(turns[env.agent_seat[agent]])
            assert obs["observation"].tolist() == np.float32(observation).tolist()
            assert obs["action_mask"].tolist() == mask
            env.step(action)
            decisions += 1
        assert decisions == sum(len(p.seen) for p in policies)
        assert all(next(t, None) is None for t in turns)
        assert env.game is not None and tuple(env.game.scores) == result.totals


class TestPolicyBot:
    def test_an_illegal_action_is_an_error_in_strict_mode(self) -> None:
        """A policy choosing a masked action: strict local games raise with the decision."""
        bots = [PolicyBot(lambda obs, mask: mask.index(0)) for _ in range(3)]
        with pytest.raises(EncodeError, match="not legal for this bid decision"):
            local_game(bots, game="oh-hell", seed=1)

    def test_an_illegal_action_is_replaced_otherwise(self) -> None:
        """Not strict, the SDK's safety net plays a random legal move instead."""
        bots = [PolicyBot(lambda obs, mask: 67, name="stubborn") for _ in range(3)]
        result = local_game(bots, game="oh-seven", seed=2, strict=False)
        assert len(result.totals) == 3

    def test_numpy_actions_are_taken(self) -> None:
        """A policy may answer with a numpy integer (an argmax)."""

        def greedy(obs: list[float], mask: list[int]) -> int:
            return np.argmax(np.asarray(mask) * (1 + np.arange(ACTIONS)))  # type: ignore[return-value]

        result = local_game([PolicyBot(greedy) for _ in range(4)], game="oh-hell", seed=3)
        assert len(result.totals) == 4

    def test_a_wrong_answer_type_is_refused(self) -> None:
        bots = [PolicyBot(lambda obs, mask: "7S") for _ in range(3)]  # type: ignore[arg-type,return-value]
        with pytest.raises((EncodeError, BotAnswerError)):
            local_game(bots, game="oh-seven", seed=4)

    def test_an_ordinary_bot_does_not_load_it(self) -> None:
        """What a bot imports as it starts leaves out the policy and the observation."""
        code = (
            "import sys; from ohseven.sdk import Bot, View, run;"
            "print(sorted(m for m in sys.modules if m.startswith('ohseven.sdk.')))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        assert "policy" not in out.stdout and "observation" not in out.stdout
        assert "ohseven.sdk.bot" in out.stdout
