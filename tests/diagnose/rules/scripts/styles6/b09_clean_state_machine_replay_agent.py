"""CLEAN: a training loop as a state machine (COLLECT -> LEARN -> COLLECT, EVAL every 1000
updates), a Q-network on a NumPy chain environment with a replay buffer in preallocated NumPy
arrays sampled as whole arrays (`torch.from_numpy`), batches of 256. Nothing is planted
(`--fixed` changes nothing).
"""

import enum

import numpy as np
import torch
from torch import nn

N = 10


class S(enum.Enum):
    COLLECT = 0
    LEARN = 1
    EVAL = 2
    DONE = 3


def main():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    q = nn.Sequential(nn.Linear(N, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                      nn.Linear(256, 2))
    opt = torch.optim.Adam(q.parameters(), lr=1e-3)
    cap = 50000
    obs = np.zeros((cap, N), np.float32)
    nxt = np.zeros((cap, N), np.float32)
    act = np.zeros(cap, np.int64)
    rew = np.zeros(cap, np.float32)
    count, pos, updates, state = 0, 0, 0, S.COLLECT
    eye = np.eye(N, dtype=np.float32)
    while state is not S.DONE:
        if state is S.COLLECT:
            for _ in range(64):  # a random behaviour policy: no forward needed
                a = int(rng.integers(2))
                new = min(max(pos + (1 if a else -1), 0), N - 1)
                i = count % cap
                obs[i], act[i], rew[i], nxt[i] = eye[pos], a, float(new == N - 1), eye[new]
                count += 1
                pos = 0 if new == N - 1 else new
            state = S.LEARN if count >= 1024 else S.COLLECT
        elif state is S.LEARN:
            i = rng.integers(0, min(count, cap), 256)
            s, a, r, s2 = (torch.from_numpy(v[i]) for v in (obs, act, rew, nxt))
            with torch.no_grad():
                target = r + 0.9 * q(s2).max(1).values
            loss = nn.functional.smooth_l1_loss(q(s).gather(1, a[:, None]).squeeze(1), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            updates += 1
            state = S.EVAL if updates % 1000 == 0 else S.COLLECT
            if updates >= 3000:
                state = S.DONE
        elif state is S.EVAL:
            with torch.inference_mode():
                print(updates, q(torch.from_numpy(eye)).argmax(1).tolist())
            state = S.COLLECT


if __name__ == "__main__":
    main()
