"""A bot that calls ``os.abort()`` at the third trick of the second round: a crash by
SIGABRT (exit code 134 through the sandbox)."""

import os

from ohseven.sdk import Bot, run


class Abort(Bot):
    name = "abort"

    def choose_play(self, view):
        if view.round == 1 and len(view.tricks) == 2:
            os.abort()
        return view.legal[0]


if __name__ == "__main__":
    run(Abort)
