"""The web front end of a person's seat: a local page (Starlette, served by uvicorn in a
thread) that shows the position and sends the clicked move.

The referee's loop stays in the main thread: :meth:`WebFront.ask` publishes the position (the
same plain data :func:`~.seat.position` gives the terminal) and waits for an answer; the page
polls ``GET /state`` and posts ``POST /answer`` (the move as text, read by
:func:`~.seat.parse_answer`: a refused answer comes back with its reason) or ``POST /leave``.
The bots keep their clocks: the person is asked only when no bot owes a decision.

The server listens on loopback by default, and every request but the static files must carry
the session's random token (the page's address has it; the script sends it in a header a
cross-site page cannot set without a preflight the server never grants), so another site open
in the browser cannot play the seat. Everything a bot chose (its name) is put in the page as
text, never as HTML.
"""

from __future__ import annotations

import queue
import secrets
import socket
import threading
import time
import webbrowser
from typing import Any

import uvicorn
from jinja2 import Environment, PackageLoader, select_autoescape
from ohseven.core.values import WireMove
from ohseven.referee.human.seat import AnswerError, SeatLeft, Turn, parse_answer, position
from ohseven.referee.site.publish import STATIC
from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

__all__ = ["WebFront", "WebFrontError", "TOKEN_HEADER"]

TOKEN_HEADER = "X-Ohseven-Token"
#: the longest the end waits for the page to fetch the final position
FINAL_FETCH_SECONDS = 5.0
_START_SECONDS = 10.0
_LEAVE = object()


class WebFrontError(OSError):
    """The page cannot be served (the address is taken or cannot be bound)."""


class WebFront:
    """Serves the seat's page on ``host``:``port`` (0: a free port) from construction until
    :meth:`close`; :attr:`url` is its address (with the token)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, open_browser: bool = False):
        self.token = secrets.token_urlsafe(18)
        self.lock = threading.Lock()
        self.answers: queue.Queue[Any] = queue.Queue()
        self.turn: Turn | None = None  # the turn whose decision is pending
        self.state: dict[str, Any] = {"waiting": True, "decision": None, "finished": False}
        self.version = 0
        self.fetched = -1  # the last version a page fetched
        self.error = ""
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
        except OSError as error:
            sock.close()
            raise WebFrontError(f"--listen {host}:{port}: {error.strerror or error}") from None
        self.host, self.port = sock.getsockname()[:2]
        shown = f"[{self.host}]" if ":" in self.host else self.host
        self.url = f"http://{shown}:{self.port}/?token={self.token}"
        config = uvicorn.Config(self.app(), log_level="warning", lifespan="off", access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [sock]}, name="play-web", daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + _START_SECONDS
        while not self.server.started and self.thread.is_alive():
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
        if not self.server.started:
            self.server.should_exit = True
            raise WebFrontError(f"the page at {host}:{port} did not start")
        if open_browser:
            webbrowser.open(self.url)

    # -- the HTTP side (the server's thread)

    def app(self) -> Starlette:
        environment = Environment(
            loader=PackageLoader("ohseven.referee.site", "templates"),
            autoescape=select_autoescape(["html"]),
        )
        page = environment.get_template("play.html")

        def allowed(request: HttpRequest, header: bool = True) -> bool:
            if header:
                given = request.headers.get(TOKEN_HEADER)
            else:
                given = request.query_params.get("token")
            return secrets.compare_digest(str(given or ""), self.token)

        async def index(request: HttpRequest) -> Response:
            if not allowed(request, header=False):
                return HTMLResponse("<p>Open the address printed by ohseven-referee play.</p>", 403)
            return HTMLResponse(page.render(root="", site={"name": "play"}))

        async def state(request: HttpRequest) -> Response:
            if not allowed(request):
                return JSONResponse({"error": "wrong token"}, 403)
            with self.lock:
                self.fetched = self.version
                body = dict(self.state, version=self.version, error=self.error)
            return JSONResponse(body, headers={"Cache-Control": "no-store"})

        async def answer(request: HttpRequest) -> Response:
            if not allowed(request):
                return JSONResponse({"error": "wrong token"}, 403)
            try:
                data = await request.json()
                ident, text = int(data["id"]), str(data["answer"])
            except (ValueError, KeyError, TypeError):
                return JSONResponse({"error": "expected {id, answer}"}, 400)
            with self.lock:
                turn = self.turn
                if turn is None or turn.request is None or turn.request.id != ident:
                    return JSONResponse({"error": "that decision is not pending any more"}, 409)
                request_ = turn.request
                try:
                    move = parse_answer(
                        text, request_.kind, request_.legal, request_.count, turn.view
                    )
                except AnswerError as error:
                    self.error = str(error)
                    self.version += 1
                    return JSONResponse({"error": str(error)}, 400)
                self.turn = None
                self.error = ""
                self.state = dict(self.state, decision=None, waiting=True)
                self.version += 1
                self.answers.put((ident, move))
            return JSONResponse({"ok": True})

        async def leave(request: HttpRequest) -> Response:
            if not allowed(request):
                return JSONResponse({"error": "wrong token"}, 403)
            self.answers.put(_LEAVE)
            return JSONResponse({"ok": True})

        async def no_icon(request: HttpRequest) -> Response:
            return Response(status_code=204)

        return Starlette(
            routes=[
                Route("/", index),
                Route("/favicon.ico", no_icon),
                Route("/state", state),
                Route("/answer", answer, methods=["POST"]),
                Route("/leave", leave, methods=["POST"]),
                Mount("/static", StaticFiles(directory=STATIC), name="static"),
            ]
        )

    # -- the referee's side (the main thread)

    def _publish(self, turn: Turn | None, **extra: Any) -> None:
        with self.lock:
            if turn is not None:
                self.state = dict(position(turn), finished=False)
            self.state.update(extra)
            self.turn = turn if turn is not None and turn.request is not None else None
            self.error = ""
            self.version += 1

    def ask(self, turn: Turn) -> WireMove:
        request = turn.request
        assert request is not None
        self._publish(turn, waiting=False)
        while True:
            try:
                item = self.answers.get(timeout=0.2)  # a timeout keeps Ctrl-C responsive
            except queue.Empty:
                continue
            if item is _LEAVE:
                raise SeatLeft("left the page")
            ident, move = item
            if ident == request.id:
                return move

    def show(self, turn: Turn) -> None:
        self._publish(turn, waiting=turn.view.game_over is None)

    def close(self, message: str = "") -> None:
        """Tell the page the session is over, give it a moment to fetch that, and stop."""
        with self.lock:
            self.turn = None
            self.state = dict(self.state, finished=True, waiting=False, decision=None)
            if message:
                self.state["message"] = message
            self.version += 1
            final = self.version
        deadline = time.monotonic() + FINAL_FETCH_SECONDS
        opened = self.fetched >= 0  # no page ever opened: nobody to wait for
        while opened and self.fetched < final and time.monotonic() < deadline:
            time.sleep(0.05)
        self.server.should_exit = True
        self.thread.join(5.0)
