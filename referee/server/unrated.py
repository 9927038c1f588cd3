"""Unrated games on request: an author asks for games of one of their playing bots against bots
they name (house bots or other authors' playing versions); the games are played one request at
a time by the same machinery as the league's matches (``play_match``, the configuration's
sandbox, rules and time control) on deals derived from the secret apart from every league and
final deal, and never reach the tournament's database: no rating moves. The results (each
game's places, totals and fault statuses) and the author's own bot's output are kept in
``server.sqlite`` and shown to that author and the organiser only (never the opponents' output).

The queue is bounded: ``server.unrated_per_author`` requests waiting or playing per author (429
beyond), ``server.unrated_queue`` in all (503), ``server.unrated_games`` games per request. A
stop cuts the running request short; it is played again from its first game on the next start.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from ohseven.core.seeds import derive_seed
from ohseven.referee.plan.config import TourneyConfig
from ohseven.referee.plan.run_plan import sandbox_config
from ohseven.referee.play.match import play_match
from ohseven.referee.records import BotSpec, MatchSpec
from ohseven.referee.server.db import ServerDB
from ohseven.referee.server.league import entry
from ohseven.referee.terminal import printable
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

__all__ = ["UnratedError", "UnratedQueue", "unrated_routes", "check_request"]


class UnratedError(ValueError):
    """A request for unrated games that is refused; ``status`` the HTTP status."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _playing(config: TourneyConfig, db: ServerDB) -> dict[str, BotSpec]:
    """Every bot that may sit at an unrated table, by name: house bots and playing versions."""
    bots = {bot.name: bot.spec for bot in config.bots}
    for version in db.active():
        bots[version.name] = entry(config, version).spec
    return bots


def check_request(
    config: TourneyConfig, db: ServerDB, author: str, bot: Any, opponents: Any, games: Any
) -> tuple[str, list[str], int]:
    """(the author's bot, the opponents, the games) of a valid request; else UnratedError."""
    settings = config.server
    mine = {v.name: v for v in db.active() if v.author == author}
    by_bot = {v.bot: v.name for v in mine.values()}
    if not isinstance(bot, str) or (bot not in mine and bot not in by_bot):
        raise UnratedError(
            f"bot {bot!r}: name one of your playing bots ({', '.join(sorted(by_bot)) or 'none'})"
        )
    name = bot if bot in mine else by_bot[bot]
    if isinstance(opponents, str):
        opponents = [part.strip() for part in opponents.split(",") if part.strip()]
    playing = _playing(config, db)
    if not isinstance(opponents, list) or not all(isinstance(o, str) for o in opponents):
        raise UnratedError("opponents: a list of bot names")
    unknown = [o for o in opponents if o not in playing or o == name]
    if unknown:
        raise UnratedError(f"opponents: {', '.join(map(repr, unknown))}: not a playing bot")
    if len(opponents) + 1 not in config.table_sizes:
        sizes = ", ".join(str(size - 1) for size in config.table_sizes)
        raise UnratedError(f"opponents: name {sizes} bots (tables of {config.table_sizes})")
    if (
        not isinstance(games, int)
        or isinstance(games, bool)
        or not (1 <= games <= settings.unrated_games)
    ):
        raise UnratedError(f"games: 1 to {settings.unrated_games} (unrated_games)")
    if db.pending_unrated(author) >= settings.unrated_per_author:
        raise UnratedError(
            f"you have {settings.unrated_per_author} requests waiting or playing "
            "(unrated_per_author); wait for one to finish",
            429,
        )
    if db.pending_unrated() >= settings.unrated_queue:
        raise UnratedError("the queue of unrated games is full (unrated_queue); try later", 503)
    return name, list(opponents), games


class UnratedQueue:
    """Plays the requests one at a time, in a thread of its own."""

    def __init__(self, db: ServerDB, config: TourneyConfig, secret: bytes) -> None:
        self.db, self.config, self.secret = db, config, secret
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="unrated", daemon=True)

    def start(self) -> None:
        self.db.requeue_unrated()
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()
        self.thread.join(timeout=30)

    def notify(self) -> None:
        self.wake.set()

    def _loop(self) -> None:
        while not self.stopping.is_set():
            queued = [r for r in self.db.unrated() if r["state"] == "queued"]
            if not queued:
                self.wake.wait(1.0)
                self.wake.clear()
                continue
            request = queued[0]
            self.db.set_unrated(request["id"], "playing")
            try:
                result = self.play(request)
            except Exception as error:  # noqa: BLE001 - the request fails, the server goes on
                if self.stopping.is_set():
                    return  # played again on the next start
                # (the names of the bots it asked for, the error's text: one escaped line)
                shown = printable(f"unrated request {request['id']}: {error}", lines=False)
                print(f"warning: {shown}", file=sys.stderr)
                self.db.set_unrated(request["id"], "failed", {"error": str(error)})
                continue
            self.db.set_unrated(request["id"], "done", result)

    def play(self, request: dict[str, Any]) -> dict[str, Any]:
        """Play ``request``'s games: each seat rotating, each deal its own."""
        playing = _playing(self.config, self.db)
        names = [request["bot"], *request["opponents"]]
        missing = [name for name in names if name not in playing]
        if missing:
            raise UnratedError(f"{', '.join(missing)} no longer plays")
        size = len(names)
        key = f"unrated/{request['id']}"
        spec = MatchSpec(
            match_id=f"u{request['id']:05d}",
            rules=self.config.rules,
            bots=tuple(playing[name] for name in names),
            seatings=tuple(
                tuple((seat + game) % size for seat in range(size))
                for game in range(request["games"])
            ),
            seeds=tuple(derive_seed(self.secret, key, game) for game in range(request["games"])),
            time_control=self.config.time_control,
            fallback_seed=derive_seed(self.secret, key, "fallback"),
        )
        outcome = play_match(spec, sandbox=sandbox_config(self.config))
        games = []
        for record in outcome.games:
            faults: dict[int, list[str]] = {}
            for fault in record.faults:
                faults.setdefault(fault.seat, []).append(fault.status.value)
            games.append(
                {
                    "game_index": record.game_index,
                    "players": [
                        {
                            "name": name,
                            "place": record.ranks[seat],
                            "total": record.totals[seat],
                            "faults": faults.get(seat, []),
                        }
                        for seat, name in enumerate(record.seats)
                    ],
                }
            )
        # the author's own bot's output only: the opponents' is their authors'
        return {"games": games, "log": outcome.logs.get(request["bot"])}


