"""Writing a file whole: whoever reads it (a browser, a resumed run, another process) sees the
old content or the new one, never part of either; and the names in a tournament's output folder
that every stage recognises (the results database, the bots' staged copies)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["write_atomic", "write_json_atomic", "DB_NAME", "STAGING_NAME"]

#: the results database of an output folder (see ``results.store``)
DB_NAME = "tournament.sqlite"
#: the folder of the output directory that holds the bots' staged copies (see ``staging``)
STAGING_NAME = ".bots"


def write_atomic(
    path: str | os.PathLike[str], data: str | bytes, *, mode: int = 0o644, durable: bool = False
) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder (created if
    missing) and :func:`os.replace`; ``durable`` also syncs the file to disk before the rename.
    On any error the temporary file is removed and ``path`` keeps its old content."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_json_atomic(path: str | os.PathLike[str], data: Any) -> Path:
    """Write ``data`` as indented JSON (a final newline), synced to disk, then renamed."""
    return write_atomic(path, json.dumps(data, indent=2) + "\n", durable=True)
