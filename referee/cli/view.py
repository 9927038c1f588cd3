"""Write a standalone, offline HTML page showing one saved replay in the site's replay viewer.

REPLAY is a replay file written by ``match --replays``, ``check-bot --replays`` or a tournament
(``replays/`` of its output). The page holds its style, script and data (no network, no other
file): open it in any browser, from any folder. Without ``--output`` it is written next to the
replay (``game.json`` -> ``game.html``); ``--open`` also opens it in the default browser.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import webbrowser
from pathlib import Path
from typing import Any

from ohseven.referee.replay import ReplayError, load_replay
from ohseven.referee.site.publish import STATIC, template_environment
from ohseven.referee.site.replay_view import compact_frames, replay_view
from ohseven.referee.terminal import printable

__all__ = ["configure", "run", "standalone_page"]


def standalone_page(replay: dict[str, Any], ident: str) -> str:
    """The HTML page of ``replay`` (a loaded replay), everything inline."""
    view = replay_view(replay)
    view["frames"] = compact_frames(view["frames"])
    view.update(id=ident, match_id=ident, game_index=0)
    seed = replay.get("seed")
    if isinstance(seed, int) and not isinstance(seed, bool):
        view["seed"] = str(seed)  # exact: a JavaScript number would round it
    data = json.dumps(view, separators=(",", ":"), ensure_ascii=True).replace("</", "<\\/")
    site = {"name": ident, "generated": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
    html = template_environment().get_template("replay.html").render(root="", site=site)
    style = (STATIC / "style.css").read_text(encoding="utf-8")
    script = "\n".join(
        (STATIC / name).read_text(encoding="utf-8").replace("</", "<\\/")
        for name in ("cards.js", "replay.js")  # cards.js draws the cards replay.js shows
    )
    html = re.sub(r"<nav>.*?</nav>", "", html, flags=re.S)  # the site's pages are not here
    brand = r'<span class="brand">\1</span>'
    html = re.sub(r'<a class="brand" href="[^"]*">(.*?)</a>', brand, html)
    link = '<link rel="stylesheet" href="static/style.css">'
    html = html.replace(link, f"<style>\n{style}</style>")
    inline = f"<script>window.ohsevenInline = {data};</script>\n<script>\n{script}</script>"
    tags = '<script src="static/cards.js"></script>\n<script src="static/replay.js"></script>'
    html = html.replace(tags, inline)
    return html


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("replay", metavar="REPLAY", help="a replay file (JSON)")
    parser.add_argument(
        "--output", "-o", metavar="FILE", help="the page to write (default: REPLAY with .html)"
    )
    parser.add_argument("--open", action="store_true", help="open the page in the browser")


def _fail(message: str) -> int:
    print(f"ohseven-referee view: {printable(message)}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    source = Path(args.replay)
    try:
        replay = load_replay(source)
        page = standalone_page(replay, source.stem)
    except OSError as error:
        return _fail(f"{source}: {error.strerror or error}")
    except (ReplayError, ValueError, KeyError, TypeError, IndexError) as error:
        return _fail(f"{source} is not a replay this viewer can show: {error}")
    target = Path(args.output) if args.output else source.with_suffix(".html")
    try:
        target.write_text(page, encoding="utf-8")
    except OSError as error:
        return _fail(f"cannot write {target}: {error.strerror or error}")
    print(f"wrote {target} (open it in a browser: {target.resolve().as_uri()})")
    if args.open and not webbrowser.open(target.resolve().as_uri()):
        print("no browser could be started here; open the file yourself", file=sys.stderr)
    return 0
