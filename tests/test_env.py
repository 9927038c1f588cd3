"""ohseven.env: the PettingZoo AEC environment and the Gymnasium single-agent environment."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from game_helpers import configs, seeds
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ohseven.core.options import InvalidRulesError, Phase
from ohseven.core.rules import new_game
from ohseven.env import (
    ACTIONS,
    BID_BASE,
    LAYOUT,
    OBS_SIZE,
    IllegalActionError,
    SingleAgentEnv,
    env,
    raw_env,
)
from ohseven.example_bots.heuristic_bot import HeuristicBot
from ohseven.sdk import Bot, local_game
from ohseven.sdk.observation import card_slot, offsets, slot_name
from pettingzoo.test import api_test, seed_test

#: a few tables covering both games, one and two decks, passes and every bidding variant
TABLES = [
    ("oh-seven", 2, {}),
    ("oh-seven", 4, {"passing": True}),
    ("oh-seven", 6, {"passing": True, "identical_top_bonus": False}),
    ("oh-hell", 3, {"hook": True}),
    ("oh-hell", 5, {"simultaneous_bids": True, "must_trump": True}),
    ("oh-hell", 7, {"hand_order": "down-up", "zero_bid_bonus": True}),
]


def engine_move(game, action):
    """The engine form of a card or Oh Hell bid action in ``game``."""
    if action >= BID_BASE:
        return action - BID_BASE
    return game.deck.index[slot_name(game.rules.game, action)]


class TestLayout:
    def test_the_layout_adds_up(self) -> None:
        """The blocks tile the vector; the action space is 52 cards and 16 bids."""
        at = offsets()
        assert sum(size for _, size, _ in LAYOUT) == OBS_SIZE
        assert at["game"] == 0 and list(at.values()) == sorted(at.values())
        assert ACTIONS == 68 and BID_BASE == 52

    def test_card_slots(self) -> None:
        """A card's slot is 13 * suit + rank, in both games."""
        assert card_slot("oh-hell", "2C") == 0 and card_slot("oh-hell", "AS") == 51
        assert card_slot("oh-seven", "0D") == 13 and card_slot("oh-seven", "7S") == 46
        assert slot_name("oh-seven", 46) == "7S"
        with pytest.raises(KeyError):
            slot_name("oh-seven", 12)  # no Oh-Seven card of rank 12


class TestPettingZoo:
    @pytest.mark.parametrize(("game", "players", "rules"), TABLES)
    def test_api(self, game: str, players: int, rules: dict) -> None:
        """PettingZoo's API test passes on every kind of table."""
        api_test(env(game=game, players=players, rules=rules), num_cycles=300)

    @pytest.mark.parametrize(("game", "players", "rules"), TABLES[1::2])
    def test_seed(self, game: str, players: int, rules: dict) -> None:
        """PettingZoo's seed test: two environments with one seed play the same game."""
        seed_test(lambda: env(game=game, players=players, rules=rules), num_cycles=300)

    def test_bad_arguments_are_refused_clearly(self) -> None:
        with pytest.raises(InvalidRulesError, match="played by 3 to 7"):
            raw_env("oh-hell", 2)
        with pytest.raises(InvalidRulesError, match="unknown rule option"):
            raw_env("oh-seven", 4, {"hook": True})
        with pytest.raises(ValueError, match="reward='points'"):
            raw_env(reward="points")

    def test_an_illegal_action_is_refused_and_changes_nothing(self) -> None:
        table = raw_env("oh-hell", 4)
        table.reset(seed=3)
        before = table.observe(table.agent_selection)
        with pytest.raises(IllegalActionError, match="not legal"):
            table.step(0)  # a card, when a bid is owed
        after = table.observe(table.agent_selection)
        assert np.array_equal(before["observation"], after["observation"])
        assert table.game is not None and table.game.moves == []

    def test_round_rewards_add_up_to_the_totals(self) -> None:
        """With reward='round' the points come as each round is scored; they add up to the
        game's totals, which reward='game' pays at the end."""
        paid = {}
        for mode in ("round", "game"):
            table = raw_env("oh-hell", 4, reward=mode)
            table.reset(seed=11)
            rng = random.Random(0)
            got = dict.fromkeys(table.possible_agents, 0.0)
            times = 0
            for agent in table.agent_iter():
                _, reward, done, _, _ = table.last()
                got[agent] += reward
                times += reward != 0
                table.step(None if done else rng.choice(table.legal()))
            assert table.game is not None
            assert [got[a] for a in table.possible_agents] == table.game.scores
            paid[mode] = times
        assert paid["round"] > paid["game"]

    def test_the_observation_holds_only_what_the_seat_is_told(self) -> None:
        """Two deals with the same hand for seat 0 and the same turned-up card, the other
        hands shuffled among the others: seat 0's first observation is the same."""
        table = raw_env("oh-hell", 4, table={"hand_sizes": (3,), "first_dealer": 3})
        deck = list(range(52))
        random.Random(1).shuffle(deck)
        # dealer 3: card i goes to seat i % 4; cards 12.. are undealt, 12 is turned up
        other = list(deck)
        others = [deck[i] for i in range(12) if i % 4]
        random.Random(2).shuffle(others)
        for i in (i for i in range(12) if i % 4):
            other[i] = others.pop()
        assert other != deck
        seen = []
        for order in (deck, other):
            table.table["stacked_decks"] = [order]
            table.reset(seed=0)
            seen.append(table.observe("player_0"))
        assert np.array_equal(seen[0]["observation"], seen[1]["observation"])
        assert np.array_equal(seen[0]["action_mask"], seen[1]["action_mask"])


