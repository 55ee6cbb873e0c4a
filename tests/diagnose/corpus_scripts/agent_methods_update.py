"""An actor-critic agent with methods of its own (minimalRL V-trace style): it acts through `pi(s)`,
and its `train_net` method runs the update: off-policy targets under no_grad from `targets(...)`
(which calls `pi` and `v`, the value of the next states among them), then `pi(s)` and `v(s)` with
autograd, backward and the optimizer step. `v` and `targets` call submodules `pi` found first."""

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 64)
        self.fc_pi = nn.Linear(64, 2)
        self.fc_v = nn.Linear(64, 1)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)

    def pi(self, x, softmax_dim=0):
        return F.softmax(self.fc_pi(F.relu(self.fc1(x))), dim=softmax_dim)

    def v(self, x):
        return self.fc_v(F.relu(self.fc1(x)))

    def targets(self, s, a, r, s_next, mu):
        with torch.no_grad():  # the update's targets: off-policy corrected returns
            ratio = self.pi(s, softmax_dim=1).gather(1, a) / mu
            return r + 0.98 * self.v(s_next) * ratio, ratio

    def train_net(self, s, a, r, s_next, mu):
        target, ratio = self.targets(s, a, r, s_next, mu)
        pi_a = self.pi(s, softmax_dim=1).gather(1, a)
        loss = F.smooth_l1_loss(self.v(s), target) - (torch.log(pi_a) * ratio).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


torch.manual_seed(0)
rng = np.random.default_rng(0)
model = Agent()
for _update in range(300):
    states, actions, mus, rewards, nexts = [], [], [], [], []
    s = rng.standard_normal(4).astype(np.float32)
    for _t in range(20):
        prob = model.pi(torch.from_numpy(s))
        a = torch.multinomial(prob, 1).item()
        s_next = rng.standard_normal(4).astype(np.float32)
        states.append(s), actions.append([a]), mus.append([prob[a].item()])
        rewards.append([1.0]), nexts.append(s_next)
        s = s_next
    model.train_net(
        torch.tensor(np.stack(states)),
        torch.tensor(actions),
        torch.tensor(rewards),
        torch.tensor(np.stack(nexts)),
        torch.tensor(mus),
    )
