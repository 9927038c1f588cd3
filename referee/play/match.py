"""Play one match: the games of a :class:`~ohseven.referee.records.MatchSpec` at one table.

:func:`play_match` starts the bots once (a :class:`~ohseven.referee.play.referee.Referee`),
plays ``len(spec.seatings)`` games on the one referee loop, each with the bots of its seating
in their seats, records every game (a :class:`~ohseven.referee.records.GameRecord`, and a
replay file with ``replay_dir``) and returns them with the bots' logs. :func:`play_game`
plays one of those games, and can seat guests (any :class:`~ohseven.core.table.Link`, such as a
person at the keyboard) between the bots. :func:`start_check` only starts the bots, as a
tournament does before it begins.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping

import attrs
from ohseven.core.rules import OH_SEVEN, Rules, RulesError, new_game
from ohseven.core.table import Link, RandomFallback
from ohseven.referee.play.contestant import Contestant
from ohseven.referee.play.referee import DEFAULT_DROP_AFTER_FAULTS, Referee
from ohseven.referee.records import (
    BotSpec,
    FaultStatus,
    GameRecord,
    MatchResult,
    MatchSpec,
    TimeControl,
)
from ohseven.referee.replay import save_replay, to_replay
from ohseven.referee.sandbox.settings import SandboxConfig
from ohseven.referee.stats import game_statistics

__all__ = ["play_match", "play_game", "replay_path", "start_check", "MatchSpecError"]


class MatchSpecError(ValueError):
    """A match spec that cannot be played (seatings, seeds and bots do not agree)."""


def _check_spec(spec: MatchSpec) -> None:
    if not spec.bots:
        raise MatchSpecError(f"match {spec.match_id}: no bots")
    if len(spec.seeds) != len(spec.seatings):
        raise MatchSpecError(
            f"match {spec.match_id}: {len(spec.seatings)} seatings but {len(spec.seeds)} seeds"
        )
    for g, seating in enumerate(spec.seatings):
        if len(set(seating)) != len(seating) or any(not 0 <= b < len(spec.bots) for b in seating):
            raise MatchSpecError(
                f"match {spec.match_id}: seating {g} {seating} must name distinct bots "
                f"0..{len(spec.bots) - 1}"
            )
        try:
            spec.rules.check_players(len(seating))
        except RulesError as error:
            raise MatchSpecError(f"match {spec.match_id}, game {g}: {error}") from None


def play_game(
    referee: Referee,
    index: int,
    replay_dir: str | None = None,
    *,
    guests: Mapping[int, tuple[str, Link]] | None = None,
) -> GameRecord:
    """Play game ``index`` of ``referee``'s match spec (its seating, its deal) and record it;
    with ``replay_dir`` its replay is saved there (:func:`replay_path`).

    ``guests``: seat -> (name, link) of players who are not the referee's bots (a person at
    the keyboard): they take those seats and the seating's bots fill the others, in order.
    A game stopped by an exception (Ctrl-C, a guest who leaves) still has the replay of its
    moves so far saved before the exception goes on."""
    spec = referee.spec
    guests = dict(guests or {})
    bots = [referee.bots[b] for b in spec.seatings[index]]
    seats: list[Contestant | None] = list(bots)
    for seat in sorted(guests):
        seats.insert(seat, None)
    names = tuple(guests[s][0] if bot is None else bot.spec.name for s, bot in enumerate(seats))
    started = time.monotonic()
    referee.prepare(bots, spec.seeds[index])
    if index + 1 < len(spec.seatings):  # the next game's fresh processes start during this one
        following = [referee.bots[b] for b in spec.seatings[index + 1]]
        referee.foresee(following, spec.seeds[index + 1])
    game = new_game(spec.rules, len(seats), spec.seeds[index])
    links = [guests[s][1] if bot is None else referee.link(bot) for s, bot in enumerate(seats)]
    fallback = RandomFallback(f"{spec.fallback_seed}:{index}")
    try:
        table = referee.play(index, game, links, seats, fallback)
    except BaseException:
        if replay_dir is not None:  # the moves so far (the result is null)
            save_replay(replay_path(replay_dir, spec.match_id, index), to_replay(game, names))
        raise
    result = game.result()
    record = GameRecord(
        match_id=spec.match_id,
        game_index=index,
        seed=spec.seeds[index],
        seats=names,
        totals=result.totals,
        ranks=result.ranks,
        faults=tuple(table.faults),
        stats=game_statistics(game),
        seconds=round(time.monotonic() - started, 6),
    )
    if replay_dir is not None:
        path = replay_path(replay_dir, spec.match_id, index)
        save_replay(path, to_replay(game, record.seats, record.faults))
        record = attrs.evolve(record, replay_path=path)
    return record


def replay_path(replay_dir: str, match_id: str, index: int) -> str:
    """Where :func:`play_game` saves the replay of game ``index`` of match ``match_id``."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in match_id) or "match"
    return os.path.join(replay_dir, f"{safe}-game{index:03d}.json")


def play_match(
    spec: MatchSpec,
    *,
    sandbox: SandboxConfig | None = None,
    replay_dir: str | None = None,
    on_game: Callable[[GameRecord], None] | None = None,
    max_restarts: int = 2,
    drop_after_faults: int = DEFAULT_DROP_AFTER_FAULTS,
) -> MatchResult:
    """Play every game of ``spec`` at one table and return the records, bots' logs included."""
    _check_spec(spec)
    config = sandbox if sandbox is not None else SandboxConfig(mode="bwrap")
    games: list[GameRecord] = []
    with Referee(
        spec, config, max_restarts=max_restarts, drop_after_faults=drop_after_faults
    ) as referee:
        referee.start()
        for index in range(len(spec.seatings)):
            record = play_game(referee, index, replay_dir)
            games.append(record)
            if on_game is not None:
                on_game(record)
    return MatchResult(spec, tuple(games), referee.close())


def start_check(
    bots: tuple[BotSpec, ...],
    *,
    sandbox: SandboxConfig,
    time_control: TimeControl | None = None,
    batch: int = 8,
) -> dict[str, tuple[str, str]]:
    """Start every bot once, as a match does, and wait for its hello; then shut it down.

    Returns ``{name: (why, its output)}`` for each bot that could not start: a tournament
    refuses to rate a bot on fallback games when it never ran at all. ``batch`` bots start at
    a time.
    """
    clock = time_control or TimeControl()
    failures: dict[str, tuple[str, str]] = {}
    for first in range(0, len(bots), batch):
        spec = MatchSpec(
            match_id="start-check",
            rules=Rules.make(OH_SEVEN, ()),
            bots=bots[first : first + batch],
            seatings=(),
            seeds=(),
            time_control=clock,
        )
        with Referee(spec, sandbox, max_restarts=0) as referee:
            referee.start()
            why = {
                bot.spec.name: detail
                for bot in referee.bots
                for status, detail in bot.take_carried()
                if status is FaultStatus.NO_START
            }
        logs = referee.close()
        failures.update((name, (detail, logs.get(name, ""))) for name, detail in why.items())
    return failures
