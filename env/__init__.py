"""``ohseven.env``: reinforcement-learning environments for Oh-Seven and Oh Hell (extra ``rl``).

It owns the PettingZoo AEC environment (:mod:`.aec`: ``env()`` / ``raw_env()``, every game,
player count and rule option, a seat per agent) and the Gymnasium single-agent environment
(:mod:`.single`: one learning seat, in-process SDK bots in the others). Observations and
actions are those of :mod:`ohseven.sdk.observation`, which :class:`ohseven.sdk.PolicyBot`
shares, so a trained policy plays sandboxed matches unchanged. It imports only
``ohseven.core`` and ``ohseven.sdk``.
"""

from ohseven.env.aec import REWARDS, IllegalActionError, env, raw_env
from ohseven.env.single import SingleAgentEnv
from ohseven.sdk.observation import ACTIONS, BID_BASE, LAYOUT, OBS_SIZE

__all__ = [
    "ACTIONS",
    "BID_BASE",
    "LAYOUT",
    "OBS_SIZE",
    "REWARDS",
    "IllegalActionError",
    "SingleAgentEnv",
    "env",
    "raw_env",
]
