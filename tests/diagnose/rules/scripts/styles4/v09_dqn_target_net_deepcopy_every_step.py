"""DQN on a small grid-world written inline: epsilon-greedy acting, a replay buffer (deque), a
target network. The author refreshes the target network by deep-copying the online network after
every gradient step (target_update=1 and a copy instead of load_state_dict).

Planted: copy.deepcopy of the whole Q-network every step. --fixed: the target network is built
once and refreshed with load_state_dict every 250 steps.
"""

import copy
import random
import sys
from collections import deque

import torch
from torch import nn

N_STATES, N_ACTIONS = 25, 4


def env_step(state, action):
    r, c = divmod(state, 5)
    r, c = [(r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)][action]
    r, c = min(max(r, 0), 4), min(max(c, 0), 4)
    nxt = r * 5 + c
    return nxt, (1.0 if nxt == 24 else -0.01), nxt == 24


def one_hot(states):
    return nn.functional.one_hot(torch.as_tensor(states), N_STATES).float()


def main():
    random.seed(0)
    torch.manual_seed(0)
    fixed = "--fixed" in sys.argv
    q = nn.Sequential(nn.Linear(N_STATES, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                      nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, N_ACTIONS))
    target = copy.deepcopy(q)
    opt = torch.optim.Adam(q.parameters(), lr=1e-3)
    buffer = deque(maxlen=5000)
    state, eps = 0, 1.0
    for step in range(1500):
        if random.random() < eps:
            action = random.randrange(N_ACTIONS)
        else:
            with torch.no_grad():
                action = int(q(one_hot([state])).argmax())
        nxt, reward, done = env_step(state, action)
        buffer.append((state, action, reward, nxt, done))
        state = 0 if done else nxt
        eps = max(0.05, eps * 0.997)
        if len(buffer) < 128:
            continue
        s, a, r, s2, d = zip(*random.sample(buffer, 64))
        with torch.no_grad():
            y = torch.tensor(r) + 0.99 * target(one_hot(s2)).max(1).values * (
                1 - torch.tensor(d, dtype=torch.float))
        pred = q(one_hot(s)).gather(1, torch.tensor(a)[:, None]).squeeze(1)
        loss = nn.functional.smooth_l1_loss(pred, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if fixed:
            if step % 250 == 0:
                target.load_state_dict(q.state_dict())
        else:
            target = copy.deepcopy(q)
    print("final eps", eps)


if __name__ == "__main__":
    main()
