"""Train a small policy with numpy alone, save it, and measure it against the random bot.

REINFORCE in the Gymnasium environment (:class:`ohseven.env.SingleAgentEnv`): the learner sits
in a random seat against the SDK's random bots; every decision is credited with the points of
the round it belongs to (``reward="round"``), less the batch's mean, over its spread. The
network is :class:`~ohseven.example_bots.trained.mlp.MLP` (one hidden layer), updated by Adam.

Then a sandboxed match (``ohseven-referee match``) of ``trained_bot.py`` against random bots;
the per-game difference (the policy's points minus the random bots' mean) gives a 95% interval.

    python example_bots/trained/train.py [--minutes M] [--out FILE] [--games G] [--seed S]
    python example_bots/trained/train.py --match-only     # measure the saved policy
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from ohseven.env import SingleAgentEnv
from ohseven.example_bots.trained.mlp import MLP

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent


class Adam:
    """Adam on a list of arrays, updated in place."""

    def __init__(self, params: list[np.ndarray], rate: float) -> None:
        self.params = params
        self.rate = rate
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, grads: list[np.ndarray]) -> None:
        self.t += 1
        b1, b2 = 0.9, 0.999
        for p, g, m, v in zip(self.params, grads, self.m, self.v, strict=True):
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * g * g
            step = self.rate * (m / (1 - b1**self.t)) / (np.sqrt(v / (1 - b2**self.t)) + 1e-8)
            p -= step.astype(p.dtype)


def masked_softmax(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    logits = np.where(masks > 0, logits, -np.inf)
    logits = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(logits)
    return e / e.sum(axis=-1, keepdims=True)


def play_episode(
    env: SingleAgentEnv, net: MLP, rng: np.random.Generator
) -> tuple[list[np.ndarray], list[np.ndarray], list[int], list[float], float]:
    """One game: the observations, masks and sampled actions of the learner, each decision's
    return (its round's points) and the game's points."""
    obs, info = env.reset(seed=int(rng.integers(2**62)))
    game = env.aec.game
    assert game is not None
    xs, ms, acts, returns = [], [], [], []
    start = 0  # the first decision of the current round
    gained = float(info["reward"])
    total = gained
    rnd = game.round
    done = False
    while not done:
        x, mask = obs["observation"], obs["action_mask"]
        _, logits = net.forward(x)
        p = masked_softmax(logits[None], mask[None])[0]
        action = int(rng.choice(len(p), p=p))
        xs.append(x)
        ms.append(mask)
        acts.append(action)
        obs, reward, done, _, _ = env.step(action)
        gained += reward
        total += reward
        if done or game.round != rnd:  # the round is scored: its points to its decisions
            returns.extend([gained] * (len(acts) - start))
            start, gained, rnd = len(acts), 0.0, game.round
    return xs, ms, acts, returns, total


def train(
    minutes: float, out: Path, seed: int, game: str, players: int, hidden: int, batch: int
) -> MLP:
    rng = np.random.default_rng(seed)
    net = MLP.random(hidden, rng)
    adam = Adam(net.params, 3e-3)
    env = SingleAgentEnv(game, players, seat=None, reward="round")
    deadline = time.monotonic() + 60 * minutes
    began = time.monotonic()
    iteration = 0
    games = 0
    while time.monotonic() < deadline:
        xs, ms, acts, rets, points = [], [], [], [], []
        for _ in range(batch):
            x, m, a, r, total = play_episode(env, net, rng)
            xs += x
            ms += m
            acts += a
            rets += r
            points.append(total)
        games += batch
        x = np.stack(xs)
        masks = np.stack(ms)
        actions = np.array(acts)
        returns = np.array(rets, np.float32)
        adv = (returns - returns.mean()) / (returns.std() + 1e-6)
        hidden_out, logits = net.forward(x)
        p = masked_softmax(logits, masks)
        # d(-log p[a] * adv - beta * entropy)/d logits, averaged over the batch
        grad = p.copy()
        grad[np.arange(len(actions)), actions] -= 1
        grad *= adv[:, None]
        logp = np.log(np.where(p > 0, p, 1.0))
        entropy = -(p * logp).sum(axis=1, keepdims=True)
        beta = 0.01
        grad += beta * p * (logp + entropy)  # the entropy bonus's gradient
        grad /= len(actions)
        g_w2 = hidden_out.T @ grad
        g_b2 = grad.sum(axis=0)
        g_h = (grad @ net.w2.T) * (1 - hidden_out**2)
        g_w1 = x.T @ g_h
        g_b1 = g_h.sum(axis=0)
        adam.step([g_w1, g_b1, g_w2, g_b2])
        iteration += 1
        if iteration % 10 == 0:
            print(
                f"{time.monotonic() - began:6.0f} s  iteration {iteration:4d}  games {games:6d}  "
                f"mean points per game {np.mean(points):6.2f}",
                flush=True,
            )
    net.save(out)
    print(f"trained {games} games in {time.monotonic() - began:.0f} s; saved {out}", flush=True)
    return net


def measure(games: int, seed: int, game: str, players: int) -> float:
    """A sandboxed match of the trained bot against random bots; prints the 95% interval of
    the per-game points difference and returns its lower end."""
    bots = [str(HERE / "trained_bot.py")] + [str(EXAMPLES / "random_bot.py")] * (players - 1)
    command = ["ohseven-referee", "match", *bots, "--game", game, "--games", str(games)]
    command += ["--seed", str(seed), "--json"]
    print("$", " ".join(command), flush=True)
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
        raise SystemExit(f"the match failed (exit {done.returncode})")
    result = json.loads(done.stdout)
    diffs = []
    faults = 0
    for played in result["games"]:
        seats, totals = played["seats"], played["totals"]
        mine = totals[seats.index("trained")]
        others = [t for name, t in zip(seats, totals, strict=True) if name != "trained"]
        diffs.append(mine - sum(others) / len(others))
        faults += len(played["faults"])
    n = len(diffs)
    mean = sum(diffs) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    low, high = mean - 1.96 * sd / math.sqrt(n), mean + 1.96 * sd / math.sqrt(n)
    for bot in result["bots"]:
        print(
            f"  {bot['name']:<10} points {bot['points']:6d}  bid accuracy "
            f"{bot['bid_accuracy']:.3f}  faults {sum(bot['faults'].values())}"
        )
    print(
        f"trained - random, points per game over {n} games: {mean:.2f} "
        f"(95% interval {low:.2f} .. {high:.2f}); faults {faults}"
    )
    print("beats random" if low > 0 else "does NOT beat random (interval reaches 0)")
    return low


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="training time (default 5)")
    parser.add_argument("--out", type=Path, default=HERE / "policy.npz", help="the policy file")
    parser.add_argument("--game", default="oh-seven", choices=["oh-seven", "oh-hell"])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=64, help="hidden units (default 64)")
    parser.add_argument("--batch", type=int, default=32, help="games per update (default 32)")
    parser.add_argument("--seed", type=int, default=0, help="training seed")
    parser.add_argument("--games", type=int, default=200, help="games of the match (default 200)")
    parser.add_argument("--match-seed", type=int, default=2026, help="the match's deal seed")
    parser.add_argument("--match-only", action="store_true", help="measure the saved policy")
    parser.add_argument("--no-match", action="store_true", help="train only")
    args = parser.parse_args(argv)
    if args.minutes <= 0 or args.games < 2 or args.batch < 1 or args.hidden < 1:
        parser.error("--minutes above 0, --games at least 2, --batch and --hidden at least 1")
    if not args.match_only:
        train(args.minutes, args.out, args.seed, args.game, args.players, args.hidden, args.batch)
    if args.no_match:
        return 0
    if args.out != HERE / "policy.npz":
        print(f"the match plays trained_bot.py, which loads {HERE / 'policy.npz'}, not {args.out}")
    return 0 if measure(args.games, args.match_seed, args.game, args.players) > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
