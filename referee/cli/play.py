"""Play at a table of bots yourself: you take one seat, the bots (sandboxed, as in a match)
take the others.

Each BOT is a bot file or a quoted command line, as for ``match``. The bots play through the
same referee loop as a match, in the sandbox, with their time control; you have no clock. In
the terminal each decision shows your hand by suit, trump, the bids, the trick so far, the
tricks taken and the score sheet; answer with a card (7H), a bid, the cards of a pass, or the
number of a move in the legal list (from 1); ? lists the legal moves; quit, Ctrl-C or the end
of input leave (the game so far is saved with --replays). With --web the table is a local
page in the browser instead (on loopback; the address is printed). The end shows the totals
and each player's bid accuracy. The bots change seats from game to game; yours stays.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys

import attrs
from ohseven.referee.cli.bot_args import (
    BotArgumentError,
    announce_seed,
    bot_specs,
    stage_limits,
)
from ohseven.referee.cli.match import (
    TableSetupError,
    add_table_arguments,
    check_table,
    game_seeds,
    print_summary,
    rotating_seatings,
    summarise,
)
from ohseven.referee.human.seat import Front, HumanLink, SeatLeft
from ohseven.referee.human.terminal import TerminalFront
from ohseven.referee.play.descriptors import raise_fd_limit
from ohseven.referee.play.match import play_game, replay_path
from ohseven.referee.play.referee import Referee
from ohseven.referee.records import BotSpec, GameRecord, MatchResult, MatchSpec, TimeControl
from ohseven.referee.sandbox.staging import StagingError, staged_bots
from ohseven.referee.secret import derive_seed, secret_from_seed
from ohseven.referee.terminal import console as terminal_console
from ohseven.referee.terminal import printable
from rich.console import Console
from rich.text import Text

__all__ = ["configure", "run", "parse_listen", "ListenError"]

MATCH_ID = "play"


class ListenError(ValueError):
    """A ``--listen`` value that is not HOST:PORT."""


def configure(parser: argparse.ArgumentParser) -> None:
    add_table_arguments(parser, games_help="games to play (default 1)")
    parser.add_argument(
        "--seat", type=int, default=0, metavar="N", help="your seat, from 0 (default 0)"
    )
    parser.add_argument("--name", default="you", help="your name at the table (default: you)")
    parser.add_argument("--web", action="store_true", help="play in the browser, not here")
    parser.add_argument(
        "--listen",
        default="127.0.0.1:0",
        metavar="HOST:PORT",
        help="with --web: the address of the page (default %(default)s: loopback, a free "
        "port, printed)",
    )
    parser.add_argument("--open", action="store_true", help="with --web: open the browser")
    parser.add_argument("bots", nargs="+", metavar="BOT", help="a bot file or a command line")


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8000`` for IPv6) as (host, port); raises :class:`ListenError`."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ListenError(f"--listen {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8000")
    return host, int(port)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _fail(message: str) -> int:
    print(f"ohseven-referee play: {printable(message)}", file=sys.stderr)
    return 2


def _names(spec: MatchSpec, index: int, seat: int, name: str) -> list[str]:
    names = [spec.bots[b].name for b in spec.seatings[index]]
    names.insert(seat, name)
    return names


def run(args: argparse.Namespace) -> int:
    raise_fd_limit()
    try:
        bots = bot_specs(args.bots)
    except BotArgumentError as error:
        return _fail(str(error))
    players = len(bots) + 1
    games = 1 if args.games is None else args.games
    try:
        rules, config, replay_dir = check_table(args, bots, players, games)
    except TableSetupError as error:
        return _fail(str(error))
    if not 0 <= args.seat < players:
        return _fail(f"--seat {args.seat}: a table of {players} has seats 0 to {players - 1}")
    name = args.name.strip()
    if not name or not name.isprintable() or name in {bot.name for bot in bots}:
        return _fail(f"--name {args.name!r}: choose a printable name that no bot has")
    listen = None
    if args.web:
        try:
            listen = parse_listen(args.listen)
        except ListenError as error:
            return _fail(str(error))
    seed = announce_seed(args.seed)
    spec = MatchSpec(
        match_id=MATCH_ID,
        rules=rules,
        bots=bots,
        seatings=rotating_seatings(len(bots), games),
        seeds=game_seeds(seed, games),
        time_control=TimeControl(move_seconds=args.move_timeout, bank_seconds=args.bank),
        fallback_seed=derive_seed(secret_from_seed(seed), "fallback"),
    )
    console = terminal_console()
    front: Front
    if listen is not None:
        try:  # the web server (the ``server`` extra) is loaded only when it is asked for
            from ohseven.referee.human.web import WebFront, WebFrontError
        except ModuleNotFoundError as error:
            return _fail(f"--web needs {error.name}: pip install 'ohseven[server]'")

        if not _loopback(listen[0]):
            console.print(
                f"warning: --listen {listen[0]} is not loopback: anyone who can reach it and "
                "has the printed address can play your seat",
                style="yellow",
            )
        try:
            web = WebFront(*listen, open_browser=args.open)
        except WebFrontError as error:
            return _fail(str(error))
        console.print(f"Your table: {web.url}  (Ctrl-C here ends the game)")
        front = web
    else:
        web = None
        front = TerminalFront(console)
    records: list[GameRecord] = []
    left: tuple[int, HumanLink, str] | None = None
    private = {"the replay folder": replay_dir} if replay_dir else {}
    try:
        with staged_bots(bots, private=private, limits=stage_limits(args)) as staged:
            staged_spec = attrs.evolve(spec, bots=staged)
            with Referee(staged_spec, config) as referee:
                console.print(f"Starting {len(bots)} bot{'s' if len(bots) > 1 else ''}...")
                referee.start()
                for index in range(games):
                    link = HumanLink(front, _names(spec, index, args.seat, name), index, games)
                    try:
                        record = play_game(
                            referee, index, replay_dir, guests={args.seat: (name, link)}
                        )
                    except SeatLeft as error:
                        left = (index, link, str(error))
                        break
                    except KeyboardInterrupt:
                        left = (index, link, "interrupted")
                        break
                    records.append(record)
            logs = referee.close()
    except StagingError as error:
        return _fail(str(error))
    finally:
        if web is not None:
            web.close("you left the table" if left is not None else "every game is played")
    arguments = dict(zip((bot.name for bot in bots), args.bots, strict=True))
    _report(console, spec, name, records, logs, left, replay_dir, arguments)
    return 0


def _report(
    console: Console,
    spec: MatchSpec,
    name: str,
    records: list[GameRecord],
    logs: dict[str, str],
    left: tuple[int, HumanLink, str] | None,
    replay_dir: str | None,
    arguments: dict[str, str],
) -> None:
    """The end: the game left unfinished, the totals and bid accuracy, the replays."""
    console.print()
    if left is not None:
        index, link, why = left
        view = link.view
        scores = ", ".join(f"{n} {s}" for n, s in zip(link.names, view.scores, strict=False))
        console.print(
            Text(
                f"Game {index + 1} stopped ({why}) in round {view.round + 1}; "
                f"scores so far: {scores or '-'} (not counted below)."
            )
        )
        if replay_dir is not None:
            console.print(Text(f"Its moves so far: {replay_path(replay_dir, MATCH_ID, index)}"))
    if records:
        person = BotSpec(name, ("(a person at the keyboard)",))
        everyone = attrs.evolve(spec, bots=(*spec.bots, person))
        summary = summarise(MatchResult(everyone, tuple(records), logs))
        print_summary(summary, arguments, who="player")
    else:
        console.print("No game was finished.")
    for record in records:
        if record.replay_path is not None:
            console.print(Text(f"Game {record.game_index + 1}: {record.replay_path}"))
