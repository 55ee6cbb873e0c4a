"""REINFORCE with a baseline on a tiny pole-balancing-like environment written in NumPy; each
update collects a batch of episodes with the stochastic policy, then the policy-gradient step.

Planted: `evaluate_policy(policy, episodes=10)` (greedy rollouts under no_grad) runs after every
update, as the author's `if update % EVAL_EVERY == 0` has EVAL_EVERY = 1. --fixed: every 50
updates.
"""

import sys

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv
EVAL_EVERY = 50 if FIXED else 1


class Pole:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def reset(self):
        self.state = self.rng.uniform(-0.05, 0.05, 4)
        self.t = 0
        return self.state.astype(np.float32)

    def step(self, action):
        x, v, th, w = self.state
        force = 10.0 if action == 1 else -10.0
        acc = (9.8 * np.sin(th) - np.cos(th) * force * 0.05) / 0.5
        w = w + 0.02 * acc
        th = th + 0.02 * w
        v = v + 0.02 * force * 0.1
        x = x + 0.02 * v
        self.state, self.t = np.array([x, v, th, w]), self.t + 1
        done = abs(th) > 0.2 or abs(x) > 2.4 or self.t >= 100
        return self.state.astype(np.float32), 1.0, done


def rollout(policy, env, greedy):
    obs, done, logps, rewards = env.reset(), False, [], []
    while not done:
        logits = policy(torch.from_numpy(obs))
        if greedy:
            action = int(logits.argmax())
        else:
            dist = torch.distributions.Categorical(logits=logits)
            a = dist.sample()
            logps.append(dist.log_prob(a))
            action = int(a)
        obs, r, done = env.step(action)
        rewards.append(r)
    return logps, rewards


@torch.no_grad()
def evaluate_policy(policy, env, episodes=10):
    return np.mean([len(rollout(policy, env, greedy=True)[1]) for _ in range(episodes)])


if __name__ == "__main__":
    torch.manual_seed(0)
    env, eval_env = Pole(0), Pole(1)
    policy = nn.Sequential(nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 2))
    opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
    baseline = 0.0
    for update in range(1, 151):
        loss, lengths = 0.0, []
        for _ in range(4):
            logps, rewards = rollout(policy, env, greedy=False)
            returns = torch.tensor(np.cumsum(rewards[::-1])[::-1].copy(), dtype=torch.float32)
            loss = loss - (torch.stack(logps) * (returns - baseline)).sum() / 4
            lengths.append(len(rewards))
        baseline = 0.9 * baseline + 0.1 * float(np.mean(lengths))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if update % EVAL_EVERY == 0:
            score = evaluate_policy(policy, eval_env)
            if update % 50 == 0:
                print(update, score)
