"""The bot base class, the runner that speaks the wire protocol, and an in-process table.

A bot subclasses :class:`Bot` and overrides ``choose_pass``, ``choose_bid`` and
``choose_play`` (each defaults to a uniformly random legal move). :func:`run` connects it to
the referee (``OHSEVEN_ENDPOINT``/``OHSEVEN_SECRET``) and serves requests until ``shutdown``.
``--local`` plays it against example bots in-process (:mod:`~ohseven.sdk.local`).

Two safety nets, both reported on stderr (the referee cannot tell them apart from a normal
move):

- an exception raised by the bot's code is printed with its traceback, and a random legal
  move is sent instead;
- an answer that is not legal (a card not held, a bid out of range, a pass of the wrong size)
  is reported with the legal moves, and a random legal move is sent instead.

Sending the illegal move would only earn an ``illegal`` fault, after which the referee plays a
random legal move anyway, and enough faults get a bot dropped from the match. Pass
``strict=True`` to :func:`~ohseven.sdk.local.local_game` (or set ``OHSEVEN_STRICT=1``) to
raise instead.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import signal
import sys
import traceback
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn, SupportsIndex, SupportsInt

import msgpack
import zmq

from ..core.names import PROTOCOL_VERSION
from ..core.values import WireMove
from .view import View

__all__ = [
    "Bot",
    "Driver",
    "BotAnswerError",
    "run",
    "PROTOCOL_VERSION",
]

IDLE_SECONDS = 300.0  # no message from the referee for this long: it is gone, exit


class BotAnswerError(ValueError):
    """A bot's answer that is not one of the legal moves of its request (strict mode)."""


class Bot:
    """Base class of a bot. Override the ``choose_*`` methods; the hooks are optional.

    ``self.rng`` is a :class:`random.Random` seeded from ``seed`` (``None``: from the OS).
    """

    #: the label sent in ``hello`` (the module's ``BOT_NAME`` is a good value)
    name = "ohseven-bot"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    # -- decisions

    def choose_pass(self, view: View, count: int) -> list[str]:
        """The ``count`` cards of ``view.hand`` to pass (default: random)."""
        return self.rng.sample(view.legal, count)

    def choose_bid(self, view: View) -> str | int:
        """Oh-Seven: a card of ``view.legal``; Oh Hell: a number of tricks (default: random)."""
        bid: str | int = self.rng.choice(view.legal)
        return bid

    def choose_play(self, view: View) -> str:
        """A card of ``view.legal`` (default: random)."""
        card: str = self.rng.choice(view.legal)
        return card

    # -- hooks

    def on_game_start(self, view: View) -> None:
        """A new game starts (``view`` holds its game, rules, players and seat)."""

    def on_event(self, view: View, event: Mapping[str, Any]) -> None:
        """Any event, after the view applied it."""

    def on_trick(self, view: View, trick: Mapping[str, Any]) -> None:
        """A trick is complete."""

    def on_round_end(self, view: View, score: Mapping[str, Any]) -> None:
        """A round is scored."""

    def on_game_over(self, view: View, event: Mapping[str, Any]) -> None:
        """The game is over (``event`` has ``totals`` and ``ranks``)."""


_HOOKS = ("on_event", "on_game_start", "on_trick", "on_round_end", "on_game_over")


def _overridden(bot: Bot, name: str) -> Callable[..., Any] | None:
    """``bot``'s hook ``name``, or None when it is the base class's no-op."""
    hook: Callable[..., Any] | None = getattr(bot, name, None)
    if hook is None:
        return None
    if getattr(hook, "__func__", None) is getattr(Bot, name) and name not in vars(bot):
        return None
    return hook


def _warn(message: str) -> None:
    print(f"ohseven-sdk: {message}", file=sys.stderr, flush=True)


