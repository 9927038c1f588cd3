"""Replays: wire moves, JSON round trips, atomic saves and re-validation."""

from __future__ import annotations

import json
import random

import pytest
from conftest import play_random
from hypothesis import given, settings
from hypothesis import strategies as st
from ohseven.core.rules import OhHellGame, OhSevenGame, Phase, new_game
from ohseven.referee import replay as replay_module
from ohseven.referee.records import Fault, FaultStatus
from ohseven.referee.replay import (
    FORMAT,
    MAX_REPLAY_BYTES,
    MAX_REPLAY_DEPTH,
    VERSION,
    ReplayError,
    game_after,
    load_replay,
    play_move,
    save_replay,
    to_replay,
    validate_replay,
)


def finished(game: str = "oh-seven", players: int = 4, seed: int = 3, options=None):
    return play_random(new_game(game, players, seed, options), random.Random(seed))


class TestReplays:
    def test_replay_shape(self):
        """A replay holds the header, seats, wire moves, events, result and faults."""
        game = finished()
        faults = [Fault(1, FaultStatus.TIMEOUT, "2.1 s")]
        replay = to_replay(game, seats=["a", "b", None, "d"], faults=faults)
        assert replay["format"] == "ohseven-replay" and replay["version"] == 1
        assert (replay["game"], replay["players"], replay["seed"]) == ("oh-seven", 4, 3)
        assert replay["rules"] == {"identical_top_bonus": True, "passing": False}
        assert replay["seats"] == ["a", "b", None, "d"]
        assert replay["faults"] == [
            {"seat": 1, "status": "timeout", "detail": "2.1 s", "move": None}
            | {"round": None, "trick": None}
        ]
        assert replay["result"] == {
            "totals": list(game.result().totals),
            "ranks": list(game.result().ranks),
        }
        assert all(isinstance(move[2], str) for move in replay["moves"])
        assert len(replay["moves"]) == len(game.moves)
        assert replay["table"] == {}

    def test_wrong_number_of_seats_rejected(self):
        """Seat names must match the players."""
        with pytest.raises(ValueError, match="3 bots for 4 players"):
            to_replay(finished(), seats=["a", "b", "c"])

    @settings(max_examples=25, deadline=None)
    @given(
        config=st.sampled_from(
            [
                ("oh-seven", 2, {"passing": True}),
                ("oh-seven", 9, {}),
                ("oh-hell", 3, {"hand_order": "down-up", "must_trump": True}),
                ("oh-hell", 5, {"simultaneous_bids": True}),
                ("oh-hell", 7, {"hook": True}),
            ]
        ),
        seed=st.integers(0, 2**32 - 1),
    )
    def test_saved_replay_revalidates(self, tmp_path_factory, config, seed):
        """A saved random game loads back and replays to the same events and result."""
        game = finished(*config[:2], seed, config[2])
        path = tmp_path_factory.mktemp("replays") / "game.json"
        save_replay(path, to_replay(game))
        again = validate_replay(load_replay(path))
        assert again.events == game.events
        assert again.result() == game.result()

    def test_unfinished_game_replays(self):
        """A game stopped midway has no result and still validates."""
        game = new_game("oh-hell", 4, 1)
        play_random(game, random.Random(1), stop=lambda g: g.round == 2)
        replay = json.loads(json.dumps(to_replay(game)))
        assert replay["result"] is None
        assert validate_replay(replay).events == game.events

    def test_table_overrides_replay(self):
        """Stacked decks (as card names) and Oh Hell table options are kept and replayed."""
        order = list(range(52))
        game = OhHellGame(4, 5, hand_sizes=(2, 3), first_dealer=3, stacked_decks=[order, order])
        play_random(game, random.Random(5))
        replay = json.loads(json.dumps(to_replay(game)))
        assert replay["table"]["first_dealer"] == 3
        assert replay["table"]["hand_sizes"] == [2, 3]
        assert replay["table"]["stacked_decks"][0][:2] == ["2C", "3C"]
        assert validate_replay(replay).events == game.events
        seven = play_random(OhSevenGame(3, 0, stacked_decks=[list(range(32))]), random.Random(0))
        assert validate_replay(json.loads(json.dumps(to_replay(seven)))).events == seven.events


