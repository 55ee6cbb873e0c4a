"""Clean: PPO on a vectorised NumPy environment of the author's (a pole-balancing-like system
integrated with Euler steps): a rollout buffer preallocated as NumPy arrays, GAE, four epochs of
shuffled mini-batches with the clipped objective per rollout."""

import numpy as np
import torch
from torch import nn

N_ENVS, HORIZON = 16, 128


class Balance:
    def __init__(self, n, seed=0):
        self.rng = np.random.default_rng(seed)
        self.state = self.rng.normal(0, 0.05, (n, 4)).astype(np.float32)

    def step(self, action):
        x, v, a, w = self.state.T
        force = np.where(action == 1, 1.0, -1.0)
        w = w + 0.02 * (9.8 * np.sin(a) - force * np.cos(a))
        a, v = a + 0.02 * w, v + 0.02 * force
        x = x + 0.02 * v
        self.state = np.stack([x, v, a, w], 1).astype(np.float32)
        done = (np.abs(a) > 0.3) | (np.abs(x) > 2.4)
        self.state[done] = self.rng.normal(0, 0.05, (int(done.sum()), 4))
        return self.state.copy(), np.where(done, 0.0, 1.0).astype(np.float32), done


if __name__ == "__main__":
    torch.manual_seed(0)
    env = Balance(N_ENVS)
    net = nn.Sequential(nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh())
    pi, vf = nn.Linear(64, 2), nn.Linear(64, 1)
    opt = torch.optim.Adam([*net.parameters(), *pi.parameters(), *vf.parameters()], lr=3e-4)
    obs_buf = np.zeros((HORIZON, N_ENVS, 4), np.float32)
    act_buf, logp_buf = (
        np.zeros((HORIZON, N_ENVS), np.int64),
        np.zeros((HORIZON, N_ENVS), np.float32),
    )
    rew_buf, done_buf, val_buf = (np.zeros((HORIZON, N_ENVS), np.float32) for _ in range(3))
    obs = env.state.copy()
    for update in range(12):
        with torch.no_grad():
            for t in range(HORIZON):
                h = net(torch.from_numpy(obs))
                dist = torch.distributions.Categorical(logits=pi(h))
                act = dist.sample()
                obs_buf[t], act_buf[t], logp_buf[t], val_buf[t] = (
                    obs,
                    act.numpy(),
                    dist.log_prob(act).numpy(),
                    vf(h).squeeze(1).numpy(),
                )
                obs, rew_buf[t], done_buf[t] = env.step(act.numpy())
        adv, last = np.zeros_like(rew_buf), np.zeros(N_ENVS, np.float32)
        for t in reversed(range(HORIZON)):
            nxt = val_buf[t + 1] if t + 1 < HORIZON else val_buf[t]
            delta = rew_buf[t] + 0.99 * nxt * (1 - done_buf[t]) - val_buf[t]
            last = delta + 0.99 * 0.95 * (1 - done_buf[t]) * last
            adv[t] = last
        flat = [
            torch.from_numpy(a.reshape(HORIZON * N_ENVS, *a.shape[2:]))
            for a in (obs_buf, act_buf, logp_buf, adv, adv + val_buf)
        ]
        for _ in range(4):
            for idx in torch.randperm(HORIZON * N_ENVS).split(256):
                o, a, old_logp, ad, ret = (f[idx] for f in flat)
                h = net(o)
                dist = torch.distributions.Categorical(logits=pi(h))
                ratio = (dist.log_prob(a) - old_logp).exp()
                ad = (ad - ad.mean()) / (ad.std() + 1e-8)
                loss = (
                    -torch.min(ratio * ad, ratio.clamp(0.8, 1.2) * ad).mean()
                    + 0.5 * (vf(h).squeeze(1) - ret).pow(2).mean()
                )
                opt.zero_grad()
                loss.backward()
                opt.step()
        print(update, float(rew_buf.mean()))
