"""Versioned JSON replays, and the wire form of moves.

A replay is a JSON object::

    {"format": "ohseven-replay", "version": 1,
     "game": "oh-seven", "rules": {option: value, ...}, "players": 4, "seed": 12,
     "table": {...},            # table overrides (stacked_decks as card names, Oh Hell
                                # ranks / hand_sizes / first_dealer / trump_on_last_hand)
     "seats": ["bot-a", null, ...],   # bot names, or null when unknown
     "moves": [[seat, kind, wire_move], ...],   # kind: "pass", "bid" or "play"
     "events": [...],           # the engine's event log, private events included
     "result": {"totals": [...], "ranks": [...]} or null while the game is not over,
     "faults": [{"seat": 0, "status": "timeout", "detail": "...",
                 "move": 12, "round": 2, "trick": 3}, ...]}   # move, round, trick from 1
                                # (null outside a decision; absent in older replays)

Moves are kept in wire form so that a replay reads well: a card is its name (``"7S"``,
``"TH"``), an Oh-Seven bid is a card name, an Oh Hell bid is an int, a pass is a list of card
names. :func:`~ohseven.core.wire.move_to_wire` and :func:`~ohseven.core.wire.move_from_wire`
convert one move (the protocol layer and the SDK use them too, so they are strict: a bool is not
an int and a card name must name a card of the deck).
:func:`validate_replay` plays the moves through a fresh engine and raises :class:`ReplayError`
at the first move or event that differs from the record.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

import attrs
from ohseven.core.cards import OH_SEVEN_DECK, UnknownCardError, oh_hell_deck
from ohseven.core.rules import GAMES, OH_SEVEN, Game, RulesError, new_game
from ohseven.core.wire import move_from_wire, move_to_wire
from ohseven.referee.files import write_atomic

__all__ = [
    "FORMAT",
    "VERSION",
    "KINDS",
    "ReplayError",
    "to_replay",
    "save_replay",
    "load_replay",
    "validate_replay",
    "start_game",
    "MAX_REPLAY_BYTES",
    "MAX_REPLAY_DEPTH",
    "play_move",
    "game_after",
]

FORMAT = "ohseven-replay"
VERSION = 1
KINDS = ("pass", "bid", "play")
#: the largest replay file read (a game of 9 players, every event included, is well under 1 MB)
MAX_REPLAY_BYTES = 64 << 20
#: the deepest nesting of a replay's JSON (a replay's own is 5 or 6 levels)
MAX_REPLAY_DEPTH = 64


class ReplayError(ValueError):
    """A replay that is not a valid record of a game (bad shape, or moves/events that differ)."""


# --------------------------------------------------------------------------- replays


def _fault_dict(fault: object) -> dict[str, Any]:
    if attrs.has(type(fault)):
        data = attrs.asdict(fault)  # type: ignore[arg-type]
    elif isinstance(fault, dict):
        data = dict(fault)
    else:
        raise TypeError(f"a fault must be a Fault or a dict, not {fault!r}")
    status = data.get("status")
    data["status"] = getattr(status, "value", status)
    return data


def _table_to_wire(game: Game) -> dict[str, Any]:
    table = dict(game.table)
    if "stacked_decks" in table:
        names = game.deck.names
        table["stacked_decks"] = [[names[c] for c in order] for order in table["stacked_decks"]]
    return table


def to_replay(
    game: Game, seats: Iterable[str | None] | None = None, faults: Iterable[object] = ()
) -> dict[str, Any]:
    """The replay of ``game`` (over or not) as a JSON-ready dict."""
    n = game.players
    seat_names = [None] * n if seats is None else list(seats)
    if len(seat_names) != n:
        raise ValueError(f"seats names {len(seat_names)} bots for {n} players")
    result = None
    if game.is_over:
        outcome = game.result()
        result = {"totals": list(outcome.totals), "ranks": list(outcome.ranks)}
    return {
        "format": FORMAT,
        "version": VERSION,
        "game": game.rules.game,
        "rules": game.rules.as_dict(),
        "players": n,
        "seed": game.seed,
        "table": _table_to_wire(game),
        "seats": seat_names,
        "moves": [[seat, kind, move_to_wire(game, kind, move)] for seat, kind, move in game.moves],
        "events": [dict(event) for event in game.events],
        "result": result,
        "faults": [_fault_dict(fault) for fault in faults],
    }


def save_replay(path: str | os.PathLike[str], replay: dict[str, Any]) -> None:
    """Write ``replay`` to ``path`` atomically (a temporary file, then a rename)."""
    write_atomic(path, json.dumps(replay, separators=(",", ":")) + "\n", mode=0o600)


def load_replay(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a replay file; raises :class:`ReplayError` if it is not JSON of the right format,
    larger than :data:`MAX_REPLAY_BYTES` or nested deeper than :data:`MAX_REPLAY_DEPTH`."""
    where = os.fspath(path)
    too_large = f"{where}: larger than a replay can be (at most {MAX_REPLAY_BYTES >> 20} MB)"
    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size > MAX_REPLAY_BYTES:
            raise ReplayError(too_large)
        data = handle.read(MAX_REPLAY_BYTES + 1)  # bounded: a device or a growing file too
    if len(data) > MAX_REPLAY_BYTES:
        raise ReplayError(too_large)
    try:
        replay = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ReplayError(f"{where}: not a UTF-8 text file") from None
    except json.JSONDecodeError as error:
        raise ReplayError(f"{where}: not JSON ({error})") from None
    except RecursionError:
        raise ReplayError(f"{where}: nested deeper than a replay can be") from None
    if _depth(replay) > MAX_REPLAY_DEPTH:
        raise ReplayError(
            f"{where}: nested deeper than a replay can be (more than {MAX_REPLAY_DEPTH} levels)"
        )
    _check_header(replay, where)
    return replay


