"""sdk.simulate: sampled deals are consistent with the view; playouts use the real engine."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.core.rules import OH_SEVEN, Phase, new_game
from ohseven.sdk import View, evaluate_bids, evaluate_plays, playout, sample_hands
from ohseven.sdk.simulate import SampleError, _exact


def advance(game_name, players, seed, steps, seat, options=None):
    """Play ``steps`` random decisions; return the engine and ``seat``'s view of it."""
    engine = new_game(game_name, players, seed, options)
    rng = random.Random(seed)
    for _ in range(steps):
        if engine.phase is Phase.OVER:
            break
        actor = engine.to_act[0]
        engine.push(actor, rng.choice(list(engine.legal_moves(actor))))
    view = View()
    view.apply(
        {
            "type": "game",
            "index": 0,
            "game": engine.rules.game,
            "players": players,
            "seat": seat,
            "rounds": engine.rounds,
            "rules": engine.rules.as_dict(),
        }
    )
    for event in engine.events:
        if event.get("to", seat) == seat:
            view.apply({k: v for k, v in event.items() if k != "to"})
    return engine, view


tables = st.one_of(
    st.tuples(st.just("oh-seven"), st.integers(2, 9)),
    st.tuples(st.just("oh-hell"), st.integers(3, 7)),
)


def names(engine, hand):
    return Counter(engine.deck.name(c) for c in hand)


class TestSampleHands:
    @settings(max_examples=150, deadline=None)
    @given(
        table=tables,
        seed=st.integers(0, 10_000),
        steps=st.integers(0, 120),
        passing=st.booleans(),
        sample_seed=st.integers(0, 1000),
    )
    def test_consistent_with_what_is_known(self, table, seed, steps, passing, sample_seed):
        """Own hand kept, sizes right, voids respected, known cards placed, no card twice."""
        game_name, players = table
        options = {"passing": passing} if game_name == OH_SEVEN else None
        seat = seed % players
        engine, view = advance(game_name, players, seed, steps, seat, options)
        if engine.phase is Phase.OVER or engine.phase is Phase.PASS:
            return
        # the real deal is one the view must allow
        for s in range(players):
            assert view.hand_count(s) == len(engine.hands[s])
            assert not (Counter(view.known(s)) - names(engine, engine.hands[s]))
            assert all(engine.deck.name(c)[1] not in view.voids[s] for c in engine.hands[s])
        hands = sample_hands(view, random.Random(sample_seed))
        assert Counter(hands[seat]) == Counter(view.hand)
        unseen = Counter(view.unseen_cards())
        placed = Counter()
        for s in range(players):
            assert len(hands[s]) == len(engine.hands[s])
            if s == seat:
                continue
            assert all(card[1] not in view.voids[s] for card in hands[s])
            assert not (Counter(view.known(s)) - Counter(hands[s]))
            placed.update(hands[s])
        assert not (placed - unseen), "a card placed more often than it is unseen"
        hidden = sum(len(engine.hands[s]) for s in range(players) if s != seat)
        assert sum(placed.values()) == hidden

    def test_every_unseen_card_placed_when_all_are_dealt(self):
        """Oh Hell with 4 players, last hand: 52 cards dealt, every unseen card placed once."""
        engine = new_game("oh-hell", 4, 3, hand_sizes=(13,))
        engine.push(engine.to_act[0], 3)
        view = View()
        view.apply(
            {
                "type": "game",
                "index": 0,
                "game": "oh-hell",
                "players": 4,
                "seat": 0,
                "rounds": 1,
                "rules": engine.rules.as_dict(),
            }
        )
        for event in engine.events:
            if event.get("to", 0) == 0:
                view.apply({k: v for k, v in event.items() if k != "to"})
        hands = sample_hands(view, random.Random(1))
        others = Counter(c for s in (1, 2, 3) for c in hands[s])
        assert others == Counter(view.unseen_cards())
        assert sum(others.values()) == 39

    def test_tight_voids(self):
        """A seat that can only hold clubs gets only clubs; one out of clubs gets none."""
        _, view = advance("oh-seven", 3, 11, 0, 0)
        view.voids[1] = {"S", "H", "D"}
        view.voids[2] = {"C"}
        assert sum(c[1] == "C" for c in view.unseen_cards()) >= 7, "the test needs 7 clubs"
        for sample_seed in range(20):
            hands = sample_hands(view, random.Random(sample_seed))
            assert all(c[1] == "C" for c in hands[1]) and len(hands[1]) == 7
            assert all(c[1] != "C" for c in hands[2]) and len(hands[2]) == 7

    @settings(max_examples=60, deadline=None)
    @given(seed=st.integers(0, 10_000))
    def test_exact_sampler_fills_narrow_deals(self, seed):
        """The fallback sampler fills a deal where only one split of the spades works."""
        cards = ["0C", "1C", "2C", "3C", "0H", "1H", "2H", "0S", "1S", "2S", "3S"]
        voids = [set(), {"D", "H"}, {"C", "D"}]  # seat 1: clubs/spades; seat 2: hearts/spades
        deal = _exact(cards, [1, 2], [0, 6, 5], voids, random.Random(seed))
        assert len(deal[1]) == 6 and len(deal[2]) == 5
        assert all(c[1] in "CS" for c in deal[1]) and all(c[1] in "HS" for c in deal[2])
        assert Counter(deal[1] + deal[2]) == Counter(cards)

    def test_impossible_view_raises(self):
        """A view no deal can satisfy raises SampleError."""
        _, view = advance("oh-seven", 4, 5, 0, 0)
        view.voids[1] = {"C", "D", "H", "S"}
        with pytest.raises(SampleError):
            sample_hands(view, random.Random(0))


