"""A small policy network in numpy: observation -> one hidden tanh layer -> action logits.

:meth:`MLP.__call__` is a :data:`ohseven.sdk.policy.Policy` (the legal action with the highest
logit), so ``PolicyBot(MLP.load(path))`` plays it. The weights live in a ``.npz`` file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from ohseven.sdk.observation import ACTIONS, OBS_SIZE

__all__ = ["MLP"]


class MLP:
    """``logits = tanh(x @ w1 + b1) @ w2 + b2``."""

    def __init__(self, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray) -> None:
        if w1.shape[0] != OBS_SIZE or w2.shape[1] != ACTIONS:
            raise ValueError(
                f"weights of shape {w1.shape} -> {w2.shape} do not fit observations of "
                f"{OBS_SIZE} and {ACTIONS} actions: trained for another layout?"
            )
        self.w1, self.b1, self.w2, self.b2 = w1, b1, w2, b2

    @classmethod
    def random(cls, hidden: int, rng: np.random.Generator) -> MLP:
        """Small random weights (the last layer at zero: a uniform policy to start)."""
        w1 = rng.normal(0, 1 / np.sqrt(OBS_SIZE / 8), (OBS_SIZE, hidden)).astype(np.float32)
        return cls(
            w1,
            np.zeros(hidden, np.float32),
            np.zeros((hidden, ACTIONS), np.float32),
            np.zeros(ACTIONS, np.float32),
        )

    @property
    def params(self) -> list[np.ndarray]:
        return [self.w1, self.b1, self.w2, self.b2]

    def forward(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The hidden layer and the logits of a batch of observations ``x``."""
        hidden = np.tanh(x @ self.w1 + self.b1)
        return hidden, hidden @ self.w2 + self.b2

    def __call__(self, observation: list[float], mask: list[int]) -> int:
        """The legal action with the highest logit."""
        _, logits = self.forward(np.asarray(observation, np.float32))
        logits = np.where(np.asarray(mask) > 0, logits, -np.inf)
        return int(np.argmax(logits))

    def named(self) -> dict[str, np.ndarray]:
        return {"w1": self.w1, "b1": self.b1, "w2": self.w2, "b2": self.b2}

    def save(self, path: Path | str) -> None:
        """Save the weights as float16 (a quarter of the size; plenty for a policy)."""
        np.savez_compressed(path, **{k: v.astype(np.float16) for k, v in self.named().items()})

    @classmethod
    def load(cls, path: Path | str) -> MLP:
        with np.load(path) as data:
            return cls(*(data[name].astype(np.float32) for name in ("w1", "b1", "w2", "b2")))
