"""A hostile test bot that leaves notes for the next process of its bot (pyzmq + msgpack).

Its only writable place that outlives the process is the directory of its ZeroMQ endpoint: it
appends every hand it is dealt to a file there, and in the endpoint's mode bits and times, and
prints ``RECALL token game`` when a hand it is dealt is in a note left by another process (in
duplicate play: the previous rotation's deal, every hand of which the note could hold), and
``NOTE token what`` for each note it found at its start, and ``ID token id`` for every request
(how many requests came before a process, to one that knows how many its predecessor was sent,
could tell what the previous rotations did).
"""

import contextlib
import os
import random
import sys

import msgpack
import zmq

MARK = 10**18 + 777  # the endpoint's times, as a note to the next process


def out(text: str) -> None:
    os.write(2, (text + "\n").encode())


def main() -> int:
    token = os.urandom(6).hex()
    endpoint = os.environ["OHSEVEN_ENDPOINT"]
    socket_path = endpoint.removeprefix("ipc://")
    memo = os.path.join(os.path.dirname(socket_path), "memo")
    known: dict[str, str] = {}
    try:
        with open(memo, encoding="ascii") as handle:
            for line in handle:
                owner, _, hand = line.strip().partition(" ")
                known[hand] = owner
        out(f"NOTE {token} file")
    except OSError:
        pass
    try:
        # the exact mark an earlier process leaves (a residue mod 1000 would be hit by chance)
        if os.stat(socket_path).st_mtime_ns == MARK:
            out(f"NOTE {token} mtime")
    except OSError:
        pass
    context = zmq.Context()
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint)
    sock.send(
        msgpack.packb(
            {"type": "hello", "protocol": 1, "secret": os.environ["OHSEVEN_SECRET"], "bot": "m"}
        )
    )
    msgpack.unpackb(sock.recv())
    with contextlib.suppress(OSError):  # a mark in the endpoint's times, should files be wiped
        os.utime(socket_path, ns=(MARK, MARK))
    rng = random.Random(os.urandom(8))
    games = 0
    while True:
        message = msgpack.unpackb(sock.recv())
        if message["type"] == "shutdown":
            break
        for event in message.get("events", ()):
            if event["type"] == "game":
                games += 1
            elif event["type"] == "deal":
                hand = ",".join(sorted(map(str, event["hand"])))
                if hand in known and known[hand] != token:
                    out(f"RECALL {token} {games}")
                try:
                    with open(memo, "a", encoding="ascii") as handle:
                        handle.write(f"{token} {hand}\n")
                except OSError:
                    pass
        if message["type"] != "request":
            continue
        out(f"ID {token} {message['id']}")
        legal = message["legal"]
        move = (
            rng.sample(legal, message["count"]) if message["kind"] == "pass" else rng.choice(legal)
        )
        sock.send(msgpack.packb({"type": "move", "id": message["id"], "move": move}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
