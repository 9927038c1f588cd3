"""The bot's view: folding hand-built event lists, as the referee sends them."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.core.cards import OH_HELL_DECK, OH_SEVEN_DECK
from ohseven.core.feed import EventFeed
from ohseven.core.names import OH_HELL, OH_SEVEN, SUITS
from ohseven.core.precomputed import trick_keys
from ohseven.core.rules import Phase, new_game
from ohseven.referee.play.connection import MoveCodec
from ohseven.sdk.view import View, ViewError, card_key, deck_names, rank, suit


def game_event(game="oh-seven", players=3, seat=1, **rules):
    return {
        "type": "game",
        "index": 0,
        "game": game,
        "players": players,
        "seat": seat,
        "rounds": 7,
        "rules": rules,
    }


def oh_seven_view(players=3, seat=1, hand=("0C", "3C", "6D", "1H", "4H", "2S", "7S"), **rules):
    view = View()
    view.apply_all(
        [
            game_event("oh-seven", players, seat, **rules),
            {"type": "round", "round": 0, "deal": 0, "hand_size": 7},
            {"type": "deal", "hand": list(hand)},
        ]
    )
    return view


class TestCards:
    def test_ranks_of_both_decks(self):
        """Digits are their value, T..A are 10..14, and the suit is the last letter."""
        assert [rank(c) for c in ("0C", "7S", "2H", "9D", "TH", "JH", "QH", "KH", "AH")] == [
            0,
            7,
            2,
            9,
            10,
            11,
            12,
            13,
            14,
        ]
        assert suit("TH") == "H"

    def test_deck_names(self):
        """Oh-Seven has 32 cards, twice with 5+ players; Oh Hell has 52."""
        assert len(deck_names("oh-seven", 4)) == 32
        assert len(deck_names("oh-seven", 5)) == 64
        assert len(set(deck_names("oh-hell", 3))) == 52

    def test_card_key_sorts_by_suit_then_rank(self):
        """Clubs < Diamonds < Hearts < Spades, then by rank."""
        assert sorted(["AS", "2S", "KC", "TD"], key=card_key) == ["KC", "TD", "2S", "AS"]


class TestOhSeven:
    def test_game_and_deal(self):
        """The game event sets the table; the deal sets the hand; phase is bid."""
        view = oh_seven_view()
        assert (view.game, view.players, view.seat, view.rounds) == ("oh-seven", 3, 1, 7)
        assert view.hand == ["0C", "3C", "6D", "1H", "4H", "2S", "7S"]
        assert view.phase == "bid" and view.bids == [None, None, None]
        assert view.hand_count(0) == 7

    def test_forced_rebid_keeps_bonus_and_used_cards(self):
        """A forced attempt scores its bonus, records the used card and sets no bids."""
        view = oh_seven_view()
        view.apply(
            {
                "type": "bids",
                "attempt": 1,
                "cards": ["4D", "2S", "1H"],
                "top": [0],
                "sum": 7,
                "forced": "sum_seven",
                "bonus": [0],
            }
        )
        assert view.scores == [1, 0, 0]
        assert view.used_bids == ["2S"]
        assert view.bids == [None, None, None]
        assert view.known(0) == ["4D"] and view.known(2) == ["1H"]

    def test_bids_trump_and_tricks(self):
        """Accepted bids, trump and leader, plays, voids and the trick's winner."""
        view = oh_seven_view()
        view.apply_all(
            [
                {
                    "type": "bids",
                    "attempt": 1,
                    "cards": ["4D", "2S", "3H"],
                    "top": [0],
                    "sum": 9,
                    "forced": None,
                    "bonus": [],
                },
                {"type": "trump", "suit": "D", "leader": 0},
                {"type": "play", "seat": 0, "card": "4D"},
            ]
        )
        assert view.bids == [4, 2, 3] and view.trump == "D" and view.phase == "play"
        assert view.winning() == (0, "4D")
        assert view.beats("6D", "4D") and not view.beats("7S", "4D")
        view.apply_all(
            [
                {"type": "play", "seat": 1, "card": "6D"},
                {"type": "play", "seat": 2, "card": "5C"},
                {"type": "trick", "leader": 0, "cards": ["4D", "6D", "5C"], "winner": 1},
            ]
        )
        assert view.tricks_won == [0, 1, 0]
        assert view.leader == 1 and view.trick == []
        assert view.voids[2] == {"D"} and view.voids[0] == set()
        assert "6D" not in view.hand and view.hand_count(2) == 6
        assert view.seen == ["4D", "6D", "5C"]
        assert view.known(0) == [] and view.known(2) == ["3H"]  # 4D was played
        assert view.need() == 1

    def test_unseen_cards(self):
        """Unseen: the deck less own hand and cards played."""
        view = oh_seven_view()
        view.apply({"type": "play", "seat": 0, "card": "5C"})
        unseen = view.unseen_cards()
        assert len(unseen) == 32 - 7 - 1
        assert "5C" not in unseen and "0C" not in unseen

    def test_two_decks_unseen_keeps_second_copy(self):
        """With two decks, a card in hand still has its other copy unseen."""
        view = oh_seven_view(players=5)
        assert view.unseen_cards().count("0C") == 1
        assert view.unseen_cards().count("5C") == 2

    def test_pass_moves_cards(self):
        """Passing removes the given cards; receiving adds; the receiver is known to hold them."""
        view = oh_seven_view(passing=True)
        view.apply_all(
            [
                {"type": "passed", "receiver": 2, "cards": ["0C"]},
                {"type": "received", "giver": 0, "cards": ["5S"]},
            ]
        )
        assert "0C" not in view.hand and "5S" in view.hand and len(view.hand) == 7
        assert view.known(2) == ["0C"]
        assert (view.passed, view.received) == (["0C"], ["5S"])

    def test_round_resets_but_keeps_scores(self):
        """A new round (or redeal) clears the round's state and keeps the totals."""
        view = oh_seven_view()
        view.apply(
            {
                "type": "bids",
                "attempt": 1,
                "cards": ["4D", "2S", "1H"],
                "top": [0],
                "sum": 7,
                "forced": "sum_seven",
                "bonus": [0],
            }
        )
        view.apply_all(
            [
                {"type": "redeal", "round": 0},
                {"type": "round", "round": 0, "deal": 1, "hand_size": 7},
            ]
        )
        assert view.deal == 1 and view.used_bids == [] and view.scores == [1, 0, 0]
        assert view.known(0) == []

    def test_score_and_game_over(self):
        """Score events set the totals; game_over ends the game."""
        view = oh_seven_view()
        view.apply(
            {
                "type": "score",
                "round": 0,
                "bids": [1, 2, 3],
                "tricks": [1, 2, 4],
                "points": [3, 4, -1],
                "bonus": [0, 0, 0],
                "totals": [3, 4, -1],
            }
        )
        assert view.scores == [3, 4, -1] and view.last_score["points"] == [3, 4, -1]
        view.apply({"type": "game_over", "totals": [3, 4, -1], "ranks": [2, 1, 3]})
        assert view.phase == "over" and view.game_over["ranks"] == [2, 1, 3]


