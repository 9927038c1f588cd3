"""Ask a bot one decision of a saved replay again, in the position of the real game.

REPLAY is a replay file written by ``match --replays``, ``check-bot --replays`` or a tournament
(``replays/`` of its output), of Oh-Seven or Oh Hell. Decisions are numbered as the replay's
moves, counted from 1 as every fault report names them: ``--at N`` is move N of the game
(``moves[N - 1]`` of the file); each is shown with the step of ``view``'s page at which the
bot was asked. Without ``--at`` the decisions of one seat are listed (``--seat``, ``--player``,
else the seat of the bot named by ``--bot``, else every seat), the moves the game recorded a
fault at marked (the fallback's move, or the substitute the bot's SDK played).

With ``--at N`` the bot is started as ``match`` starts it (its own staged copy, the sandbox,
the real protocol over ZeroMQ) and asked that decision once: the recorded moves are played
through the rules engine up to the moment the referee sent the request, and the bot gets the
events the referee would have sent its seat by then (the game, the deal, passes, bids, plays,
results) in that request, with the legal moves of the real game. It prints what the bot did
(answered legally, raised and had its SDK play a substitute, answered illegally, timed out,
crashed...), what the real game played, the time taken, and the bot's output on a fault. Exit
status: 0 when the bot answered legally by itself, 1 on any fault (a substitute of its SDK
included), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterable
from typing import Any

import attrs
from ohseven.core.feed import EventFeed, game_event
from ohseven.core.rules import Game, RulesError
from ohseven.core.table import LinkBase, RandomFallback
from ohseven.core.values import Move
from ohseven.core.wire import legal_to_wire
from ohseven.referee.cli.bot_args import (
    BotArgumentError,
    add_extra_path_argument,
    add_limit_arguments,
    add_time_control_arguments,
    bot_specs,
    extra_paths,
    output_tail,
    sandbox_limits,
    stage_limits,
)
from ohseven.referee.fault_report import FaultSite, author_paths, group_faults, render_groups
from ohseven.referee.play.connection import MoveReply, decode
from ohseven.referee.play.contestant import Contestant
from ohseven.referee.play.descriptors import raise_fd_limit
from ohseven.referee.play.referee import Referee
from ohseven.referee.records import BotSpec, Fault, FaultStatus, MatchSpec, TimeControl
from ohseven.referee.replay import (
    ReplayError,
    game_after,
    load_replay,
    play_move,
    start_game,
    validate_replay,
)
from ohseven.referee.sandbox import cgroups
from ohseven.referee.sandbox.paths import extra_path_problem
from ohseven.referee.sandbox.settings import MODES, SandboxConfig, SandboxError, check_sandbox
from ohseven.referee.sandbox.staging import StagingError, staged_bots
from ohseven.referee.site.replay_view import replay_view
from ohseven.referee.terminal import printable

__all__ = ["configure", "run", "Decision", "Answer", "decisions", "rebuild", "game_index", "ask"]


@attrs.frozen
class Decision:
    """One recorded move of a replay and where the game stood when its seat was asked."""

    move: int  # its number in the replay's moves, from 1
    seat: int
    kind: str  # pass, bid or play
    round: int  # counted from 1
    trick: int | None  # the trick being played (from 1), None for a pass or a bid
    asked_after: int  # the moves played when the referee sent the request
    #: the step of the viewer's page showing the position it was asked in (None: not computed)
    step: int | None
    played: Any  # the move of the real game, in wire form


def decisions(replay: dict[str, Any], steps: Iterable[int] | None = None) -> list[Decision]:
    """Every move of ``replay`` as a :class:`Decision`, with the viewer's step of the moves
    numbered ``steps`` (from 1; None: of all); the replay is checked first
    (:func:`~ohseven.referee.replay.validate_replay`)."""
    validate_replay(replay)
    game = start_game(replay)
    asked: dict[int, int] = {}  # seat -> moves played when its pending request went out
    found = []
    for index, (seat, kind, value) in enumerate(replay["moves"]):
        # the referee asks a seat as soon as it is to act and owes no answer (``Table.run``)
        for waiting in game.to_act:
            asked.setdefault(waiting, index)
        trick = sum(game.tricks_won) + 1 if kind == "play" else None
        found.append(
            Decision(index + 1, seat, kind, game.round + 1, trick, asked.pop(seat), None, value)
        )
        play_move(game, (seat, kind, value), index)
    numbers = set(range(1, len(found) + 1))
    wanted = numbers if steps is None else set(steps) & numbers
    shown = _viewer_steps(replay, [found[m - 1].asked_after for m in wanted])
    return [attrs.evolve(d, step=shown[d.asked_after]) if d.move in wanted else d for d in found]


def _viewer_steps(replay: dict[str, Any], points: list[int]) -> dict[int, int]:
    """The viewer's step (as its page counts them, from 1) showing the game after each of
    ``points`` moves: the last frame of the events up to then."""
    game = start_game(replay)
    moves = replay["moves"]
    steps: dict[int, int] = {}
    played = 0
    for point in sorted(set(points)):
        while played < point:
            play_move(game, moves[played], played)
            played += 1
        prefix = dict(replay, events=replay["events"][: len(game.events)])
        steps[point] = len(replay_view(prefix)["frames"])
    return steps


def game_index(path: str) -> int:
    """The game's index in its match, from the replay's file name: ``m-game002.json`` (match,
    tourney) is 2; ``check-03-....json`` (check-bot) is 2, the games its process had played when
    none of the checks before failed; 0 when the name does not say."""
    name = os.path.basename(path)
    found = re.search(r"-game(\d+)\.json$", name)
    if found:
        return int(found.group(1))
    found = re.match(r"check-(\d+)-", name)
    return max(0, int(found.group(1)) - 1) if found else 0


def rebuild(replay: dict[str, Any], decision: Decision) -> Game:
    """The game of ``replay`` as it stood when ``decision``'s request was sent."""
    return game_after(replay, decision.asked_after)


