"""A hostile test bot that remembers every deal it is shown (pyzmq + msgpack, no SDK).

It plays a random legal move and prints, one line each (the tests read its captured log):
``TOKEN t`` once per process (a random token: which lines came from one process),
``HAND t game round cards`` for every hand it is dealt, ``SEEN t game`` when it recognises a
game whose hands so far equal those of a game it already played (the memory attack), and at the
end every number of 2**24 or more and every long text it received in a message or found in its
environment (``BIG``/``TEXT``), so that a test can check that no seed or secret reaches it.
"""

import os
import random
import sys

import msgpack
import zmq


def out(text: str) -> None:
    os.write(2, (text + "\n").encode())


def collect(value, numbers: set, texts: set) -> None:
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        if abs(value) >= 1 << 24:
            numbers.add(value)
    elif isinstance(value, str | bytes):
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        if len(text) >= 16:
            texts.add(text)
    elif isinstance(value, dict):
        for key, item in value.items():
            collect(key, numbers, texts)
            collect(item, numbers, texts)
    elif isinstance(value, list | tuple):
        for item in value:
            collect(item, numbers, texts)


def main() -> int:
    token = os.urandom(6).hex()
    out(f"TOKEN {token}")
    numbers: set = set()
    texts: set = set()
    for key, value in os.environ.items():
        if key != "OHSEVEN_SECRET":  # the connection's own token, not a tournament secret
            collect(value, numbers, texts)
            if value.isdigit():
                collect(int(value), numbers, texts)
    context = zmq.Context()
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(os.environ["OHSEVEN_ENDPOINT"])
    secret = os.environ["OHSEVEN_SECRET"]
    sock.send(msgpack.packb({"type": "hello", "protocol": 1, "secret": secret, "bot": "rec"}))
    msgpack.unpackb(sock.recv())
    rng = random.Random(os.urandom(8))
    games = 0
    memory: dict[tuple, int] = {}  # the hands of each game played so far (prefixes too)
    hands: list = []
    rounds = 0
    while True:
        message = msgpack.unpackb(sock.recv())
        collect(message, numbers, texts)
        if message["type"] == "shutdown":
            break
        for event in message.get("events", ()):
            if event["type"] == "game":
                games += 1
                hands, rounds = [], 0
            elif event["type"] == "deal":
                rounds += 1
                hands.append(tuple(sorted(event["hand"])))
                out(f"HAND {token} {games} {rounds} {','.join(map(str, hands[-1]))}")
                key = tuple(hands)
                if len(key) >= 2 and memory.get(key, games) != games:
                    out(f"SEEN {token} {games}")
                memory.setdefault(key, games)
        if message["type"] != "request":
            continue
        legal = message["legal"]
        move = (
            rng.sample(legal, message["count"]) if message["kind"] == "pass" else rng.choice(legal)
        )
        sock.send(msgpack.packb({"type": "move", "id": message["id"], "move": move}))
    for number in sorted(numbers):
        out(f"BIG {number}")
    for text in sorted(texts):
        out(f"TEXT {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
