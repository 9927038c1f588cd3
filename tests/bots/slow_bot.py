"""A bot whose bids take 0.1 s: slower than a 0.03 s move limit, within its bank for a few
bids, so it never times out in a short check (check-bot must still warn)."""

import time

from ohseven.sdk import Bot, run


class Slow(Bot):
    name = "slow"

    def choose_bid(self, view):
        time.sleep(0.1)
        return view.legal[0]


if __name__ == "__main__":
    run(Slow)
