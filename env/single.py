"""A Gymnasium single-agent environment: one learning seat, SDK bots in the others.

The other seats are :class:`ohseven.sdk.Bot` objects played in-process, each behind its own
:class:`~ohseven.sdk.bot.Driver`, sent the request messages a referee sends (their events from
:class:`ohseven.core.feed.EventFeed`, the legal list of :func:`ohseven.core.wire.legal_to_wire`)
and answered in wire form, as in :func:`ohseven.sdk.local_game`. Observations, actions and
rewards are the AEC environment's (:mod:`ohseven.env.aec`) for the learning seat.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
from ohseven.core.feed import EventFeed, game_event
from ohseven.core.options import Rules
from ohseven.core.seeds import driver_seed
from ohseven.core.table import (
    DEFAULT_BANK_SECONDS,
    DEFAULT_MOVE_SECONDS,
    Request,
    request_message,
)
from ohseven.core.wire import legal_to_wire, move_from_wire
from ohseven.env.aec import raw_env
from ohseven.sdk.bot import Bot, Driver

__all__ = ["SingleAgentEnv"]

#: an opponent: a bot object, or a callable making one (a :class:`Bot` subclass)
Opponent = Bot | Callable[[], Bot]


class SingleAgentEnv(gymnasium.Env):
    """One game per episode; the agent plays ``seat`` (``None``: a seat drawn each episode)
    against ``opponents`` (one per other seat, in seat order; default: the SDK's random
    :class:`Bot`). Each opponent's ``rng`` (a :class:`random.Random`) is reseeded every
    episode from the episode's seed, so a seeded episode replays exactly. The other arguments
    are :class:`~ohseven.env.aec.raw_env`'s.

    Any action of the space is accepted (Gymnasium's checker and unmasked learners send
    any): an illegal one is replaced by a legal one drawn from the episode's generator, the
    step's info says ``illegal_action: True`` and its reward adds ``illegal_penalty``.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        game: str = "oh-seven",
        players: int = 4,
        rules: Rules | Mapping[str, object] | Iterable[str] | None = None,
        *,
        seat: int | None = 0,
        opponents: Sequence[Opponent] | None = None,
        reward: str = "game",
        render_mode: str | None = None,
        table: Mapping[str, Any] | None = None,
        illegal_penalty: float = 0.0,
    ) -> None:
        self.illegal_penalty = float(illegal_penalty)
        self.aec = raw_env(game, players, rules, reward=reward, table=table)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r}: expected ansi")
        self.render_mode = render_mode
        if seat is not None and not (type(seat) is int and 0 <= seat < players):
            raise ValueError(f"seat {seat!r} is not a seat of {players} players")
        self.fixed_seat = seat
        specs = list(opponents) if opponents is not None else [Bot] * (players - 1)
        if len(specs) != players - 1:
            raise ValueError(f"{len(specs)} opponents for {players - 1} other seats")
        self.opponents = [spec if isinstance(spec, Bot) else spec() for spec in specs]
        for bot in self.opponents:
            if not isinstance(bot, Bot):
                raise TypeError(f"opponent {bot!r} is not an ohseven.sdk.Bot")
        agent = self.aec.possible_agents[0]
        self.observation_space = self.aec.observation_space(agent)
        self.action_space = self.aec.action_space(agent)
        self.seat = 0 if seat is None else seat

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        deal = int(self.np_random.integers(2**63)) if seed is None else int(seed)
        aec = self.aec
        aec.reset(seed=deal)
        game = aec.game
        assert game is not None
        n = aec.players
        self.seat = int(self.np_random.integers(n)) if self.fixed_seat is None else self.fixed_seat
        others = [s for s in range(n) if s != self.seat]
        self.drivers: dict[int, Driver] = {}
        self.feeds: dict[int, EventFeed] = {}
        for s, bot in zip(others, self.opponents, strict=True):
            if isinstance(getattr(bot, "rng", None), random.Random):
                bot.rng.seed(driver_seed(deal, s) ^ 0x5EED)
            self.drivers[s] = Driver(bot, strict=True, rng=random.Random(driver_seed(deal, s)))
            self.feeds[s] = EventFeed(game, s, prefix=[game_event(game, aec.games - 1, s)])
        self.requests = 0
        reward = self._advance()
        return self._observe(), {"seat": self.seat, "deal_seed": deal, "reward": reward}

    def _advance(self) -> float:
        """Let the opponents move until the agent owes a decision or the game is over; the
        agent's rewards meanwhile."""
        aec = self.aec
        game = aec.game
        assert game is not None
        agent = aec.possible_agents[self.seat]
        reward = 0.0
        while not game.is_over and aec.seat != self.seat:
            seat = aec.seat
            legal, count = legal_to_wire(game, seat)
            kind = game.phase.value
            self.requests += 1
            # the request the referee would send, at its default time control (never timed)
            request = Request(
                self.requests,
                seat,
                kind,
                legal,
                count,
                0.0,
                DEFAULT_MOVE_SECONDS + DEFAULT_BANK_SECONDS,
                int(DEFAULT_BANK_SECONDS * 1000),
            )
            message = request_message(request, self.feeds[seat].take())
            move = self.drivers[seat].decide(message)
            aec.push(seat, move_from_wire(game, kind, move))
            reward += aec.rewards[agent]
        if game.is_over:
            for seat, driver in self.drivers.items():
                driver.feed(self.feeds[seat].take())  # the result: the bots' hooks see it
        return reward

    def _observe(self) -> dict[str, np.ndarray]:
        return self.aec.observe(self.aec.possible_agents[self.seat])

    def action_masks(self) -> np.ndarray:
        """The legal actions now as booleans (the name maskable learners look for)."""
        return self._observe()["action_mask"].astype(bool)

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        aec = self.aec
        game = aec.game
        if game is None or game.is_over:
            raise RuntimeError("the episode is over: call reset()")
        agent = aec.possible_agents[self.seat]
        legal = aec.legal()
        info: dict[str, Any] = {}
        reward = 0.0
        if action is None or int(action) not in legal:
            action = legal[int(self.np_random.integers(len(legal)))]
            info["illegal_action"] = True
            reward += self.illegal_penalty
        aec.step(int(action))
        reward += aec.rewards[agent]
        reward += self._advance()
        return self._observe(), float(reward), game.is_over, False, info

    def render(self) -> str | None:
        return self.aec.describe()