class TestValidationErrors:
    def replay(self):
        return json.loads(json.dumps(to_replay(finished("oh-seven", 3, 8))))

    def test_illegal_move_named(self):
        """A move the engine refuses is reported with its number (from 1, as ``replay --at``
        counts) and the engine's reason."""
        replay = self.replay()
        first_play = next(i for i, m in enumerate(replay["moves"]) if m[1] == "play")
        seat = replay["moves"][first_play][0]
        replay["moves"][first_play][0] = (seat + 1) % 3
        with pytest.raises(ReplayError, match=rf"move {first_play + 1} \(seat .*no play decision"):
            validate_replay(replay)

    def test_changed_event_named(self):
        """A tampered event is reported by its index, showing both versions."""
        replay = self.replay()
        index = next(i for i, e in enumerate(replay["events"]) if e["type"] == "trick")
        replay["events"][index]["winner"] = (replay["events"][index]["winner"] + 1) % 3
        with pytest.raises(ReplayError, match=rf"event {index} after move \d+"):
            validate_replay(replay)

    def test_changed_seed_caught_at_start(self):
        """Another seed deals other cards: the first deal event differs before any move."""
        replay = self.replay()
        replay["seed"] += 1
        with pytest.raises(ReplayError, match="event 1 after the start of the game"):
            validate_replay(replay)

    def test_wrong_result_named(self):
        """A result that the moves do not produce is rejected."""
        replay = self.replay()
        replay["result"]["totals"][0] += 1
        with pytest.raises(ReplayError, match="result: the replay records"):
            validate_replay(replay)

    def test_extra_and_missing_events(self):
        """Events the game does not produce, or missing ones, are reported."""
        replay = self.replay()
        replay["events"].append({"type": "extra"})
        with pytest.raises(ReplayError, match="does not produce"):
            validate_replay(replay)
        replay = self.replay()
        del replay["events"][-1]
        with pytest.raises(ReplayError, match="no more events"):
            validate_replay(replay)

    def test_moves_after_the_end(self):
        """A move after the game is over is reported."""
        replay = self.replay()
        replay["moves"].append(replay["moves"][-1])
        with pytest.raises(ReplayError, match="already over"):
            validate_replay(replay)

    def test_wrong_kind_and_unknown_card(self):
        """A move of the wrong kind or naming no card is reported with its index."""
        replay = self.replay()
        replay["moves"][0][1] = "play"
        with pytest.raises(ReplayError, match="move 1 .*asks for a bid decision"):
            validate_replay(replay)
        replay = self.replay()
        replay["moves"][0][2] = "9Z"
        with pytest.raises(ReplayError, match="move 1 .*'9Z' is not a card"):
            validate_replay(replay)

    @pytest.mark.parametrize(
        ("change", "fragment"),
        [
            ({"format": "chess"}, "format 'chess'"),
            ({"version": 2}, "version 2 is not 1"),
            ({"game": "bridge"}, "unknown game 'bridge'"),
            ({"players": 12}, "cannot start the game: oh-seven is played by 2 to 9"),
            ({"rules": {"hook": True}}, "unknown rule option 'hook'"),
        ],
    )
    def test_bad_header(self, change, fragment):
        """Headers that cannot start a game are rejected with a clear message."""
        replay = {**self.replay(), **change}
        with pytest.raises(ReplayError, match=fragment):
            validate_replay(replay)


class TestFiles:
    def test_save_is_atomic_and_leaves_no_temp_files(self, tmp_path):
        """Saving replaces the file in one step and leaves nothing else behind."""
        path = tmp_path / "r.json"
        path.write_text("old")
        save_replay(path, to_replay(finished()))
        assert [p.name for p in tmp_path.iterdir()] == ["r.json"]
        assert load_replay(path)["format"] == "ohseven-replay"

    def test_failed_save_keeps_the_old_file(self, tmp_path):
        """A replay that cannot be encoded leaves the previous file untouched."""
        path = tmp_path / "r.json"
        path.write_text("old")
        with pytest.raises(TypeError):
            save_replay(path, {"format": "ohseven-replay", "bad": object()})
        assert path.read_text() == "old"
        assert [p.name for p in tmp_path.iterdir()] == ["r.json"]

    def test_load_rejects_non_json_and_other_formats(self, tmp_path):
        """Loading garbage or another format raises ReplayError naming the file."""
        path = tmp_path / "x.json"
        path.write_text("{nope")
        with pytest.raises(ReplayError, match="x.json: not JSON"):
            load_replay(path)
        path.write_text("[1, 2]")
        with pytest.raises(ReplayError, match="a replay is a JSON object"):
            load_replay(path)


