"""Check a bot before a tournament: every kind of request, in the sandbox, with a clear report.

BOT is a bot file or a quoted command line, as for ``match``. The bot is started, watched and
asked by ``match``'s own machinery on the one referee loop (``core.table``), and plays one
game per check, in one seat, against in-process opponents that play
uniformly random legal moves (as the random example bot does): Oh-Seven for 2..9 players
with and without the card pass, re-bids forced by an opponent that completes the bids to 7,
a round dealt so that all 7 bid attempts are forced (then a redeal), and Oh Hell for 3..7
players plus its hook, must-trump and simultaneous-bid variants. Any fault of the bot fails
its check, reported with its status and the referee's detail. The report also gives the time
per decision (mean, 95th percentile, maximum) and whether the bot is deterministic: the same
games are played twice by fresh processes and the bot's moves compared.
The exit status is 0 when every check passes, 1 otherwise (2 for a usage error).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any, cast

import attrs
from ohseven.core.rules import GAMES, OH_HELL, OH_SEVEN, Game, OhSevenGame, Phase, Rules, new_game
from ohseven.core.table import Link, LinkBase, RandomFallback, Request, Table
from ohseven.core.values import Event, Move
from ohseven.core.wire import move_to_wire
from ohseven.referee.cli.bot_args import (
    BotArgumentError,
    add_extra_path_argument,
    add_limit_arguments,
    add_time_control_arguments,
    announce_seed,
    bot_specs,
    extra_paths,
    output_tail,
    sandbox_limits,
    stage_limits,
)
from ohseven.referee.fault_report import (
    FaultSite,
    author_paths,
    group_faults,
    render_groups,
    site_data,
)
from ohseven.referee.play.contestant import Contestant
from ohseven.referee.play.descriptors import raise_fd_limit
from ohseven.referee.play.referee import BotLink, Referee
from ohseven.referee.records import BotSpec, Fault, MatchSpec, TimeControl
from ohseven.referee.replay import save_replay, to_replay
from ohseven.referee.sandbox import cgroups
from ohseven.referee.sandbox.settings import MODES, SandboxConfig, SandboxError, check_sandbox
from ohseven.referee.sandbox.staging import StagingError, staged_bots
from ohseven.referee.secret import derive_seed, secret_from_seed
from ohseven.referee.terminal import printable

__all__ = ["configure", "run", "Check", "CheckResult", "Report", "checks_for", "check_bot"]

#: faults after which a check stops asking the bot (fallback moves finish the game)
MAX_FAULTS_PER_CHECK = 3
_CLOCK = TimeControl()


@attrs.frozen
class Check:
    """One game the bot plays in seat ``seat``.

    ``force``: ``"sum7"`` makes the last opponent complete the bids to 7 on the first attempt
    of every deal (a forced re-bid); ``"redeal"`` does it on every attempt of the first deal,
    whose cards (``stacked``) make it always possible: seven forced attempts, then a redeal.
    """

    name: str
    game: str
    players: int
    seed: int
    options: tuple[tuple[str, object], ...] = ()
    seat: int = 0
    force: str | None = None
    stacked: tuple[tuple[int, ...], ...] = ()

    def rules(self) -> Rules:
        return Rules.make(self.game, dict(self.options))


@attrs.frozen
class CheckResult:
    check: Check
    faults: tuple[Fault, ...]
    seconds: tuple[tuple[str, float], ...]  # (request kind, seconds) of each answered decision
    moves: tuple[Any, ...]  # the bot's decisions in wire form
    rebids: int = 0  # bid requests after a forced attempt
    redeals: int = 0
    skipped: bool = False
    output: str = ""  # the end of the bot's own output when the check failed
    replay: str | None = None  # the replay file of its game (``--replays``)

    @property
    def passed(self) -> bool:
        return not self.skipped and not self.faults


@attrs.frozen
class Report:
    bot: BotSpec
    sandbox: str
    results: tuple[CheckResult, ...]
    deterministic: tuple[bool, str] | None  # (same moves?, explanation); None: not measured
    clock: TimeControl = _CLOCK  # the time control the checks played under
    strict: bool = False  # slow decisions fail the bot (``--strict``)

    @property
    def passed(self) -> bool:
        return all(result.passed for result in self.results)


# --------------------------------------------------------------------------- the checks


def _redeal_deck(seat: int) -> tuple[int, ...]:
    """A 32-card order dealing ``seat`` of 2 the clubs 0..6 and the other the diamonds 7..1:
    every bid of the first has an unused complement to 7 in the other's hand."""
    mine = list(range(0, 7))  # 0C..6C
    theirs = [8 + rank for rank in range(7, 0, -1)]  # 7D..1D
    rest = [card for card in range(32) if card not in mine and card not in theirs]
    order: list[int] = []
    for i in range(7):
        pair = (mine[i], theirs[i]) if seat == 0 else (theirs[i], mine[i])
        order.extend(pair)
    return tuple(order + rest)


