"""The view of the file system a sandboxed bot gets: the system and Python folders bound
read-only, the few files of ``/etc`` it may read and the synthetic accounts, its own folder
(:func:`bot_folder`), and the checks of extra paths (:func:`extra_path_problem`)."""

from __future__ import annotations

import functools
import glob
import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence

# Inside the sandbox: the private scratch directory (HOME, TMPDIR, the bot's writable space).
SANDBOX_SCRATCH = "/tmp"

# System directories every interpreter or compiled bot may need, bound read-only when present.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# The pieces of /etc that the dynamic loader and common runtimes read (OpenSSL's configuration
# and the CA certificates that Node.js, Ruby or curl load at start, the alternatives that
# /usr/bin/java and friends point through, the JVMs' configuration), nothing else of /etc: not
# the accounts (a synthetic /etc/passwd and /etc/group name root, nobody and the bot), not
# /etc/ssl/private, not the host's names.
_ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/nsswitch.conf",
    "/etc/ssl/openssl.cnf",
    "/etc/ssl/certs",
    "/etc/ca-certificates",
    "/etc/ca-certificates.conf",
    "/etc/crypto-policies",
    "/etc/pki/tls/openssl.cnf",
    "/etc/pki/tls/certs",
    "/etc/pki/ca-trust",
    "/etc/protocols",
    "/etc/services",
    "/etc/mime.types",
)
# Runtimes with a configuration folder per version: every match of these is bound.
_ETC_GLOBS = ("/etc/java-*", "/etc/jvm", "/etc/mono", "/etc/dotnet", "/etc/R", "/etc/php*")
#: the ohseven packages a bot needs: the rules core and the SDK (and the example bots); the
#: referee's package is left out unless it shares their folder (a regular install)
_OHSEVEN_PACKAGES = ("ohseven.core", "ohseven.sdk", "ohseven.example_bots")


def bot_folder(command: Sequence[str], directory: str | None) -> str | None:
    """The folder the sandbox shows a bot with this command (its ``directory``, or its script's)."""
    if directory:
        return os.path.realpath(directory)
    return default_bot_dir(tuple(absolutise(arg) for arg in command))


def extra_path_problem(path: str, protected: Mapping[str, str | None]) -> str | None:
    """What is wrong with ``path`` as an extra read-only path (None: nothing). ``protected``
    maps a description ("the output folder", "bot x's folder") to a folder no bot may see
    through it: the path may neither be inside it nor contain it."""
    if not os.path.isabs(path):
        return f"{path!r} is not an absolute path"
    if not os.path.exists(path):
        return f"{path} does not exist"
    real = os.path.realpath(path)
    if real == "/":
        return f"{path} would show the bots the whole file system"
    for what, folder in protected.items():
        if not folder:
            continue
        folder = os.path.realpath(folder)
        if inside(real, [folder]) or inside(folder, [real]):
            return f"{path} would show every bot {what} ({folder})"
    return None


def python_paths() -> list[str]:
    """The Python installation running the referee and the installed ohseven packages."""
    paths = [sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))]
    for name in _OHSEVEN_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except ImportError:
            continue
        if spec is not None and spec.submodule_search_locations:
            paths.extend(spec.submodule_search_locations)
    return paths


def normalise(paths: Sequence[str]) -> list[str]:
    """Existing absolute real paths, without those already inside another one."""
    real = sorted({os.path.realpath(p) for p in paths if p and os.path.exists(p)})
    kept: list[str] = []
    for path in real:
        if not any(path == k or path.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(path)
    return kept


def inside(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def ancestors(path: str) -> list[str]:
    parts = path.strip("/").split("/")[:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def etc_paths() -> list[str]:
    """The host files and folders of /etc shown to bots (those that exist here)."""
    paths = [path for path in _ETC_FILES if os.path.exists(path)]
    for pattern in _ETC_GLOBS:
        paths.extend(sorted(glob.glob(pattern)))
    return [path for path in paths if not os.path.islink(os.path.dirname(path))]


def etc_data(uid: int | None) -> dict[str, bytes]:
    """The synthetic account and host files of the sandbox: passwd, group, hosts (in order)."""
    uid = os.getuid() if uid is None else uid
    users = {0: "root", 65534: "nobody"}
    users.setdefault(uid, "bot")
    passwd = "".join(
        f"{name}:x:{n}:{n}:{name}:{SANDBOX_SCRATCH if n == uid else '/'}:/bin/sh\n"
        for n, name in sorted(users.items())
    )
    group = "".join(f"{name}:x:{n}:\n" for n, name in sorted(users.items()))
    hosts = "127.0.0.1 localhost sandbox\n::1 localhost ip6-localhost\n"
    return {"passwd": passwd.encode(), "group": group.encode(), "hosts": hosts.encode()}


def bot_path() -> str:
    return os.pathsep.join([os.path.join(sys.prefix, "bin"), "/usr/local/bin", "/usr/bin", "/bin"])


def absolutise(arg: str) -> str:
    if arg and not arg.startswith(("-", "/")) and os.sep in arg and os.path.exists(arg):
        return os.path.abspath(arg)
    if arg and not arg.startswith(("-", "/")) and os.path.isfile(arg):
        return os.path.abspath(arg)
    return arg


def default_bot_dir(command: Sequence[str]) -> str | None:
    for arg in command[1:]:
        if arg.startswith("/") and os.path.isfile(arg):
            return os.path.dirname(os.path.realpath(arg))
    program = command[0]
    if program.startswith("/") and os.path.isfile(program):
        real = os.path.realpath(program)
        system, real_system = _system_roots()
        if not inside(real, real_system) and not inside(program, system):
            return os.path.dirname(real)
    return None


@functools.cache
def _system_roots() -> tuple[list[str], list[str]]:
    """The system's and the running Python's folders, as given and as real paths (fixed for
    the life of the process: computed once, not once per bot)."""
    system = [*SYSTEM_DIRS, *python_paths()]
    return system, normalise(system)
