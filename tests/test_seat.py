"""A person's seat (referee.human.seat): reading answers, the link on the referee's loop, and
the picture of a position the front ends draw. Whole games are played on the one loop
(core.table.Table) with every seat a :class:`HumanLink` whose front types its answers."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.core.feed import EventFeed, game_event
from ohseven.core.names import OH_HELL, OH_SEVEN
from ohseven.core.rules import Rules, new_game
from ohseven.core.table import RandomFallback, Table
from ohseven.referee.human.seat import (
    AnswerError,
    HumanLink,
    SeatLeft,
    Turn,
    describe_event,
    parse_answer,
    position,
)
from ohseven.sdk.view import View

SUIT_SYMBOL = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}


def view_of(events: list[dict[str, Any]]) -> View:
    view = View()
    view.apply_all(events)
    return view


def hell_view(hand: list[str], trick: list[tuple[int, str]] = (), **rules: Any) -> View:
    events: list[dict[str, Any]] = [
        {"type": "game", "index": 0, "game": OH_HELL, "players": 3, "seat": 0, "rounds": 3,
         "rules": rules},
        {"type": "round", "round": 1, "hand_size": len(hand), "dealer": 2, "trump": "S",
         "trump_card": "2S"},
        {"type": "deal", "hand": hand},
    ]  # fmt: skip
    events += [{"type": "play", "seat": s, "card": c} for s, c in trick]
    return view_of(events)


class TestParseAnswer:
    def test_a_card_in_any_spelling(self):
        legal = ["TH", "7H", "AS"]
        for text in ("TH", "th", "10h", "10H", "T\u2665", " th "):
            assert parse_answer(text, "play", legal, 0) == "TH"
        assert parse_answer("7\u2665", "play", legal, 0) == "7H"

    def test_a_number_of_the_legal_list_counts_from_one(self):
        legal = ["2C", "7H", "AS"]
        assert parse_answer("1", "play", legal, 0) == "2C"
        assert parse_answer("#3", "play", legal, 0) == "AS"
        with pytest.raises(AnswerError, match="1 to 3"):
            parse_answer("4", "play", legal, 0)
        with pytest.raises(AnswerError, match="1 to 3"):
            parse_answer("0", "play", legal, 0)

    def test_an_oh_hell_bid_is_the_number_itself(self):
        view = hell_view(["2C", "7H", "AS"])
        assert parse_answer("2", "bid", [0, 1, 2, 3], 0, view) == 2
        assert parse_answer("0", "bid", [0, 1, 2, 3], 0, view) == 0
        assert parse_answer("#2", "bid", [0, 1, 2, 3], 0, view) == 1  # the list's second
        with pytest.raises(AnswerError, match="cannot bid 2 now: you may bid 0, 1, 3"):
            parse_answer("2", "bid", [0, 1, 3], 0, view)
        with pytest.raises(AnswerError, match="number of tricks"):
            parse_answer("AS", "bid", [0, 1, 2, 3], 0, view)

    def test_an_illegal_card_is_explained(self):
        view = hell_view(["2C", "7H", "AS"], trick=[(1, "9H")])
        with pytest.raises(AnswerError, match="must follow suit: hearts"):
            parse_answer("AS", "play", ["7H"], 0, view)
        with pytest.raises(AnswerError, match="KD is not in your hand; legal: 7H"):
            parse_answer("KD", "play", ["7H"], 0, view)
        view = hell_view(["2C", "AS"], trick=[(1, "9H")], must_trump=True)
        with pytest.raises(AnswerError, match="must play a trump"):
            parse_answer("2C", "play", ["AS"], 0, view)

    def test_an_oh_seven_bid_card_used_before_is_explained(self):
        view = view_of([
            {"type": "game", "index": 0, "game": OH_SEVEN, "players": 2, "seat": 0, "rounds": 7,
             "rules": {}},
            {"type": "round", "round": 0, "deal": 0, "hand_size": 3},
            {"type": "deal", "hand": ["3H", "7S", "4C"]},
            {"type": "bids", "attempt": 1, "cards": ["3H", "4D"], "top": [1], "sum": 7,
             "forced": "sum_seven", "bonus": [1]},
        ])  # fmt: skip
        with pytest.raises(AnswerError, match="already one of your bids"):
            parse_answer("3H", "bid", ["7S", "4C"], 0, view)
        assert parse_answer("7s", "bid", ["7S", "4C"], 0, view) == "7S"

    def test_a_pass_names_exactly_count_cards(self):
        hand = ["3H", "7S", "4C", "4C"]
        assert parse_answer("3h 7s", "pass", hand, 2) == ["3H", "7S"]
        assert parse_answer("1, 4", "pass", hand, 2) == ["3H", "4C"]
        assert parse_answer("4C 4C", "pass", hand, 2) == ["4C", "4C"]
        with pytest.raises(AnswerError, match="exactly 2 cards, not 1"):
            parse_answer("3H", "pass", hand, 2)
        with pytest.raises(AnswerError, match="only 1 time"):
            parse_answer("3H 3H", "pass", hand, 2)
        with pytest.raises(AnswerError, match="5D is not in your hand"):
            parse_answer("3H 5D", "pass", hand, 2)

    @pytest.mark.parametrize("text", ["", "   ", "zz", "7", "#x", "7H 3S", "1 2"])
    def test_nonsense_is_refused_with_a_reason(self, text):
        with pytest.raises(AnswerError) as caught:
            parse_answer(text, "play", ["3H", "7S"], 0)
        assert str(caught.value)

    @settings(max_examples=300, deadline=None)
    @given(st.text(max_size=12), st.sampled_from(["play", "bid"]))
    def test_any_text_gives_a_legal_move_or_an_answer_error(self, text, kind):
        legal = ["2C", "7H", "AS"] if kind == "play" else [0, 1, 3]
        view = hell_view(["2C", "7H", "AS"])
        try:
            move = parse_answer(text, kind, legal, 0, view)
        except AnswerError:
            return
        assert move in legal


class ScriptedFront:
    """Answers every decision in a random spelling of a random legal move, checking on the way
    that the spelling reads back as that move and that a move it does not allow is refused."""

    def __init__(self, rng: random.Random, table: list[Table]):
        self.rng = rng
        self.table = table
        self.asked = 0
        self.shown: list[Turn] = []

    def spell(self, move: Any, legal: list[Any], game: str, kind: str) -> str:
        rng = self.rng
        number = legal.index(move) + 1
        if isinstance(move, int):  # an Oh Hell bid: the number itself, or #N of the list
            return str(move) if rng.random() < 0.5 else f"#{number}"
        if rng.random() < 0.3:
            return f"#{number}" if rng.random() < 0.5 else str(number)
        text = move.lower() if rng.random() < 0.5 else move
        if rng.random() < 0.3:
            text = text[:-1] + SUIT_SYMBOL[move[1]]
        if move[0] == "T" and rng.random() < 0.5:
            text = "10" + text[1:]
        return text

    def ask(self, turn: Turn) -> Any:
        self.asked += 1
        request = turn.request
        assert request is not None
        view = turn.view
        game = self.table[0].game
        state = position(turn)
        json.dumps(state)  # plain data, as the web page gets it
        hand = sorted(game.card_name(c) for c in game.hands[view.seat])
        assert sorted(view.hand) == hand  # the seat knows its hand, from its events alone
        assert state["decision"]["legal"] == list(request.legal)
        if request.kind == "pass":
            cards = self.rng.sample(list(request.legal), request.count)
            typed = " ".join(cards)
            assert parse_answer(typed, "pass", request.legal, request.count, view) == cards
            return cards
        move = self.rng.choice(list(request.legal))
        text = self.spell(move, list(request.legal), view.game or "", request.kind)
        assert parse_answer(text, request.kind, request.legal, 0, view) == move, text
        others = [c for c in game.deck.names if c not in request.legal]
        if request.kind != "bid" or view.game == OH_SEVEN:
            with pytest.raises(AnswerError):
                parse_answer(self.rng.choice(others), request.kind, request.legal, 0, view)
        return move

    def show(self, turn: Turn) -> None:
        self.shown.append(turn)


GAMES = [
    (OH_SEVEN, 2, ()),
    (OH_SEVEN, 3, ("passing=true",)),
    (OH_SEVEN, 5, ("passing=true",)),
    (OH_HELL, 3, ("max_hand=3",)),
    (OH_HELL, 4, ("max_hand=2", "hook=true", "must_trump=true")),
    (OH_HELL, 3, ("max_hand=2", "simultaneous_bids=true", "hand_order=down")),
]


class TestHumanLink:
    @settings(max_examples=12, deadline=None)
    @given(st.integers(0, 2**32), st.sampled_from(GAMES))
    def test_a_table_of_people_plays_the_engine_s_game(self, seed, setup):
        """Every seat a person: each sees its own hand, reads its typed answers back as the
        moves meant, and the game they play is the engine's game of those moves."""
        name, players, options = setup
        game = new_game(Rules.make(name, options), players, seed)
        tables: list[Table] = []
        fronts = [ScriptedFront(random.Random(seed + s), tables) for s in range(players)]
        names = [f"p{s}" for s in range(players)]
        links = [HumanLink(fronts[s], names) for s in range(players)]
        table = Table(game, links, fallback=RandomFallback(0))
        tables.append(table)
        table.run()
        table.finish()
        assert game.is_over and not table.faults
        assert sum(front.asked for front in fronts) == len(game.moves)
        replayed = new_game(Rules.make(name, options), players, seed)
        for seat, _kind, move in game.moves:
            replayed.push(seat, move)
        assert replayed.result() == game.result()
        for s, front in enumerate(fronts):
            last = front.shown[-1]
            assert last.view.game_over is not None
            assert last.view.scores == list(game.result().totals)
            assert last.log[-1].startswith("Game over:")
            assert position(last)["decision"] is None
            assert sum(1 for kind in game.moves if kind[0] == s) == front.asked

    def test_a_person_who_leaves_stops_the_game(self):
        class Leaver:
            def ask(self, turn: Turn) -> Any:
                raise SeatLeft("quit")

            def show(self, turn: Turn) -> None:
                raise AssertionError("no end to show")

        game = new_game(Rules.make(OH_HELL, ["max_hand=1"]), 3, 1)
        links = [HumanLink(Leaver(), ["a", "b", "c"]) for _ in range(3)]
        with pytest.raises(SeatLeft):
            Table(game, links).run()
        assert not game.moves