@attrs.frozen
class Answer:
    """What the bot did when asked again."""

    legal: list[Any]  # the legal moves it was sent
    count: int  # cards to pass (0 for a bid or a play)
    events: int  # events it was sent with the request
    answer: Any = None  # its reply's move as it sent it (None: no reply)
    accepted: bool = False  # a legal answer, played
    seconds: float | None = None  # from the request to its legal answer
    fault: Fault | None = None
    output: str = ""  # its captured output (stdout and stderr)
    started: bool = True


def ask(
    replay: dict[str, Any],
    decision: Decision,
    bot: BotSpec,
    *,
    sandbox: SandboxConfig,
    time_control: TimeControl,
    index: int = 0,
) -> Answer:
    """Start ``bot`` as a match does, send it the request of ``decision`` (with every event its
    seat had been sent by then), wait for its answer (bounded), shut it down."""
    game = rebuild(replay, decision)
    seat = decision.seat
    spec = MatchSpec(
        match_id="replay",
        rules=game.rules,
        bots=(bot,),
        seatings=(),
        seeds=(),
        time_control=time_control,
    )

    raw: list[Any] = []  # the move of the bot's first answer, as it sent it

    def on_frame(sender: Contestant, frame: bytes) -> None:
        if not raw:
            message = decode(frame)
            if type(message) is MoveReply:
                raw.append(message.move)

    with Referee(spec, sandbox, max_restarts=0, on_frame=on_frame) as referee:
        (real,) = referee.bots
        referee.start()
        sent = _exchange(referee, real, game, index, seat) if real.active else None
    output = referee.close().get(bot.name, "")
    if sent is None:
        carried = real.take_carried()
        status, detail = carried[0] if carried else (FaultStatus.NO_START, "no hello")
        return Answer([], 0, 0, fault=Fault(seat, status, detail), output=output, started=False)
    legal, count, events, faults, seconds = sent
    return Answer(
        legal,
        count,
        events,
        raw[0] if raw else None,
        seconds is not None and not any(f.status is not FaultStatus.BOT_ERROR for f in faults),
        seconds,
        faults[0] if faults else None,
        output,
    )


class _Idle(LinkBase):
    """The other seats of a replayed decision: never asked, since the table stops at the
    replayed seat's decision and in-process seats move after the bot's."""

    __slots__ = ()


def _exchange(
    referee: Referee, real: Contestant, game: Game, index: int, seat: int
) -> tuple[list[Any], int, int, list[Fault], float | None]:
    """Ask the decision on the referee's loop (as a match does) and stop at its answer or
    fault (bounded): the legal moves and count sent, the events sent, the faults, and the
    seconds to a legal answer (None: the fallback played)."""
    legal, count = legal_to_wire(game, seat)
    events = len(EventFeed(game, seat, prefix=[game_event(game, index, seat)]).take())
    links = [referee.link(real) if s == seat else _Idle() for s in range(game.players)]
    bots_at = [real if s == seat else None for s in range(game.players)]
    took: list[float | None] = []

    def on_move(mover: int, kind: str, move: Move, seconds: float | None) -> None:
        if mover == seat:
            took.append(seconds)
            assert referee.table is not None  # the table being played
            referee.table.stopped = True

    table = referee.play(
        index, game, links, bots_at, RandomFallback("replay"), on_move=on_move, finish=False
    )
    faults = [f for f in table.faults if f.seat == seat and f.status is not FaultStatus.DROPPED]
    return legal, count, events, faults, took[0] if took else None


