"""Stage each bot's files into a private read-only copy for the run.

A bot's visible directory (its ``directory``, else the folder of its file) is not shown to the
sandbox as it is on the host: the referee copies what belongs to the bot into a directory of
its own and the bot runs from that copy. The copy leaves out

- everything of another bot that lies in the folder: its files (the files named by its command)
  and its visible directory;
- the referee's private paths given by the caller (the configuration file, the output folder
  with its database, secret, replays and leaderboard, a replay folder).

A bot whose folder is the folder of its file (the default ``directory``) and which shares that
folder with another bot gets only its own files: nothing says which of the other files of a
shared folder are whose (``bots/alice.jar`` next to ``bots/bob-weights.bin``). A folder of the
bot's own (``directory: alice/``, holding ``alice/run.sh``) is copied whole.

The copy also freezes the code the results are about: :func:`tree_digest` of the content is
part of the configuration's digest, and :func:`stage` checks that the copy it makes has the
digest the configuration was read with. Copies live under a root that only the referee can
list (mode 0711), each in a directory whose name nobody else can guess (an HMAC of its content
under a key readable only by the referee, or random), world-readable so that a bot running as
another uid without the sandbox still reads its own copy.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import pwd
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs
import yaml
from ohseven.referee.files import DB_NAME, STAGING_NAME
from ohseven.referee.records import BotSpec
from ohseven.referee.sandbox.paths import absolutise, bot_folder, default_bot_dir

__all__ = [
    "StagingError",
    "Plan",
    "plan_bots",
    "tree_digest",
    "tree_digests",
    "stage",
    "stage_each",
    "staged_bots",
    "visible_directory",
    "StageLimits",
    "STAGE_LIMIT_BYTES",
    "STAGE_LIMIT_TOTAL_BYTES",
    "STAGE_LIMIT_FILES",
    "STAGE_MAX_MB",
]

#: the most a bot's copy may hold (apparent file sizes summed: a sparse file counts whole), the
#: most all the copies of a run may hold together, and the entries of one copy
STAGE_LIMIT_BYTES = 512 << 20
STAGE_LIMIT_TOTAL_BYTES = 2 << 30
STAGE_LIMIT_FILES = 50_000
#: the largest ``staging.bot_mb``/``total_mb`` taken (1 TiB of bots' files is a typo)
STAGE_MAX_MB = 1 << 20
_KEY_NAME = "key"


@attrs.frozen
class StageLimits:
    """How much may be copied: ``bot_bytes`` per copy, ``total_bytes`` for every copy of a run
    (apparent sizes), ``files`` entries per copy; ``keys`` name them in errors (the
    configuration's keys, or the defaults' description)."""

    bot_bytes: int = STAGE_LIMIT_BYTES
    total_bytes: int = STAGE_LIMIT_TOTAL_BYTES
    files: int = STAGE_LIMIT_FILES
    bot_key: str = "the limit per bot"
    total_key: str = "the limit for all bots"


class StagingError(ValueError):
    """A bot's files cannot be staged (a private path inside its folder, too large...).

    ``index`` is the position of the bot concerned in the list given, when there is one.
    """

    def __init__(self, message: str, index: int | None = None) -> None:
        super().__init__(message)
        self.index = index


@attrs.frozen
class Plan:
    """What the copy of one bot holds: ``source`` minus ``excluded``, or only ``files``."""

    name: str
    source: str  # the bot's visible directory on the host (a real path)
    excluded: tuple[str, ...] = ()  # real paths inside ``source`` left out
    files: tuple[str, ...] | None = None  # paths relative to ``source``; None: the whole tree


def visible_directory(bot: BotSpec) -> str | None:
    """The directory the sandbox would expose to ``bot`` (see ``sandbox.BotProcess``)."""
    return bot_folder(bot.command, bot.directory)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _own_files(bot: BotSpec) -> set[str]:
    """Real paths of the bot's program files: its script (the first file among the arguments)
    and its program when that is a file of its own (not the system's or the Python's).

    Further arguments naming files are data, not the bot: they come with its folder when the
    folder is its own, never from a shared one.
    """
    command = tuple(absolutise(word) for word in bot.command)
    found = set()
    script = next((w for w in command[1:] if w.startswith("/") and os.path.isfile(w)), None)
    if script is not None:
        found.add(os.path.realpath(script))
    if default_bot_dir(command[:1]) is not None:  # a program outside the system directories
        found.add(os.path.realpath(command[0]))
    return found


def _referee_data(directory: str) -> set[str]:
    """Tournament files found in ``directory``: output folders (holding a results database or
    staged bots), YAML files with a ``bots`` list (configurations) and the files and
    directories of the bots these configurations name."""
    found: set[str] = set()
    count = 0
    for top, dirs, names in os.walk(directory):
        count += len(dirs) + len(names)
        if count > STAGE_LIMIT_FILES:
            break  # _walk reports the size
        if DB_NAME in names or STAGING_NAME in dirs:
            found.add(top)
            dirs[:] = []
            continue
        for name in names:
            path = os.path.join(top, name)
            if name.endswith((".yaml", ".yml")):
                try:  # the file itself, never what a link points at
                    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
                    with open(fd, encoding="utf-8") as handle:
                        if not stat.S_ISREG(os.fstat(fd).st_mode):
                            continue
                        document = yaml.safe_load(handle.read(1 << 20))
                except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
                    continue
                if isinstance(document, dict) and isinstance(document.get("bots"), list):
                    found.add(path)
                    found |= _config_bot_paths(top, document["bots"])
    return found


def _config_bot_paths(base: str, bots: list) -> set[str]:
    """The files and directories of the bots a configuration found at ``base`` names."""
    paths = set()
    for bot in bots:
        for key in ("file", "directory") if isinstance(bot, dict) else ():
            value = bot.get(key)
            if isinstance(value, str) and value.strip():
                paths.add(os.path.realpath(os.path.join(base, value)))
    return paths


def plan_bots(
    bots: Sequence[BotSpec],
    *,
    private: Mapping[str, str] = {},  # noqa: B006 - read only
    discover: bool = False,
) -> list[Plan | None]:
    """The copy of each bot (None for a bot without a directory, a command on PATH).

    ``private`` maps a description (``the output folder``) to a host path no bot may see.
    With ``discover`` (``match`` and ``check-bot``, which know no configuration), tournament
    output folders, configurations and the bots they name found in a bot's folder are left
    out as well. Raises :class:`StagingError` when a bot's folder lies inside a private path.
    """
    # a league lists many bots of one command and folder: look each distinct one up once
    looked_up: dict[tuple[tuple[str, ...], str | None], tuple[str | None, set[str]]] = {}
    for bot in bots:
        key = (bot.command, bot.directory)
        if key not in looked_up:
            looked_up[key] = (visible_directory(bot), _own_files(bot))
    directories = [looked_up[bot.command, bot.directory][0] for bot in bots]
    owned = [looked_up[bot.command, bot.directory][1] for bot in bots]
    groups: dict[tuple[tuple[str, ...], str | None], int] = {}
    for index, bot in enumerate(bots):
        groups.setdefault((bot.command, directories[index]), index)
    secret = {what: os.path.realpath(path) for what, path in private.items()}
    plans: list[Plan | None] = []
    for index, (bot, directory) in enumerate(zip(bots, directories, strict=True)):
        if directory is None:
            plans.append(None)
            continue
        for what, path in secret.items():
            if _inside(directory, path):
                raise StagingError(
                    f"bot {bot.name!r}: its directory {directory} lies inside {what} "
                    f"({path}), which no bot may see; move the bot or give it a `directory`",
                    index,
                )
        mine = {f for f in owned[index] if not any(_inside(f, p) for p in secret.values())}
        # a clone (same command, same folder) has nothing secret to it; the other bots are
        # looked at one per group of clones (they own the same files and folder)
        others = [other for key, other in groups.items() if key != (bot.command, directory)]
        theirs: set[str] = set()
        for other in others:
            theirs |= owned[other] - mine
            if (folder := directories[other]) is not None:
                theirs.add(folder)
        # what belongs to another bot inside this folder, unless it holds this bot's own files
        theirs = {
            p for p in theirs if _inside(p, directory) and not any(_inside(f, p) for f in mine)
        }
        shares = any(directories[other] == directory for other in others)
        implicit = not bot.directory or any(os.path.dirname(f) == directory for f in mine)
        if implicit and (theirs or shares):
            # a folder shared with another bot: only the bot's own files
            files = sorted(os.path.relpath(f, directory) for f in mine if _inside(f, directory))
            plans.append(Plan(bot.name, directory, (), tuple(files)))
            continue
        private_inside = {p for p in secret.values() if _inside(p, directory) and p != directory}
        if discover:  # but never the bot's own files, even when a configuration names them
            found = _referee_data(directory) - {directory}
            private_inside |= {p for p in found if not any(_inside(f, p) for f in mine)}
        left_out = theirs | private_inside
        outermost = [p for p in left_out if not any(p != q and _inside(p, q) for q in left_out)]
        plans.append(Plan(bot.name, directory, tuple(sorted(outermost)), None))
    return plans


def _entries(plan: Plan) -> Iterator[tuple[str, os.stat_result]]:
    """(relative path, lstat) of every entry the copy holds, in a fixed order, parents first:
    each directory's subdirectories, then its other entries, by name, then each subdirectory's
    the same way. An entry is classified by ``lstat``, whatever a link points at (a link that
    becomes a folder changes nothing but its target)."""
    root = plan.source
    if plan.files is not None:
        parents: set[str] = set()
        for rel in plan.files:
            parts = rel.split(os.sep)[:-1]
            for i in range(1, len(parts) + 1):
                parent = os.sep.join(parts[:i])
                if parent not in parents:
                    parents.add(parent)
                    yield parent, os.lstat(os.path.join(root, parent))
            yield rel, os.lstat(os.path.join(root, rel))
        return
    excluded = set(plan.excluded)
    pending = [root]
    while pending:
        top = pending.pop()
        listed = []
        for name in sorted(os.listdir(top)):
            path = os.path.join(top, name)
            if path not in excluded:
                listed.append((path, os.lstat(path)))
        folders = [(path, info) for path, info in listed if stat.S_ISDIR(info.st_mode)]
        for path, info in folders:
            yield os.path.relpath(path, root), info
        for path, info in listed:
            if not stat.S_ISDIR(info.st_mode):
                yield os.path.relpath(path, root), info
        pending.extend(path for path, _ in reversed(folders))


def _walk(
    plan: Plan, limits: StageLimits = StageLimits()
) -> Iterator[tuple[str, str, os.stat_result]]:
    """Like :func:`_entries` with a kind (``d``, ``f``, ``l``), skipping special files, bounded
    by ``limits`` (apparent sizes: counted before anything is read); refuses a file the owner
    of the bot's folder could not read (:meth:`_Owner.unreadable`)."""
    count = size = 0
    found: list[tuple[str, str, os.stat_result]] = []
    for rel, info in _entries(plan):
        if stat.S_ISDIR(info.st_mode):
            kind = "d"
        elif stat.S_ISREG(info.st_mode):
            kind = "f"
            size += info.st_size
        elif stat.S_ISLNK(info.st_mode):
            kind = "l"
        else:
            continue  # fifos, sockets, devices: nothing a bot ships
        count += 1
        if count > limits.files:
            raise StagingError(
                f"bot {plan.name!r}: its directory {plan.source} holds more than "
                f"{limits.files} entries; give the bot a smaller `directory`"
            )
        if size > limits.bot_bytes:
            raise StagingError(
                f"bot {plan.name!r}: its directory {plan.source} holds more than "
                f"{_megabytes(limits.bot_bytes)} of files ({limits.bot_key}; apparent sizes: a "
                "sparse file counts whole); give the bot a smaller `directory` or raise it"
            )
        found.append((rel, kind, info))
    owner = _Owner.of(plan.source)
    files = [(rel, info) for rel, kind, info in found if kind == "f"]
    for rel in owner.unreadable(plan.source, files)[:1]:
        raise StagingError(
            f"bot {plan.name!r}: {os.path.join(plan.source, rel)} is a file that the owner "
            f"of the bot's folder (uid {owner.uid}) cannot read (a hard link to another's "
            "file?): the referee copies only what the bot's owner could read"
        )
    yield from found


