"""A bot that writes to stderr and then fails: ``start`` before its hello, ``play`` on its first
play request (it raises out of the SDK's loop by exiting). Used to check that the referee's
commands show a faulting bot's own last output."""

import os
import sys

from ohseven.sdk import Bot, run

MODE = sys.argv.pop(1) if len(sys.argv) > 1 else "start"  # the SDK parses the rest


class LastWords(Bot):
    name = "last_words"

    def choose_bid(self, view):
        return view.legal[0]

    def choose_pass(self, view):
        return view.legal[: view.count]

    def choose_play(self, view):
        print("line one of my last words", file=sys.stderr)
        print("KeyError: 'the card I expected'", file=sys.stderr, flush=True)
        os._exit(4)


if __name__ == "__main__":
    if MODE == "start":
        for i in range(50):
            print(f"noise {i}", file=sys.stderr)
        print("ImportError: no module named 'mylib'", file=sys.stderr, flush=True)
        raise SystemExit(1)
    run(LastWords)
