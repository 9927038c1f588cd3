"""A hostile bot for the end-to-end tests: ``hostile_bot.py MODE [ARGS...]``.

Written straight against PROTOCOL.md (pyzmq + msgpack, no SDK, which would sanitise its
answers). Apart from its misbehaviour it plays a random legal move. What it tried and what
happened is printed as ``RESULT <word> [detail]`` lines, which the tests read from its log.

Modes, by when they strike:

- at start: ``exit`` (exits at once), ``noconnect`` (never connects), ``mute`` (connects, never
  says hello), ``guess`` (hello with guessed secrets only), ``flood`` (megabytes of output on
  stdout and stderr, then plays);
- on every request: ``hang`` (sleeps through it), ``late`` (answers after its time),
  ``spin`` (burns CPU), ``garbage`` (bytes that are not msgpack), ``huge`` (a 200 KB message),
  ``enormous`` (a 2 MB message), ``deep`` (msgpack nested 100000 levels), ``notmap``,
  ``badid``, ``nomove``, ``badmove``, ``binary`` (valid msgpack of the wrong shape or types),
  ``notheld`` (a card it does not hold), ``bidrange`` (an Oh Hell bid out of range),
  ``replay`` (answers with the id of the previous request), ``unsolicited`` (a stream of moves
  nobody asked for, and second hellos), ``lateflood`` (answers, then repeats that reply until
  the next message comes), ``neighbours`` (answers with the ids next to its own, those of
  the other seats asked at once in a simultaneous phase, then with its own);
- on the first request, then plays on: ``memory`` (allocates until refused, then dies),
  ``forkbomb`` (forks until refused; the children fork too), ``bigfile`` (writes a file until
  refused, then dies), ``impostor`` (a second connection saying hello with guessed secrets
  and its own, if it can connect at all), ``network HOST PORT`` (a TCP connection),
  ``steal PATH...`` (reads files),
  ``signal PID`` (kills the referee, pid 1 and -1), ``writeall`` (tries to create a file in
  every directory it can see, its socket directory included, and to fill the ones it can);
- ``connflood PROCESSES CONNECTIONS WHEN`` (``early``: before its hello; ``late``: on the
  first request): that many processes each open that many connections to its endpoint and
  hold them; the main process then plays on; ``strangers`` (before its hello, 200 frames on
  a second connection that never says hello);
- ``stall drop|crash [PROCESSES MB]``: before its hello, makes its own kill slow
  (PROCESSES children, 60 by default, niced, sharing a touched mapping of MB megabytes, 150
  by default); on its first play request that another seat's request follows (not the last
  card of a trick), sets the children scanning, answers and gets itself dropped (``drop``:
  garbage frames right after its reply) or exits (``crash``): the referee kills it while the
  next seat's request is outstanding;
- ``spare``: opens a second connection before its hello; on every request, says hello on it
  with its own secret and sends the move there (the right id) before answering on its own;
- ``bigflood N``: on its first request, N frames of just under 1 MB (the transport's limit)
  as fast as it can, then plays on;
- ``terminal start|play``: writes terminal control sequences (a window title, a clipboard
  write, a cleared screen, C1 controls, rich markup) on stdout and stderr before its hello;
  ``start`` then exits; ``play`` says hello with them in its label and raises an exception
  whose text holds them on its first request (its traceback is its last output);
- all along: ``record DIR`` (a spy: plays fair, and appends every message it receives, as a
  JSON line, to ``DIR/<OHSEVEN_NAME>.jsonl`` for the leak tests to inspect).
"""

import contextlib
import errno
import json
import os
import random
import signal
import socket
import sys
import time

import msgpack
import zmq

MODE = sys.argv[1]
ARGS = sys.argv[2:]
DROP_FRAMES = 12  # more than the referee's faults to a drop


def result(word, detail=""):
    print("RESULT", word, detail, file=sys.stderr, flush=True)


def packb(value):
    return msgpack.packb(value, use_bin_type=True)


def flood():
    line = b"z" * 1023 + b"\n"
    for stream in (sys.stdout.buffer, sys.stderr.buffer):
        for _ in range(4 * 1024):
            stream.write(line)
        stream.flush()


def memory():
    hoard = []
    try:
        while True:
            hoard.append(bytearray(8 << 20))
    except MemoryError:
        result("memory_refused", len(hoard) * 8)
        raise


def forkbomb():
    children = 0
    while children < 100000:
        try:
            pid = os.fork()
        except OSError as error:
            result("fork_refused", f"{children} {errno.errorcode.get(error.errno)}")
            return
        if pid == 0:
            while True:  # the children fork too, until refused, then sleep
                try:
                    os.fork()
                except OSError:
                    time.sleep(60)
        children += 1


