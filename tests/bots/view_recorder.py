"""A test bot that prints what it saw at every decision (pyzmq + msgpack, no SDK).

For every request it prints one line ``VIEW n digest`` to stderr: ``n`` counts the requests of
the current game (from 0) and ``digest`` is the SHA-256 of everything it knows then (the
events since the last ``game`` event, in order, and the request's kind, legal list and count,
the request id left out), so that a test can compare the view of a decision in a real match
with the view ``replay`` rebuilds. It plays a seeded random legal move.

``view_recorder.py [MODE]``: ``record`` (the default) plays; ``illegal`` answers every request
with a card that is not legal, ``crash`` exits with code 3 at the first request after writing
a traceback-like line, ``hang`` never answers, ``nostart`` exits before its hello, ``peek``
prints ``FILES`` and the names in its working directory (its folder) at the first request.
"""

import hashlib
import json
import os
import random
import sys
import time

import msgpack
import zmq

MODE = sys.argv[1] if len(sys.argv) > 1 else "record"


def out(text: str) -> None:
    os.write(2, (text + "\n").encode())


def main() -> int:
    if MODE == "nostart":
        out("view_recorder: giving up before the hello")
        return 4
    context = zmq.Context()
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(os.environ["OHSEVEN_ENDPOINT"])
    secret = os.environ["OHSEVEN_SECRET"]
    sock.send(msgpack.packb({"type": "hello", "protocol": 1, "secret": secret, "bot": MODE}))
    msgpack.unpackb(sock.recv())
    rng = random.Random(int(os.environ.get("OHSEVEN_SEED", "0")))
    seen: list = []
    asked = 0
    while True:
        message = msgpack.unpackb(sock.recv())
        if message["type"] == "shutdown":
            return 0
        for event in message.get("events", ()):
            if event["type"] == "game":
                seen, asked = [], 0
            seen.append(event)
        if message["type"] != "request":
            continue
        view = [seen, message["kind"], message["legal"], message["count"]]
        digest = hashlib.sha256(json.dumps(view, sort_keys=True).encode()).hexdigest()
        out(f"VIEW {asked} {digest}")
        asked += 1
        if MODE == "peek" and asked == 1:
            out("FILES " + " ".join(sorted(os.listdir("."))))
        if MODE == "crash":
            out("Traceback (most recent call last):\nRuntimeError: the recorder gives up")
            return 3
        if MODE == "hang":
            time.sleep(60)
        legal = message["legal"]
        if MODE == "illegal":
            move = "ZZ"
        elif message["kind"] == "pass":
            move = rng.sample(legal, message["count"])
        else:
            move = rng.choice(legal)
        sock.send(msgpack.packb({"type": "move", "id": message["id"], "move": move}))


if __name__ == "__main__":
    sys.exit(main())
