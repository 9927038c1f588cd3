"""The replay viewer's data: a game's replay as frames a spectator can step through
(:func:`replay_view`), their compact form (:func:`compact_frames`), and the ``.js`` file of a
game's replay on the site (:func:`replay_script`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ohseven.referee.fault_report import location, public_paths
from ohseven.referee.records import GameRecord

__all__ = [
    "SUIT_NAMES",
    "compact_frames",
    "expand_frames",
    "replay_script",
    "replay_view",
    "round_outcomes",
]


SUIT_NAMES = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}


_JOINS_PREVIOUS = {"deal", "received", "trump"}


def _card_rank(card: str) -> int:
    return int(card[0]) if card[0].isdigit() else -1


def replay_view(replay: Mapping[str, Any]) -> dict[str, Any]:
    """The frames of a replay, one per thing a spectator would want to pause on.

    ``replay`` is a replay as ``referee/replay.py`` writes it (with the private events). A frame
    is the whole visible state after a group of events: every hand, the current trick, the bids
    (and every bid attempt of this deal), trump, tricks won and the running totals. ``rounds``
    and ``tricks`` index the first frame of each round and the frame completing each trick.
    Each fault that names its move gets the ``step`` (from 1, as the page counts them) of the
    frame showing that move: what the fallback or the bot's SDK played for it.
    """
    players = int(replay["players"])
    game = replay["game"]
    state: dict[str, Any] = {
        "round": 0,
        "deal": 0,
        "hand_size": 0,
        "dealer": None,
        "trump": None,
        "trump_card": None,
        "leader": None,
        "hands": [[] for _ in range(players)],
        "passes": [],
        "attempts": [],
        "bids": [None] * players,
        "bonus": [0] * players,
        "trick": [],
        "trick_no": 0,
        "winner": None,
        "tricks_won": [0] * players,
        "totals": [0] * players,
        "points": None,
        "scored": 0,
    }
    frames: list[dict[str, Any]] = []
    rounds: list[int] = []
    tricks: list[int] = []
    sheet: list[dict[str, Any]] = []
    pending: dict[str, Any] | None = None
    #: the frame showing each move (``move_frames[m - 1]``: move m, counted from 1)
    move_frames: list[int] = []
    names = [
        name or f"seat {seat}" for seat, name in enumerate(replay.get("seats") or [None] * players)
    ]

    def caption_for(event: Mapping[str, Any]) -> tuple[str, str]:
        kind = event["type"]
        if kind in ("round", "deal"):
            size = state["hand_size"]
            text = f"Round {state['round'] + 1}: {size} card{'s' if size != 1 else ''} dealt"
            if state["deal"]:
                text += f" (redeal {state['deal']})"
            if game != "oh-seven":
                trump = state["trump_card"] or "no trump"
                text += f"; {names[state['dealer']]} deals, trump card {trump}"
            return "deal", text
        if kind in ("passed", "received"):
            return "pass", "Cards passed"
        if kind in ("bids", "trump"):
            last = state["attempts"][-1] if state["attempts"] else None
            if game == "oh-seven" and last is not None:
                if last["forced"]:
                    why = {
                        "sum_seven": "the bids sum to 7",
                        "identical_top": "two identical top cards",
                        "sum_seven_identical_top": "the bids sum to 7 and the top cards tie",
                    }.get(last["forced"], last["forced"])
                    who = ", ".join(names[s] for s in last["bonus"]) or "nobody"
                    return (
                        "rebid",
                        f"Bid attempt {last['attempt']}: re-bid forced ({why}); "
                        f"bonus point to {who}",
                    )
                top = last["top"][0]
                return (
                    "bids",
                    f"Bid attempt {last['attempt']}: sum {last['sum']}; top bid "
                    f"{last['cards'][top]} by {names[top]}; trump "
                    f"{SUIT_NAMES.get(state['trump'] or '', '?')}",
                )
            return "bids", "Bids revealed"
        if kind == "redeal":
            return "redeal", "Seven forced attempts: the round is dealt again"
        if kind == "bid":
            return "bid", f"{names[event['seat']]} bids {event['bid']}"
        if kind == "play":
            return "play", f"{names[event['seat']]} plays {event['card']}"
        if kind == "trick":
            return (
                "trick",
                f"Trick {state['trick_no']} won by {names[event['winner']]}",
            )
        if kind == "score":
            return "score", f"Round {event['round'] + 1} scored"
        if kind == "game_over":
            best = [names[s] for s in range(players) if event["ranks"][s] == 1]
            return "over", "Game over: " + " and ".join(best) + " win" + (
                "s" if len(best) == 1 else ""
            )
        return kind, kind

    def snapshot(event: Mapping[str, Any]) -> None:
        kind, caption = caption_for(event)
        frame = {
            "kind": kind,
            "caption": caption,
            "round": state["round"],
            "deal": state["deal"],
            "hand_size": state["hand_size"],
            "dealer": state["dealer"],
            "trump": state["trump"],
            "trump_card": state["trump_card"],
            "hands": [list(hand) for hand in state["hands"]],
            "passes": [dict(p) for p in state["passes"]],
            "attempts": [dict(a) for a in state["attempts"]],
            "bids": list(state["bids"]),
            "bonus": list(state["bonus"]),
            "trick": [list(pair) for pair in state["trick"]],
            "trick_no": state["trick_no"],
            "winner": state["winner"],
            "leader": state["leader"],
            "tricks_won": list(state["tricks_won"]),
            "totals": list(state["totals"]),
            "points": None if state["points"] is None else list(state["points"]),
            "scored": state["scored"],
        }
        if kind == "deal" and state["deal"] == 0:
            rounds.append(len(frames))
        if kind == "trick":
            tricks.append(len(frames))
        frames.append(frame)

    for event in replay["events"]:
        kind = event["type"]
        joins = kind in _JOINS_PREVIOUS or (
            kind == "passed" and pending is not None and pending["type"] in ("passed", "received")
        )
        if pending is not None and not joins:
            snapshot(pending)
            pending = None
        # the moves this event shows (a simultaneous set shows when it completes), all in the
        # frame this event goes to
        moves = _MOVES_SHOWN.get(kind, 0)
        if kind == "bids":
            moves = players
        move_frames.extend([len(frames)] * moves)
        if kind == "round":
            if state["winner"] is not None or state["trick"]:
                state["trick"] = []
            state.update(
                round=event["round"],
                deal=event.get("deal", 0),
                hand_size=event["hand_size"],
                dealer=event.get("dealer"),
                trump=event.get("trump"),
                trump_card=event.get("trump_card"),
                leader=None,
                passes=[],
                attempts=[],
                bids=[None] * players,
                trick=[],
                trick_no=0,
                winner=None,
                tricks_won=[0] * players,
                points=None,
            )
            if event.get("deal", 0) == 0:
                state["bonus"] = [0] * players
            if game != "oh-seven" and event.get("dealer") is not None:
                state["leader"] = (event["dealer"] + 1) % players
        elif kind == "deal":
            state["hands"][event["to"]] = list(event["hand"])
        elif kind == "passed":
            giver = event["to"]
            for card in event["cards"]:
                state["hands"][giver].remove(card)
            state["passes"].append(
                {"giver": giver, "receiver": event["receiver"], "cards": list(event["cards"])}
            )
        elif kind == "received":
            hand = state["hands"][event["to"]] + list(event["cards"])
            state["hands"][event["to"]] = _sorted_hand(hand, game)
        elif kind == "bids" and "cards" in event:
            state["attempts"].append(
                {
                    "attempt": event["attempt"],
                    "cards": list(event["cards"]),
                    "top": list(event["top"]),
                    "sum": event["sum"],
                    "forced": event["forced"],
                    "bonus": list(event["bonus"]),
                }
            )
            for seat in event["bonus"]:
                state["bonus"][seat] += 1
                state["totals"][seat] += 1
            state["bids"] = [_card_rank(card) for card in event["cards"]]
        elif kind == "bids":
            state["bids"] = list(event["bids"])
        elif kind == "bid":
            state["bids"][event["seat"]] = event["bid"]
        elif kind == "trump":
            state["trump"] = event["suit"]
            state["leader"] = event["leader"]
            top = state["attempts"][-1]["cards"][event["leader"]] if state["attempts"] else None
            state["trump_card"] = top
        elif kind == "play":
            if state["winner"] is not None:
                state["trick"] = []
                state["winner"] = None
            state["hands"][event["seat"]].remove(event["card"])
            state["trick"].append([event["seat"], event["card"]])
        elif kind == "trick":
            state["trick_no"] += 1
            state["winner"] = event["winner"]
            state["tricks_won"][event["winner"]] += 1
            state["leader"] = event["winner"]
        elif kind == "score":
            state["points"] = list(event["points"])
            state["totals"] = list(event["totals"])
            state["scored"] = event["round"] + 1
            state["trick"] = []
            state["winner"] = None
            sheet.append(
                {
                    "round": event["round"],
                    "bids": list(event["bids"]),
                    "tricks": list(event["tricks"]),
                    "points": list(event["points"]),
                    "bonus": list(event.get("bonus") or [0] * players),
                    "totals": list(event["totals"]),
                }
            )
        elif kind == "game_over":
            state["totals"] = list(event["totals"])
        pending = dict(event)
    if pending is not None:
        snapshot(pending)
    result = replay.get("result") or {}
    return {
        "game": game,
        "rules": dict(replay.get("rules") or {}),
        "seed": None,  # seeds are published apart, and only once revealed (``Tournament``)
        "players": names,
        "result": {
            "totals": list(result.get("totals", [])),
            "ranks": list(result.get("ranks", [])),
        },
        "faults": [_fault_view(f, move_frames) for f in replay.get("faults") or []],
        "sheet": sheet,
        "frames": frames,
        "rounds": rounds,
        "tricks": tricks,
    }


#: the moves an event shows (a ``bids`` event: a whole simultaneous set, one move per seat)
_MOVES_SHOWN = {"play": 1, "bid": 1, "passed": 1}


def _fault_view(fault: Mapping[str, Any], move_frames: Sequence[int]) -> dict[str, Any]:
    """A replay's fault for the viewer: its fields, with no host path in its detail, and the
    step (from 1) showing its move (absent for a fault outside a decision)."""
    view = dict(fault)
    view["detail"] = public_paths(str(fault.get("detail") or ""))
    view["location"] = public_paths(location(str(fault.get("status")), str(fault.get("detail"))))
    move = fault.get("move")
    if isinstance(move, int) and 1 <= move <= len(move_frames):
        view["step"] = move_frames[move - 1] + 1
    return view


_OH_HELL_RANKS = "23456789TJQKA"


def _sorted_hand(cards: list[str], game: str) -> list[str]:
    def key(card: str) -> tuple[int, int]:
        rank = int(card[0]) if game == "oh-seven" else _OH_HELL_RANKS.index(card[0])
        return ("CDHS".index(card[1]), rank)

    return sorted(cards, key=key)


def compact_frames(frames: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``frames`` as deltas: each keeps only the keys that changed since the previous one, and
    ``hands`` only the seats whose hand changed (a ``{"seat": hand}`` map). :func:`expand_frames`
    (and the viewer's JavaScript) undo it."""
    out: list[dict[str, Any]] = []
    previous: Mapping[str, Any] | None = None
    for frame in frames:
        if previous is None:
            out.append(dict(frame))
        else:
            delta = {k: v for k, v in frame.items() if k != "hands" and previous.get(k) != v}
            hands = {
                str(seat): hand
                for seat, hand in enumerate(frame["hands"])
                if hand != previous["hands"][seat]
            }
            if hands:
                delta["hands"] = hands
            out.append(delta)
        previous = frame
    return out


