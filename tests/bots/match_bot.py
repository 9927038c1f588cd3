"""A test bot written straight against PROTOCOL.md (pyzmq + msgpack, no SDK).

``match_bot.py [MODE]``: ``random`` plays a random legal move and checks that the events it
receives let it track its hand (it exits with code 5 if a legal card is not in the tracked
hand). The other modes misbehave once, on a given request, and otherwise play like ``random``:
``timeout``, ``crash``, ``garbage``, ``wrong_id``, ``old_id``, ``illegal``, ``badtype``,
``hang`` (never replies again), ``silent`` (never says hello), ``badsecret`` (says hello with
a wrong secret and prints the answer), ``longlabel`` and ``boolprotocol`` (a hello with a
65-character label, or ``protocol: true``; prints the answer), ``always_timeout``.
"""

import os
import random
import sys
import time

import msgpack
import zmq

MODE = sys.argv[1] if len(sys.argv) > 1 else "random"
AT = int(sys.argv[2]) if len(sys.argv) > 2 else 3  # the request number that misbehaves


def main() -> int:
    if MODE == "silent":
        time.sleep(60)
        return 0
    context = zmq.Context()
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(os.environ["OHSEVEN_ENDPOINT"])
    secret = os.environ["OHSEVEN_SECRET"]
    bad_hellos = {
        "longlabel": {"type": "hello", "protocol": 1, "secret": secret, "bot": "x" * 65},
        "boolprotocol": {"type": "hello", "protocol": True, "secret": secret},
    }
    if MODE in bad_hellos:  # a hello wrong in one field: the answer should say which
        sock.send(msgpack.packb(bad_hellos[MODE]))
        answer = msgpack.unpackb(sock.recv())
        print(f"answer: {answer}", flush=True)
        time.sleep(60)
        return 0
    if MODE == "badsecret":
        sock.send(msgpack.packb({"type": "hello", "protocol": 1, "secret": "x" + secret}))
        answer = msgpack.unpackb(sock.recv())
        print(f"answer: {answer}", flush=True)
        time.sleep(60)
        return 0
    sock.send(msgpack.packb({"type": "hello", "protocol": 1, "secret": secret, "bot": MODE}))
    welcome = msgpack.unpackb(sock.recv())
    assert welcome["type"] == "welcome", welcome
    rng = random.Random(7)
    hand: list = []
    seat = -1
    previous_id = None
    count = 0

    def reply(ident, move):
        sock.send(msgpack.packb({"type": "move", "id": ident, "move": move}))

    while True:
        message = msgpack.unpackb(sock.recv())
        kind = message["type"]
        if kind == "shutdown":
            return 0
        for event in message.get("events", ()):
            assert "to" not in event, event
            if event["type"] == "deal":
                hand = list(event["hand"])
            elif event["type"] == "passed":
                for card in event["cards"]:
                    hand.remove(card)
            elif event["type"] == "received":
                hand.extend(event["cards"])
            elif event["type"] == "play" and event["seat"] == seat:
                hand.remove(event["card"])
            elif event["type"] == "game":
                seat = event["seat"]
        if kind != "request":
            continue
        count += 1
        legal = message["legal"]
        if message["kind"] == "play" and not set(legal) <= set(hand):
            print(f"legal {legal} not in tracked hand {hand}", file=sys.stderr)
            return 5
        if message["kind"] == "pass":
            move = rng.sample(legal, message["count"])
        else:
            move = rng.choice(legal)
        ident = message["id"]
        if MODE == "always_timeout" or (MODE == "timeout" and count == AT):
            time.sleep(message["time_ms"] / 1000 + 0.15)
        elif count == AT:
            if MODE == "crash":
                os._exit(3)
            if MODE == "hang":
                time.sleep(60)
            if MODE == "garbage":
                sock.send(b"\xc1\x00garbage")
                continue
            if MODE == "wrong_id":
                ident += 1000
            if MODE == "old_id":
                reply(previous_id, move)
            if MODE == "badtype":
                move = {"card": move}
            if MODE == "illegal":
                move = "ZZ" if message["kind"] != "bid" or isinstance(move, str) else 99
        reply(ident, move)
        previous_id = message["id"]


if __name__ == "__main__":
    sys.exit(main())
