"""The tournament secret, and every seed derived from it.

Every deal of a tournament, every fallback move and every bot's ``OHSEVEN_SEED`` follows from
one secret through HMAC-SHA256, so that knowing one derived value (a bot's own seed, a finished
game's seed) tells nothing about another, and nothing but the secret gives the deals away.

By default the secret is 32 random bytes drawn when the tournament's database is created and
kept beside it in ``secret.key``, readable by the referee's user alone; a resume reads it back,
so the same tournament replays the same deals however often it is stopped. An organiser who
sets ``seed:`` gets the secret from that number instead (reproducible from the configuration
alone, and then only as secret as the number: :func:`short_seed_warning`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
from pathlib import Path

from ohseven.core.seeds import derive_seed

__all__ = [
    "SECRET_NAME",
    "SECRET_BYTES",
    "SecretError",
    "derive_seed",
    "secret_from_seed",
    "fingerprint",
    "load_secret",
    "create_secret",
    "random_seed",
    "short_seed_warning",
]

SECRET_NAME = "secret.key"
SECRET_BYTES = 32
#: below this many bits, a seed can be found by search (or guessed): the organiser is warned
SAFE_SEED_BITS = 128


class SecretError(OSError):
    """The secret file is missing, damaged or cannot be written."""


def secret_from_seed(seed: int) -> bytes:
    """The secret of an organiser's (or a command line's) explicit ``seed``."""
    return f"ohseven-seed:{seed}".encode()


def fingerprint(secret: bytes) -> str:
    """A short value that tells secrets apart without revealing them (kept in the database)."""
    return hmac.digest(secret, b"ohseven-fingerprint", hashlib.sha256).hex()[:32]


def random_seed() -> int:
    """A fresh seed of :data:`SAFE_SEED_BITS` bits, for runs given no seed."""
    return secrets.randbits(SAFE_SEED_BITS) | (1 << (SAFE_SEED_BITS - 1))


def short_seed_warning(seed: int, where: str = "seed") -> str | None:
    """A warning for an explicit seed short enough to be searched for, else None."""
    bits = seed.bit_length()
    if bits >= SAFE_SEED_BITS:
        return None
    return (
        f"warning: `{where}` {seed} has {bits} bit{'s' * (bits != 1)}: whoever learns or guesses "
        "it knows every deal (a bot can search small seeds from its first hand); keep it secret "
        f"and make it at least {SAFE_SEED_BITS} bits, or leave it out to use a random secret"
    )


def load_secret(directory: str | os.PathLike[str]) -> bytes | None:
    """The secret kept in ``directory``, or None when there is none."""
    path = Path(directory) / SECRET_NAME
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        text = ""  # binary: damaged, said below
    except OSError as error:
        raise SecretError(f"cannot read the tournament secret {path}: {error.strerror}") from None
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) < SAFE_SEED_BITS // 8:
        raise SecretError(
            f"the tournament secret {path} is damaged (not {SECRET_BYTES} bytes written in hex): "
            "restore it from a copy to resume, or start over with --fresh"
        )
    return secret


def create_secret(directory: str | os.PathLike[str]) -> bytes:
    """Draw a new secret and keep it in ``directory`` (mode 0600, never overwriting one)."""
    path = Path(directory) / SECRET_NAME
    secret = secrets.token_bytes(SECRET_BYTES)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        raise SecretError(f"{path} already exists; it is not replaced") from None
    except OSError as error:
        raise SecretError(f"cannot write the tournament secret {path}: {error}") from None
    try:
        os.write(fd, secret.hex().encode() + b"\n")
        os.fsync(fd)
    except OSError as error:
        os.close(fd)
        with contextlib.suppress(OSError):
            path.unlink()
        raise SecretError(f"cannot write the tournament secret {path}: {error}") from None
    os.close(fd)
    return secret