class TestOhHell:
    def start(self, **rules):
        view = View()
        view.apply_all(
            [
                game_event("oh-hell", 4, 2, **rules),
                {
                    "type": "round",
                    "round": 2,
                    "hand_size": 3,
                    "dealer": 3,
                    "trump_card": "9H",
                    "trump": "H",
                },
                {"type": "deal", "hand": ["AS", "2C", "TH"]},
            ]
        )
        return view

    def test_round_sets_trump_dealer_and_leader(self):
        """Oh Hell's round event gives trump, trump card, dealer; the leader is left of it."""
        view = self.start()
        assert (view.trump, view.trump_card, view.dealer, view.leader) == ("H", "9H", 3, 0)
        assert view.hand == ["2C", "TH", "AS"]
        assert "9H" not in view.unseen_cards() and len(view.unseen_cards()) == 52 - 3 - 1

    def test_sequential_bids(self):
        """Bids arrive one by one; play starts when all are known."""
        view = self.start()
        view.apply_all([{"type": "bid", "seat": s, "bid": b} for s, b in [(0, 1), (1, 0)]])
        assert view.bids == [1, 0, None, None] and view.phase == "bid"
        view.apply_all([{"type": "bid", "seat": s, "bid": b} for s, b in [(2, 2), (3, 1)]])
        assert view.phase == "play"

    def test_simultaneous_bids(self):
        """A bids event with one bid per seat."""
        view = self.start(simultaneous_bids=True)
        view.apply({"type": "bids", "bids": [0, 1, 2, 3]})
        assert view.bids == [0, 1, 2, 3]

    def test_must_trump_void_implies_no_trump(self):
        """Under must_trump, a seat that neither follows nor trumps has no trump either."""
        view = self.start(must_trump=True)
        view.apply_all(
            [
                {"type": "play", "seat": 0, "card": "5D"},
                {"type": "play", "seat": 1, "card": "7C"},
            ]
        )
        assert view.voids[1] == {"D", "H"}


class TestErrors:
    def test_unknown_event(self):
        """An unknown event type is a ViewError naming it."""
        view = oh_seven_view()
        with pytest.raises(ViewError, match="'bogus'"):
            view.apply({"type": "bogus"})

    def test_event_before_game(self):
        """Events before the game event are rejected."""
        with pytest.raises(ViewError, match="before the game"):
            View().apply({"type": "deal", "hand": []})


def _snapshot(view):
    """Everything the view knows (reading it folds what is queued)."""
    view.fold()
    return {k: v for k, v in vars(view).items() if k != "_queue"}


