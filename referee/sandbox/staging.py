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
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence

import attrs
from ohseven.referee.files import DB_NAME, STAGING_NAME
from ohseven.referee.records import BotSpec
from ohseven.referee.sandbox.paths import absolutise, bot_folder, default_bot_dir

__all__ = [
    "StagingError",
    "Plan",
    "plan_bots",
    "tree_digest",
    "stage",
    "staged_bots",
    "visible_directory",
    "STAGE_LIMIT_BYTES",
    "STAGE_LIMIT_FILES",
]

#: the most a bot's copy may hold (file sizes summed), and its number of entries
STAGE_LIMIT_BYTES = 2 << 30
STAGE_LIMIT_FILES = 50_000
_KEY_NAME = "key"


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
    import yaml

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
            if name.endswith((".yaml", ".yml")) and os.path.isfile(path):
                try:
                    with open(path, encoding="utf-8") as handle:
                        document = yaml.safe_load(handle.read(1 << 20))
                except (OSError, UnicodeDecodeError, yaml.YAMLError):
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
    """(relative path, lstat) of every entry the copy holds, in a fixed order, parents first."""
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
    for top, dirs, names in os.walk(root):
        dirs.sort()
        kept = []
        for name in dirs:
            path = os.path.join(top, name)
            if path in excluded:
                continue
            info = os.lstat(path)
            yield os.path.relpath(path, root), info
            if stat.S_ISDIR(info.st_mode):
                kept.append(name)
        dirs[:] = kept
        for name in sorted(names):
            path = os.path.join(top, name)
            if path not in excluded:
                yield os.path.relpath(path, root), os.lstat(path)


def _walk(plan: Plan) -> Iterator[tuple[str, str, os.stat_result]]:
    """Like :func:`_entries` with a kind (``d``, ``f``, ``l``), skipping special files, bounded."""
    count = size = 0
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
        if count > STAGE_LIMIT_FILES or size > STAGE_LIMIT_BYTES:
            raise StagingError(
                f"bot {plan.name!r}: its directory {plan.source} holds more than "
                f"{STAGE_LIMIT_FILES} entries or {STAGE_LIMIT_BYTES >> 20} MB; give the bot a "
                "smaller `directory`"
            )
        yield rel, kind, info


def _hash_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _tree_digest(root: str, entries: Sequence[tuple[str, str, os.stat_result]]) -> str:
    digest = hashlib.sha256()
    for rel, kind, info in entries:
        path = os.path.join(root, rel)
        if kind == "f":
            content = _hash_file(path)
            mode = "x" if info.st_mode & 0o111 else "-"
        elif kind == "l":
            content, mode = os.readlink(path), ""
        else:
            content, mode = "", ""
        digest.update(f"{kind}\0{rel}\0{mode}\0{content}\n".encode())
    return digest.hexdigest()


def tree_digest(plan: Plan | None) -> str:
    """The digest of what the copy of ``plan`` holds (names, kinds, executable bits, content);
    raises :class:`StagingError` for a directory that cannot be read or is too large."""
    if plan is None:
        return ""
    try:
        return _tree_digest(plan.source, list(_walk(plan)))
    except OSError as error:
        raise StagingError(
            f"bot {plan.name!r}: cannot read {error.filename or plan.source}: {error.strerror}"
        ) from None


def _copy(plan: Plan, target: str) -> None:
    os.mkdir(target, 0o755)
    for rel, kind, info in _walk(plan):
        source, dest = os.path.join(plan.source, rel), os.path.join(target, rel)
        if kind == "d":
            os.mkdir(dest, 0o755)
        elif kind == "l":
            os.symlink(os.readlink(source), dest)
        else:
            shutil.copyfile(source, dest, follow_symlinks=False)
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
) -> tuple[BotSpec, ...]:
    """Copy each bot's files under ``root`` and return the bots running from their copies.

    ``expected`` maps bot names to :func:`tree_digest` values (the configuration's): a copy
    whose content differs raises :class:`StagingError` (the bot's files changed since). With
    ``keep``, copies are named by an HMAC of their content under a key kept in ``root`` and a
    copy already there is reused (a resumed tournament runs the very same paths); the other
    directories of ``root`` are removed. Without it, names are random. ``discover``: see
    :func:`plan_bots`.
    """
    _private_root(root)
    key = _key(root) if keep else None
    plans = plan_bots(bots, private={**private, "the staging directory": root}, discover=discover)
    staged: list[BotSpec] = []
    used = {_KEY_NAME}
    # by what the copy holds: the clones of a league (one folder, one command) share one copy,
    # which the sandbox shows each of them read-only
    copies: dict[tuple[str, tuple[str, ...], tuple[str, ...] | None], tuple[str, str]] = {}
    for bot, plan in zip(bots, plans, strict=True):
        if plan is None:
            staged.append(bot)
            continue
        source = (plan.source, plan.excluded, plan.files)
        if source not in copies:
            digest = tree_digest(plan)
        else:
            target, digest = copies[source]
        if expected is not None and expected.get(bot.name, digest) != digest:
            raise StagingError(
                f"bot {bot.name!r}: the files in {plan.source} changed since the configuration "
                "was read; run again"
            )
        if source not in copies:  # checked before anything is copied
            target = _copy_once(bot, plan, digest, root, key, used)
            copies[source] = (target, digest)
        command = tuple(_rebase(word, plan.source, target) for word in bot.command)
        staged.append(attrs.evolve(bot, command=command, directory=target))
    if keep:
        for name in os.listdir(root):
            if name not in used:
                path = os.path.join(root, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
    return tuple(staged)


def _copy_once(
    bot: BotSpec, plan: Plan, digest: str, root: str, key: bytes | None, used: set[str]
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
    if not (os.path.isdir(target) and tree_digest(check) == digest):
        shutil.rmtree(holder, ignore_errors=True)
        os.mkdir(holder, 0o755)
        try:
            _copy(plan, target)
        except OSError as error:
            raise StagingError(
                f"bot {bot.name!r}: cannot copy {error.filename or plan.source} for the "
                f"run: {error.strerror}"
            ) from None
        if tree_digest(check) != digest:
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
) -> Iterator[tuple[BotSpec, ...]]:
    """The bots running from copies in a fresh private temporary directory, removed after.

    ``discover`` (the default, for ``match`` and ``check-bot``): tournament files found in a
    bot's folder are left out too (see :func:`plan_bots`).
    """
    root = tempfile.mkdtemp(prefix="ohseven-stage-")
    try:
        yield stage(bots, root, private=private, discover=discover)
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
