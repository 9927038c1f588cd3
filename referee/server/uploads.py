"""Uploads are hostile input: a bot arrives as a gzip-compressed tar stream, and is unpacked
under limits checked while it streams (the request body's bytes, then the unpacked tree's
bytes, files and depth, counted on the decompressed stream itself so that no header, however
large it claims to be, is read past the limit: an archive bomb stops at the limit). Only
regular files and directories are accepted: no symbolic or hard links, no devices or FIFOs, no
absolute names and no ``..``. Each refusal is an :class:`UploadError` naming the limit or the
entry. The tree is written to a temporary folder, synced to disk and renamed into place under
its content digest (``staging.tree_digest``): a refused or interrupted upload leaves nothing
behind, and an identical upload reuses the same folder. A stored tree no version needs any more
(its check failed, or its upload was refused after it was unpacked) is removed by
:func:`discard` (see ``checks.CheckQueue.sweep``).
"""

from __future__ import annotations

import errno
import gzip
import io
import os
import posixpath
import secrets
import shlex
import shutil
import stat
import sys
import tarfile
import zlib
from pathlib import Path
from typing import IO

import attrs
from ohseven.referee.sandbox.paths import absolutise, inside
from ohseven.referee.sandbox.staging import Plan, tree_digest

__all__ = [
    "UPLOADS_NAME",
    "version_folder",
    "UploadLimits",
    "UploadError",
    "StoredTree",
    "unpack",
    "bot_command",
    "uploads_root",
    "clean_partial",
    "stored_digests",
    "discard",
    "pack_file",
]

#: the folder of the output directory holding every uploaded version, by content digest
UPLOADS_NAME = ".uploads"
_TEMP_PREFIX = ".tmp-"
_CHUNK = 1 << 16


@attrs.frozen
class UploadLimits:
    """What one upload may be (the ``server`` section's keys of the same names)."""

    #: the request body (the compressed archive)
    max_upload_bytes: int = 20 << 20
    #: the unpacked tree: file contents summed
    max_unpacked_bytes: int = 100 << 20
    max_files: int = 2000
    #: directory levels below the top
    max_depth: int = 16


