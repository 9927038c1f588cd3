"""The heuristic bot: bids from its trumps and high cards, then plays to hit its bid exactly.

Bidding: it estimates the tricks its hand wins (:func:`ohseven.sdk.estimate_tricks`). In
Oh-Seven the bid card also chooses trump when it is the top bid, so a high card is valued with
its own suit as trump; it bids the card whose rank is closest to that estimate. In Oh Hell it
bids the estimate, rounded, or the nearest legal number under the hook.

Play: while it still needs tricks it wins cheaply (the lowest winning card when last to play,
its strongest card otherwise) or throws its weakest card; once its bid is made it ducks: the
highest card that does not win, or its strongest card when every card wins.

Passing (Oh-Seven ``passing``): it gives away its middle ranks, keeping sure winners and sure
losers, which are the easiest cards to plan with.
"""

from __future__ import annotations

if __package__ in (None, ""):  # run as a script: python example_bots/heuristic_bot.py
    __package__ = "ohseven.example_bots"

from ..sdk import OH_SEVEN, Bot, View, estimate_tricks, rank, run

__all__ = ["BOT_NAME", "BOT_CLASS", "HeuristicBot"]

BOT_NAME = "heuristic"


class HeuristicBot(Bot):
    """Bid the estimated tricks, then win while under the bid and duck once it is made."""

    name = BOT_NAME

    def choose_pass(self, view: View, count: int) -> list[str]:
        middle = 3.5 if view.is_oh_seven else 8
        return sorted(view.legal, key=lambda card: abs(rank(card) - middle))[:count]

    def choose_bid(self, view: View) -> str | int:
        if view.game == OH_SEVEN:
            return self.oh_seven_bid(view)
        estimate = estimate_tricks(view.hand, view.trump, view.game, view.players)
        return min(view.legal, key=lambda bid: (abs(bid - estimate), bid))

    def oh_seven_bid(self, view: View) -> str:
        no_trump = estimate_tricks(view.hand, None, view.game, view.players)

        def gap(card: str) -> float:
            # a high bid card is likely the top bid, so its suit would be trump
            trump = card[1] if rank(card) >= 4 else None
            estimate = (
                estimate_tricks(view.hand, trump, view.game, view.players) if trump else no_trump
            )
            return abs(rank(card) - estimate)

        return min(view.legal, key=lambda card: (gap(card), card))

    def strength(self, view: View, card: str) -> int:
        return rank(card) + (100 if card[1] == view.trump else 0)

    def choose_play(self, view: View) -> str:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        need = view.need() or 0
        strongest = max(legal, key=lambda c: self.strength(view, c))
        weakest = min(legal, key=lambda c: self.strength(view, c))
        current = view.winning()
        if current is None:  # leading
            return strongest if need > 0 else weakest
        _, best = current
        winners = [c for c in legal if view.beats(c, best)]
        last = len(view.trick) == view.players - 1
        if need > 0:
            if not winners:
                return weakest
            if last:
                return min(winners, key=lambda c: self.strength(view, c))
            return max(winners, key=lambda c: self.strength(view, c))
        losers = [c for c in legal if c not in winners]
        if losers:
            return max(losers, key=lambda c: self.strength(view, c))
        return strongest


BOT_CLASS = HeuristicBot

if __name__ == "__main__":
    run(HeuristicBot)
