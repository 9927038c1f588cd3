"""Every way a bot can fail a decision: the closed set of fault statuses and one fault.

They live in the core because the one referee loop (:mod:`ohseven.core.table`) records them,
whoever drives the seats: the referee's bot processes, ``check-bot`` or the SDK's local games.
``ohseven.referee.records`` re-exports both.
"""

from __future__ import annotations

import enum

import attrs

__all__ = ["Fault", "FaultStatus"]


class FaultStatus(enum.StrEnum):
    """Every way a bot can fail a decision or a game: a closed set."""

    TIMEOUT = "timeout"  # no reply within the decision's time
    CRASH = "crash"  # the process died or closed its connection
    ILLEGAL = "illegal"  # a well-formed decision the rules forbid
    MALFORMED = "malformed"  # not msgpack, or not the shape of a reply
    PROTOCOL = "protocol"  # a valid message that is wrong for the moment (wrong id, bad hello)
    NO_START = "no_start"  # the process did not start or did not say hello in time
    DROPPED = "dropped"  # dropped from the match after too many faults; fallback plays for it
    LIMIT = "limit"  # killed for exceeding a resource limit (the limit is named in the detail)
    #: the bot's own code failed (raised, or answered illegally) and the bot (its SDK) played
    #: a legal substitute, saying so in its move; informational: the move stands
    BOT_ERROR = "bot_error"


@attrs.frozen
class Fault:
    """One fault of the bot in ``seat`` during a game.

    ``move`` is the number, counted from 1, of the decision the fault cost the seat in the
    game's moves (``replay FILE --at MOVE`` asks it again): the fallback's move, or the
    substitute its SDK played; None for a fault outside a decision (a crash between requests,
    a failed start). ``round`` and ``trick`` (from 1; ``trick`` None outside the play) say
    where that decision was.
    """

    seat: int
    status: FaultStatus
    detail: str = ""  # a short explanation for the bot's author, never parsed
    move: int | None = None
    round: int | None = None
    trick: int | None = None
