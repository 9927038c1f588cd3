"""No leaks: a seat is never told a card it may not know.

Spy bots (``tests/bots/hostile_bot.py record DIR``) play real matches through ``play_match``
and write down every message they receive. The replays (which hold every event, private ones
included) are then walked through an independent model of what each seat may know at each
moment: its own hand as dealt, the cards passed to it, the bid cards revealed, the cards
played, the turned-up Oh Hell trump card, counting copies with two decks. Every card named in
every message to a seat must be covered by that model at the moment its event happened, every
``legal`` list must be cards of the seat's own hand, and the stream of events a seat received
must be exactly the public events and its own private ones, in order.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from ohseven.core.rules import Rules
from ohseven.referee.play.match import play_match
from ohseven.referee.records import BotSpec, MatchSpec, TimeControl
from ohseven.referee.replay import load_replay
from ohseven.referee.sandbox.settings import SandboxConfig

pytestmark = pytest.mark.slow  # real processes: not in the quick loop (-m 'not slow')

SPY = os.path.join(os.path.dirname(__file__), "bots", "hostile_bot.py")
CLOCK = TimeControl(move_seconds=2.0, bank_seconds=5.0, start_seconds=10.0)
CARD_FIELDS = ("hand", "cards", "card", "trump_card")

TABLES = [("oh-seven", players, {"passing": passing}) for passing in (False, True)
          for players in range(2, 10)] + [
    ("oh-hell", players, options)
    for options in ({}, {"simultaneous_bids": True, "must_trump": True})
    for players in range(3, 8)
]  # fmt: skip


def spy_match(
    request, tmp_path, game: str, players: int, options: dict
) -> tuple[dict, list[dict], str]:
    """Two games of spies: the spec, the replays and the directory of the spies' files."""
    # a root referee runs unsandboxed bots as a dedicated uid: they need a directory that uid
    # can reach (tmp_path's parents are private to us)
    spies = tempfile.mkdtemp(prefix="ohseven-spies-")
    os.chmod(spies, 0o777)
    request.addfinalizer(lambda: shutil.rmtree(spies, ignore_errors=True))
    replays = tmp_path / "replays"
    replays.mkdir()
    spec = MatchSpec(
        match_id=f"leaks-{game}-{players}",
        rules=Rules.make(game, options),
        bots=tuple(
            BotSpec(f"spy{b}", (sys.executable, SPY, "record", str(spies))) for b in range(players)
        ),
        seatings=tuple(tuple((s + g) % players for s in range(players)) for g in range(2)),
        seeds=(players * 1000 + 17, players * 1000 + 18),
        time_control=CLOCK,
        fallback_seed=1,
    )
    result = play_match(spec, sandbox=SandboxConfig(mode="unsandboxed"), replay_dir=str(replays))
    assert all(record.faults == () for record in result.games), result.games
    return spec, [load_replay(record.replay_path) for record in result.games], spies


def received(spies: str, name: str) -> list[dict]:
    with open(os.path.join(spies, f"{name}.jsonl")) as lines:
        return [json.loads(line) for line in lines]


def per_game(messages: list[dict]) -> Iterator[tuple[int, int, list[dict], list[Any]]]:
    """(game index, seat, the events it received, the legal lists) for each game in turn."""
    current: tuple[int, int] | None = None
    events: list[dict] = []
    legal: list[tuple[int, list[Any]]] = []
    for message in messages:
        for event in message.get("events", ()):
            if event["type"] == "game":
                if current is not None:
                    yield (*current, events, legal)
                current, events, legal = (event["index"], event["seat"]), [], []
            else:
                events.append(event)
        if message["type"] == "request":
            legal.append((len(events), message["legal"]))
    if current is not None:
        yield (*current, events, legal)