def checks_for(games: tuple[str, ...], seed: int = 0) -> list[Check]:
    """The checks for ``games``; seats and deals vary with ``seed`` (derived one-way from it)."""
    checks: list[Check] = []
    rng = random.Random(derive_seed(secret_from_seed(seed), "checks"))

    def add(name: str, game: str, players: int, **kwargs: Any) -> None:
        checks.append(
            Check(
                name,
                game,
                players,
                seed=rng.randrange(2**31),
                seat=kwargs.pop("seat", rng.randrange(players)),
                **kwargs,
            )
        )

    if OH_SEVEN in games:
        for players in range(2, 10):
            decks = "one deck" if players <= 4 else "two decks"
            add(f"oh-seven, {players} players ({decks})", OH_SEVEN, players)
        for players in range(2, 10):
            add(f"oh-seven with passing, {players} players", OH_SEVEN, players,
                options=(("passing", True),))  # fmt: skip
        add("oh-seven, forced re-bids (sum 7), 3 players", OH_SEVEN, 3, force="sum7")
        add("oh-seven, forced re-bids (sum 7), 6 players", OH_SEVEN, 6, force="sum7",
            options=(("passing", True),))  # fmt: skip
        seat = rng.randrange(2)
        add("oh-seven, 7 forced attempts then a redeal, 2 players", OH_SEVEN, 2, seat=seat,
            force="redeal", stacked=(_redeal_deck(seat),))  # fmt: skip
    if OH_HELL in games:
        for players in range(3, 8):
            add(f"oh-hell, {players} players", OH_HELL, players)
        add("oh-hell with hook and must_trump, 4 players", OH_HELL, 4,
            options=(("hook", True), ("must_trump", True)))  # fmt: skip
        add("oh-hell with simultaneous bids, 5 players", OH_HELL, 5,
            options=(("simultaneous_bids", True), ("hand_order", "down-up")))  # fmt: skip
    return checks


def determinism_checks(games: tuple[str, ...], seed: int = 0) -> list[Check]:
    """The games played twice to see whether the bot repeats its moves."""
    found = []
    secret = secret_from_seed(seed)
    if OH_SEVEN in games:
        deal = derive_seed(secret, "determinism", OH_SEVEN)
        found.append(
            Check("oh-seven with passing, 4 players", OH_SEVEN, 4, deal, (("passing", True),), 1)
        )
    if OH_HELL in games:
        deal = derive_seed(secret, "determinism", OH_HELL)
        found.append(Check("oh-hell, 4 players", OH_HELL, 4, deal, (), 2))
    return found


# --------------------------------------------------------------------------- one bot process


class _Session:
    """One process of the bot, started, watched and asked by the referee's own machinery (a
    one-bot :class:`~ohseven.referee.play.referee.Referee`: sandbox, hello, freezer, faults,
    time bank), so that ``check-bot`` exercises the loop a tournament plays on."""

    def __init__(
        self,
        spec: BotSpec,
        config: SandboxConfig,
        clock: TimeControl,
        seed: int = 0,
        strict: bool = False,
    ) -> None:
        match = MatchSpec(
            match_id="check-bot",
            rules=Rules.make(OH_SEVEN, ()),
            bots=(spec,),
            seatings=(),
            seeds=(),
            time_control=clock,
            # as a tournament does: the bot's OHSEVEN_SEED follows from it, so a bot seeded
            # from it replays its games exactly; one way from the seed (it gives no deal away)
            fallback_seed=derive_seed(secret_from_seed(seed), "bot"),
        )
        # faults never drop the bot: a check stops asking it after MAX_FAULTS_PER_CHECK
        self.referee = Referee(
            match,
            config,
            max_restarts=0,
            drop_after_faults=1 << 62,
            # the SDK raises instead of covering the bot's errors up
            env={"OHSEVEN_STRICT": "1"} if strict else None,
        )
        (self.bot,) = self.referee.bots
        self.games = 0  # games played by this process: the index of the next one

    @property
    def dead(self) -> bool:
        return not self.bot.active

    def start(self) -> Fault | None:
        """Start the process and wait for its hello; its first fault if it fails."""
        self.referee.start()
        carried = self.bot.take_carried()
        return Fault(0, *carried[0]) if carried else None

    def output(self) -> str:
        """The bot's own output so far (stdout and stderr)."""
        return self.bot.output()

    def close(self) -> None:
        self.referee.close()


