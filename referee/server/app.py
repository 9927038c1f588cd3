"""The HTTP application (Starlette): the public JSON API and pages of the live league, the
authors' uploads and private pages.

Who is asking: an API client sends its author's token (``Authorization: Bearer TOKEN``); a
browser logs in with the token once and then sends a session cookie (signed with a key kept in
the server's database, HttpOnly, SameSite=Strict, ending with the author's token: revoking an
author ends their sessions). Forms carry a CSRF token derived from the session. An author reads
their own bots' check reports, fault details and logs; an organiser reads everyone's; anyone
reads the results, the fault statuses and the finished games. Uploads: see ``uploads``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jinja2
from ohseven.referee.plan.config import ServerConfig, TourneyConfig
from ohseven.referee.results.archive import slugify
from ohseven.referee.results.leaderboard import (
    leaderboard_csv,
    leaderboard_markdown,
    public_refusals,
)
from ohseven.referee.results.store import Store, StoreError
from ohseven.referee.server.checks import CheckQueue, QueueFullError
from ohseven.referee.server.db import NAME_PATTERN, ServerDB, Version
from ohseven.referee.server.final_pages import final_board, final_routes, revealed
from ohseven.referee.server.headers import SESSION_COOKIE, SecurityHeaders
from ohseven.referee.server.live import LiveView
from ohseven.referee.server.ratelimit import FailureLimiter
from ohseven.referee.server.unrated import UnratedQueue, unrated_routes
from ohseven.referee.server.uploads import (
    UploadError,
    UploadLimits,
    bot_command,
    pack_file,
    unpack,
    uploads_root,
)
from ohseven.referee.site.publish import STATIC, TEMPLATES
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

__all__ = ["Server", "create_app", "SESSION_COOKIE", "ROW_IDS"]

SESSION_SECONDS = 7 * 24 * 3600
#: SQLite's row ids are below this: a larger id is no row (not an OverflowError and a 500)
ROW_IDS = 1 << 63
SERVER_TEMPLATES = Path(__file__).resolve().parent / "templates"


class Server:
    """What the handlers share: the configuration, the databases, the live view, the queue."""

    def __init__(
        self,
        config: TourneyConfig,
        db: ServerDB,
        live: LiveView,
        checks: CheckQueue,
        commitment: str = "",
        unrated: UnratedQueue | None = None,
    ) -> None:
        self.config, self.db, self.live, self.checks = config, db, live, checks
        self.unrated = unrated
        #: SHA-256 (hex) of the tournament secret, published before the event
        self.commitment = commitment
        self.settings: ServerConfig = config.server
        self.output = Path(config.output)
        self.uploads = uploads_root(self.output)
        self.key = db.key("session_key")
        # the author's limits are checked again, with the version stored, under this lock:
        # uploads sent at once all pass the first check before any of them is stored (the
        # check queue's: it removes trees no version needs under it, see ``CheckQueue.sweep``)
        self.store_lock = checks.lock
        self.limits = UploadLimits(
            max_upload_bytes=self.settings.max_upload_bytes,
            max_unpacked_bytes=self.settings.max_unpacked_bytes,
            max_files=self.settings.max_files,
            max_depth=self.settings.max_depth,
        )
        self.env = jinja2.Environment(
            loader=jinja2.ChoiceLoader(
                [
                    jinja2.FileSystemLoader(str(SERVER_TEMPLATES)),
                    jinja2.FileSystemLoader(str(TEMPLATES)),
                ]
            ),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["slug"] = slugify
        #: failed token and session checks, by client address and by the author a cookie names
        self.address_failures = FailureLimiter(self.settings.auth_failures)
        self.author_failures = FailureLimiter(self.settings.auth_failures_per_author)
        #: uploads refused once admitted, by author, in the last hour (see :meth:`charged`)
        self.refused_uploads = FailureLimiter(self.settings.uploads_per_hour, window=3600.0)
        #: (key, leaderboard with states, bots by name and slug, its JSON or None)
        self._board_cache: (
            tuple[Any, dict[str, Any], dict[str, dict[str, Any]], bytes | None] | None
        ) = None
        live.listeners.append(self.prepare)

    # -- who is asking

    def _mac(self, *parts: str) -> str:
        return hmac.new(self.key, "|".join(parts).encode(), hashlib.sha256).hexdigest()

    def session_value(self, author: str) -> str:
        expires = str(int(time.time()) + SESSION_SECONDS)
        mark = self.db.token_mark(author) or ""
        return f"{author}.{expires}.{self._mac('session', author, expires, mark)}"

    def session_author(self, request: Request) -> str | None:
        """The author of the request's session cookie, or None (no cookie, or one that does not
        check out: a failure counted, and the cookie deleted by the response). Raises 429 for
        an address (or an author name) past its failures (see ``ratelimit``)."""
        state = request.scope.setdefault("state", {})
        if "session_author" in state:  # checked once a request (and counted once)
            return state["session_author"]
        value = request.cookies.get(SESSION_COOKIE)
        author = None
        if value is not None:
            self.guard(request)
            author = self._session_check(value)
            if author is None:
                state["bad_session"] = True
                named = value.split(".", 1)[0]
                # a name past its failures: refused like an address (a cookie that checks out
                # is always accepted, so that no forger locks its author out)
                self.guard(request, named if NAME_PATTERN.fullmatch(named) else None)
                self.failed(request, named if NAME_PATTERN.fullmatch(named) else None)
        state["session_author"] = author
        return author

    def _session_check(self, value: str) -> str | None:
        parts = value.split(".")
        if len(parts) != 3 or not (parts[1].isascii() and parts[1].isdigit()):
            return None
        if len(parts[1]) > 12:  # (a 5,000-digit number was a 500 and a traceback per request)
            return None
        author, expires, mac = parts
        if int(expires) < time.time():
            return None
        mark = self.db.token_mark(author)
        if mark is None:  # revoked, or no such author
            return None
        if not hmac.compare_digest(mac, self._mac("session", author, expires, mark)):
            return None
        return author

    @staticmethod
    def address(request: Request) -> str:
        """The client's address (behind a proxy on loopback: the one it forwards)."""
        return request.client.host if request.client is not None else "unknown"

    def guard(self, request: Request, author: str | None = None) -> None:
        """Refuse (429, ``Retry-After``) a request carrying credentials from an address, or
        naming an author, past its failed checks in the last minute."""
        wait = self.address_failures.retry_after(self.address(request))
        if author is not None:
            wait = max(wait, self.author_failures.retry_after(author))
        if wait:
            raise HTTPException(
                429,
                f"too many failed logins or token checks (auth_failures: "
                f"{self.settings.auth_failures} a minute); try again in {wait} s",
                headers={"Retry-After": str(wait)},
            )

    def failed(self, request: Request, author: str | None = None) -> None:
        self.address_failures.fail(self.address(request))
        if author is not None:
            self.author_failures.fail(author)

    def login_author(self, request: Request, token: Any) -> str | None:
        """The author of a token given at ``/login`` (a failure counted when none)."""
        self.guard(request)
        author = self.db.author_of_token(token) if isinstance(token, str) else None
        if author is None:
            self.failed(request)
        return author

    def csrf_token(self, request: Request) -> str:
        return self._mac("csrf", request.cookies.get(SESSION_COOKIE, ""))[:32]

    def check_csrf(self, request: Request, sent: Any) -> None:
        if not isinstance(sent, str) or not hmac.compare_digest(sent, self.csrf_token(request)):
            raise HTTPException(403, "the form's CSRF token is missing or wrong; reload the page")

    def check_origin(self, request: Request) -> None:
        """Refuse a form another site's page sent (login CSRF: its author's session in the
        victim's browser): by ``Sec-Fetch-Site``, else by ``Origin`` against ``Host``."""
        site = request.headers.get("sec-fetch-site")
        origin = request.headers.get("origin")
        if site is not None:
            foreign = site not in ("same-origin", "none")
        elif origin is not None:
            foreign = urlsplit(origin).netloc != request.headers.get("host", "")
        else:
            foreign = False
        if foreign:
            raise HTTPException(403, "a form sent from another site; use this site's own page")

    def bearer_author(self, request: Request) -> str | None:
        """The author of the request's ``Authorization: Bearer`` token, or None (no token; an
        unknown one is a failure counted). Raises 429 like :meth:`session_author`."""
        state = request.scope.setdefault("state", {})
        if "bearer_author" in state:
            return state["bearer_author"]
        header = request.headers.get("authorization")
        author = None
        if header is not None:
            self.guard(request)
            scheme, _, token = header.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                author = self.db.author_of_token(token.strip())
            if author is None:
                self.failed(request)
        state["bearer_author"] = author
        return author

    @staticmethod
    def unauthorised(request: Request) -> JSONResponse:
        """The 401 of an author's API route: no token sent, or one that is not accepted."""
        if request.headers.get("authorization") is None:
            message = "send your token: Authorization: Bearer TOKEN"
        else:
            message = "this token is not accepted (mistyped or revoked): ask the organiser"
        return JSONResponse({"error": message}, status_code=401)

    def viewer(self, request: Request) -> str | None:
        """The author asking: by token, else by session."""
        return self.bearer_author(request) or self.session_author(request)

    def may_read_private(self, viewer: str | None, bot_name: str) -> bool:
        if viewer is None:
            return False
        if self.db.is_organiser(viewer):
            return True
        return bot_name.startswith(f"{viewer}/")

    # -- bots

    def states(self) -> dict[str, Version]:
        """Every version by its rated name."""
        return {version.name: version for version in self.db.versions()}

    def bot_state(self, name: str, states: dict[str, Version], active: set[str]) -> dict:
        version = states.get(name)
        if version is None:
            return {"author": None, "bot": name, "version": None, "state": "house"}
        state = "active" if name in active else "retired"
        return {
            "author": version.author,
            "bot": version.bot,
            "version": version.version,
            "state": state,
        }

    def leaderboard(self) -> dict[str, Any]:
        """The live leaderboard, each bot's row with its ``server`` state; made again only when
        the live view or the server's database changed (shared by every reader: read only)."""
        return self._board()[0]

    def leaderboard_json(self) -> bytes:
        """:meth:`leaderboard` as JSON (as ``JSONResponse`` renders it), made once per change."""
        board, found, body = self._board()
        if body is None:
            body = json.dumps(
                board, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
            ).encode("utf-8")
            cached = self._board_cache
            if cached is not None and cached[1] is board:
                self._board_cache = (cached[0], board, found, body)
        return body

    def prepare(self) -> None:
        """Make the leaderboard's JSON now (the live view calls this in its own thread after
        each new document), so that no reader on the event loop waits for it."""
        self.leaderboard_json()

    def _board_key(self) -> tuple[int, tuple[int, int]]:
        return self.live.version, self.db.mark()

    def _board(self) -> tuple[dict[str, Any], dict[str, dict[str, Any]], bytes | None]:
        key = self._board_key()
        cached = self._board_cache
        if cached is not None and cached[0] == key:
            return cached[1], cached[2], cached[3]
        board = self.live.leaderboard()
        if board is None:
            raise HTTPException(503, "the league has not started yet; try again shortly")
        states = self.states()
        active = {version.name for version in self.db.active()}
        board = dict(board)
        if "refused" in board:  # why: its author's and the organiser's (``left_out``)
            board["refused"] = public_refusals(board["refused"])
        board["bots"] = [
            {**row, "server": self.bot_state(row["name"], states, active)} for row in board["bots"]
        ]
        found: dict[str, dict[str, Any]] = {}
        for row in board["bots"]:
            found.setdefault(row["name"], row)
        for row in board["bots"]:
            found.setdefault(row["slug"], row)
        self._board_cache = (key, board, found, None)
        return board, found, None

    def find_bot(self, name: str) -> dict[str, Any]:
        name = name.removesuffix(".html")
        row = self._board()[1].get(name)
        if row is None:
            raise HTTPException(404, f"no bot {name!r} in the league")
        return row

    def left_out(self) -> dict[str, str]:
        """Why each bot left out of the league could not start: private (see ``feeds``)."""
        board = self.live.leaderboard() or {}
        return {str(r.get("name")): str(r.get("reason")) for r in board.get("refused") or ()}

    def version_private(self, version: Version) -> dict[str, Any]:
        """What the author reads of their version: with why the league left it out, if so."""
        return {**version.private(), "left_out": self.left_out().get(version.name)}

    def private_of(self, name: str) -> dict[str, Any]:
        left_out = self.left_out().get(name)
        try:
            with Store.open(self.output, create=False) as store:
                return {
                    "faults": store.fault_details(name),
                    "logs": store.bot_logs(name),
                    "left_out": left_out,
                }
        except StoreError:
            return {"faults": [], "logs": [], "left_out": left_out}

    # -- uploads

    async def receive(self, request: Request, author: str, bot: Any, command: Any) -> Version:
        """Check the author's limits, stream the body to a temporary file under the body limit
        and store it (see ``uploads``): the new version, queued for its check."""
        bot = self.admit(author, bot)
        with self.charged(author):
            declared = request.headers.get("content-length") or ""
            if declared.isdigit() and int(declared) > self.limits.max_upload_bytes:
                raise UploadError(self.too_big(), 413)
            fd, body_path = _temp_file(self.uploads)
            try:
                size = 0
                with os.fdopen(fd, "wb") as body:
                    async for chunk in request.stream():
                        size += len(chunk)
                        if size > self.limits.max_upload_bytes:
                            raise UploadError(self.too_big(), 413)
                        body.write(chunk)
                return await run_in_threadpool(self._store, author, bot, command, body_path)
            finally:
                Path(body_path).unlink(missing_ok=True)

    @contextmanager
    def charged(self, author: str) -> Iterator[None]:
        """Count an upload refused once admitted (too large, a bomb, a bad entry or command)
        against the author's ``uploads_per_hour``: a refusal after the body was read and
        unpacked costs the server as much as an accepted upload, and is not a stored version
        (which ``admit`` counts)."""
        try:
            yield
        except UploadError:
            self.refused_uploads.fail(author)
            raise

    def store_data(
        self, author: str, bot: str, command: Any, data: bytes, filename: str
    ) -> Version:
        """:meth:`_store` for the upload form's file (``data``, named ``filename``): a single
        file is packed here (in a thread: packing and writing 20 MB would stall the loop)."""
        if len(data) > self.limits.max_upload_bytes:
            raise UploadError(self.too_big(), 413)
        if not filename.endswith((".tar.gz", ".tgz")):  # one file: packed here
            name = os.path.basename(filename)
            data = pack_file(name, data, executable=not name.endswith(".py"))
        fd, body_path = _temp_file(self.uploads)
        try:
            with os.fdopen(fd, "wb") as body:
                body.write(data)
            return self._store(author, bot, command, body_path)
        finally:
            Path(body_path).unlink(missing_ok=True)

    def too_big(self) -> str:
        """The refusal of an upload past ``max_upload_bytes`` (its handler's, and the body
        guard's: ``connections.BodyGuard``)."""
        return (
            f"the upload is larger than the limit (max_upload_bytes: "
            f"{self.limits.max_upload_bytes} bytes)"
        )

    def admit(self, author: str, bot: Any) -> str:
        """Refuse an upload of ``bot`` the author's limits or the queue do not allow (an
        :class:`UploadError`); the bot's name."""
        if not self.settings.submissions:
            raise UploadError("submissions are closed", 403)
        if self.db.final_state() is not None:
            raise UploadError("the competition's final has begun: submissions are closed", 403)
        if not isinstance(bot, str) or not NAME_PATTERN.fullmatch(bot):
            raise UploadError(
                f"bot name {bot!r}: 1 to 32 of a-z, 0-9, '_' and '-', starting with a letter "
                "or digit"
            )
        hour = self.db.uploads_since(author, time.time() - 3600)
        if hour >= self.settings.uploads_per_hour:
            raise UploadError(
                f"{hour} uploads in the last hour; the limit (uploads_per_hour) is "
                f"{self.settings.uploads_per_hour}",
                429,
            )
        wait = self.refused_uploads.retry_after(author)
        if wait:
            raise UploadError(
                f"{self.settings.uploads_per_hour} of your uploads were refused in the last "
                f"hour (uploads_per_hour counts refused uploads too); try again in {wait} s",
                429,
            )
        mine = self.db.versions(author)
        live = {v.bot for v in mine if v.state in ("queued", "checking")}
        live |= {v.bot for v in self.db.active() if v.author == author}
        if bot not in live and len(live) >= self.settings.max_active_bots:
            raise UploadError(
                f"you have {len(live)} active bots ({', '.join(sorted(live))}); the limit "
                f"(max_active_bots) is {self.settings.max_active_bots}: upload a new version of "
                "one of them instead",
                403,
            )
        try:
            self.checks.admit()
        except QueueFullError as error:
            raise UploadError(str(error), 503) from None
        return bot

    def _store(self, author: str, bot: str, command: Any, body_path: str) -> Version:
        if command is not None and not isinstance(command, str):
            raise UploadError("command: expected a command line")
        # unpacked outside the lock (100 MB and 2,000 files synced to disk take seconds, and
        # every other upload and request for unrated games would wait for them)
        for _attempt in range(3):
            with open(body_path, "rb") as archive:
                tree = unpack(archive, self.uploads, self.limits)
            try:
                with self.store_lock:
                    if not tree.path.is_dir():
                        # (the same content's tree, reused, was removed meanwhile with a failed
                        # version or a refused upload of it: unpacked again)
                        continue
                    argv = bot_command(command, tree)
                    self.admit(author, bot)
                    version = self.db.add_version(
                        author, bot, tree.digest, argv, tree.bytes, tree.files
                    )
            except UploadError:
                self.checks.sweep([tree.digest])  # refused once unpacked: no version needs it
                raise
            self.checks.notify()
            return version
        raise UploadError("the upload could not be stored; send it again", 503)

    # -- pages

    def render(
        self,
        request: Request,
        template: str,
        status: int = 200,
        headers: Any = None,
        **values: Any,
    ) -> Response:
        try:
            viewer = self.session_author(request)
        except HTTPException:  # (an error page of a refused request: shown to nobody)
            viewer = None
        site = {"name": self.config.name, "generated": time.strftime("%H:%M:%S UTC", time.gmtime())}
        html = self.env.get_template(template).render(
            root="/", site=site, viewer=viewer, csrf=self.csrf_token(request), **values
        )
        return HTMLResponse(html, status_code=status, headers=headers)


