"""What decides a tournament's results: the configuration's digest and each bot's
fingerprint, a league's fixed part (:func:`changed_keys`), and the digests of the bots' staged
copies, checked against what the sandbox may show every bot."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ohseven.referee.plan.config import BotEntry
from ohseven.referee.plan.document import Document
from ohseven.referee.plan.sections import BotList
from ohseven.referee.sandbox import staging
from ohseven.referee.sandbox.paths import python_paths

#: keys that do not change the games: left out of the digest. The seed is left out too, so the
#: published digest cannot be searched for a short seed; the store checks the secret apart.
NOT_IN_DIGEST = (
    "workers",
    "output",
    "cluster",
    "cluster_bots",
    "seed",
    "reveal_seeds",
    "staging",
    "site_logs",
    "server",
)


def _at_default(value: Any, default: Any) -> bool:
    """Whether a value written in the file is its key's default (``passing: false``; ``1.0``
    for ``1``, not ``true`` for ``1``)."""
    numbers = (int, float)
    if isinstance(value, numbers) and isinstance(default, numbers):
        both_bool = isinstance(value, bool) and isinstance(default, bool)
        no_bool = not isinstance(value, bool) and not isinstance(default, bool)
        return (both_bool or no_bool) and value == default
    return type(value) is type(default) and value == default


def strip_defaults(value: Any, defaults: Mapping[str, Any], path: str = "") -> Any:
    """The document without the keys written at their default (``defaults``: the key paths'
    defaults, ``Reader.defaults``) nor the sections left empty: writing a default out, or
    leaving it out, is the same tournament."""
    if isinstance(value, dict):
        kept = {}
        for key, inner in value.items():
            child = f"{path}.{key}" if path else str(key)
            if child in defaults and _at_default(inner, defaults[child]):
                continue
            inner = strip_defaults(inner, defaults, child)
            if inner == {} and value[key] != {}:
                continue
            kept[key] = inner
        return kept
    if isinstance(value, list):
        return [strip_defaults(item, defaults, f"{path}[{i}]") for i, item in enumerate(value)]
    return value


def _fixed_part(data: dict) -> dict:
    """What a league may not change once it started: everything in the digest but the bots and
    the budget of games (bots join and leave; the budget can grow)."""
    fixed = {k: v for k, v in data.items() if k not in NOT_IN_DIGEST and k != "bots"}
    schedule = fixed.get("schedule")
    if isinstance(schedule, dict):
        fixed["schedule"] = {k: v for k, v in schedule.items() if k != "games"}
    return fixed


def _decisive(data: dict) -> dict:
    """What decides a round-robin's or a gauntlet's results: every key but ``NOT_IN_DIGEST``."""
    return {k: v for k, v in data.items() if k not in NOT_IN_DIGEST}


def _flatten(value: Any, path: str, out: dict[str, Any]) -> dict[str, Any]:
    if isinstance(value, dict) and value:
        for key, inner in value.items():
            _flatten(inner, f"{path}.{key}" if path else str(key), out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for index, inner in enumerate(value):  # bots: each entry's keys apart
            _flatten(inner, f"{path}[{index}]", out)
    else:
        out[path] = value
    return out


def changed_keys(
    old: dict, new: dict, defaults: Mapping[str, Any] | None = None, *, league: bool = True
) -> list[tuple[str, Any, Any]]:
    """(key, old value, new value) of every key that decides the results (a league's fixed
    part: rules, table sizes, time control, deals...; every key of the digest otherwise) that
    differs between two configuration documents; a missing key is None. A key written at its
    default (``defaults``, see :func:`strip_defaults`) is the same as one left out."""
    part = _fixed_part if league else _decisive
    before, after = (
        _flatten(
            json.loads(
                json.dumps(part(strip_defaults(d, defaults or {})), sort_keys=True, default=str)
            ),
            "",
            {},
        )
        for d in (old, new)
    )
    return [
        (key, before.get(key), after.get(key))
        for key in sorted(set(before) | set(after))
        if before.get(key) != after.get(key)
    ]


def staged_digests(
    doc: Document,
    bots: list[BotEntry],
    keys: list[str],
    output: Path,
    source: str,
    mode: str,
    limits: staging.StageLimits,
    league: bool,
) -> tuple[dict[str, str], dict[str, str]]:
    """The ``staging.tree_digest`` of each bot's copy, and (for a ``league``) the bots whose
    files cannot be staged, each with why: they are left out of the run, the others play.
    Otherwise such errors (a bot's folder inside the output folder, files too large or not
    its owner's to read) go to ``doc``, as do a private path the sandbox shows every bot."""
    private = staging.referee_paths(str(output), source)
    if mode == "bwrap":  # unsandboxed bots see every file their uid can read anyway
        shown = python_paths()
        for key, what in (("output", "the output folder"), ("", "the configuration file")):
            try:
                staging.check_views({what: private[what]} if what in private else {}, shown)
            except staging.StagingError as error:
                doc.error(key, str(error))
    kept = list(range(len(bots)))
    left_out: dict[str, str] = {}
    while True:  # a bot's folder inside a private path: a league leaves it out, plans again
        try:
            plans = staging.plan_bots([bots[i].spec for i in kept], private=private)
            break
        except staging.StagingError as error:
            if not league or error.index is None:
                doc.error(keys[kept[error.index]] if error.index is not None else "", str(error))
                return {}, {}
            left_out[bots[kept.pop(error.index)].name] = str(error)
    # the others are planned with it (its folder is still not theirs to see)
    failures: dict[int, str] | None = {} if league else None
    try:
        digests = staging.tree_digests(plans, limits, failures)
    except staging.StagingError as error:
        doc.error(keys[kept[error.index]] if error.index is not None else "", str(error))
        return {}, {}
    for position, why in (failures or {}).items():
        left_out[bots[kept[position]].name] = why
    named = {
        bots[i].name: digest
        for position, (i, digest) in enumerate(zip(kept, digests, strict=True))
        if position not in (failures or {})
    }
    return named, left_out


def config_digests(
    data: dict, stype: str | None, listed: BotList, defaults: Mapping[str, Any]
) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The configuration's digest (what decides the results; keys written at their
    ``defaults`` count as left out) and each bot's fingerprint."""
    fingerprints = listed.fingerprints
    data = strip_defaults(data, defaults)
    if stype == "league":  # bots may join and leave: each is checked apart (bot_fingerprints)
        decisive = _fixed_part(data)
    else:
        decisive = _decisive(data)
        decisive["_bot_files"] = fingerprints
    raw = strip_defaults(listed.raw, defaults, "bots") if isinstance(listed.raw, list) else []
    entries = {item["name"]: item for item in raw if isinstance(item, dict) and "name" in item}
    bot_fingerprints = tuple(
        (
            bot.name,
            hashlib.sha256(
                json.dumps(
                    [entries.get(bot.name), fingerprints.get(bot.name, "")],
                    sort_keys=True,
                    default=str,
                ).encode()
            ).hexdigest()[:16],
        )
        for bot in listed.bots
    )
    digest = hashlib.sha256(json.dumps(decisive, sort_keys=True, default=str).encode()).hexdigest()[
        :16
    ]
    return digest, bot_fingerprints
