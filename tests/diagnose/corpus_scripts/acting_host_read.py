"""A policy acting one observation at a time under no_grad, turning its output into the action on
the host with NumPy work (minimalRL style), then one update on the rollout."""

import numpy as np
import torch
from torch import nn

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(8, 64), nn.Tanh(), nn.Linear(64, 4))
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
rng = np.random.default_rng(0)
for _update in range(200):
    observations, actions = [], []
    obs = rng.standard_normal(8).astype(np.float32)
    for _t in range(32):
        with torch.no_grad():
            logits = policy(torch.from_numpy(obs))
        action = int(
            np.argmax(np.tile(logits.numpy(), 30000)) % 4
        )  # acting: the action on the host
        observations.append(obs)
        actions.append(action)
        obs = rng.standard_normal(8).astype(np.float32)
    x = torch.from_numpy(np.stack(observations))
    loss = nn.functional.cross_entropy(policy(x), torch.tensor(actions))
    opt.zero_grad()
    loss.backward()
    opt.step()
