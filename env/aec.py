"""The PettingZoo AEC environment: one game of Oh-Seven or Oh Hell, a seat per agent.

Each agent's observation is its information state: a :class:`~ohseven.sdk.view.View` folded
from the events :class:`ohseven.core.feed.EventFeed` gives that seat's bot, encoded by
:mod:`ohseven.sdk.observation` (the encoding :class:`~ohseven.sdk.policy.PolicyBot` uses).
Simultaneous decisions (Oh-Seven's passes and bids, Oh Hell's ``simultaneous_bids``) are asked
one seat at a time, lowest seat first; no seat sees another's choice before the engine reveals
the whole set. A pass of ``k`` cards is ``k`` steps of one card each.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from ohseven.core.feed import EventFeed, game_event
from ohseven.core.game import Game
from ohseven.core.options import Phase, Rules
from ohseven.core.rules import new_game
from ohseven.core.wire import legal_to_wire
from ohseven.sdk.observation import (
    ACTIONS,
    BID_BASE,
    OBS_SIZE,
    encode,
    legal_actions,
    slot_name,
)
from ohseven.sdk.view import View
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

__all__ = ["IllegalActionError", "REWARDS", "env", "raw_env"]

#: ``reward=``: the final totals at the end (``game``), or each change of a seat's total as it
#: happens (``round``: a round's points when it is scored, an Oh-Seven re-bid bonus at once)
REWARDS = ("game", "round")
#: the observation vector's bounds (scores / 100 are the only values outside 0..15)
OBS_BOUND = 1e4
_ZEROS = array("f", bytes(4 * OBS_SIZE))
_NO_ACTIONS = array("b", bytes(ACTIONS))


class IllegalActionError(ValueError):
    """An action that is not legal for the agent to act (its mask is 0 there)."""


class raw_env(AECEnv):  # noqa: N801 - PettingZoo's name
    """One game of ``game`` for ``players`` seats under ``rules`` (a :class:`Rules`, a mapping
    or ``KEY=VALUE`` strings); ``table``: the engine's table keywords (Oh Hell's ``ranks``,
    ``hand_sizes``...); ``reward``: one of :data:`REWARDS`."""

    metadata = {"render_modes": ["ansi", "human"], "name": "ohseven_v0", "is_parallelizable": False}

    def __init__(
        self,
        game: str = "oh-seven",
        players: int = 4,
        rules: Rules | Mapping[str, object] | Iterable[str] | None = None,
        *,
        reward: str = "game",
        render_mode: str | None = None,
        table: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.rules = rules if isinstance(rules, Rules) else Rules.make(game, rules)
        if isinstance(rules, Rules) and rules.game != game:
            game = rules.game
        self.rules.check_players(players)
        if reward not in REWARDS:
            raise ValueError(f"reward={reward!r}: expected one of {', '.join(REWARDS)}")
        if render_mode is not None and render_mode not in ("ansi", "human"):
            raise ValueError(f"render_mode={render_mode!r}: expected ansi or human")
        self.game_name = game
        self.players = players
        self.reward_mode = reward
        self.render_mode = render_mode
        self.table = dict(table or {})
        new_game(self.rules, players, 0, **self.table)  # the table's keywords, checked now
        self.possible_agents = [f"player_{s}" for s in range(players)]
        self.agent_seat = {agent: s for s, agent in enumerate(self.possible_agents)}
        observation = spaces.Box(-OBS_BOUND, OBS_BOUND, (OBS_SIZE,), np.float32)
        mask = spaces.Box(0, 1, (ACTIONS,), np.int8)
        self.observation_spaces = {
            a: spaces.Dict({"observation": observation, "action_mask": mask})
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(ACTIONS) for a in self.possible_agents}
        self.np_random, _ = seeding.np_random(None)
        self._seed: int | None = None  # the last reset's seed, until np_random is made of it
        self.game: Game | None = None
        self.views: list[View] = []
        self.games = 0  # games started: the ``index`` of each game event

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # -- the game

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new game: ``seed`` is the engine's deal seed (the same as
        ``new_game(..., seed)`` and ``local_game(..., seed=seed)``); without one, a seed
        drawn from the environment's generator (seeded by the last ``seed`` given)."""
        if seed is not None:
            # the generator for later unseeded resets, made when one needs it (making it
            # costs more than a short game's steps)
            self._seed = int(seed)
            deal = int(seed)
        else:
            if self._seed is not None:
                self.np_random, _ = seeding.np_random(self._seed)
                self._seed = None
            deal = int(self.np_random.integers(2**63))
        game = self.game = new_game(self.rules, self.players, deal, **self.table)
        game.events  # noqa: B018 - built from now on as play goes (the feeds read them)
        index = self.games
        self.games += 1
        n = self.players
        self.feeds = [EventFeed(game, s, prefix=[game_event(game, index, s)]) for s in range(n)]
        # the views are kept from game to game: each game event starts its view afresh
        self.views = self.views if len(self.views) == n else [View() for _ in range(n)]
        self.picked: list[list[str]] = [[] for _ in range(n)]
        self.paid = [0] * n  # points already given as rewards
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._rewarded = False  # whether a reward of the last step is not zero
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._legal_for: tuple[int, int] | None = None  # (seat, step) of ``_legal``
        self._legal: list[int] = []
        self.steps = 0
        self.seat = game.to_act[0]
        self.agent_selection = self.possible_agents[self.seat]

    def view(self, seat: int) -> View:
        """``seat``'s view, up to date, its pending decision set (``kind`` None: none owed)."""
        game = self.game
        assert game is not None
        view = self.views[seat]
        events = self.feeds[seat].take()
        if events:
            view.apply_all(events)
        if not game.is_over and seat == self.seat:
            legal, count = legal_to_wire(game, seat)
            view.set_request({"kind": game.phase.value, "legal": legal, "count": count})
        else:
            view.set_request({})
        return view

    def legal(self) -> list[int]:
        """The legal actions of the agent to act."""
        key = (self.seat, self.steps)
        if self._legal_for != key:
            self._legal = legal_actions(self.view(self.seat), self.picked[self.seat])
            self._legal_for = key
        return self._legal

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self.agent_seat[agent]
        view = self.view(seat)
        picked = self.picked[seat]
        # written into an array.array (item assignment is cheapest there), viewed by numpy
        obs = encode(view, picked, _ZEROS[:])
        mask = _NO_ACTIONS[:]
        if seat == self.seat and self.game is not None and not self.game.is_over:
            actions = legal_actions(view, picked)
            self._legal, self._legal_for = actions, (seat, self.steps)
            for action in actions:
                mask[action] = 1
        return {
            "observation": np.frombuffer(obs, np.float32),
            "action_mask": np.frombuffer(mask, np.int8),
        }

    def _clear_rewards(self) -> None:
        """Zero the rewards of the last step (only when some were paid)."""
        if self._rewarded:
            for agent in self.rewards:
                self.rewards[agent] = 0.0
            self._rewarded = False

    def _accumulate_rewards(self) -> None:
        self._rewarded = True
        super()._accumulate_rewards()

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        assert game is not None
        seat = self.seat
        if action is None or int(action) not in self.legal():
            raise IllegalActionError(
                f"{agent}: action {action!r} is not legal (legal: {self.legal()})"
            )
        action = int(action)
        self._cumulative_rewards[agent] = 0.0
        if action >= BID_BASE:
            self.push(seat, action - BID_BASE)
        else:
            card = game.deck.index[slot_name(self.game_name, action)]
            if game.phase is Phase.PASS:
                picked = self.picked[seat]
                picked.append(game.deck.names[card])
                if len(picked) < game.pass_count():
                    self.steps += 1
                    self._clear_rewards()
                    return
                move = tuple(game.deck.index[name] for name in picked)
                picked.clear()
                self.push(seat, move)
            else:
                self.push(seat, card)

    def push(self, seat: int, move: Any) -> None:
        """Play ``seat``'s engine ``move`` (it must owe a decision, and no pass be half
        picked), pay the rewards and select the next agent to act."""
        game = self.game
        assert game is not None
        game.push(seat, move)
        self.steps += 1
        self._clear_rewards()
        scores = game.scores
        over = game.is_over
        if (self.reward_mode == "round" or over) and scores != self.paid:
            paid = self.paid
            rewards = self.rewards
            for s, agent in enumerate(self.possible_agents):
                if scores[s] != paid[s]:
                    rewards[agent] = float(scores[s] - paid[s])
                    paid[s] = scores[s]
            self._accumulate_rewards()
        if over:
            for agent in self.agents:
                self.terminations[agent] = True
        else:
            self.seat = game.to_act[0]
            self.agent_selection = self.possible_agents[self.seat]
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        text = self.describe()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def describe(self) -> str:
        """The table in a few lines: round, trump, bids, the trick, tricks won, scores."""
        game = self.game
        if game is None:
            return "no game yet: call reset()"
        names = game.deck.names
        trump = "none" if game.trump is None else "CDHS"[game.trump]
        lines = [
            game.describe(),
            f"trump {trump}; bids {game.bids}; tricks won {game.tricks_won}; scores {game.scores}",
            "trick: " + " ".join(names[c] for c in game.trick),
        ]
        for s in range(game.players):
            lines.append(f"  seat {s}: " + " ".join(names[c] for c in game.hands[s]))
        return "\n".join(lines)

    def close(self) -> None:
        pass


def env(**kwargs: Any) -> AECEnv:
    """:class:`raw_env` in PettingZoo's usual wrappers (order enforcing, assertions)."""
    wrapped: AECEnv = raw_env(**kwargs)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    wrapped = wrappers.OrderEnforcingWrapper(wrapped)
    return wrapped