def bigfile():
    path = os.path.join(os.environ.get("HOME", "/tmp"), "big")
    chunk = b"x" * (1 << 20)
    written = 0
    try:
        with open(path, "wb") as handle:
            while True:
                handle.write(chunk)
                handle.flush()
                written += 1
    except OSError as error:
        result("write_refused", f"{written} {errno.errorcode.get(error.errno)}")
        raise


def impostor(endpoint, secret):
    """A second connection trying guessed secrets, then our own (already used) one."""
    parent = os.path.dirname(os.path.dirname(endpoint[len("ipc://") :]))
    try:
        result("listed", os.listdir(parent))
    except OSError as error:
        result("unlisted", errno.errorcode.get(error.errno))
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(endpoint[len("ipc://") :])
    except OSError as error:
        result("impostor_refused", errno.errorcode.get(error.errno))
        return
    finally:
        probe.close()
    context = zmq.Context.instance()
    spare = None
    if MODE == "spare":
        spare = context.socket(zmq.DEALER)
        spare.setsockopt(zmq.LINGER, 0)
        spare.connect(endpoint)
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint)
    guesses = [os.urandom(16).hex() for _ in range(20)] + [secret]
    answers = []
    for guess in guesses:
        sock.send(packb({"type": "hello", "protocol": 1, "secret": guess, "bot": "other"}))
        if sock.poll(2000):
            answers.append(msgpack.unpackb(sock.recv())["type"])
        else:
            answers.append("none")
    result("impostor", ",".join(sorted(set(answers))))
    sock.close(0)


def network(host, port):
    try:
        socket.create_connection((host, int(port)), timeout=1).close()
    except OSError as error:
        result("net_refused", errno.errorcode.get(error.errno, repr(error)))
    else:
        result("net_connected")


def steal(*paths):
    for path in paths:
        try:
            with open(path) as handle:
                result("stolen", f"{path} {handle.read()!r}")
        except OSError as error:
            result("steal_refused", f"{path} {errno.errorcode.get(error.errno)}")


def kill(pid):
    for target in (int(pid), 1, -1):
        try:
            os.kill(target, signal.SIGKILL)
        except OSError as error:
            result("kill_refused", f"{target} {errno.errorcode.get(error.errno)}")
        else:
            result("kill_sent", target)


def writeall(endpoint):
    """Create a file and a socket in every directory in sight but /proc and /sys; fill the
    ones that take it up to 64 MB (``writeall socketdir``: only the
    socket directory and its parent); report what worked outside the scratch (HOME)."""
    home = os.environ.get("HOME", "/tmp")
    home_device = os.stat(home).st_dev

    def in_scratch(folder, device):  # under HOME and on its file system (not a mount in it)
        return device == home_device and (folder + "/").startswith(home.rstrip("/") + "/")

    socket_dir = os.path.dirname(endpoint[len("ipc://") :])
    seen, wrote, total = set(), [], 0
    todo = [socket_dir, os.path.dirname(socket_dir)] + (["/"] if ARGS != ["socketdir"] else [])
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the file-size limit: EFBIG
    chunk = b"x" * (1 << 20)
    while todo:
        folder = todo.pop()
        if folder in seen or folder.startswith(("/proc", "/sys")):
            continue
        seen.add(folder)
        try:
            readonly = os.statvfs(folder).f_flag & os.ST_RDONLY
            device = os.stat(folder).st_dev
        except OSError:
            continue
        with contextlib.suppress(OSError):
            for entry in os.scandir(folder):
                # below a read-only mount only another mount can be written: skip the rest
                if entry.is_dir(follow_symlinks=False) and (
                    not readonly or entry.stat(follow_symlinks=False).st_dev != device
                ):
                    todo.append(entry.path)
        path = os.path.join(folder, f"hostile-{os.getpid()}")
        try:
            with open(path, "wb") as handle:
                while total < 64 and not in_scratch(folder, device):
                    handle.write(chunk)
                    handle.flush()
                    total += 1
        except OSError:
            pass
        if os.path.exists(path):
            wrote.append((folder, device))
        try:
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(path + ".sock")
            wrote.append((folder, device))
            server.close()
        except OSError:
            pass
    outside = [folder for folder, device in wrote if not in_scratch(folder, device)]
    result("wrote", json.dumps(outside))
    result("scratch", str(any(in_scratch(folder, device) for folder, device in wrote)))
    result("filled_mb", total)
    result("socket_dir_tried", str(socket_dir in seen))