class TestAgainstTheEngine:
    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(config=configs, seed=seeds, choices=st.randoms(use_true_random=False))
    def test_legal_actions_and_results_are_the_engines(self, config, seed, choices) -> None:
        """On random games the environment's legal actions are the engine's legal moves, its
        agent to act owes the engine a decision, and its rewards are the engine's totals of
        the same game played with the same moves."""
        game_name, players, options = config
        table = raw_env(game_name, players, options)
        table.reset(seed=seed)
        engine = new_game(game_name, players, seed, options)
        got = dict.fromkeys(table.possible_agents, 0.0)
        picked: list[int] = []
        for agent in table.agent_iter():
            obs, reward, done, truncated, _ = table.last()
            got[agent] += reward
            assert not truncated
            if done:
                table.step(None)
                continue
            seat = table.agent_seat[agent]
            assert seat in engine.to_act
            legal = [int(a) for a in np.flatnonzero(obs["action_mask"])]
            if engine.phase is Phase.PASS:
                left = Counter(engine.hands[seat])
                left.subtract(picked)
                expected = {engine_move(engine, a) for a in legal}
                assert expected == {c for c, k in left.items() if k > 0}
                action = choices.choice(legal)
                picked.append(engine_move(engine, action))
                if len(picked) == engine.pass_count():
                    engine.push(seat, tuple(picked))
                    picked = []
            else:
                assert sorted(engine_move(engine, a) for a in legal) == sorted(
                    set(engine.legal_moves(seat))
                )
                action = choices.choice(legal)
                engine.push(seat, engine_move(engine, action))
            table.step(action)
        assert engine.is_over and table.agents == []
        assert tuple(got[a] for a in table.possible_agents) == engine.result().totals


class TestSingleAgent:
    @pytest.mark.parametrize(
        ("game", "players", "rules"), [TABLES[1], TABLES[3], ("oh-seven", 5, {"passing": True})]
    )
    def test_gymnasium_check_env(self, game: str, players: int, rules: dict) -> None:
        """Gymnasium's environment checker passes, against heuristic bots."""
        check_env(
            SingleAgentEnv(game, players, rules, opponents=[HeuristicBot] * (players - 1)),
            skip_render_check=True,
        )

    def test_an_episode_is_the_local_game_of_the_same_moves(self) -> None:
        """The learner's seat answering with a bot's moves plays exactly ``local_game``
        with that bot in the seat: the same deal, the same opponents' moves, the same totals."""

        gym = SingleAgentEnv("oh-hell", 4, seat=2, opponents=[HeuristicBot] * 3, reward="round")
        obs, info = gym.reset(seed=21)
        total = info["reward"]
        rng = random.Random(5)
        done = False
        while not done:
            legal = np.flatnonzero(gym.action_masks())
            obs, reward, done, _, step_info = gym.step(rng.choice(list(legal)))
            assert "illegal_action" not in step_info
            total += reward
        game = gym.aec.game
        assert game is not None and total == game.scores[2]
        # the same moves in local_game: the learner's moves replayed by a scripted bot
        moves = [m for s, _, m in game.moves if s == 2]

        class Replay(Bot):
            def choose_bid(self, view):
                return moves.pop(0)

            def choose_play(self, view):
                return game.deck.names[moves.pop(0)]

        bots = [HeuristicBot(), HeuristicBot(), Replay(), HeuristicBot()]
        result = local_game(bots, game="oh-hell", seed=21)
        assert list(result.totals) == game.scores

    def test_illegal_actions_are_replaced_and_reported(self) -> None:
        gym = SingleAgentEnv("oh-hell", 3, illegal_penalty=-5.0)
        gym.reset(seed=1)
        _, reward, _, _, info = gym.step(0)  # a card when a bid is owed
        assert info == {"illegal_action": True} and reward <= -5.0

    def test_seeded_episodes_repeat(self) -> None:
        """The same seed: the same observations all through, random opponents included."""
        runs = []
        for _ in range(2):
            gym = SingleAgentEnv("oh-seven", 4, {"passing": True}, seat=None)
            obs, _ = gym.reset(seed=8)
            trace = [obs["observation"].tobytes()]
            done = False
            while not done:
                action = int(np.flatnonzero(obs["action_mask"])[0])
                obs, _, done, _, _ = gym.step(action)
                trace.append(obs["observation"].tobytes())
            runs.append(trace)
        assert runs[0] == runs[1]

    def test_bad_opponents_are_refused(self) -> None:
        with pytest.raises(ValueError, match="2 opponents for 3 other seats"):
            SingleAgentEnv("oh-seven", 4, opponents=[Bot, Bot])
        with pytest.raises(TypeError, match="not an ohseven.sdk.Bot"):
            SingleAgentEnv("oh-seven", 3, opponents=[Bot, object])
        with pytest.raises(ValueError, match="seat 4"):
            SingleAgentEnv("oh-seven", 4, seat=4)


def test_the_environment_imports_only_the_core_and_the_sdk() -> None:
    """ohseven.env's modules import ohseven.core and ohseven.sdk, never the referee."""
    import ast
    from pathlib import Path

    import ohseven.env

    folder = Path(ohseven.env.__file__).parent
    found = set()
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert node.level == 0, f"{path.name}: a relative import"
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
    ours = {m.split(".")[1] for m in found if m.startswith("ohseven.")}
    assert ours <= {"core", "sdk", "env"} and "sdk" in ours


def test_the_documented_layout_is_the_encoders() -> None:
    """docs/BOTS.md's table of blocks gives each block's first index and size as encoded."""
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "BOTS.md").read_text()
    at = offsets()
    for name, size, _ in LAYOUT:
        assert f"| `{name}` | {at[name]} | {size} |" in text, name
    assert f"is {OBS_SIZE} float32" in text and f"`Discrete({ACTIONS})`" in text