class Driver:
    """Feeds one bot: folds events into its view, calls its hooks, answers requests."""

    def __init__(self, bot: Bot, *, strict: bool = False, rng: random.Random | None = None):
        self.bot = bot
        self.view = View()
        self.strict = strict
        self.rng = rng or random.Random()
        self.errors = 0  # answers replaced by a random legal move
        #: why the last answer was replaced by a random legal move (sent to the referee), or None
        self.last_error: str | None = None
        # the hooks the bot overrides (the base class's are no-ops and are not called)
        self._hooks = {name: _overridden(bot, name) for name in _HOOKS}
        self._lazy = not any(self._hooks.values())

    def feed(self, events: Sequence[Mapping[str, Any]]) -> None:
        """Apply ``events`` to the view and call the bot's hooks.

        Without hooks the events are only queued: the view folds them when the bot reads it.
        """
        view = self.view
        hooks = self._hooks
        if self._lazy:
            View.defer(view, events)  # through the class, as in ``decide``
            return
        apply = view.apply
        on_event = hooks["on_event"]
        for event in events:
            apply(event)
            if on_event is not None:
                self._hook(on_event, view, event)
            kind = event["type"]
            if kind == "game":
                if hooks["on_game_start"] is not None:
                    self._hook(hooks["on_game_start"], view)
            elif kind == "trick":
                if hooks["on_trick"] is not None:
                    self._hook(hooks["on_trick"], view, event)
            elif kind == "score":
                if hooks["on_round_end"] is not None:
                    self._hook(hooks["on_round_end"], view, event)
            elif kind == "game_over" and hooks["on_game_over"] is not None:
                self._hook(hooks["on_game_over"], view, event)

    def _hook(self, hook: Callable[..., Any], *args: Any) -> None:
        try:
            hook(*args)
        except Exception:
            if self.strict:
                raise
            _warn(f"{hook.__name__} raised; ignored:\n{_traceback()}")

    def decide(self, request: Mapping[str, Any]) -> WireMove:
        """The move (wire value) answering ``request``: always legal unless strict."""
        events = request.get("events")
        view = self.view
        if events:
            if self._lazy:  # as in ``feed``, one call less on every request
                View.defer(view, events)
            else:
                self.feed(events)
        # through the class: a view with queued events would check every instance lookup
        kind, legal, count = View.set_request(view, request)
        self.last_error = None
        try:
            if kind == "pass":
                answer: Any = self.bot.choose_pass(view, count)
            elif kind == "bid":
                answer = self.bot.choose_bid(view)
            elif kind == "play":
                answer = self.bot.choose_play(view)
            else:
                raise BotAnswerError(f"unknown request kind {kind!r}")
        except BotAnswerError:
            raise
        except Exception as error:
            if self.strict:
                error.add_note(f"in choose_{kind} of this view:\n{describe(view)}")
                raise
            self.errors += 1
            trace = _traceback()
            _warn(f"choose_{kind} raised; sending a random legal move instead:\n{trace}")
            self.last_error = _error_report(
                f"choose_{kind} raised {type(error).__name__}: {error} ({where(view)})", trace
            )
            return self._random(view)
        if type(answer) is str and kind != "pass" and answer in legal:
            return answer  # a legal card: the usual answer, as ``_normalise`` would return it
        move = _normalise(kind, answer, legal, count)
        if move is None:
            message = (
                f"choose_{kind} returned {answer!r}, which is not legal "
                f"(legal: {legal}{f', count {count}' if kind == 'pass' else ''}; {where(view)})"
            )
            if self.strict:
                raise BotAnswerError(f"{message}\n{describe(view)}")
            self.errors += 1
            _warn(message + "; sending a random legal move instead")
            self.last_error = _error_report(message, "")
            return self._random(view)
        return move

    def _random(self, view: View) -> WireMove:
        move: WireMove
        if view.kind == "pass":
            move = self.rng.sample(view.legal, view.count)
        else:
            move = self.rng.choice(view.legal)
        return move


#: longest ``error`` a move message carries (the referee keeps it with the fault)
MAX_ERROR_CHARS = 2000


def where(view: View) -> str:
    """Where in the game a decision is: game, round, deal and trick, for error messages
    (counted from 1, as ``replay`` and the viewer count)."""
    text = f"game {view.index + 1}, round {view.round + 1}"
    if view.deal:
        text += f", deal {view.deal}"
    if view.kind == "play":
        text += f", trick {len(view.tricks) + 1}"
    return text


def describe(view: View) -> str:
    """The bot's view of a decision, in a few lines, for error messages."""
    lines = [
        f"  {view.kind} in {where(view)}: seat {view.seat} of {view.players}, hand {view.hand}",
        f"  bids {view.bids}, tricks won {view.tricks_won}, trump {view.trump}, "
        f"current trick {view.trick}, legal {view.legal}",
    ]
    return "\n".join(lines)