def expand_frames(deltas: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The full frames back from :func:`compact_frames`."""
    frames: list[dict[str, Any]] = []
    for delta in deltas:
        if not frames:
            frames.append(dict(delta))
            continue
        frame = dict(frames[-1])
        for key, value in delta.items():
            if key == "hands":
                hands = list(frame["hands"])
                for seat, hand in value.items():
                    hands[int(seat)] = hand
                frame["hands"] = hands
            else:
                frame[key] = value
        frames.append(frame)
    return frames


def round_outcomes(replay: Mapping[str, Any]) -> list[list[int]]:
    """Every scored round of a replay as ``[seat, bid, tricks won]``, one per seat and round."""
    outcomes = []
    for event in replay["events"]:
        if event.get("type") == "score":
            for seat, (bid, won) in enumerate(zip(event["bids"], event["tricks"], strict=True)):
                outcomes.append([seat, int(bid), int(won)])
    return outcomes


def replay_script(
    ident: str, record: GameRecord, replay: Mapping[str, Any], seed: int | None = None
) -> str:
    """The ``.js`` file of one game's replay: a call of ``ohsevenReplay`` with its frames;
    ``seed`` (once revealed) as a string: a JavaScript number would round a 64-bit seed."""
    view = replay_view(replay)
    view["frames"] = compact_frames(view["frames"])
    view.update(id=ident, match_id=record.match_id, game_index=record.game_index)
    if seed is not None:
        view["seed"] = str(seed)
    text = json.dumps(view, separators=(",", ":"), ensure_ascii=True)
    return "ohsevenReplay(" + text.replace("</", "<\\/") + ");\n"
