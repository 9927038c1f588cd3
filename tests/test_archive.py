"""The archive of a played tournament: the names it gives bots and games (slugs, game ids)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from ohseven.referee.results.archive import game_id, slugify, unique_slugs


class TestNames:
    @given(st.text(max_size=30))
    def test_slug_is_safe_for_file_names(self, name: str) -> None:
        """A slug is non-empty and uses only lowercase letters, digits, dot, dash, underscore."""
        slug = slugify(name)
        assert slug and all(c in "abcdefghijklmnopqrstuvwxyz0123456789._-" for c in slug)

    @given(st.lists(st.text(max_size=8), max_size=12))
    def test_unique_slugs_are_distinct(self, names: list[str]) -> None:
        """Names that slug alike still get distinct slugs."""
        slugs = unique_slugs(names)
        assert set(slugs) == set(names)
        assert len(set(slugs.values())) == len(slugs)

    def test_game_id_is_url_safe(self) -> None:
        """A game id names the match and the game index without URL-unsafe characters."""
        assert game_id("R1 t/2", 3) == "r1-t-2-g3"
