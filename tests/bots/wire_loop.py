"""The protocol loop of the test bots written against PROTOCOL.md (pyzmq + msgpack, no SDK).

``play(decide)`` connects to the referee (``OHSEVEN_ENDPOINT``), says hello with
``OHSEVEN_SECRET``, answers every request with ``decide(message, number)`` (``number``: 1 for
the first request) and returns the number of requests at the shutdown. A bot imports it from
its own folder (the folder the sandbox shows it).
"""

import os

import msgpack
import zmq


def first_legal(message):
    """The first legal move (the first ``count`` cards of a pass)."""
    legal = message["legal"]
    return legal[: message["count"]] if message["kind"] == "pass" else legal[0]


def play(decide):
    context = zmq.Context()
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(os.environ["OHSEVEN_ENDPOINT"])
    secret = os.environ["OHSEVEN_SECRET"]
    sock.send(msgpack.packb({"type": "hello", "protocol": 1, "secret": secret}))
    welcome = msgpack.unpackb(sock.recv())
    assert welcome["type"] == "welcome", welcome
    count = 0
    while True:
        message = msgpack.unpackb(sock.recv())
        if message["type"] == "shutdown":
            return count
        if message["type"] != "request":
            continue
        count += 1
        move = decide(message, count)
        sock.send(msgpack.packb({"type": "move", "id": message["id"], "move": move}))
