""":class:`PolicyBot`: a trained policy (observation -> action) playing as an ordinary bot.

The policy sees exactly what the reinforcement-learning environment (``ohseven.env``) shows a
seat: the vector of :func:`ohseven.sdk.observation.observation` and the mask of
:func:`~ohseven.sdk.observation.action_mask`, built from the bot's own :class:`View`. So a
policy trained in the environment plays in a sandboxed match or tournament unchanged. No
numpy here: the observation is a list of floats (a policy may turn it into an array).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ohseven.sdk.bot import Bot
from ohseven.sdk.observation import action_mask, action_to_move, observation
from ohseven.sdk.view import View

__all__ = ["Policy", "PolicyBot"]

#: ``policy(observation, mask) -> action``: ``observation`` is ``OBS_SIZE`` floats, ``mask``
#: ``ACTIONS`` ints (1: legal); the action must be a legal one
Policy = Callable[[list[float], list[int]], int]


class PolicyBot(Bot):
    """Every decision is ``policy(observation, mask)``, turned into the move it stands for.

    A pass of ``k`` cards asks the policy ``k`` times, one card each, as the environment does.
    An action that is not legal raises :class:`~ohseven.sdk.observation.EncodeError` (a
    ``ValueError``): the SDK's safety net then sends a random legal move and reports it.
    """

    name = "policy"

    def __init__(self, policy: Policy, seed: int | None = None, *, name: str | None = None):
        super().__init__(seed)
        self.policy = policy
        if name is not None:
            self.name = name

    def act(self, view: View, picked: Sequence[str] = ()) -> Any:
        """The wire move the policy chooses for the view's pending decision."""
        action = self.policy(observation(view, picked), action_mask(view, picked))
        return action_to_move(view, action, picked)

    def choose_pass(self, view: View, count: int) -> list[str]:
        picked: list[str] = []
        for _ in range(count):
            picked.append(self.act(view, picked))
        return picked

    def choose_bid(self, view: View) -> str | int:
        move: str | int = self.act(view)
        return move

    def choose_play(self, view: View) -> str:
        move: str = self.act(view)
        return move