def connflood(endpoint, processes, connections):
    """``processes`` processes (this one included) open ``connections`` connections each."""
    path = endpoint[len("ipc://") :]
    held, errors, children = [], set(), []
    for _ in range(int(processes) - 1):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            sockets = []
            for _ in range(int(connections)):
                try:
                    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    client.connect(path)
                    sockets.append(client)
                except OSError:
                    break
            time.sleep(60)
            os._exit(0)
        children.append(pid)
    for _ in range(int(connections)):
        try:
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.connect(path)
            held.append(client)
        except OSError as error:
            errors.add(errno.errorcode.get(error.errno, str(error.errno)))
            break
    result("connected", f"{len(held)} {','.join(sorted(errors))}")
    return held


def slow_to_kill(processes, megabytes):
    """Niced children sharing (copy on write) every page of a big mapping, which scan it once the
    returned function is called: their exit takes the referee seconds."""
    import mmap

    began = time.monotonic()
    size = megabytes << 20
    pages = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
    for page in range(0, size, 4096):
        pages[page] = 1
    wait, go = os.pipe()
    started = 0
    for _ in range(processes):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            os.nice(19)  # the bot's own answers keep its CPU
            os.close(go)
            os.read(wait, 1)
            total = 0
            while True:
                for page in range(0, size, 4096):
                    total += pages[page]
        started += 1
    result("stall_children", f"{started} {time.monotonic() - began:.3f}")
    return lambda: os.close(go)


def nested(depth):
    return b"\x91" * depth + b"\xc0"  # [[[...[nil]...]]]


#: what a bot would write to the organiser's terminal: OSC 0 (window title), OSC 52 (the
#: clipboard), CSI 2J (clear screen), an 8-bit CSI (U+009B, and the raw byte), a bell, a
#: carriage return and rich markup (a style and a link)
TERMINAL = (
    "\x1b]0;PWNED-TITLE\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\u009b31mC1\x07\r"
    "[reverse]MARKUP[/reverse][link=https://evil.example]LINK[/link]"
)


def terminal():
    for stream in (sys.stdout, sys.stderr):
        stream.write(TERMINAL + "\n")
        stream.flush()
        stream.buffer.write(b"raw \x9b byte \x1b[5m\n")
        stream.buffer.flush()


