"""Atomic file writes (referee/files.py)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from ohseven.referee.files import write_atomic, write_json_atomic


class TestWriteAtomic:
    def test_replaces_whole_files(self, tmp_path: Path) -> None:
        """write_atomic creates parent folders and replaces the content at once."""
        path = tmp_path / "a" / "b.txt"
        write_atomic(path, "one")
        write_atomic(path, b"two")
        assert path.read_text() == "two" and list(path.parent.iterdir()) == [path]

    def test_mode(self, tmp_path: Path) -> None:
        """The file gets the mode asked for (0644 by default), not mkstemp's 0600."""
        assert stat.S_IMODE(write_atomic(tmp_path / "a", "x").stat().st_mode) == 0o644
        private = write_atomic(tmp_path / "b", "x", mode=0o600)
        assert stat.S_IMODE(private.stat().st_mode) == 0o600

    def test_failure_keeps_the_old_content(self, tmp_path: Path) -> None:
        """A write that fails leaves the old file and no temporary file behind."""
        path = write_atomic(tmp_path / "c", "old")
        with pytest.raises(TypeError):
            write_atomic(path, 3)  # type: ignore[arg-type]
        assert path.read_text() == "old" and list(tmp_path.iterdir()) == [path]

    def test_json(self, tmp_path: Path) -> None:
        """write_json_atomic writes indented JSON ending in a newline."""
        path = write_json_atomic(tmp_path / "d.json", {"a": [1, 2]})
        text = path.read_text()
        assert json.loads(text) == {"a": [1, 2]} and text.endswith("}\n") and "\n  " in text
