"""PPO on a toy continuous-control task: collect a rollout, compute GAE, then several epochs of
clipped-objective updates over minibatches. The minibatch size is derived from the config:
`rollout_len // num_minibatches`, and the config asks for 128 minibatches of a 256-step rollout.

Planted: minibatches of 2 samples (every update is overhead-bound). --fixed: a 2048-step rollout
in 4 minibatches of 512, the usual PPO setting.
"""

import sys

import torch
from torch import nn

CONFIG = {"rollout_len": 256, "num_minibatches": 128, "update_epochs": 4, "iterations": 12,
          "clip": 0.2, "gamma": 0.99, "lam": 0.95}
if "--fixed" in sys.argv:
    CONFIG["rollout_len"], CONFIG["num_minibatches"] = 2048, 4


class ActorCritic(nn.Module):
    def __init__(self, obs=8, act=2, hidden=128):
        super().__init__()
        self.pi = nn.Sequential(nn.Linear(obs, hidden), nn.Tanh(), nn.Linear(hidden, hidden),
                                nn.Tanh(), nn.Linear(hidden, act))
        self.v = nn.Sequential(nn.Linear(obs, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.log_std = nn.Parameter(torch.zeros(act))

    def dist(self, obs):
        return torch.distributions.Normal(self.pi(obs), self.log_std.exp())


def rollout(agent, n):
    obs = torch.randn(n, 8)
    with torch.no_grad():
        dist = agent.dist(obs)
        act = dist.sample()
        logp = dist.log_prob(act).sum(-1)
        value = agent.v(obs).squeeze(-1)
    reward = -(act - obs[:, :2]).pow(2).sum(-1)
    return obs, act, logp, value, reward


def gae(reward, value, gamma, lam):
    adv, last = torch.zeros_like(reward), 0.0
    for t in reversed(range(len(reward))):
        nxt = value[t + 1] if t + 1 < len(reward) else 0.0
        delta = reward[t] + gamma * nxt - value[t]
        last = delta + gamma * lam * last
        adv[t] = last
    return adv


def main():
    torch.manual_seed(0)
    c = CONFIG
    agent = ActorCritic()
    opt = torch.optim.Adam(agent.parameters(), lr=3e-4)
    mb = c["rollout_len"] // c["num_minibatches"]
    for it in range(c["iterations"]):
        obs, act, old_logp, value, reward = rollout(agent, c["rollout_len"])
        adv = gae(reward, value, c["gamma"], c["lam"])
        ret = adv + value
        for _ in range(c["update_epochs"]):
            for idx in torch.randperm(c["rollout_len"]).split(mb):
                dist = agent.dist(obs[idx])
                ratio = (dist.log_prob(act[idx]).sum(-1) - old_logp[idx]).exp()
                a = adv[idx]
                pg = -torch.min(ratio * a, ratio.clamp(1 - c["clip"], 1 + c["clip"]) * a).mean()
                v_loss = (agent.v(obs[idx]).squeeze(-1) - ret[idx]).pow(2).mean()
                loss = pg + 0.5 * v_loss - 0.01 * dist.entropy().mean()
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                opt.step()
        print(f"iter {it} reward {reward.mean():.3f}")


if __name__ == "__main__":
    main()
