"""A bot whose every choice comes from the operating system's randomness: never reproducible."""

import random

from ohseven.sdk import Bot, run

_OS = random.SystemRandom()


class OsRandomBot(Bot):
    def choose_pass(self, view, count):
        return _OS.sample(view.legal, count)

    def choose_bid(self, view):
        return _OS.choice(view.legal)

    def choose_play(self, view):
        return _OS.choice(view.legal)


if __name__ == "__main__":
    run(OsRandomBot)