def test_phase_names_are_move_kinds():
    """The move kinds on the wire are the engine's decision phases."""
    assert {Phase.PASS.value, Phase.BID.value, Phase.PLAY.value} == {"pass", "bid", "play"}


class TestHostileFiles:
    """Replay files are given by users: deep, huge or broken, each is a clear ReplayError."""

    def test_a_deep_file(self, tmp_path):
        path = tmp_path / "deep.json"
        path.write_text("[" * 200_000 + "]" * 200_000)
        with pytest.raises(ReplayError, match="nested deeper than a replay can be"):
            load_replay(path)

    def test_deep_under_the_interpreters_limit(self, tmp_path):
        """Deep enough to hurt what reads it next, not enough to stop the JSON parser."""
        path = tmp_path / "deep.json"
        inner = "[" * 500 + "]" * 500
        path.write_text(
            json.dumps({"format": FORMAT, "version": VERSION})[:-1] + f', "x": {inner}}}'
        )
        with pytest.raises(ReplayError, match=f"more than {MAX_REPLAY_DEPTH} levels"):
            load_replay(path)

    def test_a_huge_file(self, tmp_path):
        path = tmp_path / "huge.json"
        with open(path, "wb") as handle:
            handle.truncate(MAX_REPLAY_BYTES + 1)  # sparse: nothing is written
        with pytest.raises(ReplayError, match="larger than a replay can be"):
            load_replay(path)

    def test_not_text(self, tmp_path):
        path = tmp_path / "binary.json"
        path.write_bytes(b'{"format": "\xff"}')
        with pytest.raises(ReplayError, match="not a UTF-8 text file"):
            load_replay(path)

    @given(st.recursive(st.none() | st.integers(), lambda inner: st.lists(inner, max_size=3)))
    def test_depth_is_measured(self, value):
        def depth(item):
            return 1 + max(map(depth, item), default=0) if isinstance(item, list) else 0

        assert replay_module._depth(value) == depth(value)


class TestGameAfter:
    @settings(max_examples=20, deadline=None)
    @given(
        config=st.sampled_from(
            [("oh-seven", 4, {"passing": True}), ("oh-hell", 5, {"simultaneous_bids": True})]
        ),
        seed=st.integers(0, 10_000),
        cut=st.floats(0, 1),
    )
    def test_the_game_after_n_moves_is_the_recorded_one(self, config, seed, cut):
        """``game_after(replay, n)`` is the recorded game after its first ``n`` moves: its
        events are the replay's first ones, its moves the first ``n`` (one mechanism for
        validation, ``replay``'s decisions and its rebuilt positions)."""
        name, players, options = config
        game = finished(name, players, seed, options)
        replay = to_replay(game)
        moves = int(cut * len(replay["moves"]))
        after = game_after(replay, moves)
        assert to_replay(after)["moves"] == replay["moves"][:moves]
        assert after.events == replay["events"][: len(after.events)]
        if moves == len(replay["moves"]):
            assert after.is_over and after.result() == game.result()

    def test_play_move_names_a_bad_move(self):
        """A move the game cannot take is a ReplayError naming its number (from 1) and content."""
        replay = to_replay(finished())
        game = game_after(replay, 3)
        seat, kind, value = replay["moves"][3]
        with pytest.raises(ReplayError, match=r"move 4 \(seat .* 'XX'\)"):
            play_move(game, [seat, kind, "XX"], 3)
        with pytest.raises(ReplayError, match="move 4: expected"):
            play_move(game, [seat, kind], 3)
        play_move(game, replay["moves"][3], 3)
        assert to_replay(game)["moves"] == replay["moves"][:4]
