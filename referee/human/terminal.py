"""The terminal front end of a person's seat: the position drawn with rich, answers typed.

Each decision prints what happened since the last one (the log), then the position: trump,
bids, the trick so far, tricks taken, the score sheet and the hand by suit, then a prompt. An
answer that is not legal is explained and asked again; ``?`` lists the legal moves, numbered
from 1; ``quit`` (or the end of input) leaves the table (:class:`~.seat.SeatLeft`). Every name
a bot chose is printed as text, never as markup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ohseven.core.names import OH_HELL, OH_SEVEN
from ohseven.core.values import WireMove
from ohseven.referee.human.seat import (
    DISPLAY_SUITS,
    SUIT_NAMES,
    SUIT_SYMBOLS,
    AnswerError,
    SeatLeft,
    Turn,
    parse_answer,
    position,
)
from ohseven.referee.terminal import console as terminal_console
from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = ["TerminalFront", "card_text", "HELP"]

_STYLE = {"S": "bold", "H": "bold red", "D": "bold blue", "C": "bold green"}
HELP = (
    "Answer with a card (7H, 10h, 7\u2665), a bid, the cards of a pass (3H 5S), or the number "
    "of a move in the legal list (2 or #2; in Oh Hell bidding a bare number is the bid). "
    "? lists the legal moves, quit leaves (the game so far is saved with --replays)."
)
_PROMPT = {"pass": "cards to pass", "bid": "your bid", "play": "your card"}


def card_text(card: str, trump: str | None = None) -> Text:
    """``card`` in its suit's colour (underlined when it is a trump)."""
    style = _STYLE.get(card[1:2], "bold")
    if trump is not None and card[1:2] == trump:
        style += " underline"
    return Text(card, style=style)


def _cards(cards: Sequence[str], trump: str | None) -> Text:
    text = Text()
    for i, card in enumerate(cards):
        if i:
            text.append(" ")
        text.append_text(card_text(card, trump))
    return text


def _yours(name: str) -> str:
    return name if name == "you" else f"{name} (you)"


def _cards_each(size: int) -> str:
    return f"{size} card{'' if size == 1 else 's'} each"


