"""The live leaderboard kept game by game (``results.incremental.LiveBoard``): the same document
as ``leaderboard.leaderboard`` of the same games, whatever the order and batches they arrive in
(the order-free mu and sigma within the solver's tolerance)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.core.rules import competition_ranks
from ohseven.referee.records import Fault, FaultStatus, GameRecord
from ohseven.referee.results.archive import Tournament
from ohseven.referee.results.incremental import LiveBoard
from ohseven.referee.results.leaderboard import leaderboard
from ohseven.referee.results.ratings import Ratings
from ohseven.referee.results.store import StoredGame

BOTS = ("ann", "bob", "cat", "dan", "eve", "fay")
#: fields computed from the order-free mu and sigma: equal only within the solver's tolerance
NUMERIC = ("mu", "sigma", "score", "superiority_next", "games_to_separate")
#: fields that depend on the bots' order
ORDERED = (
    "rank",
    "tier",
    "place",
    "tied_from",
    "tied_to",
    "superiority_next",
    "games_to_separate",
)


def games(rng: random.Random, count: int) -> list[GameRecord]:
    records = []
    for index in range(count):
        seats = tuple(rng.sample(BOTS, rng.choice((2, 3, 4))))
        totals = tuple(rng.randint(0, 12) for _ in seats)
        faults = (Fault(0, FaultStatus.TIMEOUT),) if rng.random() < 0.1 else ()
        stats = {"table": {"rounds": 3}, "seats": [{"rounds": 3, "fills": 1} for _ in seats]}
        records.append(
            GameRecord(
                f"m{index // 2:05d}",
                index % 2,
                rng.randrange(1000),
                seats,
                totals,
                competition_ranks(totals),
                faults,
                stats,
            )
        )
    return records


def tournament(records: list[GameRecord], bots: tuple[str, ...]) -> Tournament:
    return Tournament(
        name="t",
        game="oh-seven",
        seed=None,
        config={},
        bots=bots,
        games=tuple(StoredGame(index, index // 2, r) for index, r in enumerate(records)),
        matches_total=10,
        games_total=100,
    )


def sequential(records: list[GameRecord], bots: tuple[str, ...]) -> Ratings:
    ratings = Ratings("oh-seven", bots)
    for record in records:
        ratings.apply(record)
    return ratings


def assert_same(live: dict, reference: dict) -> None:
    assert {k: v for k, v in live.items() if k not in ("bots", "superiority")} == {
        k: v for k, v in reference.items() if k not in ("bots", "superiority")
    }
    rows = {row["name"]: row for row in reference["bots"]}
    assert set(rows) == {row["name"] for row in live["bots"]}
    # bots whose scores are equal within the tolerance may rank the other way round: then
    # what depends on the neighbour (and the rank) is compared no further
    same_order = [row["name"] for row in live["bots"]] == [r["name"] for r in reference["bots"]]
    for row in live["bots"]:
        expected = rows[row["name"]]
        for key, value in row.items():
            if key in NUMERIC and value is not None and expected[key] is not None:
                if same_order or key in ("mu", "sigma", "score"):
                    assert abs(value - expected[key]) <= 1e-5 * max(1.0, abs(expected[key])), key
            elif same_order or key not in ORDERED:
                assert value == expected[key], (row["name"], key)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), count=st.integers(0, 40), batch=st.integers(1, 9))
def test_the_same_document_whatever_order_and_batches(seed: int, count: int, batch: int) -> None:
    rng = random.Random(seed)
    records = games(rng, count)
    bots = (*BOTS, "newcomer")  # a bot without games is rated from the prior
    board = LiveBoard("oh-seven")
    arrived = rng.sample(records, len(records))
    for start in range(0, max(1, len(arrived)), batch):
        for record in arrived[start : start + batch]:
            board.add(record)
        seen = sorted(arrived[: start + batch], key=records.index)
        empty = tournament([], bots)
        live = board.document(empty, sequential(seen, bots))
        assert_same(live, leaderboard(tournament(seen, bots), sequential(seen, bots)))


def test_a_warm_start_takes_fewer_sweeps_to_the_same_point() -> None:
    """After a few more games the solver starts from its last messages: the same ratings
    (within the tolerance) as a cold solve, in fewer sweeps."""
    from ohseven.referee.results import ratings as module

    rng = random.Random(5)
    records = games(rng, 400)
    board = LiveBoard("oh-seven")
    for record in records[:380]:
        board.add(record)
    board.table()
    sweeps: list[int] = []
    original = module._v_w_win

    def counting(*args):  # type: ignore[no-untyped-def]
        sweeps.append(1)
        return original(*args)

    module._v_w_win = counting
    try:
        for record in records[380:]:
            board.add(record)
        warm = {row.name: (row.mu, row.sigma) for row in board.table()}
        warm_sweeps = len(sweeps)
        sweeps.clear()
        cold = module.order_free(records, BOTS)
        cold_sweeps = len(sweeps)
    finally:
        module._v_w_win = original
    assert warm_sweeps < cold_sweeps
    for name, (mu, sigma) in cold.items():
        assert abs(warm[name][0] - mu) < 1e-6 and abs(warm[name][1] - sigma) < 1e-6