def _depth(value: object) -> int:
    """How deep ``value``'s lists and objects nest (iteratively: any depth is measured)."""
    deepest = 0
    pending: list[tuple[object, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth)
            if depth <= MAX_REPLAY_DEPTH:  # past it, the answer is known
                pending.extend((inner, depth + 1) for inner in item)
    return deepest


def _check_header(replay: object, where: str = "replay") -> None:
    if not isinstance(replay, dict):
        raise ReplayError(f"{where}: a replay is a JSON object, not {type(replay).__name__}")
    if replay.get("format") != FORMAT:
        raise ReplayError(f"{where}: format {replay.get('format')!r} is not {FORMAT!r}")
    if replay.get("version") != VERSION:
        raise ReplayError(f"{where}: version {replay.get('version')!r} is not {VERSION}")
    missing = [
        key for key in ("game", "rules", "players", "seed", "moves", "events") if key not in replay
    ]
    if missing:
        raise ReplayError(f"{where}: missing {', '.join(missing)}")
    if replay["game"] not in GAMES:
        raise ReplayError(f"{where}: unknown game {replay['game']!r}")


def _table_from_wire(replay: dict[str, Any], game_name: str) -> dict[str, Any]:
    table = dict(replay.get("table") or {})
    if "stacked_decks" in table:
        deck = OH_SEVEN_DECK if game_name == OH_SEVEN else oh_hell_deck(table.get("ranks", 13))
        try:
            table["stacked_decks"] = [
                [deck.parse(name) for name in order] for order in table["stacked_decks"]
            ]
        except (UnknownCardError, TypeError) as error:
            raise ReplayError(f"replay table: stacked deck: {error}") from None
    if "hand_sizes" in table:
        table["hand_sizes"] = tuple(table["hand_sizes"])
    return table


def start_game(replay: dict[str, Any]) -> Game:
    """The game of ``replay`` before its first move (raises :class:`ReplayError`)."""
    _check_header(replay)
    game_name = replay["game"]
    try:
        table = _table_from_wire(replay, game_name)
        return new_game(game_name, replay["players"], replay["seed"], replay["rules"], **table)
    except (RulesError, TypeError, ValueError) as error:
        if isinstance(error, ReplayError):
            raise
        raise ReplayError(f"replay header: cannot start the game: {error}") from None


def play_move(game: Game, entry: object, index: int = 0) -> None:
    """Play a replay's move ``entry`` (``[seat, kind, move]``, the move in wire form), the move
    at ``index`` of its game's moves, on ``game`` (raises :class:`ReplayError` naming it by its
    number, ``index + 1``, as ``replay --at`` and every fault report count)."""
    if not isinstance(entry, list | tuple) or len(entry) != 3:
        raise ReplayError(f"move {index + 1}: expected [seat, kind, move], not {entry!r}")
    seat, kind, value = entry
    if game.is_over:
        raise ReplayError(f"{_where(entry, index)}: the game is already over")
    if kind != game.phase.value:
        raise ReplayError(
            f"{_where(entry, index)}: the game asks for a {game.phase.value} decision"
        )
    try:
        game.push(seat, move_from_wire(game, kind, value))
    except (RulesError, ValueError, TypeError) as error:
        raise ReplayError(f"{_where(entry, index)}: {error}") from None


def _where(entry: Any, index: int) -> str:
    seat, kind, value = entry
    return f"move {index + 1} (seat {seat} {kind} {value!r})"  # from 1, as replay --at counts


def game_after(replay: dict[str, Any], moves: int) -> Game:
    """The game of ``replay`` after its first ``moves`` moves (raises :class:`ReplayError`)."""
    game = start_game(replay)
    for index, entry in enumerate(replay["moves"][:moves]):
        play_move(game, entry, index)
    return game


def validate_replay(replay: dict[str, Any]) -> Game:
    """Replay the moves through a fresh engine; return the game, or raise :class:`ReplayError`
    naming the first move or event that differs from the record."""
    game = start_game(replay)
    recorded = replay["events"]
    checked = _compare_events(game, recorded, 0, "the start of the game")
    for index, entry in enumerate(replay["moves"]):
        play_move(game, entry, index)
        checked = _compare_events(game, recorded, checked, _where(entry, index))
    if checked != len(recorded):
        raise ReplayError(
            f"event {checked}: the replay records {len(recorded) - checked} events after the "
            f"last move that the game does not produce: {recorded[checked]!r}"
        )
    result = replay.get("result")
    if game.is_over:
        outcome = game.result()
        expected = {"totals": list(outcome.totals), "ranks": list(outcome.ranks)}
        if result != expected:
            raise ReplayError(f"result: the replay records {result!r}, the game gives {expected!r}")
    elif result is not None:
        raise ReplayError(f"result: the replay records {result!r} but the game is not over")
    return game


def _compare_events(game: Game, recorded: list[Any], start: int, where: str) -> int:
    produced = game.events
    for index in range(start, len(produced)):
        if index >= len(recorded):
            raise ReplayError(
                f"event {index} after {where}: the game produces {produced[index]!r}, "
                "the replay has no more events"
            )
        if recorded[index] != produced[index]:
            raise ReplayError(
                f"event {index} after {where}: the game produces {produced[index]!r}, "
                f"the replay records {recorded[index]!r}"
            )
    return len(produced)
