"""``ohseven.core.feed``: what each seat is told, and the event that opens a game."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.core.feed import EventFeed, game_event
from ohseven.core.rules import new_game


class TestEventFeed:
    @settings(max_examples=20, deadline=None)
    @given(st.integers(2, 9), st.integers(0, 2**32), st.booleans())
    def test_each_seat_sees_its_share(self, players, seed, passing):
        """Each seat gets every public event and only its own private ones, in order, once."""
        game = new_game("oh-seven", players, seed, {"passing": passing})
        feeds = [EventFeed(game, s) for s in range(players)]
        seen: list[list[dict]] = [[] for _ in range(players)]
        rng = random.Random(seed)
        while not game.is_over:
            seat = rng.choice(range(players))
            seen[seat].extend(feeds[seat].take())
            for actor in game.to_act:
                game.push(actor, rng.choice(list(game.legal_moves(actor))))
                break
        for seat in range(players):
            seen[seat].extend(feeds[seat].take())
            expected = [
                {k: v for k, v in e.items() if k != "to"}
                for e in game.events
                if e.get("to", seat) == seat
            ]
            assert seen[seat] == expected
            assert all("to" not in e for e in seen[seat])
            assert feeds[seat].take() == []

    def test_prefix_first(self):
        """The prefix events come before the game's own events."""
        game = new_game("oh-hell", 3, 2)
        feed = EventFeed(game, 1, prefix=[{"type": "game", "seat": 1}])
        events = feed.take()
        assert events[0] == {"type": "game", "seat": 1}
        assert events[1]["type"] == "round"

    def test_game_event_names_the_table(self):
        """The opening event names the game, its rules, the table size, the seat and rounds."""
        game = new_game("oh-hell", 4, 1, ["hand_order=down"])
        event = game_event(game, 3, 2)
        assert event == {
            "type": "game",
            "index": 3,
            "game": "oh-hell",
            "rules": game.rules.as_dict(),
            "players": 4,
            "seat": 2,
            "rounds": game.rounds,
        }
