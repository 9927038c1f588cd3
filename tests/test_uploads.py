"""Unpacking hostile uploads (``server.uploads``): every limit and every forbidden entry is
refused with a message naming it, and nothing is left behind; a good tree is stored once by
its content digest."""

from __future__ import annotations

import io
import os
import sys
import tarfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.referee.server.uploads import (
    UploadError,
    UploadLimits,
    bot_command,
    clean_partial,
    discard,
    stored_digests,
    unpack,
    uploads_root,
)

LIMITS = UploadLimits(max_upload_bytes=1 << 20, max_unpacked_bytes=4096, max_files=5, max_depth=2)


def archive(*members: tuple[tarfile.TarInfo, bytes | None], fmt: int = tarfile.PAX_FORMAT) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", format=fmt) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return out.getvalue()


def file(name: str, data: bytes = b"x", mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), mode
    return info, data


def special(name: str, kind: bytes, link: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info, None


def refused(root: Path, data: bytes, limits: UploadLimits = LIMITS) -> UploadError:
    before = sorted(os.listdir(root))
    with pytest.raises(UploadError) as caught:
        unpack(io.BytesIO(data), root, limits)
    assert sorted(os.listdir(root)) == before  # nothing left
    assert 400 <= caught.value.status < 500
    return caught.value


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return uploads_root(tmp_path)


def test_a_good_tree_is_stored_once_by_digest(root: Path) -> None:
    data = archive(file("main.py", b"print(1)\n"), file("lib/util.py", b"x = 1\n"))
    tree = unpack(io.BytesIO(data), root, LIMITS)
    assert tree.files == 2 and tree.bytes == 15 and tree.names == ("lib/util.py", "main.py")
    assert (tree.path / "lib" / "util.py").read_bytes() == b"x = 1\n"
    assert tree.path.parent.name == tree.digest
    again = unpack(io.BytesIO(data), root, LIMITS)
    assert again.path == tree.path and os.listdir(root) == [tree.digest]
    other = unpack(io.BytesIO(archive(file("main.py", b"print(2)\n"))), root, LIMITS)
    assert other.digest != tree.digest


@pytest.mark.parametrize(
    ("member", "words"),
    [
        (special("l", tarfile.SYMTYPE, "/etc/passwd"), "links are not allowed"),
        (special("h", tarfile.LNKTYPE, "main.py"), "links are not allowed"),
        (special("dev", tarfile.CHRTYPE), "only regular files"),
        (special("fifo", tarfile.FIFOTYPE), "only regular files"),
        (file("/etc/cron.d/x"), "absolute"),
        (file("../up.py"), "'..'"),
        (file("a/../../up.py"), "'..'"),
        (file("a/b/c/deep.py"), "max_depth"),
        (file("big.bin", bytes(5000)), "max_unpacked_bytes"),
        (file("\x1b]52;c;cHduZWQ=\x07.py"), "control characters"),  # a clipboard write
        (file("a\x9bb.py"), "control characters"),  # C1: CSI
        (file("line\nbreak.py"), "control characters"),
    ],
)
def test_forbidden_entries(root: Path, member: tuple, words: str) -> None:
    error = refused(root, archive(file("main.py"), member))
    assert words in str(error)


def test_too_many_files(root: Path) -> None:
    error = refused(root, archive(*(file(f"f{i}.py") for i in range(6))))
    assert "max_files" in str(error) and error.status == 413


def test_a_bomb_stops_at_the_limit(root: Path) -> None:
    """A PAX header claiming far more than the limit: the decompressed stream is cut there."""
    info = tarfile.TarInfo("main.py")
    info.pax_headers = {"comment": "A" * 200_000}
    error = refused(root, archive((info, b"")))
    assert "max_unpacked_bytes" in str(error)


def test_not_an_archive(root: Path) -> None:
    assert "gzip" in str(refused(root, b"hello"))
    assert "no file" in str(refused(root, archive()))


def test_partial_uploads_are_cleaned(root: Path) -> None:
    (root / ".tmp-deadbeef").mkdir()
    (root / ".tmp-deadbeef" / "x").write_text("half")
    (root / ".tmp-body-0123456789abcdef").write_bytes(b"an interrupted request's body")
    clean_partial(root)
    assert os.listdir(root) == []


def test_commands(root: Path) -> None:
    tree = unpack(io.BytesIO(archive(file("main.py"), file("run.sh", mode=0o755))), root, LIMITS)
    assert bot_command(None, tree) == (sys.executable, str(tree.path / "main.py"))
    assert bot_command("./run.sh --fast", tree) == (str(tree.path / "run.sh"), "--fast")
    assert bot_command("python3 main.py", tree) == (sys.executable, str(tree.path / "main.py"))
    with pytest.raises(UploadError, match="not a file of the upload"):
        bot_command("./missing.sh", tree)
    # check-bot shows a bot the folder of the first host file its command names: only the
    # upload's own files may be named
    secret = root.parent / "server.sqlite"
    secret.write_text("token hashes")
    for word in (str(secret), "../../../server.sqlite", "/etc/passwd"):
        with pytest.raises(UploadError, match="outside the upload"):
            bot_command(f"python3 -c 'print(1)' {word}", tree)
    here = os.getcwd()
    try:
        os.chdir(root.parent)  # a word naming a file of the server's working directory
        with pytest.raises(UploadError, match="outside the upload"):
            bot_command("python3 main.py server.sqlite", tree)
    finally:
        os.chdir(here)
    assert bot_command("python3 -c 'import a/b' x", tree)[-1] == "x"
    two = unpack(io.BytesIO(archive(file("a.py"), file("b.py"))), root, LIMITS)
    with pytest.raises(UploadError, match="--command"):
        bot_command(None, two)


@settings(max_examples=40, deadline=None)
@given(names=st.lists(st.text("ab./", min_size=1, max_size=12), min_size=1, max_size=4))
def test_nothing_lands_outside_the_root(
    tmp_path_factory: pytest.TempPathFactory, names: list[str]
) -> None:
    """Whatever the names, an upload is stored under its folder or refused, and refused ones
    leave nothing."""
    base = tmp_path_factory.mktemp("fuzz")
    root = uploads_root(base)
    members = [file(name) for name in dict.fromkeys(names)]
    try:
        tree = unpack(io.BytesIO(archive(*members)), root, LIMITS)
    except UploadError:
        assert os.listdir(root) == []
    else:
        for name in tree.names:
            assert (tree.path / name).resolve().is_relative_to(tree.path)
    assert sorted(os.listdir(base)) == [".uploads"]


def test_a_discarded_tree_is_gone_at_once(root: Path) -> None:
    """``discard`` takes a stored tree away in one rename (an upload of the same content then
    unpacks a fresh copy); what it leaves for the caller to remove, a stop's start removes."""
    tree = unpack(io.BytesIO(archive(file("main.py", b"print(1)"))), root, LIMITS)
    assert stored_digests(root) == {tree.digest}
    gone = discard(root, tree.digest)
    assert gone is not None and gone.name.startswith(".tmp-") and (gone / "bot/main.py").exists()
    assert stored_digests(root) == set() and discard(root, tree.digest) is None
    again = unpack(io.BytesIO(archive(file("main.py", b"print(1)"))), root, LIMITS)
    assert again.digest == tree.digest and (again.path / "main.py").read_bytes() == b"print(1)"
    clean_partial(root)
    assert os.listdir(root) == [tree.digest]
    for bad in ("", ".tmp-x", "../etc", "a/b"):
        with pytest.raises(ValueError):
            discard(root, bad)


def test_a_command_with_control_characters_is_refused(root: Path) -> None:
    """A NUL in a word of the command stopped the check queue (its process could not start)."""
    tree = unpack(io.BytesIO(archive(file("main.py", b"print(1)"))), root, LIMITS)
    for words in ("python3 main.py \0", "python3 main.py\n--x", "python3 \x1b]0;t\x07 main.py"):
        with pytest.raises(UploadError, match="control characters"):
            bot_command(words, tree)
