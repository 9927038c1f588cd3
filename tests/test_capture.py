"""A bot's captured output (sandbox/capture.py): the log keeps a bounded head and tail."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from ohseven.referee.sandbox.capture import LogBuffer


class TestLogBuffer:
    @given(st.lists(st.binary(max_size=300), max_size=40), st.integers(1, 500))
    def test_bounded_head_and_tail(self, chunks, limit):
        """The log keeps exactly the first and last halves of the stream, never more."""
        buffer = LogBuffer(limit)
        for chunk in chunks:
            buffer.add(chunk)
        stream = b"".join(chunks)
        assert buffer.total == len(stream)
        text = buffer.text()
        if len(stream) <= limit:
            assert not buffer.truncated
            assert text == stream.decode("utf-8", errors="replace")
        else:
            assert buffer.truncated
            head, tail = stream[: limit - limit // 2], stream[len(stream) - limit // 2 :]
            dropped = len(stream) - len(head) - len(tail)
            expected = (
                head.decode("utf-8", errors="replace")
                + f"\n[... {dropped} bytes of output discarded ...]\n"
                + tail.decode("utf-8", errors="replace")
            )
            assert text == expected
