"""Every seed derived during a match, in one place: the referee, ``check-bot`` and the SDK's
local games draw them here.

:func:`derive_seed` is the one-way derivation of a tournament's values from its secret (see
``ohseven.referee.secret``). Within a match, from its ``fallback_seed`` and id: each bot
process's ``OHSEVEN_SEED`` (:func:`bot_seed`), the jump of the request ids before a new process
(:func:`id_jump`) and the generator of the random legal moves played for a seat that faulted
(:func:`fallback_rng`). The values are those of earlier releases: a resumed tournament replays
the same games.
"""

from __future__ import annotations

import hashlib
import hmac
import random

__all__ = ["derive_seed", "bot_seed", "id_jump", "fallback_rng", "driver_seed"]


def derive_seed(secret: bytes, *parts: object) -> int:
    """A 63-bit seed: HMAC-SHA256 of ``parts`` under ``secret`` (one-way, stable everywhere)."""
    message = "/".join(str(part) for part in parts).encode()
    return int.from_bytes(hmac.digest(secret, message, hashlib.sha256)[:8], "big") >> 1


def _sha(text: str, size: int) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:size], "big")


def bot_seed(fallback_seed: int, match_id: str, bot: int, launch: int) -> int:
    """``OHSEVEN_SEED`` of the ``launch``-th process (from 1) of bot ``bot`` of a match: the
    same match replays the same games; 32 bits, one-way from the match's values."""
    return _sha(f"{fallback_seed}:{match_id}:bot:{bot}:{launch}", 4)


def id_jump(fallback_seed: int, match_id: str, bot: int, launch: int) -> int:
    """How far the request ids jump before the ``launch``-th process of bot ``bot``: 2**24 plus
    an offset below 2**24 unknown to the bots, so that its first id says next to nothing about
    how many requests came before, a count its predecessor could have steered (rebids) to pass
    on what it saw; small enough for a match's ids to stay far from 64 bits."""
    return (1 << 24) + _sha(f"{fallback_seed}:{match_id}:ids:{bot}:{launch}", 3)


def fallback_rng(key: object, seat: int) -> random.Random:
    """The generator of the fallback moves of ``seat`` in the game ``key`` names (a match's
    ``"{fallback_seed}:{game index}"``)."""
    return random.Random(f"{key}:{seat}")


def driver_seed(seed: int, seat: int) -> int:
    """The seed of the SDK runner's own generator (its substitute moves) for ``seat`` of a
    local game of ``seed``."""
    return seed * 1000 + seat
