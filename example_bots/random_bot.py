"""The random bot: a uniformly random legal move for every decision.

Run it under the referee as ``python example_bots/random_bot.py``; ``--help`` for local play.
"""

from __future__ import annotations

if __package__ in (None, ""):  # run as a script: python example_bots/random_bot.py
    __package__ = "ohseven.example_bots"

from ..sdk import Bot, run

__all__ = ["BOT_NAME", "BOT_CLASS", "RandomBot"]

BOT_NAME = "random"


class RandomBot(Bot):
    """Every decision uniformly at random among the legal moves: the SDK's default choices."""

    name = BOT_NAME


BOT_CLASS = RandomBot

if __name__ == "__main__":
    run(RandomBot)