# --------------------------------------------------------------------------- the command


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("replay", metavar="REPLAY", help="a replay file (JSON)")
    parser.add_argument("--bot", metavar="BOT", help="a bot file or a command line, as for match")
    parser.add_argument(
        "--at",
        type=int,
        metavar="N",
        help="the decision to ask: move N of the replay (from 1, as fault reports name it; "
        "without --at: list them)",
    )
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--seat", type=int, metavar="S", help="whose decisions: seat S (from 0)")
    who.add_argument("--player", metavar="NAME", help="whose decisions: the bot named NAME")
    parser.add_argument(
        "--game-index",
        type=int,
        default=None,
        metavar="G",
        help="the game's index in its match, sent in the game event (default: from the file "
        "name, m-game002.json: 2, else 0)",
    )
    add_time_control_arguments(parser)
    parser.add_argument(
        "--sandbox", choices=MODES, default="bwrap", help="how the bot runs (default %(default)s)"
    )
    add_extra_path_argument(parser)
    add_limit_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")


def _fail(message: str) -> int:
    print(f"ohseven-referee replay: {printable(message)}", file=sys.stderr)
    return 2


def _seat_of(replay: dict[str, Any], args: argparse.Namespace, bot: BotSpec | None) -> int | None:
    """The seat chosen by --seat / --player / the bot's name; None: not chosen (raises
    ``ValueError`` for a seat or player the replay does not have)."""
    players = replay["players"]
    names = list(replay.get("seats") or [None] * players)
    if args.seat is not None:
        if not 0 <= args.seat < players:
            raise ValueError(f"--seat {args.seat}: this game has seats 0 to {players - 1}")
        return args.seat
    if args.player is not None:
        seats = [s for s, name in enumerate(names) if name == args.player]
        if len(seats) != 1:
            known = ", ".join(f"{s}: {n}" for s, n in enumerate(names) if n) or "none named"
            why = "is in no seat" if not seats else f"is in seats {seats}: use --seat"
            raise ValueError(f"--player {args.player!r} {why} (seats {known})")
        return seats[0]
    if bot is not None and names.count(bot.name) == 1:
        return names.index(bot.name)
    return None


def _name(replay: dict[str, Any], seat: int) -> str:
    names = replay.get("seats") or []
    name = names[seat] if seat < len(names) else None
    return name if isinstance(name, str) and name else f"seat {seat}"


def _shown(value: Any) -> str:
    return " ".join(map(str, value)) if isinstance(value, list) else str(value)


def _where(decision: Decision) -> str:
    trick = f", trick {decision.trick}" if decision.trick is not None else ""
    return f"round {decision.round}{trick}, viewer step {decision.step}"


