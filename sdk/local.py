"""In-process games: bot objects played against each other on the referee's own loop
(``core.table``) and rules engine, no sockets, no processes, the same events and requests a
real referee sends, on its clock. It loads the engine, which a bot under the referee does not
need: ``ohseven.sdk`` imports it on first use.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..core.faults import FaultStatus
from ..core.rules import GameResult, new_game
from ..core.seeds import driver_seed
from ..core.table import (
    DEFAULT_BANK_SECONDS,
    DEFAULT_MOVE_SECONDS,
    LinkBase,
    RandomFallback,
    Request,
    Table,
    request_message,
)
from ..core.values import Event
from ..core.wire import move_from_wire
from .bot import Bot, Driver

__all__ = ["local_game", "local_match"]


def local_game(
    bots: Sequence[Bot],
    *,
    game: str = "oh-seven",
    seed: int = 0,
    options: Mapping[str, object] | Sequence[str] | None = None,
    index: int = 0,
    strict: bool = True,
    move_seconds: float = DEFAULT_MOVE_SECONDS,
    bank_seconds: float = DEFAULT_BANK_SECONDS,
    **table: Any,
) -> GameResult:
    """Play one game of ``bots`` (one per seat, in seat order) on the rules engine.

    Each bot sees exactly the events and requests the referee would send its seat, on the
    referee's clock: ``move_seconds`` a decision plus a bank of ``bank_seconds`` a game (the
    referee's default time control), overtime drawn from the bank; a local bot is never timed
    out. Returns the engine's :class:`~ohseven.core.rules.GameResult`. With ``strict`` an
    exception or an illegal answer of a bot propagates (:class:`BotAnswerError`); without it
    the runner's safety nets apply. ``table`` goes to :func:`~ohseven.core.rules.new_game`
    (e.g. ``ranks``).
    """
    engine = new_game(game, len(bots), seed, options, **table)
    links = [
        _DriverLink(Driver(bot, strict=strict, rng=random.Random(driver_seed(seed, s))))
        for s, bot in enumerate(bots)
    ]
    # the referee's loop; the fallback plays only for an answer the codec refuses (not strict)
    played = Table(
        engine,
        links,
        index=index,
        move_seconds=move_seconds,
        bank_seconds=bank_seconds,
        fallback=RandomFallback(f"local:{seed}:{index}"),
    )
    played.run()
    played.finish()
    return engine.result()


class _DriverLink(LinkBase):
    """A seat of :func:`local_game`: the bot in-process behind its :class:`Driver`, sent the
    request message the referee sends (:func:`~ohseven.core.table.request_message`), its
    answer read by the core's move codec."""

    __slots__ = ("driver",)

    def __init__(self, driver: Driver) -> None:
        self.driver = driver

    def send(self, table: Table, request: Request, events: list[Event]) -> None:
        driver = self.driver
        move = driver.decide(request_message(request, events))
        try:
            engine_move = move_from_wire(table.game, request.kind, move)
        except ValueError as error:
            table.fault(request.seat, FaultStatus.MALFORMED, str(error))
            return
        table.answer(request, engine_move, driver.last_error)

    def tell(self, events: list[Event]) -> None:
        self.driver.feed(events)


def local_match(
    bot_classes: Sequence[Callable[[], Bot]],
    *,
    games: int,
    game: str = "oh-seven",
    seed: int = 0,
    options: Mapping[str, object] | Sequence[str] | None = None,
    rotate: bool = True,
) -> list[int]:
    """Play ``games`` local games of fresh ``bot_classes`` instances; total score per class.

    With ``rotate`` the seats turn by one each game, so every bot sits everywhere.
    """
    n = len(bot_classes)
    totals = [0] * n
    bots = [cls() for cls in bot_classes]
    for g in range(games):
        shift = g % n if rotate else 0
        order = [(i + shift) % n for i in range(n)]  # seat -> bot index
        result = local_game(
            [bots[i] for i in order], game=game, seed=seed + g, options=options, index=g
        )
        for seat, i in enumerate(order):
            totals[i] += result.totals[seat]
    return totals