# --------------------------------------------------------------------------- one game


class _Opponent(LinkBase):
    """An in-process seat playing :func:`_opponent`'s moves."""

    __slots__ = ("check", "rng")

    def __init__(self, check: Check, rng: random.Random) -> None:
        self.check = check
        self.rng = rng

    def send(self, table: Table, request: Request, events: list[Event]) -> None:
        table.answer(request, _opponent(table.game, request.seat, self.check, self.rng))


class _Limited(BotLink):
    """The bot's link, asked until it has ``MAX_FAULTS_PER_CHECK`` faults in the check (then
    fallback moves finish the game)."""

    __slots__ = ()

    def usable(self) -> bool:
        table = self.referee.table
        return self.bot.active and table is not None and len(table.faults) < MAX_FAULTS_PER_CHECK


class _Absent(LinkBase):
    """The bot's seat when it did not start: never asked, fallback moves play for it."""

    synchronous = False
    __slots__ = ()

    def usable(self) -> bool:
        return False


def _opponent(game: Game, seat: int, check: Check, rng: random.Random) -> Move:
    """The random example bot's decision, or the forcing opponent's bid completing 7."""
    if game.phase is Phase.PASS:
        return tuple(rng.sample(list(game.hands[seat]), game.pass_count()))
    legal = list(cast(Sequence[int], game.legal_moves(seat)))  # a bid or a play: ints
    if check.force and game.phase is Phase.BID and isinstance(game, OhSevenGame):
        if check.force == "sum7":
            forcing = game.attempt == 0
        else:
            forcing = game.round == 0 and game.deal_number == 0
        if forcing and len(game.to_act) > 1:
            return min(legal, key=lambda card: card % 8)  # keep the sum low
        if forcing:  # the last to bid: everyone else has chosen
            chosen = sum(card % 8 for card in game.pending.values())
            wanted = [card for card in legal if card % 8 == 7 - chosen]
            if wanted:
                return wanted[0]
    return rng.choice(legal)


def play_check(
    session: _Session | None, check: Check, clock: TimeControl
) -> tuple[CheckResult, Game]:
    """Play ``check`` on the referee's loop with the bot in ``session`` in its seat (None:
    fallback moves for it throughout) and in-process opponents in the others."""
    game = new_game(check.rules(), check.players, check.seed, stacked_decks=check.stacked)
    index = session.games if session is not None else 0
    rng = random.Random(f"check:{check.seed}")
    seconds: list[tuple[str, float]] = []
    moves: list[Any] = []
    rebids = 0

    def on_move(seat: int, kind: str, move: Move, took: float | None) -> None:
        nonlocal rebids
        if seat != check.seat:
            return
        if kind == "bid" and getattr(game, "attempt", 0) > 0:
            rebids += 1
        if took is None:
            moves.append(None)
        else:
            moves.append(move_to_wire(game, kind, move))
            seconds.append((kind, took))

    live = session is not None and not session.dead
    links: list[Link] = [_Opponent(check, rng) for _ in range(check.players)]
    fallback = RandomFallback(f"fallback:{check.seed}")
    if live:
        assert session is not None
        links[check.seat] = _Limited(session.referee, session.bot)
        bots_at: list[Contestant | None] = [None] * check.players
        bots_at[check.seat] = session.bot
        table = session.referee.play(index, game, links, bots_at, fallback, on_move=on_move)
        session.games += 1
    else:
        links[check.seat] = _Absent()
        table = Table(game, links, index=index, fallback=fallback, on_move=on_move)
        table.run()
    faults = tuple(f for f in table.faults if f.seat == check.seat)
    redeals = sum(1 for event in game.events if event["type"] == "redeal")
    result = CheckResult(check, faults, tuple(seconds), tuple(moves), rebids, redeals)
    return result, game