def _error_report(message: str, trace: str) -> str:
    """``message`` and the end of ``trace``, at most ``MAX_ERROR_CHARS`` characters."""
    text = f"{message}\n{trace.rstrip()}" if trace else message
    return text if len(text) <= MAX_ERROR_CHARS else "…" + text[-MAX_ERROR_CHARS + 1 :]


def _normalise(kind: str | None, answer: object, legal: list[Any], count: int) -> WireMove | None:
    """``answer`` as a wire value if it is legal for a request of ``kind``, else ``None``."""
    if type(answer) is str and kind != "pass":  # a card, the usual answer
        return answer if answer in legal else None
    if kind == "pass":
        if isinstance(answer, str) or not isinstance(answer, Sequence):
            return None
        cards = list(answer)
        if len(cards) != count or any(not isinstance(c, str) for c in cards):
            return None
        if Counter(cards) - Counter(legal):
            return None
        return cards
    if isinstance(answer, bool):
        return None
    value: WireMove
    if isinstance(answer, str) or type(answer) is int:
        value = answer
    else:
        if not isinstance(answer, SupportsInt | SupportsIndex):
            return None
        try:
            value = int(answer)  # numpy integers and the like
        except (TypeError, ValueError, OverflowError):
            return None
        if value != answer:  # 2.5, not a bid
            return None
    return value if value in legal else None


# --------------------------------------------------------------------------- the wire


def _serve(
    bot: Bot, endpoint: str, secret: str, idle_seconds: float, seed: int | None = None
) -> int:
    driver = Driver(bot, strict=os.environ.get("OHSEVEN_STRICT") == "1", rng=random.Random(seed))
    context = zmq.Context()
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 1000)
    # a blocking receive with a timeout: one call per message, no poll before it
    sock.setsockopt(zmq.RCVTIMEO, max(1, int(idle_seconds * 1000)))
    sock.connect(endpoint)
    pack = msgpack.Packer(use_bin_type=True).pack
    unpackb = msgpack.unpackb
    # the backend's send: pyzmq's own only adds draft-socket options, a call more per reply
    recv, send = sock.recv, super(zmq.Socket, sock).send
    decide = driver.decide

    label = str(getattr(bot, "name", "") or type(bot).__name__)[:64]
    send(pack({"type": "hello", "protocol": PROTOCOL_VERSION, "secret": secret, "bot": label}))
    try:
        while True:
            try:
                frame = recv()
            except zmq.Again:
                _warn(f"no message from the referee for {idle_seconds:.0f} s; exiting")
                return 1
            try:
                message = unpackb(frame)  # str as str: msgpack >= 1.0
            except Exception as error:  # noqa: BLE001 - a bad frame from the referee
                _warn(f"ignoring an undecodable message from the referee: {error}")
                continue
            if type(message) is not dict:
                _warn(f"ignoring a message that is not a map: {message!r}")
                continue
            kind = message.get("type")
            if kind == "request":
                move = decide(message)
                if driver.last_error is None:
                    send(pack({"type": "move", "id": message["id"], "move": move}))
                else:  # say what the substitute covers up: the referee records a bot_error
                    reply = {"type": "move", "id": message["id"], "move": move}
                    send(pack({**reply, "error": driver.last_error}))
            elif kind == "events":
                driver.feed(message.get("events") or ())
            elif kind == "shutdown":
                return 0
            elif kind == "error":
                _warn(f"the referee refused this bot: {message.get('reason')}")
                return 1
            elif kind != "welcome":
                _warn(f"ignoring a message of unknown type {kind!r}")
    finally:
        sock.close()
        context.term()