def _count(games: Any) -> Any:
    """The form's number of games as an int when it is a plain one (else as sent, for
    :func:`check_request` to refuse): ``int`` of 5,000 digits or of '²' raised a 500."""
    if isinstance(games, str) and games.isascii() and games.isdigit() and len(games) <= 9:
        return int(games)
    return games


def unrated_routes(server: Any) -> list[Route]:
    """The API (``/api/unrated``: Bearer token) and pages (``/me/unrated``: session, CSRF) of
    ``server`` (an ``app.Server`` with ``unrated``, an :class:`UnratedQueue`, or None)."""

    def mine(request: Request, author: str) -> dict[str, Any]:
        try:
            request_id = int(request.path_params["id"])
        except ValueError:
            raise HTTPException(404, "no such request of yours") from None
        # (an id past SQLite's integers is no row, not an OverflowError)
        found = server.db.unrated(request_id) if 0 <= request_id < 1 << 63 else []
        if not found or not (found[0]["author"] == author or server.db.is_organiser(author)):
            raise HTTPException(404, "no such request of yours")  # another's: as if none
        return found[0]

    def add(author: str, bot: Any, opponents: Any, games: Any) -> dict[str, Any]:
        # (in a thread: the lock may be held by an upload being stored, which must not stall
        # the event loop and every other request with it)
        if server.unrated is None:
            raise UnratedError("unrated games are not played by this server", 503)
        with server.store_lock:
            name, chosen, count = check_request(
                server.config, server.db, author, bot, opponents, games
            )
            request_id = server.db.add_unrated(author, name, chosen, count)
        server.unrated.notify()
        return server.db.unrated(request_id)[0]

    async def api_request(request: Request) -> Response:
        author = server.bearer_author(request)
        if author is None:
            return server.unauthorised(request)
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": "send JSON: {bot, opponents, games}"}, 400)
        if not isinstance(body, dict):
            return JSONResponse({"error": "send JSON: {bot, opponents, games}"}, 400)
        try:
            made = await run_in_threadpool(
                add, author, body.get("bot"), body.get("opponents"), body.get("games", 1)
            )
        except UnratedError as error:
            return JSONResponse({"error": str(error)}, error.status)
        return JSONResponse(made, 201)

    async def api_list(request: Request) -> Response:
        author = server.viewer(request)
        if author is None:
            return server.unauthorised(request)
        return JSONResponse({"requests": server.db.unrated(author=author)})

    async def api_one(request: Request) -> Response:
        author = server.viewer(request)
        if author is None:
            return server.unauthorised(request)
        return JSONResponse(mine(request, author))

    def logged_in(request: Request) -> str:
        author = server.session_author(request)
        if author is None:
            raise HTTPException(401, "log in first (/login)")
        return author

    def page(request: Request, author: str, status: int = 200, message: str | None = None):
        return server.render(
            request,
            "unrated.html",
            status=status,
            author=author,
            requests=list(reversed(server.db.unrated(author=author))),
            bots=sorted(_playing(server.config, server.db)),
            mine=sorted(v.name for v in server.db.active() if v.author == author),
            settings=server.settings,
            message=message,
        )

    async def me_unrated(request: Request) -> Response:
        return page(request, logged_in(request))

    async def me_request(request: Request) -> Response:
        author = logged_in(request)
        form = await request.form(max_files=0, max_fields=20, max_part_size=4096)
        server.check_csrf(request, form.get("csrf"))
        games = form.get("games")
        try:
            made = await run_in_threadpool(
                add,
                author,
                form.get("bot"),
                [str(o) for o in form.getlist("opponent") if str(o)],
                _count(games),
            )
        except UnratedError as error:
            return page(request, author, error.status, str(error))
        return RedirectResponse(f"/me/unrated/{made['id']}", status_code=303)

    async def me_one(request: Request) -> Response:
        author = logged_in(request)
        return server.render(request, "unrated_one.html", request_row=mine(request, author))

    return [
        Route("/api/unrated", api_request, methods=["POST"]),
        Route("/api/unrated", api_list, methods=["GET"]),
        Route("/api/unrated/{id}", api_one),
        Route("/me/unrated", me_unrated, methods=["GET"]),
        Route("/me/unrated", me_request, methods=["POST"]),
        Route("/me/unrated/{id}", me_one),
    ]
