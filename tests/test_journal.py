"""The game's journal (core/journal.py): ``moves`` and ``events`` built when first read."""

from __future__ import annotations

import random

import pytest
from game_helpers import HELL, ch, configs, seeds
from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.core.rules import OhHellGame, Rules, new_game, position_game


class TestJournal:
    """``moves`` and ``events`` are built when first read: reading never changes what they hold."""

    @settings(max_examples=60, deadline=None)
    @given(config=configs, seed=seeds, reads=st.lists(st.integers(0, 400), max_size=6))
    def test_reading_any_time_gives_the_same_log(self, config, seed, reads):
        """Moves and events read during the game, or only at its end, are the same lists."""
        game, players, options = config
        read, unread = (new_game(game, players, seed, options) for _ in range(2))
        rng, held, step = random.Random(seed), None, 0
        while not read.is_over:
            if step in reads:
                # either list read first builds both
                assert isinstance(read.moves if step % 2 else read.events, list)
                held = held or (read.moves, read.events)
            for seat in read.to_act:
                move = rng.choice(list(read.legal_moves(seat)))
                read.push(seat, move)
                unread.push(seat, move)
            step += 1
        assert read.moves == unread.moves
        assert read.events == unread.events
        if held is not None:
            assert held[0] is read.moves and held[1] is read.events

    @pytest.mark.parametrize("read_first", [False, True])
    def test_position_logs_only_plays_after_it(self, read_first):
        """A position's trick in progress was played before it: only later plays are logged."""
        rules = Rules.make("oh-hell")
        game = position_game(
            rules,
            3,
            hands=[ch("2C 3C"), ch("4C"), ch("5C")],
            trump=None,
            leader=1,
            trick=ch("6C 7C"),
            bids=[1, 1, 0],
            tricks_won=[0, 0, 0],
        )
        if read_first:
            assert game.events == [] and game.moves == []
        game.push(0, ch("2C")[0])
        assert game.moves == [(0, "play", ch("2C")[0])]
        assert [e["type"] for e in game.events] == ["play", "trick"]
        assert game.events[1]["cards"] == ["6C", "7C", "2C"]

    @settings(max_examples=30, deadline=None)
    @given(players=st.integers(3, 7), seed=seeds)
    def test_deal_is_the_standard_shuffle(self, players, seed):
        """The deal is ``random.Random(seed)``'s ``randrange`` then ``shuffle``, state included."""
        game = OhHellGame(players, seed)
        rng = random.Random(seed)
        dealer = rng.randrange(players)
        deck = list(range(HELL.size))
        rng.shuffle(deck)
        first, k = (dealer + 1) % players, 1  # the first hand of hand_order "up" is one card
        assert game.dealer == dealer
        assert game.hands == [
            sorted(deck[(s - first) % players : k * players : players]) for s in range(players)
        ]
        assert game.rng.getstate() == rng.getstate()
