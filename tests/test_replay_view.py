"""The replay viewer's data: the frames of a replayed game, compacted and expanded, and the
outcome of each round."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.referee.replay import to_replay
from ohseven.referee.site.replay_view import (
    compact_frames,
    expand_frames,
    replay_view,
    round_outcomes,
)
from played_cup import play


class TestReplayView:
    @pytest.mark.parametrize(
        ("game", "players", "options"),
        [
            ("oh-seven", 4, {"passing": True}),
            ("oh-seven", 6, {}),
            ("oh-hell", 3, {}),
            ("oh-hell", 4, {"simultaneous_bids": True}),
        ],
    )
    def test_frames_follow_the_game(self, game: str, players: int, options: dict) -> None:
        """The last frame shows the final totals; one frame ends each trick, with the cards
        played and the winner the engine recorded; hands shrink by one card per trick."""
        played = play(game, players, 11, options)
        replay = to_replay(played, [f"b{i}" for i in range(players)])
        view = replay_view(replay)
        frames = view["frames"]
        assert frames[-1]["totals"] == list(played.result().totals)
        assert view["result"]["totals"] == list(played.result().totals)
        tricks = [e for e in played.events if e["type"] == "trick"]
        assert len(view["tricks"]) == len(tricks)
        for index, event in zip(view["tricks"], tricks, strict=True):
            frame = frames[index]
            assert [card for _, card in frame["trick"]] == event["cards"]
            assert frame["winner"] == event["winner"]
        rounds = [e for e in played.events if e["type"] == "round" and e.get("deal", 0) == 0]
        assert len(view["rounds"]) == len(rounds)
        for index in view["tricks"]:
            frame = frames[index]
            left = frame["hand_size"] - frame["trick_no"]
            assert all(len(hand) == left for hand in frame["hands"])

    def test_deal_and_pass_frames_show_the_private_hands(self) -> None:
        """A deal frame shows every seat's dealt hand; after the pass, each hand lost the cards
        it gave and holds the cards it received."""
        played = play("oh-seven", 3, 4, {"passing": True})
        view = replay_view(to_replay(played, ["a", "b", "c"]))
        frames = view["frames"]
        deals = [e for e in played.events if e["type"] == "deal"][:3]
        assert frames[0]["kind"] == "deal"
        assert frames[0]["hands"] == [e["hand"] for e in deals]
        pass_frames = [f for f in frames if f["kind"] == "pass"]
        assert pass_frames, "rounds 2-6 pass cards"
        first = pass_frames[0]
        before = frames[frames.index(first) - 1]["hands"]
        for p in first["passes"]:
            giver, receiver = p["giver"], p["receiver"]
            assert not set(p["cards"]) & (set(first["hands"][giver]) - set(before[receiver]))
            assert set(p["cards"]) <= set(first["hands"][receiver])
        assert all(len(hand) == 7 for hand in first["hands"])

    def test_every_bid_attempt_is_shown_with_its_bonus(self) -> None:
        """Each Oh-Seven bids event appears as an attempt; a forced attempt's bonus points are
        in the running totals at once and the score frames agree with the engine's totals."""
        for seed in range(200):
            played = play("oh-seven", 3, seed)
            if any(e["type"] == "bids" and e["forced"] for e in played.events):
                break
        view = replay_view(to_replay(played, ["a", "b", "c"]))
        attempts = [e for e in played.events if e["type"] == "bids"]
        shown = [f for f in view["frames"] if f["kind"] in ("bids", "rebid")]
        assert len(shown) == len(attempts)
        assert any(f["kind"] == "rebid" for f in shown)
        scores = [e for e in played.events if e["type"] == "score"]
        score_frames = [f for f in view["frames"] if f["kind"] == "score"]
        assert [f["totals"] for f in score_frames] == [e["totals"] for e in scores]
        forced = next(f for f in shown if f["kind"] == "rebid")
        assert sum(forced["bonus"]) >= 1

    @settings(max_examples=15, deadline=None)
    @given(st.integers(0, 10_000), st.sampled_from([("oh-seven", 5), ("oh-hell", 5)]))
    def test_compact_frames_expand_back(self, seed: int, table: tuple[str, int]) -> None:
        """The delta form written for the viewer expands to exactly the full frames."""
        played = play(table[0], table[1], seed)
        frames = replay_view(to_replay(played))["frames"]
        assert expand_frames(compact_frames(frames)) == frames

    def test_round_outcomes_are_the_scored_bids_and_tricks(self) -> None:
        """One [seat, bid, tricks] per seat and scored round, as the score events say."""
        played = play("oh-hell", 4, 3)
        outcomes = round_outcomes(to_replay(played))
        scores = [e for e in played.events if e["type"] == "score"]
        assert len(outcomes) == 4 * len(scores)
        assert outcomes[:4] == [[s, scores[0]["bids"][s], scores[0]["tricks"][s]] for s in range(4)]