class Knowledge:
    """What one seat may know, event by event, from the full event log of the game."""

    def __init__(self, seat: int, players: int) -> None:
        self.seat = seat
        self.players = players
        self.new_deal()

    def new_deal(self) -> None:
        self.holdings = [Counter() for _ in range(self.players)]  # dealt + received, per seat
        self.bid_shown = [Counter() for _ in range(self.players)]
        self.played = [Counter() for _ in range(self.players)]
        self.public = Counter()  # the turned-up trump card

    def apply(self, event: dict) -> None:
        kind, to = event["type"], event.get("to")
        if kind == "round":
            self.new_deal()
            if event.get("trump_card"):
                self.public[event["trump_card"]] += 1
        elif kind == "deal":
            self.holdings[to].update(event["hand"])
        elif kind == "received":
            self.holdings[to].update(event["cards"])
        elif kind == "bids" and "cards" in event:
            for seat, card in enumerate(event["cards"]):
                self.bid_shown[seat][card] += 1
        elif kind == "play":
            self.played[event["seat"]][event["card"]] += 1

    def allowed(self) -> Counter:
        """The most copies of each card the seat may know of now."""
        known = Counter(self.holdings[self.seat]) + self.public
        for other in range(self.players):
            if other != self.seat:
                shown = self.bid_shown[other] + self.played[other]
                known += shown & self.holdings[other]  # never more than it could have shown
        return known


def named(event: dict) -> Counter:
    """The cards an event names: for each card, the most copies any one field names."""
    most = Counter()
    for field in CARD_FIELDS:
        value = event.get(field)
        if isinstance(value, str):
            most |= Counter([value])
        elif isinstance(value, list):
            most |= Counter(c for c in value if isinstance(c, str))
    return most


def check_seat(replay: dict, seat: int, events: list[dict], legal: list) -> int:
    """Check one seat's messages of one game against the replay; the cards checked."""
    knowledge = Knowledge(seat, replay["players"])
    expected = []
    allowed_after = []
    for event in replay["events"]:
        knowledge.apply(event)
        if event.get("to") in (None, seat):
            expected.append({k: v for k, v in event.items() if k != "to"})
            allowed_after.append(knowledge.allowed())
    assert events == expected[: len(events)], f"seat {seat}: events differ from its own feed"
    assert len(events) == len(expected), f"seat {seat}: {len(expected) - len(events)} missing"
    checked = 0
    for index, event in enumerate(events):
        leak = named(event) - allowed_after[index]
        assert not leak, f"seat {seat}, event {index} {event}: leaks {dict(leak)}"
        checked += sum(named(event).values())
    for cursor, cards in legal:
        hand = allowed_after[cursor - 1] if cursor else Counter()
        names = Counter(c for c in cards if isinstance(c, str))
        assert not names - hand, f"seat {seat}: legal {cards} beyond what it may know"
        checked += sum(names.values())
    return checked


class TestNoLeaks:
    @pytest.mark.parametrize(
        ("game", "players", "options"),
        TABLES,
        ids=[f"{g}-{n}-{'+'.join(k for k, v in o.items() if v) or 'plain'}" for g, n, o in TABLES],
    )
    def test_every_message_is_knowable(self, request, tmp_path, game, players, options):
        """Every card in every message to every seat is one that seat may know then."""
        spec, replays, spies = spy_match(request, tmp_path, game, players, options)
        checked = 0
        for bot in spec.bots:
            games = list(per_game(received(spies, bot.name)))
            assert [g for g, _, _, _ in games] == [0, 1]
            for index, seat, events, legal in games:
                assert replays[index]["seats"][seat] == bot.name
                checked += check_seat(replays[index], seat, events, legal)
        assert checked > 100 * players


class TestTheCheckItself:
    def test_a_leak_is_caught(self, request, tmp_path):
        """The model refuses another seat's hand: the check above can fail."""
        spec, replays, spies = spy_match(request, tmp_path, "oh-seven", 3, {})
        replay = replays[0]
        index, seat, events, legal = next(per_game(received(spies, spec.bots[0].name)))
        other = next(e for e in replay["events"] if e["type"] == "deal" and e["to"] != seat)
        spiked = [dict(e) for e in events]
        deal = next(e for e in spiked if e["type"] == "deal")
        deal["hand"] = other["hand"]
        leaked = {k: v for k, v in other.items() if k != "to"}
        with pytest.raises(AssertionError, match="differ|leaks"):
            check_seat(replay, seat, spiked, legal)
        knowledge = Knowledge(seat, replay["players"])
        for event in replay["events"][: replay["events"].index(other) + 1]:
            knowledge.apply(event)
        assert named(leaked) - knowledge.allowed()