class TestPicture:
    def test_every_event_of_a_game_is_told_from_the_seat(self):
        game = new_game(Rules.make(OH_SEVEN, ["passing=true"]), 3, 5)
        rng = random.Random(5)
        while not game.is_over:
            for seat in game.to_act:
                game.push(seat, rng.choice(list(game.legal_moves(seat))))
        names = ["ann", "bob", "cy"]
        events = EventFeed(game, 1, prefix=[game_event(game, 0, 1)]).take()
        lines = [describe_event(event, names, 1) for event in events]
        told = {event["type"] for event, line in zip(events, lines, strict=True) if line}
        assert told >= {"game", "round", "bids", "trump", "play", "trick", "score", "game_over"}
        assert all("bob" not in line for line in lines if line)  # seat 1 is "you"
        assert any(line.startswith("you play") for line in lines if line)

    def test_a_name_cannot_smuggle_terminal_escapes(self):
        link = HumanLink(ScriptedFront(random.Random(0), []), ["evil\x1b[2J\x07", "random#2"])
        assert link.names == ("evil\\x1b[2J\\x07", "random#2")

    def test_the_picture_is_the_seat_s_knowledge(self):
        view = hell_view(["2C", "7H", "AS"], trick=[(1, "9H")])
        turn = Turn(view, ("you", "b", "c"), ("x",), 1, 0, 1, None)
        state = position(turn)
        assert state["hand"] == ["AS", "7H", "2C"]  # strongest suit first
        assert state["hand_by_suit"] == {"S": ["AS"], "H": ["7H"], "D": [], "C": ["2C"]}
        assert state["trick"] == [[1, "9H"]]
        assert state["trump"] == "S" and state["trump_card"] == "2S"
        assert state["round"] == 2 and state["decision"] is None