# --------------------------------------------------------------------------- the whole run


def check_bot(
    spec: BotSpec,
    *,
    games: tuple[str, ...] = GAMES,
    sandbox: SandboxConfig | None = None,
    clock: TimeControl = _CLOCK,
    seed: int = 0,
    max_failures: int = 3,
    replay_dir: str | None = None,
    determinism: bool = True,
    strict: bool = False,
) -> Report:
    """Run every check of ``games`` on the bot; stop asking it after ``max_failures`` failed
    checks (the rest are reported as skipped). ``strict`` starts the bot with OHSEVEN_STRICT=1
    (an SDK bot then fails hard where it would play a substitute move), and makes decisions
    slower than the move limit a failure (:func:`summary`)."""
    config = sandbox or SandboxConfig()
    results: list[CheckResult] = []
    session: _Session | None = None
    failures = 0
    try:
        for check in checks_for(games, seed):
            if failures >= max_failures:
                results.append(CheckResult(check, (), (), (), skipped=True))
                continue
            start_fault = None
            if session is None or session.dead:
                if session is not None:
                    session.close()
                session = _Session(spec, config, clock, seed, strict)
                start_fault = session.start()
            result, game = play_check(None if session.dead else session, check, clock)
            if start_fault is not None:
                fault = attrs.evolve(start_fault, seat=check.seat)
                result = attrs.evolve(result, faults=(fault, *result.faults))
            if not result.passed:
                result = attrs.evolve(result, output=output_tail(session.output()))
            results.append(result)
            failures += not result.passed
            if replay_dir is not None:
                name = "".join(c if c.isalnum() else "-" for c in check.name).strip("-")
                seats = [spec.name if s == check.seat else "random" for s in range(game.players)]
                path = os.path.join(replay_dir, f"check-{len(results):02d}-{name}.json")
                save_replay(path, to_replay(game, seats, result.faults))
                results[-1] = attrs.evolve(result, replay=path)
    finally:
        if session is not None:
            session.close()
    deterministic = None
    if determinism and failures == 0:
        deterministic = _determinism(spec, config, clock, games, seed)
    return Report(spec, config.mode, tuple(results), deterministic, clock, strict)


def _determinism(
    spec: BotSpec, config: SandboxConfig, clock: TimeControl, games: tuple[str, ...], seed: int
) -> tuple[bool, str]:
    for check in determinism_checks(games, seed):
        runs = []
        for _ in range(2):
            session = _Session(spec, config, clock, seed)
            try:
                fault = session.start()
                if fault is not None:
                    return False, f"{check.name}: {fault.status}: {fault.detail}"
                runs.append(play_check(session, check, clock)[0].moves)
            finally:
                session.close()
        first, second = runs
        for index, (a, b) in enumerate(zip(first, second, strict=False)):
            if a != b:
                return False, (
                    f"{check.name}, seed {check.seed}: decision {index + 1} was "
                    f"{json.dumps(a)} in the first run and {json.dumps(b)} in the second"
                )
    return True, "the same moves in two runs of the same games"


# --------------------------------------------------------------------------- reporting


def _stats(values: list[float]) -> dict[str, float | int]:
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return {
        "n": len(ordered),
        "mean_ms": round(1000 * sum(ordered) / len(ordered), 2),
        "p95_ms": round(1000 * p95, 2),
        "max_ms": round(1000 * ordered[-1], 2),
    }