class TerminalFront:
    """Draws each turn on ``console`` and reads answers with ``read`` (default: the console's
    input, which raises ``EOFError`` at the end of input)."""

    def __init__(self, console: Console | None = None, read: Callable[[str], str] | None = None):
        self.console = console or terminal_console()
        self.read = read or self.console.input
        self.shown = 0  # log lines already printed
        self.game = -1

    def _news(self, turn: Turn) -> None:
        if turn.game != self.game:
            self.game, self.shown = turn.game, 0
        new = min(len(turn.log), turn.logged - self.shown)
        for line in turn.log[len(turn.log) - new :]:
            self.console.print(Text("  " + line, style="dim"))
        self.shown = turn.logged

    def draw(self, turn: Turn) -> None:
        """The log since the last turn, then the position."""
        self._news(turn)
        state = position(turn)
        names, seat, trump = state["names"], state["seat"], state["trump"]
        you = [_yours(name) if s == seat else name for s, name in enumerate(names)]
        heading = (
            f"Game {state['game_number']}/{state['games']} \u00b7 {state['game']} \u00b7 round "
            f"{state['round']}/{state['rounds']} \u00b7 {_cards_each(state['hand_size'])}"
        )
        self.console.rule(Text(heading))
        line = Text("Trump: ")
        if trump:
            line.append(f"{SUIT_SYMBOLS[trump]} {SUIT_NAMES[trump]}", style=_STYLE[trump])
            if state["trump_card"]:
                line.append(f" (turned up {state['trump_card']})")
        else:
            oh_seven = state["game"] == OH_SEVEN
            line.append("not chosen yet (the top bid sets it)" if oh_seven else "none")
        if state["dealer"] is not None:
            line.append(f"   dealer: {you[state['dealer']]}")
        self.console.print(line)
        grid = Table(box=None, show_header=True, pad_edge=False, padding=(0, 2, 0, 0))
        grid.add_column("")
        for name in you:
            grid.add_column(Text(name), justify="right")
        bids = ["?" if b is None else str(b) for b in state["bids"]]
        grid.add_row("bid", *bids)
        grid.add_row("tricks", *(str(t) for t in state["tricks_won"]))
        grid.add_row("score", *(str(t) for t in state["scores"]))
        self.console.print(grid)
        for attempt in state["attempts"]:
            row = Text("Bid cards: ")
            for s, card in enumerate(attempt["cards"]):
                row.append(f"{you[s]} ")
                row.append_text(card_text(card))
                row.append("  ")
            if attempt["forced"]:
                row.append("(re-bid forced)", style="red")
            self.console.print(row)
        if state["sheet"]:
            sheet = Table(title="Score sheet (bid/tricks points)", title_justify="left")
            sheet.add_column("round", justify="right")
            for name in you:
                sheet.add_column(Text(name), justify="right")
            for row in state["sheet"]:
                cells = []
                for s in range(len(names)):
                    cell = f"{row['bids'][s]}/{row['tricks'][s]} {row['points'][s]:+d}"
                    if s < len(row["bonus"]) and row["bonus"][s]:
                        cell += f" +{row['bonus'][s]}"
                    cells.append(cell)
                sheet.add_row(str(row["round"] + 1), *cells)
            sheet.add_row("total", *(str(t) for t in state["scores"]), style="bold")
            self.console.print(sheet)
        if state["last_trick"] is not None and not state["trick"]:
            last = state["last_trick"]
            self.console.print(
                Text("Last trick: ").append_text(_cards(last["cards"], trump))
                + Text(f" won by {you[last['winner']]}")
            )
        trick = Text("Trick: ")
        if state["trick"]:
            for s, card in state["trick"]:
                trick.append(f"{you[s]} ")
                trick.append_text(card_text(card, trump))
                trick.append("  ")
        else:
            trick.append("(empty)", style="dim")
        self.console.print(trick)
        hand = Text("Your hand: ")
        for suit in DISPLAY_SUITS:
            cards = state["hand_by_suit"][suit]
            hand.append(f" {SUIT_SYMBOLS[suit]} ", style=_STYLE[suit])
            hand.append_text(_cards(cards, trump) if cards else Text("-", style="dim"))
        self.console.print(hand)

    def _legal(self, turn: Turn) -> None:
        request = turn.request
        assert request is not None
        if request.kind == "bid" and turn.view.game == OH_HELL:  # a number is the bid itself
            self.console.print(Text("Legal bids: " + " ".join(map(str, request.legal))))
            return
        text = Text("Legal: ")
        for i, move in enumerate(request.legal, 1):
            text.append(f"{i}) ")
            text.append_text(
                card_text(move, turn.view.trump) if isinstance(move, str) else Text(str(move))
            )
            text.append("  ")
        if request.kind == "pass":
            text.append(f"(choose {request.count})")
        self.console.print(text)

    def ask(self, turn: Turn) -> WireMove:
        request = turn.request
        assert request is not None
        self.draw(turn)
        self._legal(turn)
        word = _PROMPT.get(request.kind, "your move")
        if request.kind == "bid" and turn.view.game == OH_SEVEN:
            word = "your bid card (its rank is your bid)"
        prompt = f"{word} (? for help)> "
        while True:
            try:
                answer = self.read(prompt)
            except EOFError:
                self.console.print()
                raise SeatLeft("end of input") from None
            text = answer.strip()
            if text in ("?", "help", "h"):
                self.console.print(HELP, style="dim")
                self._legal(turn)
                continue
            if text.lower() in ("quit", "exit", "q"):
                raise SeatLeft("quit")
            try:
                return parse_answer(text, request.kind, request.legal, request.count, turn.view)
            except AnswerError as error:
                self.console.print(Text(f"Not that: {error}", style="red"))

    def show(self, turn: Turn) -> None:
        self._news(turn)
        if turn.view.game_over is not None:
            self.draw(turn)
