"""The headers of every response: security headers, no caching of private pages, and the
removal of a stale or forged session cookie."""

from __future__ import annotations

from typing import Any

__all__ = ["SESSION_COOKIE", "SECURITY_HEADERS", "SecurityHeaders"]

SESSION_COOKIE = "ohseven_session"
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; form-action 'self'",
}


class SecurityHeaders:
    """Adds the security headers to every response (a plain ASGI middleware: request bodies
    stream through untouched); private pages are never cached."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        private = scope["path"].startswith(
            ("/me", "/api/uploads", "/api/unrated", "/login", "/api/bots")
        )

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {key.lower() for key, _ in headers}
                for key, value in SECURITY_HEADERS.items():
                    if key.lower().encode() not in present:
                        headers.append((key.lower().encode(), value.encode()))
                if private:
                    headers.append((b"cache-control", b"no-store"))
                sets = any(
                    key.lower() == b"set-cookie" and value.startswith(SESSION_COOKIE.encode())
                    for key, value in headers
                )
                if scope.get("state", {}).get("bad_session") and not sets:  # stale or forged
                    headers.append(
                        (
                            b"set-cookie",
                            f"{SESSION_COOKIE}=; Max-Age=0; Path=/; HttpOnly; "
                            "SameSite=strict".encode(),
                        )
                    )
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, sending)