def _slow(timing: dict[str, dict[str, Any]], clock: TimeControl) -> list[str]:
    """A warning for each kind of decision whose 95th percentile passes the move limit: in a
    tournament under this time control such decisions draw on the bank until it is gone, then
    time out."""
    limit_ms = 1000 * clock.move_seconds
    warnings = []
    for kind in ("pass", "bid", "play"):
        stats = timing.get(kind) or {}
        if stats.get("n") and stats["p95_ms"] > limit_ms:
            over = stats["p95_ms"] - limit_ms
            lasts = int(1000 * clock.bank_seconds // over) if over > 0 else 0
            warnings.append(
                f"{kind} decisions are slow: p95 {stats['p95_ms']:.0f} ms passes the move limit "
                f"of {limit_ms:.0f} ms; each such decision draws on the {clock.bank_seconds:g} s "
                f"bank of a game, which lasts about {lasts} of them, then decisions time out "
                "(check under a tournament's limits with --move-timeout and --bank)"
            )
    return warnings


def summary(report: Report) -> dict[str, Any]:
    """The report as plain data (the ``--json`` output)."""
    times: dict[str, list[float]] = {"all": [], "pass": [], "bid": [], "play": []}
    checks = []
    for number, result in enumerate(report.results, start=1):
        for kind, took in result.seconds:
            times[kind].append(took)
            times["all"].append(took)
        checks.append(
            {
                "name": result.check.name,
                "status": "skipped" if result.skipped else "pass" if result.passed else "fail",
                "seat": result.check.seat,
                "seed": result.check.seed,
                "decisions": len(result.moves),
                "rebids": result.rebids,
                "redeals": result.redeals,
                "faults": [site_data(site) for site in _sites(result, number)],
                "replay": result.replay,
                "output_tail": author_paths(result.output),
            }
        )
    deterministic = report.deterministic
    timing = {kind: _stats(values) for kind, values in times.items()}
    slow = _slow(timing, report.clock)
    return {
        "bot": report.bot.name,
        "command": list(report.bot.command),
        "sandbox": report.sandbox,
        "passed": report.passed and not (report.strict and slow),
        "time_control": {
            "move_seconds": report.clock.move_seconds,
            "bank_seconds": report.clock.bank_seconds,
        },
        "slow": slow,
        "checks": checks,
        "fault_groups": [
            {
                "status": group.status,
                "location": group.location,
                "count": group.count,
                "checks": group.games,
                "first": [site_data(site) for site in group.first],
            }
            for group in group_faults(
                site
                for number, result in enumerate(report.results, start=1)
                for site in _sites(result, number)
            )
        ],
        "timing": timing,
        "deterministic": None if deterministic is None else deterministic[0],
        "determinism": "not measured (a check failed)"
        if deterministic is None
        else deterministic[1],
    }


def _sites(result: CheckResult, number: int) -> list[FaultSite]:
    """The faults of a check, each where it happened (its replay, else "check N")."""
    return [FaultSite.of(fault, result.replay, f"check {number}") for fault in result.faults]


def render(data: dict[str, Any], argument: str | None = None) -> str:
    """The report as text for a terminal: a line per check, then the faults of every check
    grouped by (status, location), each with where it first happened and the command that
    asks it again (``argument``: the bot as given on the command line)."""
    lines = [
        f"check-bot {data['bot']}: {' '.join(data['command'])} (sandbox {data['sandbox']})",
        "",
    ]
    sites: list[FaultSite] = []
    tail = ""
    skipped = 0
    for number, check in enumerate(data["checks"], start=1):
        label = {"pass": "PASS", "fail": "FAIL", "skipped": "SKIP"}[check["status"]]
        extra = f"{check['decisions']} decisions"
        if check["rebids"]:
            extra += f", {check['rebids']} re-bid(s)"
        if check["redeals"]:
            extra += f", {check['redeals']} redeal(s)"
        if check["status"] == "skipped":
            extra = "not run: too many failed checks"
        faults = Counter(str(fault["status"]) for fault in check["faults"])
        if faults:
            extra += "; " + ", ".join(
                status + (f" x{count}" if count > 1 else "") for status, count in faults.items()
            )
        if check["status"] == "skipped":
            skipped += 1
            continue
        lines.append(f"  {label}  {check['name']} (seat {check['seat']}): {extra}")
        sites.extend(
            FaultSite.of(fault, check.get("replay"), f"check {number}") for fault in check["faults"]
        )
        tail = check.get("output_tail") or tail  # the bot's output since it started: the last
    if skipped:
        lines.append(f"  SKIP  {skipped} other checks: not run after too many failed checks")
    if sites:
        lines.append("")
        lines.extend(
            render_groups(
                data["bot"],
                group_faults(sites),
                tail,
                argument,
                unit="check",
                save_hint="(save the checks' games with --replays DIR to ask a decision again)",
            )
        )
    lines.append("")
    lines.append("time per decision:")
    for kind, stats in data["timing"].items():
        if stats["n"]:
            lines.append(
                f"  {kind:>4}: mean {stats['mean_ms']:.1f} ms, p95 {stats['p95_ms']:.1f} ms, "
                f"max {stats['max_ms']:.1f} ms ({stats['n']} decisions)"
            )
    for warning in data.get("slow") or []:
        lines.append(f"WARNING: {warning}" + (" [fails with --strict]" if data["passed"] else ""))
    verdict = {True: "yes", False: "no", None: "unknown"}[data["deterministic"]]
    lines.append(f"deterministic under a fixed seed: {verdict}: {data['determinism']}")
    passed = sum(check["status"] == "pass" for check in data["checks"])
    total = len(data["checks"])
    lines.append("")
    lines.append(f"{'OK' if data['passed'] else 'FAILED'}: {passed} of {total} checks passed")
    return printable("\n".join(lines))  # the bot's name, faults, output: bot-originated text


# --------------------------------------------------------------------------- the command


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--game",
        choices=[*GAMES, "both"],
        default="both",
        help="which game's checks to run (default %(default)s)",
    )
    parser.add_argument(
        "--sandbox", choices=MODES, default="bwrap", help="how the bot runs (default %(default)s)"
    )
    add_time_control_arguments(parser)
    add_extra_path_argument(parser)
    add_limit_arguments(parser)
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="S",
        help="seed of the checks' deals and seats (default: a random 128-bit seed, printed)",
    )
    parser.add_argument(
        "--max-failures",
        type=int,
        default=3,
        metavar="N",
        help="skip the remaining checks after N failed ones (default %(default)s)",
    )
    parser.add_argument("--replays", metavar="DIR", help="save a replay of every check in DIR")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="start the bot with OHSEVEN_STRICT=1: an SDK bot then crashes with its traceback "
        "where it would play a random legal move for an exception or an illegal answer; and "
        "fail the bot when the 95th percentile of a kind of decision passes --move-timeout "
        "(without it: a warning)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    parser.add_argument("bot", metavar="BOT", help="a bot file or a command line")


