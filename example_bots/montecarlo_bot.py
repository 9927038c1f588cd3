"""The Monte Carlo bot: determinization on the referee's own rules engine.

For every decision it deals the cards it cannot see to the other seats at random, consistently
with what it knows (:func:`ohseven.sdk.sample_hands`), and plays the round out from each
candidate move with a fast bid-aware policy for every seat (:func:`ohseven.sdk.playout`); it
chooses the move with the best average (own round points, less a quarter of the others'
mean). Bids are evaluated the same way, guessing the unknown bids of the others from their
sampled hands. Each decision samples ``max_samples`` deals (default 100), so that with the
referee's seed (``OHSEVEN_SEED``) the bot is reproducible; a third of the time the referee
allows, or ``budget_s`` seconds if given, caps it on a slow machine (and only then makes it
depend on the clock).
"""

from __future__ import annotations

if __package__ in (None, ""):  # run as a script: python example_bots/montecarlo_bot.py
    __package__ = "ohseven.example_bots"

from ..sdk import OH_SEVEN, View, estimate_tricks, evaluate_bids, evaluate_plays, run
from .heuristic_bot import HeuristicBot

__all__ = ["BOT_NAME", "BOT_CLASS", "MonteCarloBot"]

BOT_NAME = "montecarlo"


class MonteCarloBot(HeuristicBot):
    """Sample the hidden cards, play each candidate out, keep the best average."""

    name = BOT_NAME

    def __init__(
        self, seed: int | None = None, *, budget_s: float | None = None, max_samples: int = 100
    ) -> None:
        super().__init__(seed)
        self.budget_s = budget_s
        self.max_samples = max_samples

    def budget(self, view: View) -> float:
        cap = self.budget_s if self.budget_s is not None else 10.0
        if view.time_ms > 0:
            return min(cap, view.time_ms / 3000)
        return cap

    def choose_bid(self, view: View) -> str | int:
        candidates = None
        if view.game != OH_SEVEN:
            estimate = estimate_tricks(view.hand, view.trump, view.game, view.players)
            candidates = [b for b in view.legal if abs(b - estimate) <= 2] or view.legal
        values = evaluate_bids(
            view,
            self.rng,
            budget_s=self.budget(view),
            max_samples=self.max_samples,
            candidates=candidates,
        )
        return max(values, key=values.__getitem__)

    def choose_play(self, view: View) -> str:
        if len(set(view.legal)) == 1:
            return view.legal[0]
        values = evaluate_plays(
            view, self.rng, budget_s=self.budget(view), max_samples=self.max_samples
        )
        return max(values, key=values.__getitem__)


BOT_CLASS = MonteCarloBot


def main(argv: list[str] | None = None) -> None:
    """``--samples N`` and ``--budget SECONDS`` cap each decision; other options: the runner's."""
    import argparse
    import functools

    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--budget", type=float, default=None)
    parser.add_argument("--samples", type=int, default=100)
    args, rest = parser.parse_known_args(argv)
    factory = functools.partial(MonteCarloBot, budget_s=args.budget, max_samples=args.samples)
    factory.name = BOT_NAME  # type: ignore[attr-defined]
    run(factory, rest)


if __name__ == "__main__":
    main()
