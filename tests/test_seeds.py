"""Every seed a match derives, from one module: the values of earlier releases (a resumed
tournament replays the same games), and the properties the referee relies on."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from ohseven.core import seeds
from ohseven.referee import secret


class TestStableValues:
    def test_values_match_the_earlier_derivations(self):
        """Bot seeds, id jumps, fallback moves and HMAC seeds are those main derived before."""
        assert seeds.bot_seed(12345, "r1-t0007", 2, 1) == 1904917628
        assert seeds.id_jump(12345, "r1-t0007", 2, 3) == 24369315
        assert seeds.fallback_rng("12345:4", 1).random() == 0.21268788826498475
        assert seeds.derive_seed(b"ohseven-seed:7", "game", 3) == 6845040647711348657

    def test_the_secret_module_uses_the_same_derivation(self):
        """``referee.secret.derive_seed`` is the core's: one home."""
        assert secret.derive_seed is seeds.derive_seed


class TestProperties:
    @given(st.integers(0, 2**63), st.text(max_size=20), st.integers(0, 9), st.integers(1, 50))
    def test_id_jumps_stay_in_their_band(self, fallback, match_id, bot, launch):
        """A jump is at least 2**24 and below 2**25: ids stay far from 64 bits."""
        assert 1 << 24 <= seeds.id_jump(fallback, match_id, bot, launch) < 1 << 25

    @given(st.integers(0, 2**63), st.text(max_size=20), st.integers(0, 9), st.integers(1, 50))
    def test_bot_seeds_are_32_bits_and_reproducible(self, fallback, match_id, bot, launch):
        """A bot seed is 32 bits and the same for the same match, bot and process."""
        first = seeds.bot_seed(fallback, match_id, bot, launch)
        assert 0 <= first < 1 << 32
        assert first == seeds.bot_seed(fallback, match_id, bot, launch)