def _fail(message: str) -> int:
    print(f"ohseven-referee check-bot: {printable(message)}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    raise_fd_limit()

    try:
        (spec,) = bot_specs([args.bot])
        replays = args.replays and os.path.abspath(args.replays)
        shown = extra_paths(args.extra_path, [spec], replays)
    except BotArgumentError as error:
        return _fail(str(error))
    if not args.move_timeout > 0 or not args.bank >= 0 or args.max_failures < 1:
        return _fail("--move-timeout must be positive, --bank not negative, --max-failures >= 1")
    config = SandboxConfig(mode=args.sandbox, extra_paths=shown, limits=sandbox_limits(args))
    try:
        check_sandbox(config)
    except SandboxError as error:
        return _fail(str(error))
    cgroups.warn_unavailable()  # once: what is not enforced without cgroups
    if args.replays:
        try:
            os.makedirs(args.replays, exist_ok=True)
        except OSError as error:
            return _fail(f"--replays {args.replays}: {error.strerror}")
    games = GAMES if args.game == "both" else (args.game,)
    clock = TimeControl(move_seconds=args.move_timeout, bank_seconds=args.bank)
    seed = announce_seed(args.seed)
    private = {"the replay folder": args.replays} if args.replays else {}
    try:
        # the bot runs from a private copy of its own files (see ``staging``)
        with staged_bots([spec], private=private, limits=stage_limits(args)) as (staged,):
            report = check_bot(
                staged,
                games=games,
                sandbox=config,
                clock=clock,
                seed=seed,
                max_failures=args.max_failures,
                replay_dir=args.replays,
                strict=args.strict,
            )
    except StagingError as error:
        return _fail(str(error))
    report = attrs.evolve(report, bot=spec)
    data = summary(report)
    print(json.dumps(data) if args.json else render(data, args.bot))
    return 0 if data["passed"] else 1