def main():
    if MODE == "exit":
        return 0
    if MODE == "terminal":
        terminal()
        if ARGS[0] == "start":
            return 3
    if MODE == "noconnect":
        time.sleep(120)
        return 0
    if MODE == "flood":
        flood()
    endpoint, secret = os.environ["OHSEVEN_ENDPOINT"], os.environ["OHSEVEN_SECRET"]
    if MODE == "connflood" and ARGS[2] == "early":
        hoard = connflood(endpoint, *ARGS[:2])  # noqa: F841 - held open
    if MODE == "strangers":  # a second connection that never says hello floods the referee
        other = zmq.Context.instance().socket(zmq.DEALER)
        other.setsockopt(zmq.LINGER, 0)
        other.connect(endpoint)
        for _ in range(200):
            other.send(b"\xc1 not a hello")
    context = zmq.Context.instance()
    spare = None
    if MODE == "spare":
        spare = context.socket(zmq.DEALER)
        spare.setsockopt(zmq.LINGER, 0)
        spare.connect(endpoint)
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint)
    if MODE == "mute":
        time.sleep(120)
        return 0
    if MODE == "guess":
        for _ in range(20):
            sock.send(packb({"type": "hello", "protocol": 1, "secret": os.urandom(16).hex()}))
            result("guess_answer", msgpack.unpackb(sock.recv())["type"])
        time.sleep(120)
        return 0
    if MODE == "stall":  # before the hello: the start has time to spare
        release = slow_to_kill(*(int(arg) for arg in ARGS[1:3] or ("60", "150")))
    label = TERMINAL[:64] if MODE == "terminal" else MODE
    sock.send(packb({"type": "hello", "protocol": 1, "secret": secret, "bot": label}))
    welcome = msgpack.unpackb(sock.recv())
    assert welcome["type"] == "welcome", welcome
    rng = random.Random(11)
    players, in_trick, stalled = 0, 0, False
    hand = []
    previous = None
    count = 0
    spy = None
    if MODE == "record":
        spy = open(os.path.join(ARGS[0], os.environ["OHSEVEN_NAME"] + ".jsonl"), "a")  # noqa: SIM115
    while True:
        if MODE == "unsolicited":
            for _ in range(3):
                sock.send(packb({"type": "move", "id": 10**9 + rng.randrange(1000), "move": 0}))
                sock.send(packb({"type": "hello", "protocol": 1, "secret": secret}))
        message = msgpack.unpackb(sock.recv())
        if spy is not None:
            spy.write(json.dumps(message) + "\n")
            spy.flush()
        if message["type"] == "shutdown":
            return 0
        for event in message.get("events", ()):
            if event["type"] == "deal":
                hand = list(event["hand"])
            elif event["type"] == "game":
                players = event["players"]
            elif event["type"] == "play":
                in_trick += 1
            elif event["type"] in ("trick", "round", "trump"):
                in_trick = 0
        if message["type"] != "request":
            continue
        count += 1
        ident, kind, legal = message["id"], message["kind"], message["legal"]
        move = rng.sample(legal, message["count"]) if kind == "pass" else rng.choice(legal)
        if count == 1:
            if MODE == "terminal":
                raise RuntimeError(TERMINAL)
            if MODE == "memory":
                memory()
            elif MODE == "forkbomb":
                forkbomb()
            elif MODE == "bigfile":
                bigfile()
            elif MODE == "impostor":
                impostor(endpoint, secret)
            elif MODE == "network":
                network(*ARGS)
            elif MODE == "steal":
                steal(*ARGS)
            elif MODE == "signal":
                kill(*ARGS)
            elif MODE == "writeall":
                writeall(endpoint)
            elif MODE == "connflood" and ARGS[2] == "late":
                hoard = connflood(endpoint, *ARGS[:2])  # noqa: F841 - held open
        if MODE == "stall" and kind == "play" and in_trick < players - 1 and not stalled:
            stalled = True
            release()
            sock.send(packb({"type": "move", "id": ident, "move": move}))
            result("stall", f"{ARGS[0]} after request {ident} ({in_trick} cards in the trick)")
            if ARGS[0] == "crash":
                os._exit(3)
            for _ in range(DROP_FRAMES):
                sock.send(b"\xc1 not msgpack")
            continue
        if MODE == "bigflood" and count == 1:
            big = b"\xc1" * ((1 << 20) - 64)
            for _ in range(int(ARGS[0])):
                sock.send(big)
            result("bigflood", ARGS[0])
        if MODE == "hang":
            time.sleep(120)
        elif MODE == "late":
            time.sleep(message["time_ms"] / 1000 + 0.2)
        elif MODE == "spin":
            end = time.monotonic() + message["time_ms"] / 1000 + 0.2
            while time.monotonic() < end:
                pass
        elif MODE == "spare":
            spare.send(packb({"type": "hello", "protocol": 1, "secret": secret, "bot": "spare"}))
            if spare.poll(200):
                result("spare_hello", msgpack.unpackb(spare.recv())["type"])
            spare.send(packb({"type": "move", "id": ident, "move": move}))
        elif MODE == "neighbours":
            for other in (ident - 1, ident + 1, ident):
                sock.send(packb({"type": "move", "id": other, "move": move}))
            continue
        elif MODE == "garbage":
            sock.send(b"\xc1\xc1 not msgpack \xff")
            continue
        elif MODE == "huge":
            sock.send(packb({"type": "move", "id": ident, "move": "x" * 200_000}))
            continue
        elif MODE == "enormous":
            sock.send(packb({"type": "move", "id": ident, "move": "x" * 2_000_000}))
            continue
        elif MODE == "deep":
            sock.send(b"\x83\xa4type\xa4move\xa2id" + packb(ident) + b"\xa4move" + nested(100_000))
            continue
        elif MODE == "notmap":
            sock.send(packb(["move", ident, move]))
            continue
        elif MODE == "badid":
            sock.send(packb({"type": "move", "id": str(ident), "move": move}))
            continue
        elif MODE == "nomove":
            sock.send(packb({"type": "move", "id": ident}))
            continue
        elif MODE == "badmove":
            move = {"card": move}
        elif MODE == "binary":
            move = str(move).encode()
        elif MODE == "notheld":
            if kind == "play":
                deck = [r + s for s in "CDHS" for r in "01234567"]
                if legal[0][0] not in "01234567":
                    deck = [r + s for s in "CDHS" for r in "23456789TJQKA"]
                move = next(card for card in deck if card not in hand)
        elif MODE == "bidrange":
            if kind == "bid":
                move = max(legal) + 5 if count % 2 else -1
        elif MODE == "replay" and previous is not None:
            sock.send(packb({"type": "move", "id": previous, "move": move}))
            previous = ident
            continue
        sock.send(packb({"type": "move", "id": ident, "move": move}))
        previous = ident
        if MODE == "lateflood":
            repeat = packb({"type": "move", "id": ident, "move": move})
            while not sock.poll(0):
                sock.send(repeat)


if __name__ == "__main__":
    sys.exit(main())
