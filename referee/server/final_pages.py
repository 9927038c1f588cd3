"""What the server shows of the final (``ohseven-referee final``, ``server.final``): its
standings at ``/final`` and ``/api/final``, read from the final's own ``leaderboard.json``
(apart from the league's), and the revealed secret once the final is complete."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ohseven.referee.results.board import LEADERBOARD_NAME
from ohseven.referee.results.leaderboard import public_refusals
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

__all__ = ["FINAL_NAME", "REVEAL_NAME", "final_board", "revealed", "final_routes"]

#: the final's folder in the league's output
FINAL_NAME = "final"
#: the revealed secret, beside the final's results
REVEAL_NAME = "reveal.json"


def _json(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def final_board(output: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The final's leaderboard (``OUTPUT/final/leaderboard.json``) as the public reads it (a bot
    left out with its status only, not its reason), or None before it."""
    board = _json(Path(output) / FINAL_NAME / LEADERBOARD_NAME)
    if board is not None and isinstance(board.get("refused"), list):
        board["refused"] = public_refusals(board["refused"])
    return board


def revealed(output: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The revealed secret (``OUTPUT/final/reveal.json``), or None before the reveal."""
    return _json(Path(output) / FINAL_NAME / REVEAL_NAME)


def final_routes(server: Any) -> list[Route]:
    """``/final`` and ``/api/final`` of ``server`` (an ``app.Server``)."""

    def state() -> dict[str, Any]:
        began = server.db.final_state()
        return {
            "began": None if began is None else began.get("began"),
            "bots": None if began is None else began.get("bots"),
            "complete": bool(began and began.get("done")),
            "leaderboard": final_board(server.output),
            "revealed": revealed(server.output),
        }

    async def api_final(request: Request) -> Response:
        return JSONResponse(state())

    async def final_page(request: Request) -> Response:
        return server.render(request, "final.html", final=state(), commitment=server.commitment)

    return [Route("/api/final", api_final), Route("/final", final_page)]
