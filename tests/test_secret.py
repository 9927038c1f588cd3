"""The tournament secret: one-way derivation, a private file that is never replaced, warnings
for seeds short enough to search."""

from __future__ import annotations

from pathlib import Path

import pytest
from ohseven.referee.secret import (
    SAFE_SEED_BITS,
    SECRET_NAME,
    SecretError,
    create_secret,
    derive_seed,
    fingerprint,
    load_secret,
    random_seed,
    secret_from_seed,
    short_seed_warning,
)


class TestDerivation:
    def test_stable_and_distinct(self) -> None:
        """The same secret and parts give the same 63-bit seed; other parts or secrets differ."""
        seed = derive_seed(b"k" * 32, "deal", 3)
        assert seed == derive_seed(b"k" * 32, "deal", 3) and 0 <= seed < 1 << 63
        assert seed != derive_seed(b"k" * 32, "deal", 4)
        assert seed != derive_seed(b"j" * 32, "deal", 3)

    def test_a_pinned_value(self) -> None:
        """HMAC-SHA256 of the parts joined by '/', its first 8 bytes shifted to 63 bits."""
        import hashlib
        import hmac

        expected = int.from_bytes(hmac.digest(b"s", b"a/1", hashlib.sha256)[:8], "big") >> 1
        assert derive_seed(b"s", "a", 1) == expected

    def test_fingerprint_does_not_name_the_secret(self) -> None:
        """The fingerprint kept in the database tells secrets apart and does not contain them."""
        one, two = secret_from_seed(1), secret_from_seed(2)
        assert fingerprint(one) != fingerprint(two)
        assert one.hex() not in fingerprint(one)


class TestSecretFile:
    def test_created_private_and_read_back(self, tmp_path: Path) -> None:
        """A new secret is 32 random bytes in a 0600 file that load_secret reads back."""
        secret = create_secret(tmp_path)
        assert len(secret) == 32 and (tmp_path / SECRET_NAME).stat().st_mode & 0o777 == 0o600
        assert load_secret(tmp_path) == secret

    def test_never_replaced(self, tmp_path: Path) -> None:
        """Creating a secret where one exists fails and keeps the old one."""
        secret = create_secret(tmp_path)
        with pytest.raises(SecretError, match="already exists"):
            create_secret(tmp_path)
        assert load_secret(tmp_path) == secret

    def test_missing_and_damaged(self, tmp_path: Path) -> None:
        """No file: None; a damaged one: SecretError naming the file."""
        assert load_secret(tmp_path) is None
        (tmp_path / SECRET_NAME).write_text("not hex\n")
        with pytest.raises(SecretError, match="damaged"):
            load_secret(tmp_path)


class TestSeeds:
    def test_random_seeds_are_long_and_fresh(self) -> None:
        """A drawn seed has the safe length and two draws differ."""
        assert random_seed().bit_length() == SAFE_SEED_BITS
        assert random_seed() != random_seed()
        assert short_seed_warning(random_seed()) is None

    @pytest.mark.parametrize("seed", [0, 7, 99_999, 2**64])
    def test_short_seeds_are_warned_about(self, seed: int) -> None:
        """A seed under 128 bits gets a warning that says it must stay secret."""
        warning = short_seed_warning(seed)
        assert warning is not None and "secret" in warning and str(seed) in warning
