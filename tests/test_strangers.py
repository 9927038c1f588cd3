"""Connections with no accepted hello (referee/play/strangers.py): what is read of them, and
which bot's process opened one."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import msgpack
import pytest
import zmq
from ohseven.referee.play.contestant import Contestant
from ohseven.referee.play.strangers import STRANGER_FRAMES, Strangers, opener
from ohseven.referee.records import BotSpec
from ohseven.referee.sandbox.process import BotProcess
from ohseven.referee.sandbox.settings import SandboxConfig

HELLO = {"type": "hello", "protocol": 1, "secret": "s" * 32, "bot": "x"}


@pytest.fixture
def router():
    """A ROUTER socket on an endpoint in a directory a bot's uid can reach (as a referee's)."""
    folder = tempfile.mkdtemp(prefix="ohseven-test-")
    os.chmod(folder, 0o711)
    context = zmq.Context()
    sock = context.socket(zmq.ROUTER)
    sock.setsockopt(zmq.LINGER, 0)
    endpoint = f"ipc://{folder}/referee"
    sock.bind(endpoint)
    yield sock, endpoint, folder
    sock.close(0)
    context.term()
    shutil.rmtree(folder, ignore_errors=True)


def receive(sock: zmq.Socket) -> tuple[bytes, list[zmq.Frame]]:
    assert sock.poll(20_000)
    rid, *parts = sock.recv_multipart(copy=False)
    return rid.bytes, parts


class TestStrangers:
    def test_a_hello_is_read_then_frames_up_to_the_limit_then_its_opener(self, router):
        """A hello among a connection's first ``STRANGER_FRAMES`` messages is returned; other
        messages are dropped (None); each one beyond names its opener (None: not a bot's)."""
        sock, endpoint, _ = router
        peer = sock.context.socket(zmq.DEALER)
        peer.setsockopt(zmq.LINGER, 0)
        peer.connect(endpoint)
        strangers = Strangers()
        peer.send(msgpack.packb(HELLO))
        rid, parts = receive(sock)
        hello = strangers.read(rid, parts, [])
        assert hello is not None and not isinstance(hello, Contestant)
        assert hello.secret == HELLO["secret"] and strangers.count(rid) == 1
        for _ in range(STRANGER_FRAMES - 1):
            peer.send(b"junk")
            assert strangers.read(*receive(sock), []) is None
        assert strangers.count(rid) == STRANGER_FRAMES
        peer.send(msgpack.packb(HELLO))  # one beyond: not even a hello is read
        assert strangers.read(*receive(sock), []) is None  # no bot opened it
        assert strangers.count(rid) == STRANGER_FRAMES + 1
        strangers.forget(rid)
        assert strangers.count(rid) == 0
        peer.close(0)

    @pytest.mark.slow
    def test_the_opener_is_the_bot_whose_process_tree_connected(self, router):
        """A connection opened by a bot's process is that bot's (by the peer's uid, or up
        the process tree from the peer's pid); with no bot's process behind it, none."""
        sock, endpoint, folder = router
        script = (
            "import os, time, zmq; s = zmq.Context().socket(zmq.DEALER); "
            "s.connect(os.environ['OHSEVEN_ENDPOINT']); s.send(b'hi'); time.sleep(30)"
        )
        process = BotProcess(
            [sys.executable, "-c", script],
            name="parent",
            bot_dir=None,
            socket_dir=folder,
            env={"OHSEVEN_ENDPOINT": endpoint},
            config=SandboxConfig(mode="unsandboxed"),
        )
        bot = Contestant(0, BotSpec("parent", (sys.executable,)), process=process)
        other = Contestant(1, BotSpec("other", (sys.executable,)))
        process.start()
        try:
            assert sock.poll(20_000), process.log()  # its output if it could not connect
            _, parts = receive(sock)
            assert opener(parts[0], [other, bot]) is bot
            assert opener(parts[0], [other]) is None
        finally:
            process.kill()
