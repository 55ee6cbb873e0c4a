"""CLEAN: DQN with a tensor ring replay buffer, minibatches drawn with torch.randint, a target
network synced with load_state_dict every 500 steps, epsilon-greedy acting under no_grad.
Nothing is planted (`--fixed` changes nothing).
"""

import random

import torch
from torch import nn

OBS, ACTIONS, CAP = 12, 4, 10000


def main():
    random.seed(0)
    torch.manual_seed(0)
    q = nn.Sequential(nn.Linear(OBS, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                      nn.Linear(256, ACTIONS))
    target = nn.Sequential(nn.Linear(OBS, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                           nn.Linear(256, ACTIONS))
    target.load_state_dict(q.state_dict())
    opt = torch.optim.Adam(q.parameters(), lr=5e-4)
    s_buf, a_buf = torch.zeros(CAP, OBS), torch.zeros(CAP, dtype=torch.long)
    r_buf, s2_buf = torch.zeros(CAP), torch.zeros(CAP, OBS)
    obs, n, eps = torch.randn(OBS), 0, 1.0
    for step in range(2500):
        if random.random() < eps:
            action = random.randrange(ACTIONS)
        else:
            with torch.no_grad():
                action = int(q(obs[None]).argmax())
        nxt = torch.randn(OBS)
        i = n % CAP
        s_buf[i], a_buf[i], r_buf[i], s2_buf[i] = obs, action, obs[action], nxt
        n, obs, eps = n + 1, nxt, max(0.05, eps * 0.999)
        if n < 500:
            continue
        idx = torch.randint(0, min(n, CAP), (128,))
        with torch.no_grad():
            y = r_buf[idx] + 0.99 * target(s2_buf[idx]).max(1).values
        pred = q(s_buf[idx]).gather(1, a_buf[idx, None]).squeeze(1)
        loss = nn.functional.smooth_l1_loss(pred, y)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(q.parameters(), 10.0)
        opt.step()
        if step % 500 == 0:
            target.load_state_dict(q.state_dict())
            print(step, loss.item(), eps)


if __name__ == "__main__":
    main()