class UploadError(ValueError):
    """An upload refused; ``status`` is the HTTP status to answer with (a 4xx)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@attrs.frozen
class StoredTree:
    digest: str
    path: Path  # the version's folder, named by its digest
    files: int
    bytes: int
    names: tuple[str, ...]  # every file's path relative to the top


def uploads_root(output: str | os.PathLike[str]) -> Path:
    """The root of the stored uploads: listable by the referee alone (as ``.bots``)."""
    root = Path(output) / UPLOADS_NAME
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o711)
    return root


def version_folder(output: str | os.PathLike[str], digest: str) -> Path:
    """The folder of the stored upload of ``digest`` (its files, as unpacked)."""
    return Path(output) / UPLOADS_NAME / digest / "bot"


def clean_partial(root: Path) -> None:
    """Remove what an interrupted upload left (its temporary folder)."""
    for entry in root.iterdir():
        if entry.name.startswith(_TEMP_PREFIX):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:  # an interrupted request's body (the server's ``.tmp-body-...``)
                entry.unlink(missing_ok=True)


def stored_digests(root: Path) -> set[str]:
    """The digests of the trees stored in ``root`` (not the temporary folders)."""
    return {
        entry.name
        for entry in root.iterdir()
        if not entry.name.startswith(".") and entry.is_dir() and not entry.is_symlink()
    }


def discard(root: Path, digest: str) -> Path | None:
    """Take the stored tree of ``digest`` out of ``root`` at once (a rename: an upload of the
    same content from now on unpacks a fresh copy) and return where it went, for the caller to
    remove (``shutil.rmtree``: seconds for a large tree, better outside any lock); None when
    there is no such tree. What a stop leaves there is removed by :func:`clean_partial`."""
    if digest.startswith(".") or "/" in digest or not digest:
        raise ValueError(f"not a stored digest: {digest!r}")
    gone = root / f"{_TEMP_PREFIX}gone-{secrets.token_hex(8)}"
    try:
        os.rename(root / digest, gone)
    except FileNotFoundError:
        return None
    return gone


class _Bounded:
    """A read-only stream that refuses to deliver more than ``limit`` bytes."""

    def __init__(self, raw: IO[bytes], limit: int, what: str) -> None:
        self.raw, self.limit, self.what, self.count = raw, limit, what, 0

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            size = self.limit + 1 - self.count
        data = self.raw.read(min(size, self.limit + 1 - self.count))
        self.count += len(data)
        if self.count > self.limit:
            raise UploadError(self.what, 413)
        return data


def _safe_name(name: str, limits: UploadLimits) -> str:
    if name.startswith("/") or "\\" in name or "\0" in name:
        raise UploadError(f"entry {name!r}: an absolute or odd path; only relative names")
    if any(ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F for char in name):
        # a name is shown on pages, in reports and in the organiser's terminal
        raise UploadError(f"entry {name!r}: control characters in a name are not allowed")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if any(part == ".." for part in parts):
        raise UploadError(f"entry {name!r}: '..' in a path is not allowed")
    if not parts:
        return ""
    if len(parts) - 1 > limits.max_depth:
        raise UploadError(
            f"entry {name!r}: {len(parts) - 1} folders deep; the limit (max_depth) is "
            f"{limits.max_depth}",
            413,
        )
    return posixpath.join(*parts)


def _sync_tree(top: Path) -> None:
    for folder, _dirs, names in os.walk(top, topdown=False):
        for name in names:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def unpack(archive: IO[bytes], root: Path, limits: UploadLimits) -> StoredTree:
    """Unpack the gzip-compressed tar ``archive`` (a file already bounded by the body limit)
    into a new folder of ``root`` named by its content digest; raise :class:`UploadError`."""
    temp = root / f"{_TEMP_PREFIX}{secrets.token_hex(8)}"
    top = temp / "bot"
    os.makedirs(top, 0o755)
    try:
        files, size, names = _extract(archive, top, limits)
        if not files:
            raise UploadError("the archive holds no file")
        for folder, dirs, _names in os.walk(top):  # readable by the bot's uid, not writable
            for name in dirs:
                os.chmod(os.path.join(folder, name), 0o755)
        _sync_tree(temp)
        digest = tree_digest(Plan("upload", str(top)))
        final = root / digest
        try:
            if final.exists():  # the same content uploaded before: one copy
                raise FileExistsError(final)
            os.rename(temp, final)
        except OSError as error:
            # (the same content unpacked at the same time by another upload, which renamed
            # its copy first: rename(2) onto a folder that is not empty fails)
            if not final.is_dir() or error.errno not in (errno.EEXIST, errno.ENOTEMPTY, None):
                raise
            shutil.rmtree(temp)
        else:
            fd = os.open(root, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        return StoredTree(digest, final / "bot", files, size, tuple(sorted(names)))
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise


def _extract(archive: IO[bytes], top: Path, limits: UploadLimits) -> tuple[int, int, list[str]]:
    # tar headers, padding and PAX records all count: 1 KiB per entry on top of the contents
    budget = limits.max_unpacked_bytes + 1024 * (limits.max_files + 2)
    stream = _Bounded(
        gzip.GzipFile(fileobj=archive, mode="rb"),  # type: ignore[arg-type]
        budget,
        f"the archive unpacks to more than the limit (max_unpacked_bytes: "
        f"{limits.max_unpacked_bytes} bytes)",
    )
    files = size = entries = 0
    names: list[str] = []
    seen: set[str] = set()
    try:
        with tarfile.open(fileobj=stream, mode="r|") as tar:  # type: ignore[call-overload]
            for member in tar:
                entries += 1
                if entries > limits.max_files:
                    raise UploadError(
                        f"more than {limits.max_files} entries; the limit (max_files) is "
                        f"{limits.max_files}",
                        413,
                    )
                name = _safe_name(member.name, limits)
                if member.issym() or member.islnk():
                    raise UploadError(f"entry {member.name!r}: links are not allowed")
                if not (member.isfile() or member.isdir()):
                    raise UploadError(
                        f"entry {member.name!r}: only regular files and folders are allowed"
                    )
                if not name:
                    continue
                if name in seen:
                    raise UploadError(f"entry {member.name!r} appears twice")
                seen.add(name)
                target = top / name
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                if size + member.size > limits.max_unpacked_bytes:
                    raise UploadError(
                        f"the files unpack to more than {limits.max_unpacked_bytes} bytes "
                        f"(max_unpacked_bytes), at {member.name!r}",
                        413,
                    )
                target.parent.mkdir(parents=True, exist_ok=True)
                source = tar.extractfile(member)
                assert source is not None
                mode = 0o755 if member.mode & 0o111 else 0o644
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
                with os.fdopen(fd, "wb") as out:
                    while chunk := source.read(_CHUNK):
                        size += len(chunk)
                        out.write(chunk)
                os.chmod(target, mode)
                files += 1
                names.append(name)
    except (FileExistsError, NotADirectoryError, IsADirectoryError) as error:
        clash = os.path.relpath(str(error.filename), top) if error.filename else "an entry"
        raise UploadError(f"entry {clash!r} is both a file and a folder of the archive") from None
    except (tarfile.TarError, EOFError, gzip.BadGzipFile, zlib.error, OSError) as error:
        if isinstance(error, OSError) and error.errno is not None:
            raise
        raise UploadError(f"not a gzip-compressed tar archive ({error})") from None
    return files, size, names


def _outside(word: str, top: Path) -> bool:
    """Whether ``word`` names an existing host path outside ``top`` (as a bot's folder is
    found: absolute, or relative to the working directory)."""
    host = absolutise(word)
    if "/" in word and ".." in word.split("/"):
        return True
    return (
        os.path.isabs(host)
        and os.path.lexists(host)
        and not inside(os.path.realpath(host), [os.path.realpath(top)])
    )


def bot_command(words: str | None, tree: StoredTree) -> tuple[str, ...]:
    """The command that starts the uploaded bot, its words naming the tree's files made
    absolute: ``words`` (a shell-quoted command line), else the tree's only top-level Python
    file, or its ``main.py``. Raises :class:`UploadError` when none can be found."""
    if words is None or not words.strip():
        top_py = [name for name in tree.names if "/" not in name and name.endswith(".py")]
        if "main.py" in top_py:
            top_py = ["main.py"]
        if len(top_py) != 1:
            raise UploadError(
                "give the command that starts the bot (--command): the upload has no single "
                "top-level .py file nor a main.py"
            )
        argv = ["python3", top_py[0]]
    else:
        if any(ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F for char in words):
            # (a NUL in an argument made the check's process fail to start: the check queue's
            # thread died, and no author's upload was checked any more)
            raise UploadError(f"command {words!r}: control characters are not allowed")
        try:
            argv = shlex.split(words)
        except ValueError as error:
            raise UploadError(f"command {words!r}: {error}") from None
        if not argv:
            raise UploadError("an empty command")
    names = set(tree.names)
    result: list[str] = []
    for index, word in enumerate(argv):
        relative = word[2:] if word.startswith("./") else word
        if relative in names:
            word = str(tree.path / relative)
        elif index == 0 and word in ("python", "python3"):
            word = sys.executable  # the referee's Python, which the sandbox shows the bot
        elif index == 0 and "/" in word:
            raise UploadError(f"command {words!r}: {word} is not a file of the upload")
        elif _outside(word, tree.path):
            # the check (``check-bot``) shows a bot the folder of the first host file its
            # command names: a word naming the server's own files would show them to the bot
            raise UploadError(
                f"command {words!r}: {word} names a file outside the upload; name only the "
                "upload's own files, relative to its top"
            )
        result.append(word)
    program = result[0]
    if program.startswith(str(tree.path)):
        mode = os.stat(program).st_mode
        if not program.endswith(".py") and not mode & stat.S_IXUSR:
            raise UploadError(
                f"command {words!r}: {argv[0]} is not executable (set its x bit before packing, "
                "or start it with its interpreter)"
            )
        if program.endswith(".py"):
            result.insert(0, sys.executable)
    return tuple(result)


def pack_file(name: str, data: bytes, executable: bool = False) -> bytes:
    """One file as a gzip-compressed tar (what ``submit`` and the upload form send)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        info.mode = 0o755 if executable else 0o644
        tar.addfile(info, io.BytesIO(data))
    return out.getvalue()