def _megabytes(size: int) -> str:
    return f"{size / (1 << 20):g} MB"


#: the group of a folder's owner that has no account (``nogroup``)
_NO_GROUP = 65534


@attrs.frozen
class _Owner:
    """The owner of a bot's folder, and which files it could not read."""

    uid: int
    gid: int
    groups: frozenset[int]

    @classmethod
    def of(cls, folder: str) -> _Owner:
        uid = os.lstat(folder).st_uid
        if uid == os.geteuid():  # the referee's own: it reads nothing it could not anyway
            return cls(-1, -1, frozenset())
        try:
            entry = pwd.getpwuid(uid)
            gid = entry.pw_gid
            groups = frozenset(os.getgrouplist(entry.pw_name, entry.pw_gid))
        except KeyError:  # a uid without an account: no group of its own
            gid, groups = _NO_GROUP, frozenset()
        return cls(uid, gid, groups)

    def unreadable(self, folder: str, files: Sequence[tuple[str, os.stat_result]]) -> list[str]:
        """The paths among ``files`` (relative to ``folder``, listed with their ``lstat``) that
        the owner could not open. The referee itself and root read anything; a file the owner
        owns it could make readable. As root, the others are opened by a process with the
        owner's uid and groups (so ACLs and the search bits of the folders below ``folder``
        count, as for the owner); otherwise their mode bits decide."""
        if self.uid in (-1, 0):
            return []
        others = [(path, info) for path, info in files if info.st_uid != self.uid]
        if not others:
            return []
        if os.geteuid() != 0:
            return [path for path, info in others if not self._mode_lets_read(info)]
        return [others[index][0] for index in self._failed_opens(folder, others)]

    def _failed_opens(self, folder: str, files: Sequence[tuple[str, os.stat_result]]) -> list[int]:
        """The indices of ``files`` that a child process with the owner's uid and groups
        cannot open (or finds replaced). A fork, not a new program: the owner may not be able
        to reach the referee's interpreter."""
        top = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # only system calls until _exit: nothing of the parent's state is used
            code = 1
            try:
                os.close(read_end)
                os.setgroups(sorted(self.groups))
                os.setgid(self.gid)
                os.setuid(self.uid)
                failed = bytearray()
                for index, (path, info) in enumerate(files):
                    try:
                        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
                        fd = os.open(path, flags, dir_fd=top)
                    except OSError:
                        failed += index.to_bytes(4, "little")
                        continue
                    opened = os.fstat(fd)
                    os.close(fd)
                    if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
                        failed += index.to_bytes(4, "little")
                with os.fdopen(write_end, "wb") as out:
                    out.write(bytes(failed))
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        os.close(top)
        with os.fdopen(read_end, "rb") as pipe:
            answer = pipe.read()
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise StagingError(
                f"cannot check the bot's files as their folder's owner (uid {self.uid})"
            )
        return [int.from_bytes(answer[i : i + 4], "little") for i in range(0, len(answer), 4)]

    def _mode_lets_read(self, info: os.stat_result) -> bool:
        if info.st_gid in self.groups:
            return bool(info.st_mode & stat.S_IRGRP)
        return bool(info.st_mode & stat.S_IROTH)