class TestPlayouts:
    def test_playout_scores_a_round(self):
        """A playout from the first play ends the round with the engine's points."""
        engine, view = advance("oh-seven", 4, 2, 0, 0)
        while engine.phase is not Phase.PLAY:
            actor = engine.to_act[0]
            engine.push(actor, engine.legal_moves(actor)[0])
        _, view = advance("oh-seven", 4, 2, len(engine.moves), engine.to_act[0])
        hands = [[engine.deck.name(c) for c in hand] for hand in engine.hands]
        points = playout(view, hands, random.Random(0))
        assert len(points) == 4
        for bid, score in zip(view.bids, points, strict=True):
            assert score == bid + 2 or score < 0

    @pytest.mark.parametrize("game_name,players", [("oh-seven", 5), ("oh-hell", 4)])
    def test_evaluations_cover_the_legal_moves(self, game_name, players):
        """evaluate_bids and evaluate_plays value every legal move."""
        engine, view = advance(game_name, players, 9, 0, 0)
        actor = engine.to_act[0]
        _, view = advance(game_name, players, 9, 0, actor)
        legal = list(engine.legal_moves(actor))
        view.set_request(
            {
                "kind": "bid",
                "legal": [engine.deck.name(c) for c in legal] if game_name == OH_SEVEN else legal,
            }
        )
        bids = evaluate_bids(view, random.Random(0), budget_s=0.05, max_samples=5)
        assert set(bids) == set(view.legal)
        while engine.phase is not Phase.PLAY:
            a = engine.to_act[0]
            engine.push(a, list(engine.legal_moves(a))[0])
        actor = engine.to_act[0]
        view = View()
        view.apply(
            {
                "type": "game",
                "index": 0,
                "game": game_name,
                "players": players,
                "seat": actor,
                "rounds": engine.rounds,
                "rules": engine.rules.as_dict(),
            }
        )
        for event in engine.events:
            if event.get("to", actor) == actor:
                view.apply({k: v for k, v in event.items() if k != "to"})
        view.set_request(
            {"kind": "play", "legal": [engine.deck.name(c) for c in engine.legal_moves(actor)]}
        )
        plays = evaluate_plays(view, random.Random(0), budget_s=0.05, max_samples=5)
        assert set(plays) == set(view.legal)