def _recorded_faults(replay: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """The faults the game recorded, by the move they cost (replays written before faults
    named their move have none here)."""
    found: dict[int, dict[str, Any]] = {}
    for fault in replay.get("faults") or []:
        move = fault.get("move") if isinstance(fault, dict) else None
        if isinstance(move, int) and not isinstance(move, bool):
            found.setdefault(move, fault)
    return found


#: what was played at a move the game recorded a fault at
_PLAYED_BY = {FaultStatus.BOT_ERROR.value: "its SDK's substitute"}


def _fault_mark(fault: dict[str, Any] | None) -> str:
    if fault is None:
        return ""
    status = str(fault.get("status"))
    by = _PLAYED_BY.get(status, "the referee's fallback")
    return f"{status}: {by}"


def _decision_data(
    replay: dict[str, Any], decision: Decision, fault: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "move": decision.move,
        "seat": decision.seat,
        "player": _name(replay, decision.seat),
        "kind": decision.kind,
        "round": decision.round,
        "trick": decision.trick,
        "step": decision.step,
        "played": decision.played,
        "recorded_fault": None
        if fault is None
        else {key: fault.get(key) for key in ("status", "detail", "round", "trick")},
    }


def _list(replay: dict[str, Any], found: list[Decision], seat: int | None, args) -> int:
    mine = [d for d in found if seat is None or d.seat == seat]
    faults = _recorded_faults(replay)
    if args.json:
        print(
            json.dumps(
                {
                    "replay": args.replay,
                    "game": replay["game"],
                    "seat": seat,
                    "moves": len(found),
                    "decisions": [_decision_data(replay, d, faults.get(d.move)) for d in mine],
                }
            )
        )
        return 0
    whose = "every seat" if seat is None else f"seat {seat} ({_name(replay, seat)})"
    print(
        printable(
            f"{replay['game']}, {replay['players']} players: {len(found)} moves; "
            f"decisions of {whose}"
        )
    )
    print(f"{'move':>5}  {'seat':>4}  {'kind':<4}  {'round':>5}  {'trick':>5}  {'step':>5}  played")
    for d in mine:
        trick = "-" if d.trick is None else str(d.trick)
        mark = f"  <- {_fault_mark(faults[d.move])}" if d.move in faults else ""
        print(
            printable(
                f"{d.move:>5}  {d.seat:>4}  {d.kind:<4}  {d.round:>5}  {trick:>5}  {d.step:>5}  "
                f"{_shown(d.played)}{mark}"
            )
        )
    marked = [d.move for d in mine if d.move in faults]
    if marked:
        print(f"(<- a fault: {len(marked)} of these moves were not the bot's own answer)")
    if seat is None:
        print("(every seat: choose one with --seat or --player; ask one with --bot BOT --at N)")
    else:
        print("(ask one again with --bot BOT --at N)")
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        replay = load_replay(args.replay)
        found = decisions(replay, steps=())
    except OSError as error:
        return _fail(f"{args.replay}: {error.strerror or error}")
    except (ReplayError, RulesError, ValueError, KeyError, TypeError) as error:
        return _fail(f"{args.replay} is not a replay this referee can play: {error}")
    bot = None
    if args.bot is not None:
        try:
            (bot,) = bot_specs([args.bot])
        except BotArgumentError as error:
            return _fail(str(error))
    try:
        seat = _seat_of(replay, args, bot)
    except ValueError as error:
        return _fail(str(error))
    if args.at is None:
        mine = [d.move for d in found if seat is None or d.seat == seat]
        return _list(replay, decisions(replay, steps=mine), seat, args)
    if not found:
        return _fail(f"{args.replay}: the replay has no moves")
    if not 1 <= args.at <= len(found):
        return _fail(f"--at {args.at}: this replay has moves 1 to {len(found)}")
    decision = decisions(replay, steps=[args.at])[args.at - 1]
    if seat is not None and decision.seat != seat and (args.seat, args.player) != (None, None):
        theirs = [d.move for d in found if d.seat == seat]
        near = ", ".join(str(m) for m in theirs if abs(m - args.at) <= 12) or "none near"
        return _fail(
            f"--at {args.at} is a decision of seat {decision.seat} "
            f"({_name(replay, decision.seat)}), not of seat {seat}; its moves near it: {near}"
        )
    if bot is None:
        return _fail("--at needs --bot BOT: the bot to ask")
    if seat is None and not args.json:  # the bot's name is in no seat: say whose move it gets
        names = replay.get("seats") or []
        known = ", ".join(f"{s}: {n}" for s, n in enumerate(names) if n) or "none named"
        print(
            f"note: no seat of this replay is named {bot.name} (seats {known}); {bot.name} "
            f"is asked move {args.at}, a decision of seat {decision.seat} "
            f"({_name(replay, decision.seat)}); choose a seat with --player or --seat",
            file=sys.stderr,
        )
    if seat is not None and decision.seat != seat and not args.json:
        print(
            printable(
                f"note: move {args.at} is a decision of seat {decision.seat} "
                f"({_name(replay, decision.seat)}); {bot.name} is asked it in that seat"
            ),
            file=sys.stderr,
        )
    answer, problem = _ask_bot(replay, decision, bot, args)
    if problem is not None:
        return _fail(problem)
    assert answer is not None
    same = (
        answer.accepted
        and answer.fault is None
        and (
            sorted(answer.answer) == sorted(decision.played)  # a pass: the same cards
            if decision.kind == "pass"
            else answer.answer == decision.played
        )
    )
    tail = output_tail(answer.output)  # its debugging prints: wanted even without a fault
    if args.json:
        data = _decision_data(replay, decision, _recorded_faults(replay).get(decision.move))
        data.update(
            replay=args.replay,
            bot=bot.name,
            started=answer.started,
            legal=answer.legal,
            count=answer.count,
            events=answer.events,
            answer=answer.answer,
            accepted=answer.accepted,
            same=same,
            seconds=None if answer.seconds is None else round(answer.seconds, 6),
            fault=None
            if answer.fault is None
            else {
                "status": answer.fault.status.value,
                "detail": author_paths(answer.fault.detail),
            },
            did=_did(bot.name, answer),
            output_tail=tail,
        )
        print(json.dumps(data))
    else:
        _print_answer(replay, decision, bot, answer, same, tail)
    return 0 if answer.accepted and answer.fault is None else 1


def _ask_bot(
    replay: dict[str, Any], decision: Decision, bot: BotSpec, args: argparse.Namespace
) -> tuple[Answer | None, str | None]:
    if not args.move_timeout > 0 or not args.bank >= 0:
        return None, "--move-timeout must be positive and --bank not negative"
    source = os.path.abspath(args.replay)
    try:
        shown = extra_paths(args.extra_path, [bot])
    except BotArgumentError as error:
        return None, str(error)
    for path in shown:  # the replay holds every hand: no bot may read it
        problem = extra_path_problem(path, {"the replay": source})
        if problem is not None:
            return None, f"--extra-path: {problem}"
    config = SandboxConfig(mode=args.sandbox, extra_paths=shown, limits=sandbox_limits(args))
    try:
        check_sandbox(config)
    except SandboxError as error:
        return None, str(error)
    cgroups.warn_unavailable()
    raise_fd_limit()
    index = args.game_index if args.game_index is not None else game_index(args.replay)
    clock = TimeControl(move_seconds=args.move_timeout, bank_seconds=args.bank)
    try:
        limits = stage_limits(args)
        with staged_bots([bot], private={"the replay": source}, limits=limits) as (staged,):
            return ask(
                replay, decision, staged, sandbox=config, time_control=clock, index=index
            ), None
    except StagingError as error:
        return None, str(error)


def _did(name: str, answer: Answer) -> str:
    """What the bot did when asked, in words: answered legally, raised (its SDK's substitute),
    answered illegally, timed out, crashed..."""
    fault = answer.fault
    took = "" if answer.seconds is None else f" in {answer.seconds * 1000:.1f} ms"
    if not answer.started:
        return f"{name} did not start"
    if fault is None:
        if answer.answer is None:
            return f"{name} answered nothing"
        return f"{name} answered {_shown(answer.answer)} (legal){took}"
    status = fault.status
    first = (author_paths(fault.detail).strip().splitlines() or [""])[0]
    if status is FaultStatus.BOT_ERROR:
        substitute = "" if answer.answer is None else f" {_shown(answer.answer)}"
        verb = "raised" if " raised " in first else "failed"
        return (
            f"{name} {verb}; its SDK answered the substitute{substitute} instead (a fault: "
            f"bot_error){took}"
        )
    if status is FaultStatus.TIMEOUT:
        return f"{name} timed out: {first}"
    if status is FaultStatus.ILLEGAL:
        shown = "" if answer.answer is None else f" {_shown(answer.answer)}"
        return f"{name} answered{shown}, which is not legal: {first}"
    return f"{name} faulted ({status.value}): {first}"


def _print_answer(
    replay: dict[str, Any], decision: Decision, bot: BotSpec, answer: Answer, same: bool, tail: str
) -> None:
    def say(text: str) -> None:  # the replay's names, the bot's name and answer: escaped
        print(printable(text))

    say(
        f"move {decision.move}: seat {decision.seat} ({_name(replay, decision.seat)}) "
        f"{decision.kind}, {_where(decision)}"
    )
    recorded = _recorded_faults(replay).get(decision.move)
    if answer.started:
        what = f"pass {answer.count} of" if decision.kind == "pass" else "one of"
        say(f"asked {bot.name} ({answer.events} events): {what} {_shown(answer.legal)}")
    say(_did(bot.name, answer))
    say(
        f"the real game played {_shown(decision.played)}"
        + (f" ({_fault_mark(recorded)})" if recorded else "")
        + (" (the same)" if same else "")
    )
    if answer.fault is not None:
        fault = answer.fault
        sites = [
            FaultSite(
                fault.status.value,
                fault.detail,
                move=decision.move,
                round=decision.round,
                trick=decision.trick,
            )
        ]
        say("\n".join(["", *render_groups(bot.name, group_faults(sites), tail)]))
    elif tail:
        say("its output (stdout and stderr):")
        say("\n".join(f"| {line}" for line in author_paths(tail).splitlines()))
