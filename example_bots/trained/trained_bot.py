"""The trained bot: the policy saved in ``policy.npz`` beside this file, played by PolicyBot.

Run it under the referee as ``python example_bots/trained/trained_bot.py`` (it needs numpy, which
the referee's Python has); ``example_bots/trained/train.py`` makes the policy.
"""

from __future__ import annotations

from pathlib import Path

from ohseven.example_bots.trained.mlp import MLP
from ohseven.sdk import PolicyBot, run

__all__ = ["BOT_NAME", "BOT_CLASS", "POLICY", "TrainedBot"]

BOT_NAME = "trained"
POLICY = Path(__file__).with_name("policy.npz")


class TrainedBot(PolicyBot):
    """The policy of ``policy.npz``: the legal action it rates highest, every decision."""

    name = BOT_NAME

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(MLP.load(POLICY), seed)


BOT_CLASS = TrainedBot

if __name__ == "__main__":
    run(TrainedBot)
