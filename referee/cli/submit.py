"""Submit a bot to a competition server: ``submit --server URL --token TOKEN --name BOT PATH``.

PATH is the bot's file or folder; it is packed (a gzip-compressed tar of the folder's regular
files, or of the one file) and uploaded as the next version of your bot BOT. ``--command`` is
the command that starts it, its words naming files of the upload (default: the upload's only
top-level .py file, or its main.py). With ``--wait`` the command follows the check and prints
its report. Exit status: 0 accepted (with ``--wait``: the check passed), 1 refused by the check,
2 bad input or a server error (the server's message is printed).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import stat
import sys
import tarfile
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from ohseven.referee.cli.check_bot import render

__all__ = ["configure", "run", "pack"]

_WAIT_SECONDS = 1800


class SubmitError(Exception):
    """Bad input, or the server answered with an error."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--server", required=True, metavar="URL", help="the server's address")
    parser.add_argument(
        "--token",
        default=os.environ.get("OHSEVEN_TOKEN"),
        metavar="TOKEN",
        help="your token (default: $OHSEVEN_TOKEN)",
    )
    parser.add_argument("--name", required=True, metavar="BOT", help="your bot's name")
    parser.add_argument(
        "--command", default=None, metavar="CMD", help="the command that starts the bot"
    )
    parser.add_argument(
        "--wait", action="store_true", help="wait for the check and print its report"
    )
    parser.add_argument("path", metavar="PATH", help="the bot's file or folder")


def pack(path: str) -> bytes:
    """The file or folder at ``path`` as a gzip-compressed tar (regular files and folders
    only; anything else is refused with :class:`SubmitError`)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        if os.path.isfile(path):
            tar.add(path, arcname=os.path.basename(path), recursive=False)
        elif os.path.isdir(path):
            for top, dirs, names in os.walk(path):
                dirs.sort()
                for name in [*dirs, *sorted(names)]:
                    full = os.path.join(top, name)
                    mode = os.lstat(full).st_mode
                    if stat.S_ISLNK(mode) or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                        raise SubmitError(
                            f"{full}: only regular files and folders can be uploaded (a link "
                            "or special file)"
                        )
                    relative = os.path.relpath(full, path)
                    if name in ("__pycache__", ".git"):
                        if stat.S_ISDIR(mode):
                            dirs.remove(name)
                        continue
                    tar.add(full, arcname=relative, recursive=False)
        else:
            raise SubmitError(f"{path}: no such file or folder")
    return out.getvalue()


def _request(
    url: str, token: str, data: bytes | None = None, content_type: str | None = None
) -> dict[str, Any]:
    request = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
    request.add_header("Authorization", f"Bearer {token}")
    if content_type:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        try:
            message = json.loads(error.read()).get("error") or error.reason
        except (ValueError, AttributeError):
            message = error.reason
        raise SubmitError(f"the server refused it ({error.code}): {message}") from None
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        raise SubmitError(f"cannot reach {url}: {reason}") from None


def _report(version: dict[str, Any]) -> str:
    report = version.get("report") or {}
    if "checks" in report:
        return render(report)
    lines = [str(report.get("error", "no report"))]
    if report.get("stderr"):
        lines.append(report["stderr"])
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if not args.token:
        print("ohseven-referee submit: give --token (or set OHSEVEN_TOKEN)", file=sys.stderr)
        return 2
    base = args.server.rstrip("/")
    if not base.startswith(("http://", "https://")):
        print(f"--server {args.server}: expected http://HOST:PORT or https://...", file=sys.stderr)
        return 2
    try:
        data = pack(args.path)
        query = {"bot": args.name}
        if args.command:
            query["command"] = args.command
        url = f"{base}/api/uploads?{urllib.parse.urlencode(query)}"
        version = _request(url, args.token, data, "application/gzip")
        print(f"uploaded {version['name']} ({version['files']} files): {version['state']}")
        if not args.wait:
            return 0
        deadline = time.monotonic() + _WAIT_SECONDS
        while version["state"] in ("queued", "checking"):
            if time.monotonic() > deadline:
                raise SubmitError("the check did not finish in time; look again later")
            time.sleep(1.0)
            version = _request(f"{base}{version['status_url']}", args.token) | {
                "status_url": version["status_url"]
            }
    except SubmitError as error:
        print(f"ohseven-referee submit: {error}", file=sys.stderr)
        return 2
    print(_report(version))
    if version["state"] == "passed":
        print(f"{version['name']}: accepted; it plays from the league's next wave")
        return 0
    print(f"{version['name']}: refused by the check ({version['state']})")
    return 1