def _temp_file(root: Path) -> tuple[int, str]:
    path = root / f".tmp-body-{secrets.token_hex(8)}"
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), str(path)


def _int(value: str | None, default: int, name: str) -> int:
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        shown = value if len(value) <= 40 else value[:40] + "..."
        raise HTTPException(400, f"{name}: expected an integer, not {shown!r}") from None


def create_app(server: Server) -> Starlette:
    """The Starlette application of ``server``."""

    def error_json(status: int, message: str) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status)

    # -- public

    async def api_leaderboard(request: Request) -> Response:
        return Response(server.leaderboard_json(), media_type="application/json")

    async def leaderboard_csv_file(request: Request) -> Response:
        return PlainTextResponse(leaderboard_csv(server.leaderboard()), media_type="text/csv")

    async def leaderboard_md_file(request: Request) -> Response:
        return PlainTextResponse(leaderboard_markdown(server.leaderboard()))

    async def api_bot(request: Request) -> Response:
        name = request.path_params["name"]
        row = server.find_bot(name)
        data: dict[str, Any] = {
            "bot": row,
            "games": server.live.games(bot=row["name"], limit=50),
        }
        viewer = server.viewer(request)
        if server.may_read_private(viewer, row["name"]):
            data["private"] = await run_in_threadpool(server.private_of, row["name"])
        return JSONResponse(data)

    async def api_games(request: Request) -> Response:
        query = request.query_params
        bot = query.get("bot") or None
        after = _int(query.get("after"), -1, "after")
        limit = max(1, min(_int(query.get("limit"), 100, "limit"), 1000))
        if bot is not None:
            bot = server.find_bot(bot)["name"]
        return JSONResponse(
            {
                "games": server.live.games(bot=bot, after=after, limit=limit),
                "total": server.live.game_count(bot),
            }
        )

    async def api_commitment(request: Request) -> Response:
        shown = revealed(server.output)
        return JSONResponse(
            {
                "sha256": server.commitment,
                "secret": None if shown is None else shown.get("secret"),
                "what": "SHA-256 of the tournament secret every deal is derived from; the "
                "secret is revealed here once the final is complete (ohseven-referee final, "
                "with reveal_seeds): check that its SHA-256 is this",
            }
        )

    async def index(request: Request) -> Response:
        board = server.live.leaderboard()
        if board is None:
            return server.render(
                request, "live_wait.html", status=503, commitment=server.commitment
            )
        return server.render(
            request,
            "live_index.html",
            commitment=server.commitment,
            final=final_board(server.output),
            board=server.leaderboard(),
            games=list(reversed(server.live.games(limit=20))),
        )

    async def games_page(request: Request) -> Response:
        return server.render(
            request, "live_games.html", games=list(reversed(server.live.games(limit=200)))
        )

    async def bot_page(request: Request) -> Response:
        row = server.find_bot(request.path_params["slug"])
        viewer = server.session_author(request)
        private = None
        if server.may_read_private(viewer, row["name"]):
            private = await run_in_threadpool(server.private_of, row["name"])
        return server.render(
            request,
            "live_bot.html",
            bot=row,
            games=list(reversed(server.live.games(bot=row["name"], limit=100))),
            private=private,
        )

    # -- authors: the API

    async def api_upload(request: Request) -> Response:
        author = server.bearer_author(request)
        if author is None:
            return server.unauthorised(request)
        query = request.query_params
        try:
            version = await server.receive(request, author, query.get("bot"), query.get("command"))
        except UploadError as error:
            return error_json(error.status, str(error))
        return JSONResponse(
            {**server.version_private(version), "status_url": f"/api/uploads/{version.id}"},
            status_code=201,
        )

    def own_version(request: Request, author: str) -> Version:
        version_id = _int(request.path_params["id"], -1, "id")
        version = server.db.version(version_id) if 0 <= version_id < ROW_IDS else None
        if version is None or not (
            version.author == author or server.db.is_organiser(author)
        ):  # another author's: as if it did not exist
            raise HTTPException(404, "no such upload of yours")
        return version

    async def api_uploads(request: Request) -> Response:
        author = server.viewer(request)
        if author is None:
            return server.unauthorised(request)
        return JSONResponse(
            {"uploads": [server.version_private(v) for v in server.db.versions(author)]}
        )

    async def api_upload_status(request: Request) -> Response:
        author = server.viewer(request)
        if author is None:
            return server.unauthorised(request)
        return JSONResponse(server.version_private(own_version(request, author)))

    # -- authors: the pages

    async def login_page(request: Request) -> Response:
        return server.render(request, "login.html", message=None)

    async def login(request: Request) -> Response:
        server.check_origin(request)
        form = await request.form(max_files=0, max_fields=5, max_part_size=4096)
        author = server.login_author(request, form.get("token"))
        if author is None:
            return server.render(request, "login.html", status=403, message="unknown token")
        response = RedirectResponse("/me", status_code=303)
        response.set_cookie(
            SESSION_COOKIE,
            server.session_value(author),
            max_age=SESSION_SECONDS,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/",
        )
        return response

    async def logout(request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=5, max_part_size=4096)
        server.check_csrf(request, form.get("csrf"))
        author = server.session_author(request)
        if author is not None:  # the cookie, copied or replayed, ends here too
            await run_in_threadpool(server.db.end_sessions, author)
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path="/")
        return response

    def logged_in(request: Request) -> str:
        author = server.session_author(request)
        if author is None:
            raise HTTPException(401, "log in first (/login)")
        return author

    async def me(request: Request) -> Response:
        author = logged_in(request)
        versions = list(reversed(server.db.versions(author)))
        active = {version.name for version in server.db.active()}
        return server.render(
            request,
            "me.html",
            author=author,
            versions=versions,
            active=active,
            settings=server.settings,
            message=None,
        )

    async def me_upload(request: Request) -> Response:
        author = logged_in(request)
        declared = request.headers.get("content-length", "")
        if not declared.isdigit() or int(declared) > server.limits.max_upload_bytes + 65536:
            return error_json(413, server.too_big())
        async with request.form(max_files=1, max_fields=5, max_part_size=65536) as form:
            server.check_csrf(request, form.get("csrf"))
            upload = form.get("file")
            if not isinstance(upload, UploadFile):
                return error_json(400, "choose a file to upload")
            data = await upload.read(server.limits.max_upload_bytes + 1)
            filename = upload.filename or "bot"
            bot, command = form.get("bot"), form.get("command") or None
        try:
            bot = server.admit(author, bot)
            with server.charged(author):
                version = await run_in_threadpool(
                    server.store_data, author, bot, command, data, filename
                )
        except UploadError as error:
            versions = list(reversed(server.db.versions(author)))
            return server.render(
                request,
                "me.html",
                status=error.status,
                author=author,
                versions=versions,
                active={v.name for v in server.db.active()},
                settings=server.settings,
                message=str(error),
            )
        return RedirectResponse(f"/me/uploads/{version.id}", status_code=303)

    async def me_version(request: Request) -> Response:
        author = logged_in(request)
        version = own_version(request, author)
        left_out = server.left_out().get(version.name)
        return server.render(request, "report.html", version=version, left_out=left_out)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if request.url.path.startswith("/api/"):
            return JSONResponse(
                {"error": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers
            )
        return server.render(
            request,
            "error.html",
            status=exc.status_code,
            headers=exc.headers,
            message=str(exc.detail),
        )

    routes = [
        Route("/", index),
        Route("/index.html", index),
        Route("/games.html", games_page),
        Route("/bots/{slug}", bot_page),
        Route("/leaderboard.json", api_leaderboard),
        Route("/leaderboard.csv", leaderboard_csv_file),
        Route("/leaderboard.md", leaderboard_md_file),
        Route("/api/leaderboard", api_leaderboard),
        Route("/api/bots/{name:path}", api_bot),
        Route("/api/games", api_games),
        Route("/api/commitment", api_commitment),
        Route("/api/uploads", api_upload, methods=["POST"]),
        Route("/api/uploads", api_uploads, methods=["GET"]),
        Route("/api/uploads/{id}", api_upload_status),
        Route("/login", login_page, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/me", me),
        Route("/me/upload", me_upload, methods=["POST"]),
        Route("/me/uploads/{id}", me_version),
        *final_routes(server),
        *unrated_routes(server),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    return Starlette(
        routes=routes,
        middleware=[Middleware(SecurityHeaders)],
        exception_handlers={HTTPException: http_error},
    )
