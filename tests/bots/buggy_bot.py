"""An SDK bot with bugs its SDK covers up: ``choose_bid`` divides by zero, ``choose_play``
answers a card it does not hold on the first trick of every round. Used to check that the
SDK reports what it covered up and the referee records a ``bot_error`` for it."""

from ohseven.sdk import Bot, run


class Buggy(Bot):
    name = "buggy"

    def choose_bid(self, view):
        return view.legal[len(view.hand) // 0]

    def choose_play(self, view):
        if not view.tricks:
            return "XX"
        return view.legal[0]


if __name__ == "__main__":
    run(Buggy)
