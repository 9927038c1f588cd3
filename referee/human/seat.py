"""A person's seat: the link that asks a person, the reading of answers, the picture drawn.

:class:`HumanLink` is a synchronous :class:`~ohseven.core.table.Link`: the table asks it only
when no bot owes a decision, so no bot's clock runs while the person thinks, and the person has
no clock. It folds its seat's events into the SDK's :class:`~ohseven.sdk.view.View` (the person
sees exactly what a bot in that seat is sent, no more), describes them in words for the log,
and hands a :class:`Turn` to its :class:`Front` (the terminal or the web page), which returns
the answer. :func:`parse_answer` reads a typed answer: a card (``7H``, ``10h``, ``7♥``), an
Oh Hell bid (``2``), the cards of a pass (``3H 5S``), or numbers of the legal list (``2``,
``#2``; counted from 1; in Oh Hell bidding a bare number is the bid itself). :func:`position`
is the plain-data picture of a turn that both front ends draw.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import attrs
from ohseven.core.names import OH_HELL, OH_SEVEN, RANKS, SUITS
from ohseven.core.table import LinkBase, Request, Table, request_message
from ohseven.core.values import Event, WireChoice, WireMove
from ohseven.core.wire import move_from_wire
from ohseven.referee.terminal import printable
from ohseven.sdk.view import View, card_key

__all__ = [
    "AnswerError",
    "SeatLeft",
    "Front",
    "Turn",
    "HumanLink",
    "parse_answer",
    "describe_event",
    "position",
    "SUIT_SYMBOLS",
    "SUIT_NAMES",
    "DISPLAY_SUITS",
]

SUIT_SYMBOLS = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}
SUIT_NAMES = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
#: the order a hand is shown in: Spades, Hearts, Diamonds, Clubs (strongest first)
DISPLAY_SUITS = "SHDC"
#: how many lines of the log a turn carries
LOG_LINES = 40
_WORDS = {"pass": "the cards to pass", "bid": "your bid", "play": "your card"}


class AnswerError(ValueError):
    """An answer that is not a legal move now; the message says why, and what is legal."""


class SeatLeft(Exception):
    """The person left the table (end of input, ``quit``, the page's Leave button)."""


@attrs.frozen
class Turn:
    """What a front end shows: the seat's view, the players' names, the last lines of the log
    (``logged``: lines written in this game so far), which game of how many, and the decision
    asked (``request`` None: nothing is asked, e.g. the end)."""

    view: View
    names: tuple[str, ...]
    log: tuple[str, ...]
    logged: int
    game: int
    games: int
    request: Request | None = None


class Front(Protocol):
    """A way to show a person the game and read their answers."""

    def ask(self, turn: Turn) -> WireMove:
        """The person's legal move (wire form) for ``turn.request``; raises :class:`SeatLeft`
        when they leave."""

    def show(self, turn: Turn) -> None:
        """The seat's news with no decision asked (the end of a game)."""


# --------------------------------------------------------------------------- answers

_SYMBOL_SUIT = {symbol: suit for suit, symbol in SUIT_SYMBOLS.items()}
_TOKEN = re.compile(r"[\s,;]+")
_NUMBER = re.compile(r"#?[0-9]{1,6}")  # ASCII digits only: "²".isdigit() holds


def _card_of(token: str, game: str) -> str | None:
    """``token`` as a card name of ``game`` (``10h`` -> ``TH``, ``7♥`` -> ``7H``), else None."""
    text = token.strip().upper()
    if text and text[-1] in _SYMBOL_SUIT:
        text = text[:-1] + _SYMBOL_SUIT[text[-1]]
    if text.startswith("10") and game == OH_HELL:
        text = "T" + text[2:]
    if len(text) == 2 and text[0] in RANKS[game] and text[1] in SUITS:
        return text
    return None


def _numbered(token: str, legal: Sequence[Any]) -> Any:
    """Item ``#N``/``N`` of ``legal`` (counted from 1), else raise."""
    if not _NUMBER.fullmatch(token):
        raise AnswerError(f"{token!r} is neither a card nor a number of the legal list")
    number = int(token.lstrip("#"))
    if not 1 <= number <= len(legal):
        raise AnswerError(f"there is no move number {number}: the legal list has 1 to {len(legal)}")
    return legal[number - 1]


def _why_not(card: str, view: View, kind: str) -> str:
    """Why ``card`` (a card of the game) is not a legal ``kind`` now."""
    hand = view.hand
    if card not in hand:
        return f"{card} is not in your hand"
    if kind == "bid":
        if card in view.used_bids:
            return f"{card} was already one of your bids in this deal: bid with another card"
        return f"{card} cannot be your bid now"
    led = view.led_suit
    if led is not None and card[1] != led and any(c[1] == led for c in hand):
        return f"you must follow suit: {SUIT_NAMES[led]} ({led}) was led and you hold some"
    trump = view.trump
    if trump is not None and card[1] != trump and view.rules.get("must_trump"):
        return f"you cannot follow suit, so you must play a trump ({SUIT_NAMES[trump]})"
    return f"{card} cannot be played now"


def _legal_text(legal: Sequence[Any]) -> str:
    return ", ".join(str(move) for move in legal)


def parse_answer(
    text: str, kind: str, legal: Sequence[WireChoice], count: int, view: View | None = None
) -> WireMove:
    """The legal move (wire form) that ``text`` names, for a request of ``kind`` with
    ``legal`` and ``count``; raises :class:`AnswerError` saying why not.

    ``view`` (the seat's) tells the game and explains an illegal card; without it the game is
    read from the legal list (Oh Hell cards have letter ranks or ranks above 7)."""
    game = view.game if view is not None and view.game else _guess_game(legal)
    tokens = [t for t in _TOKEN.split(text.strip()) if t]
    if not tokens:
        raise AnswerError(f"type {_WORDS.get(kind, 'your move')}, or ? for the legal moves")
    if kind == "pass":
        return _parse_pass(tokens, legal, count, game, view)
    if len(tokens) != 1:
        raise AnswerError(f"one {'bid' if kind == 'bid' else 'card'} please, not {len(tokens)}")
    token = tokens[0]
    if kind == "bid" and game == OH_HELL and not token.startswith("#"):
        if not _NUMBER.fullmatch(token):
            raise AnswerError(f"a bid is a number of tricks: one of {_legal_text(legal)}")
        bid = int(token)
        if bid not in legal:
            raise AnswerError(f"you cannot bid {bid} now: you may bid {_legal_text(legal)}")
        return bid
    card = _card_of(token, game)
    if card is None:
        return _numbered(token, legal)
    if card in legal:
        return card
    why = _why_not(card, view, kind) if view is not None else f"{card} is not legal now"
    raise AnswerError(f"{why}; legal: {_legal_text(legal)}")


def _parse_pass(
    tokens: Sequence[str], legal: Sequence[Any], count: int, game: str, view: View | None
) -> list[str]:
    if len(tokens) != count:
        many = f"{count} card{'s' if count != 1 else ''}"
        raise AnswerError(f"pass exactly {many}, not {len(tokens)}")
    cards = []
    for token in tokens:
        card = _card_of(token, game)
        cards.append(_numbered(token, legal) if card is None else card)
    missing = Counter(cards) - Counter(legal)
    if missing:
        card = next(iter(missing))
        if card in legal:
            raise AnswerError(f"you hold {card} only {Counter(legal)[card]} time(s)")
        raise AnswerError(f"{card} is not in your hand")
    return cards


def _guess_game(legal: Sequence[Any]) -> str:
    for move in legal:
        if isinstance(move, int) or (isinstance(move, str) and move[:1] in "89TJQKA"):
            return OH_HELL
    return OH_SEVEN


# --------------------------------------------------------------------------- the log


def describe_event(event: Mapping[str, Any], names: Sequence[str], seat: int) -> str | None:
    """One line of the log for ``event`` as seat ``seat`` saw it (None: nothing to say)."""

    def who(s: int) -> str:
        return "you" if s == seat else names[s]

    kind = event.get("type")
    if kind == "game":
        players = ", ".join(who(s) for s in range(len(names)))
        return f"Game {int(event.get('index', 0)) + 1}: {event['game']}, seats {players}"
    if kind == "round":
        size = int(event["hand_size"])
        text = f"Round {int(event['round']) + 1}: {size} card{'' if size == 1 else 's'} each"
        if event.get("deal"):
            text += f" (deal {int(event['deal']) + 1})"
        if event.get("dealer") is not None:
            text += f", {who(int(event['dealer']))} deal{'' if event['dealer'] == seat else 's'}"
        if event.get("trump_card"):
            text += f", turned up {event['trump_card']}: trump {SUIT_NAMES[event['trump']]}"
        elif "trump" in event and event.get("trump") is None:
            text += ", no trump"
        return text
    if kind == "passed":
        return f"You pass {' '.join(event['cards'])} to {who(int(event['receiver']))}"
    if kind == "received":
        return f"You receive {' '.join(event['cards'])} from {who(int(event['giver']))}"
    if kind == "bids":
        if "cards" in event:
            shown = ", ".join(f"{who(s)} {c}" for s, c in enumerate(event["cards"]))
            text = f"Bids: {shown} (sum {event['sum']})"
            if event.get("forced"):
                bonus = ", ".join(who(s) for s in event.get("bonus") or ())
                text += f": forced re-bid ({str(event['forced']).replace('_', ' ')})"
                text += f", +1 to {bonus}" if bonus else ""
            return text
        return "Bids: " + ", ".join(f"{who(s)} {b}" for s, b in enumerate(event["bids"]))
    if kind == "redeal":
        return "Seven forced re-bids: the round is dealt again"
    if kind == "bid":
        return f"{who(int(event['seat']))} bid{'' if event['seat'] == seat else 's'} {event['bid']}"
    if kind == "trump":
        return f"Trump {SUIT_NAMES[event['suit']]}; {who(int(event['leader']))} lead(s)"
    if kind == "play":
        s = int(event["seat"])
        return f"{who(s)} play{'' if s == seat else 's'} {event['card']}"
    if kind == "trick":
        s = int(event["winner"])
        return f"{who(s)} win{'' if s == seat else 's'} the trick ({' '.join(event['cards'])})"
    if kind == "score":
        parts = [f"{who(s)} {p:+d}" for s, p in enumerate(event["points"])]
        return f"Round {int(event['round']) + 1} scored: " + ", ".join(parts)
    if kind == "game_over":
        parts = [f"{who(s)} {t}" for s, t in enumerate(event["totals"])]
        return "Game over: " + ", ".join(parts)
    return None


# --------------------------------------------------------------------------- the link


class HumanLink(LinkBase):
    """The seat of a person (an in-process, synchronous link): it folds the seat's events into
    a :class:`View` (from the request message a bot would be sent), logs them in words, and
    asks ``front`` each decision; a person never faults (the front asks again until the answer
    is legal). ``names``: the players of the game by seat; ``game``/``games``: which game of
    the session this is (for the heading)."""

    __slots__ = ("front", "names", "game", "games", "view", "log", "logged")

    def __init__(self, front: Front, names: Sequence[str], game: int = 0, games: int = 1):
        self.front = front
        # a bot's name as its author chose it: no control character of it reaches a terminal
        self.names = tuple(printable(name, lines=False) for name in names)
        self.game = game
        self.games = games
        self.view = View()
        self.log: list[str] = []
        self.logged = 0

    def _fold(self, events: Sequence[Mapping[str, Any]]) -> None:
        for event in events:
            self.view.apply(event)
            line = describe_event(event, self.names, self.view.seat)
            if line is not None:
                self.log.append(line)
                self.logged += 1
        del self.log[:-LOG_LINES]

    def turn(self, request: Request | None = None) -> Turn:
        log = tuple(self.log)
        return Turn(self.view, self.names, log, self.logged, self.game, self.games, request)

    def send(self, table: Table, request: Request, events: list[Event]) -> None:
        self._fold(events)
        self.view.set_request(request_message(request, []))
        move = self.front.ask(self.turn(request))
        table.answer(request, move_from_wire(table.game, request.kind, move))

    def tell(self, events: list[Event]) -> None:
        self._fold(events)
        self.front.show(self.turn())


# --------------------------------------------------------------------------- the picture


def position(turn: Turn) -> dict[str, Any]:
    """``turn`` as plain, JSON-ready data: what both front ends draw."""
    view = turn.view
    n = view.players
    request = turn.request
    hand = sorted(view.hand, key=card_key, reverse=True)
    by_suit = {s: [c for c in hand if c[1] == s] for s in DISPLAY_SUITS}
    sheet = [
        {
            "round": int(score.get("round", i)),
            "bids": list(score.get("bids") or []),
            "tricks": list(score.get("tricks") or []),
            "points": list(score.get("points") or []),
            "bonus": list(score.get("bonus") or [0] * n),
        }
        for i, score in enumerate(view.results)
    ]
    last = view.tricks[-1] if view.tricks else None
    decision = None
    if request is not None:
        decision = {
            "id": request.id,
            "kind": request.kind,
            "legal": list(request.legal),
            "count": request.count,
        }
    return {
        "game": view.game,
        "game_number": turn.game + 1,
        "games": turn.games,
        "rules": view.rules,
        "names": list(turn.names),
        "seat": view.seat,
        "players": n,
        "round": view.round + 1,
        "rounds": view.rounds,
        "hand_size": view.hand_size,
        "deal": view.deal,
        "dealer": view.dealer,
        "trump": view.trump,
        "trump_card": view.trump_card,
        "leader": view.leader,
        "hand": hand,
        "hand_by_suit": by_suit,
        "bids": list(view.bids),
        "attempts": [
            {
                "cards": list(a["cards"]),
                "sum": a.get("sum"),
                "forced": a.get("forced"),
                "top": list(a.get("top") or []),
            }
            for a in view.bid_attempts
        ],
        "used_bids": list(view.used_bids),
        "trick": [[s, c] for s, c in view.trick],
        "last_trick": (
            None if last is None else {"leader": last[0], "cards": last[1], "winner": last[2]}
        ),
        "tricks_won": list(view.tricks_won),
        "scores": list(view.scores),
        "sheet": sheet,
        "passed": list(view.passed),
        "received": list(view.received),
        "log": list(turn.log),
        "decision": decision,
        "over": view.game_over,
    }