class _Changed(OSError):
    """A file is no longer the one listed (replaced by a link, another file, a fifo)."""


def _open_listed(path: str, info: os.stat_result) -> int:
    """A descriptor of the regular file ``path`` that was listed with ``info``: never a link
    followed, never another file put in its place since (raises :class:`_Changed`)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    now = os.fstat(fd)
    if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino):
        os.close(fd)
        raise _Changed(0, "it changed while being read", path)
    return fd


def _hash_file(path: str, info: os.stat_result) -> str:
    digest = hashlib.sha256()
    with os.fdopen(_open_listed(path, info), "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _tree_digest(root: str, entries: Sequence[tuple[str, str, os.stat_result]]) -> str:
    digest = hashlib.sha256()
    for rel, kind, info in entries:
        path = os.path.join(root, rel)
        if kind == "f":
            content = _hash_file(path, info)
            mode = "x" if info.st_mode & 0o111 else "-"
        elif kind == "l":
            content, mode = os.readlink(path), ""
        else:
            content, mode = "", ""
        digest.update(f"{kind}\0{rel}\0{mode}\0{content}\n".encode())
    return digest.hexdigest()


def tree_digest(plan: Plan | None, limits: StageLimits = StageLimits()) -> str:
    """The digest of what the copy of ``plan`` holds (names, kinds, executable bits, content);
    raises :class:`StagingError` for a directory that cannot be read or is too large."""
    return _measured(plan, limits)[0]


def _measured(plan: Plan | None, limits: StageLimits) -> tuple[str, int]:
    """:func:`tree_digest` and the apparent size of the files of the copy."""
    if plan is None:
        return "", 0
    try:
        entries = list(_walk(plan, limits))  # bounded before a byte is read
        size = sum(info.st_size for _, kind, info in entries if kind == "f")
        return _tree_digest(plan.source, entries), size
    except OSError as error:
        raise StagingError(
            f"bot {plan.name!r}: cannot read {error.filename or plan.source}: {error.strerror}"
        ) from None


def tree_digests(
    plans: Sequence[Plan | None],
    limits: StageLimits = StageLimits(),
    failures: dict[int, str] | None = None,
) -> list[str]:
    """:func:`tree_digest` of each plan (the clones of a league, whose copies would hold the
    same, are read once and share one copy); raises :class:`StagingError` (with the index of
    the bot) when one cannot be read, or is too large, or all of them together are. With
    ``failures``, such a bot's reason is recorded there (by its index) and its digest is ""."""
    found: dict[tuple[str, tuple[str, ...], tuple[str, ...] | None] | None, str] = {}
    failed: dict[tuple[str, tuple[str, ...], tuple[str, ...] | None] | None, str] = {}
    digests = []
    total = 0
    for index, plan in enumerate(plans):
        content = None if plan is None else (plan.source, plan.excluded, plan.files)
        try:
            if content in failed:
                raise StagingError(failed[content])
            if content not in found:
                digest, size = _measured(plan, limits)
                if total + size > limits.total_bytes:
                    assert plan is not None
                    raise StagingError(_too_much(plan.name, limits))
                found[content] = digest
                total += size
        except StagingError as error:
            if failures is None:
                raise StagingError(str(error), index) from None
            failures[index] = str(error)
            failed.setdefault(content, str(error))
            digests.append("")
            continue
        digests.append(found[content])
    return digests


