"""The random bot: a uniformly random legal move for every decision.

Run it under the referee as ``python example_bots/random_bot.py``; ``--help`` for local play.
"""

from __future__ import annotations

if __package__ in (None, ""):  # run as a script: python example_bots/random_bot.py
    __package__ = "ohseven.example_bots"

from ..sdk import Bot, View, run

__all__ = ["BOT_NAME", "BOT_CLASS", "RandomBot"]

BOT_NAME = "random"


class RandomBot(Bot):
    """Every decision uniformly at random among the legal moves."""

    name = BOT_NAME

    def choose_pass(self, view: View, count: int) -> list[str]:
        return self.rng.sample(view.legal, count)

    def choose_bid(self, view: View) -> str | int:
        return self.rng.choice(view.legal)

    def choose_play(self, view: View) -> str:
        return self.rng.choice(view.legal)


BOT_CLASS = RandomBot

if __name__ == "__main__":
    run(RandomBot)