def _sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def run(
    bot_class: Callable[[], Bot],
    argv: Sequence[str] | None = None,
    *,
    idle_seconds: float = IDLE_SECONDS,
) -> None:
    """Run a bot: under the referee (environment set), or locally with ``--local``.

    Exits the process with status 0 after ``shutdown``.
    """
    name = getattr(bot_class, "name", None) or getattr(bot_class, "__name__", "bot")
    endpoint = os.environ.get("OHSEVEN_ENDPOINT")
    secret = os.environ.get("OHSEVEN_SECRET")
    if endpoint and secret is not None and not (sys.argv[1:] if argv is None else argv):
        _serve_referee(bot_class, endpoint, secret, idle_seconds)  # no arguments to parse

    parser = argparse.ArgumentParser(
        description=(
            f"The Oh-Seven / Oh Hell bot {name!r}. Under ohseven-referee it is started with "
            "OHSEVEN_ENDPOINT and OHSEVEN_SECRET set and needs no arguments. "
            "With --local it plays in-process games against example bots and prints the totals."
        )
    )
    parser.add_argument("--local", action="store_true", help="play local games and print totals")
    parser.add_argument("--game", default="oh-seven", choices=["oh-seven", "oh-hell"])
    parser.add_argument("--players", type=int, default=4, help="players at the table (default 4)")
    parser.add_argument("--games", type=int, default=1, help="games to play (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first game (default 0)")
    parser.add_argument(
        "--against",
        default="random",
        help="opponents: random, heuristic or montecarlo (the example bots; default random)",
    )
    parser.add_argument(
        "--rule", action="append", default=[], metavar="KEY=VALUE", help="a rule option"
    )
    args = parser.parse_args(argv)
    if args.local:
        # the engine, only for local games: a bot under the referee starts without it
        from ..core.rules import new_game
        from .local import local_match

        try:
            opponent = _example_bot(args.against)
            new_game(args.game, args.players, args.seed, args.rule)  # the rules and table size
        except ValueError as error:
            parser.error(str(error))
        if args.games < 1:
            parser.error(f"--games must be at least 1, not {args.games}")
        players = [bot_class] + [opponent] * (args.players - 1)
        try:
            totals = local_match(
                players, games=args.games, game=args.game, seed=args.seed, options=args.rule
            )
        except BotAnswerError as error:  # an illegal answer: the message says where
            print(f"{name}: {error}", file=sys.stderr)
            sys.exit(1)
        except Exception:  # the bot's own code raised: its traceback, not a usage error
            print(_traceback(), end="", file=sys.stderr)
            print(
                f"{name}: the bot raised (traceback above); no substitute moves in --local",
                file=sys.stderr,
            )
            sys.exit(1)
        labels = [f"{name} (you)"] + [f"{args.against} {i}" for i in range(1, args.players)]
        for label, total in zip(labels, totals, strict=True):
            print(f"{label:>24}: {total}")
        sys.exit(0)
    if not endpoint or secret is None:
        parser.error(
            "OHSEVEN_ENDPOINT and OHSEVEN_SECRET are not set: this bot is meant to be started "
            "by ohseven-referee (or try --local)"
        )
    _serve_referee(bot_class, endpoint, secret, idle_seconds)


def _serve_referee(
    bot_class: Callable[[], Bot], endpoint: str, secret: str, idle_seconds: float
) -> NoReturn:
    """Serve the referee at ``endpoint`` until it says shutdown; exit the process."""
    signal.signal(signal.SIGTERM, _sigterm)
    bot = bot_class()
    text = os.environ.get("OHSEVEN_SEED", "")
    seed = int(text) if text.isdigit() else None
    if seed is not None and isinstance(getattr(bot, "rng", None), random.Random):
        bot.rng.seed(seed)  # the referee's seed: the same match replays the same games
    sys.exit(_serve(bot, endpoint, secret, idle_seconds, seed))


def _traceback() -> str:
    """The traceback of the exception being handled, from the bot's own first frame (the
    SDK's and the rules' frames above it are left out: its author reads its own code)."""
    kind, error, frames = sys.exc_info()
    sdk = os.path.dirname(os.path.abspath(__file__))
    ours = (sdk + os.sep, os.path.join(os.path.dirname(sdk), "core") + os.sep)
    first = frames
    while first is not None and first.tb_frame.f_code.co_filename.startswith(ours):
        first = first.tb_next
    return "".join(traceback.format_exception(kind, error, first or frames))


def _example_bot(name: str) -> Callable[[], Bot]:
    if name == "random":
        return Bot
    if name not in ("heuristic", "montecarlo"):
        raise ValueError(f"--against {name!r}: expected random, heuristic or montecarlo")

    module = importlib.import_module(f"ohseven.example_bots.{name}_bot")
    bot_class: Callable[[], Bot] = module.BOT_CLASS
    return bot_class