def _decisions(game_name, players, seed, seat, options):
    """``seat``'s part of a random game as the referee sends it: (events, request) pairs."""
    engine = new_game(game_name, players, seed, options)
    codec = MoveCodec(engine)
    prefix = game_event(game_name, players, seat, **engine.rules.as_dict())
    prefix["rounds"] = engine.rounds
    feed = EventFeed(engine, seat, prefix=[prefix])
    rng = random.Random(seed)
    out = []
    while engine.phase is not Phase.OVER:
        for actor in engine.to_act:
            legal, count = codec.legal_to_wire(actor)
            if actor == seat:
                kind = engine.phase.value
                out.append((feed.take(), {"kind": kind, "legal": legal, "count": count}))
            if count:
                engine.push(actor, tuple(rng.sample(engine.hands[actor], count)))
            else:
                engine.push(actor, rng.choice(list(engine.legal_moves(actor))))
            break
    out.append((feed.take(), None))
    return out


class TestLazyFolding:
    @pytest.mark.parametrize(
        ("game", "players", "options"),
        [
            ("oh-seven", 4, None),
            ("oh-seven", 5, {"passing": True}),
            ("oh-hell", 3, None),
            ("oh-hell", 4, {"simultaneous_bids": True}),
        ],
    )
    def test_deferred_view_equals_eager_view(self, game, players, options):
        """Queued events and requests fold to exactly the eager view, at every decision."""
        eager, lazy = View(), View()
        for events, request in _decisions(game, players, 7, 1, options):
            eager.apply_all(events)
            lazy.defer(events)
            if request is not None:
                eager.set_request(request)
                lazy.set_request(request)
                assert lazy.legal == request["legal"]  # the request is readable unfolded
                assert type(lazy) is not View  # ... and did not fold the events
            assert _snapshot(lazy) == _snapshot(eager)
            assert type(lazy) is View

    def test_phase_follows_queued_events_then_request(self):
        """A request's kind sets the phase after the events queued before it are folded."""
        view = View()
        view.defer([game_event(), {"type": "round", "round": 0, "deal": 0, "hand_size": 7}])
        view.set_request({"kind": "pass", "legal": ["0C"], "count": 1})
        assert view.phase == "pass"
        view.defer([{"type": "round", "round": 1, "deal": 0, "hand_size": 6}])
        assert view.phase == "bid"  # the round event came after the request

    def test_any_read_folds(self):
        """Reading any attribute the events decide folds the queue first."""
        view = View()
        view.defer([game_event(seat=2)])
        assert view.seat == 2
        view.defer([{"type": "round", "round": 0, "deal": 0, "hand_size": 7}])
        assert view.hand_count(2) == 0 and view.round == 0

    def test_queue_is_bounded(self):
        """A bot that never reads the view does not grow the queue without end."""
        view = View()
        view.defer([game_event()])
        for _ in range(5000):
            view.defer([{"type": "round", "round": 0, "deal": 0, "hand_size": 7}])
            assert len(view._queue) <= 1025
        assert view.round == 0

    def test_finished_games_are_dropped_unfolded(self, monkeypatch):
        """Past the bound, queued games before the last game event are dropped, not folded."""
        import ohseven.sdk.view as view_module

        monkeypatch.setattr(view_module, "_MAX_QUEUED", 500)  # a game is 338 items here
        eager, lazy = View(), View()
        for seed in range(3):
            for events, request in _decisions("oh-seven", 4, seed, 2, None):
                events = [{**e, "index": seed} if e["type"] == "game" else e for e in events]
                eager.apply_all(events)
                lazy.defer(events)
                if request is not None:
                    eager.set_request(request)
                    View.set_request(lazy, request)
        queued = lazy._queue
        assert 0 < len(queued) <= 501 and type(lazy) is not View  # never folded
        assert queued[0]["type"] == "game" and queued[0]["index"] == 2  # the last game only
        assert _snapshot(lazy) == _snapshot(eager)

    def test_errors_surface_on_read(self):
        """An unknown event is reported by the read that folds it."""
        view = View()
        view.defer([game_event(), {"type": "nonsense"}])
        with pytest.raises(ViewError, match="nonsense"):
            _ = view.hand


@settings(max_examples=300, deadline=None)
@given(game=st.sampled_from([OH_SEVEN, OH_HELL]), data=st.data())
def test_the_trick_winner_is_the_cores_rule(game, data):
    """``View.winning`` and ``View.beats`` (card names) take the trick as the engine's tables
    (``core.precomputed.trick_keys``, ints) do, two decks' identical cards included."""
    deck = OH_SEVEN_DECK if game == OH_SEVEN else OH_HELL_DECK
    cards = data.draw(st.lists(st.integers(0, deck.size - 1), min_size=1, max_size=9))
    trump = data.draw(st.none() | st.integers(0, 3))
    view = View()
    view.trick = [(seat, deck.names[card]) for seat, card in enumerate(cards)]
    view.trump = None if trump is None else SUITS[trump]
    keys = trick_keys(deck, trump, cards[0] // deck.ranks)
    first = max(range(len(cards)), key=lambda i: keys[cards[i]])  # the first of the strongest
    assert view.winning() == (first, deck.names[cards[first]])
    best = cards[first]
    for card in range(deck.size):
        assert view.beats(deck.names[card], deck.names[best]) == (keys[card] > keys[best])