def _too_much(name: str, limits: StageLimits) -> str:
    return (
        f"bot {name!r}: the bots' files together hold more than "
        f"{_megabytes(limits.total_bytes)} ({limits.total_key}; apparent sizes, each copy "
        "counted once)"
    )


def _copy(plan: Plan, target: str, limits: StageLimits) -> None:
    os.mkdir(target, 0o755)
    for rel, kind, info in _walk(plan, limits):
        source, dest = os.path.join(plan.source, rel), os.path.join(target, rel)
        if kind == "d":
            os.mkdir(dest, 0o755)
        elif kind == "l":
            os.symlink(os.readlink(source), dest)
        else:  # the very file listed (and checked), never what a link put there since
            with (
                os.fdopen(_open_listed(source, info), "rb") as reader,
                open(dest, "xb") as writer,
            ):
                shutil.copyfileobj(reader, writer, 1 << 20)
            os.chmod(dest, 0o755 if info.st_mode & 0o111 else 0o644)
    os.chmod(target, 0o755)


def _private_root(root: str) -> None:
    """``root`` exists, is a real directory owned by us, listable only by us (0711)."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(root, 0o711)
    info = os.lstat(root)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise StagingError(f"the staging directory {root} is not a directory owned by us")
    os.chmod(root, 0o711)


def _key(root: str) -> bytes:
    path = os.path.join(root, _KEY_NAME)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        with open(path, "rb") as handle:
            key = handle.read()
        if len(key) == 32:
            return key
        os.unlink(path)
        return _key(root)
    with os.fdopen(fd, "wb") as handle:
        key = secrets.token_bytes(32)
        handle.write(key)
    return key


def _rebase(word: str, source: str, target: str) -> str:
    absolute = absolutise(word)
    if not os.path.isabs(absolute) or not os.path.exists(absolute):
        return word
    for form in (absolute, os.path.realpath(absolute)):
        if _inside(form, source):
            moved = target + form[len(source.rstrip(os.sep)) :]
            return moved if os.path.lexists(moved) else word
    return word


def stage(
    bots: Sequence[BotSpec],
    root: str,
    *,
    private: Mapping[str, str] = {},  # noqa: B006 - read only
    expected: Mapping[str, str] | None = None,
    keep: bool = False,
    discover: bool = False,
    limits: StageLimits = StageLimits(),
) -> tuple[BotSpec, ...]:
    """Copy each bot's files under ``root`` and return the bots running from their copies.

    ``expected`` maps bot names to :func:`tree_digest` values (the configuration's): a copy
    whose content differs raises :class:`StagingError` (the bot's files changed since). With
    ``keep``, copies are named by an HMAC of their content under a key kept in ``root`` and a
    copy already there is reused (a resumed tournament runs the very same paths); the other
    directories of ``root`` are removed. Without it, names are random. ``discover``: see
    :func:`plan_bots`. ``limits`` bound each copy and all of them (:class:`StageLimits`).
    A :class:`StagingError` says which bot (its ``index``).
    """
    staged = _stage(bots, root, private, expected, keep, discover, limits, None)
    return tuple(bot for bot in staged if bot is not None)


def stage_each(
    bots: Sequence[BotSpec],
    root: str,
    *,
    private: Mapping[str, str] = {},  # noqa: B006 - read only
    expected: Mapping[str, str] | None = None,
    keep: bool = False,
    limits: StageLimits = StageLimits(),
) -> tuple[list[BotSpec | None], dict[int, str]]:
    """:func:`stage`, each bot apart (a league's): a bot whose files cannot be staged gets None
    and its reason (by its index); the others are staged as if it were there (its folder is
    still another bot's, left out of theirs). A private path holding a bot's folder still
    raises :class:`StagingError` (the configuration's mistake, not the bot's)."""
    failures: dict[int, str] = {}
    staged = _stage(bots, root, private, expected, keep, False, limits, failures)
    return staged, failures


def _stage(
    bots: Sequence[BotSpec],
    root: str,
    private: Mapping[str, str],
    expected: Mapping[str, str] | None,
    keep: bool,
    discover: bool,
    limits: StageLimits,
    failures: dict[int, str] | None,
) -> list[BotSpec | None]:
    """:func:`stage`; with ``failures``, what fails for one bot is recorded there instead of
    raised."""
    _private_root(root)
    key = _key(root) if keep else None
    plans = plan_bots(bots, private={**private, "the staging directory": root}, discover=discover)
    staged: list[BotSpec | None] = []
    used = {_KEY_NAME}
    # by what the copy holds: the clones of a league (one folder, one command) share one copy,
    # which the sandbox shows each of them read-only; a source that failed: its error
    copies: dict[tuple[str, tuple[str, ...], tuple[str, ...] | None], tuple[str, str] | str] = {}
    total = 0
    for index, (bot, plan) in enumerate(zip(bots, plans, strict=True)):
        if plan is None:
            staged.append(bot)
            continue
        source = (plan.source, plan.excluded, plan.files)
        try:
            target, digest, size = _stage_one(bot, plan, source, copies, limits, expected, total)
            if source not in copies:  # checked before anything is copied
                target = _copy_once(bot, plan, digest, root, key, used, limits)
                copies[source] = (target, digest)
                total += size
        except StagingError as error:
            if failures is None:
                raise StagingError(str(error), index) from None
            failures[index] = str(error)
            copies.setdefault(source, f"as bot {bot.name!r}, whose files are the same: {error}")
            staged.append(None)
            continue
        command = tuple(_rebase(word, plan.source, target) for word in bot.command)
        staged.append(attrs.evolve(bot, command=command, directory=target))
    if keep:
        for name in os.listdir(root):
            if name not in used:
                path = os.path.join(root, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
    return staged


def _stage_one(
    bot: BotSpec,
    plan: Plan,
    source: tuple[str, tuple[str, ...], tuple[str, ...] | None],
    copies: Mapping[Any, tuple[str, str] | str],
    limits: StageLimits,
    expected: Mapping[str, str] | None,
    total: int,
) -> tuple[str, str, int]:
    """(the copy's folder, or "" when it is still to be made; its digest; the size to copy) of
    one bot; raises :class:`StagingError` for what keeps the bot from its copy."""
    known = copies.get(source)
    if isinstance(known, str):  # a clone of a bot that failed: the same reason
        raise StagingError(f"bot {bot.name!r}: {known}")
    size = 0
    if known is None:
        digest, size = _measured(plan, limits)
        if total + size > limits.total_bytes:
            raise StagingError(_too_much(bot.name, limits))
        target = ""
    else:
        target, digest = known
    if expected is not None and expected.get(bot.name, digest) != digest:
        raise StagingError(
            f"bot {bot.name!r}: the files in {plan.source} changed since the configuration "
            "was read; run again"
        )
    return target, digest, size


def _copy_once(
    bot: BotSpec,
    plan: Plan,
    digest: str,
    root: str,
    key: bytes | None,
    used: set[str],
    limits: StageLimits,
) -> str:
    """Copy ``plan`` (whose content has ``digest``) under ``root``, or reuse the copy a resumed
    run left there (with ``key``); the copy's folder."""
    if key is not None:
        what = f"{plan.source}\0{plan.excluded}\0{plan.files}\0{digest}"
        token = hmac.new(key, what.encode(), "sha256").hexdigest()[:32]
    else:
        token = secrets.token_hex(16)
    used.add(token)
    holder = os.path.join(root, token)
    target = os.path.join(holder, os.path.basename(plan.source) or "bot")
    check = Plan(bot.name, target)
    if not (os.path.isdir(target) and tree_digest(check, limits) == digest):
        shutil.rmtree(holder, ignore_errors=True)
        os.mkdir(holder, 0o755)
        try:
            _copy(plan, target, limits)
        except OSError as error:
            raise StagingError(
                f"bot {bot.name!r}: cannot copy {error.filename or plan.source} for the "
                f"run: {error.strerror}"
            ) from None
        if tree_digest(check, limits) != digest:
            raise StagingError(
                f"bot {bot.name!r}: the files in {plan.source} changed while being copied"
            )
    return target


@contextlib.contextmanager
def staged_bots(
    bots: Sequence[BotSpec],
    *,
    private: Mapping[str, str] = {},  # noqa: B006 - read only
    discover: bool = True,
    limits: StageLimits = StageLimits(),
) -> Iterator[tuple[BotSpec, ...]]:
    """The bots running from copies in a fresh private temporary directory, removed after.

    ``discover`` (the default, for ``match`` and ``check-bot``): tournament files found in a
    bot's folder are left out too (see :func:`plan_bots`).
    """
    root = tempfile.mkdtemp(prefix="ohseven-stage-")
    try:
        yield stage(bots, root, private=private, discover=discover, limits=limits)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def referee_paths(output: str, config_file: str | None = None) -> dict[str, str]:
    """The tournament's paths no bot may see: its output folder and its configuration file
    (``config_file`` may be a description such as ``<demo>``: then there is none)."""
    paths = {"the output folder": os.path.abspath(output)}
    if config_file and os.path.isfile(config_file):
        paths["the configuration file"] = os.path.abspath(config_file)
    return paths


def check_views(paths: Mapping[str, str], visible: Sequence[str]) -> None:
    """Raise :class:`StagingError` if one of ``paths`` (description -> host path) lies inside a
    directory the sandbox shows every bot (``visible``: the Python installation, the ``ohseven``
    packages, ``extra_paths``)."""
    for what, path in paths.items():
        real = os.path.realpath(path)
        for root in visible:
            if _inside(real, os.path.realpath(root)):
                raise StagingError(
                    f"{what} ({real}) lies inside {root}, which the sandbox shows every bot; "
                    "move it elsewhere"
                )
