"""A training loop written as a state machine (`State.COLLECT -> State.LEARN -> State.EVAL ->
...`, a transition table and a `step()` dispatcher), for a DQN-like agent on a tiny NumPy
grid-world with a replay buffer held in preallocated NumPy arrays.

Planted: the transition table sends LEARN to EVAL after every learning update (the author meant
every 500): each update is followed by a 20-episode greedy evaluation. --fixed: LEARN goes back
to COLLECT and EVAL happens every 500 updates.
"""

import enum
import sys

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv
SIZE, ACTIONS = 6, 4


class GridWorld:
    def __init__(self, rng):
        self.rng = rng

    def reset(self):
        self.pos = self.rng.integers(0, SIZE, 2)
        return self.obs()

    def obs(self):
        o = np.zeros(2 * SIZE, dtype=np.float32)
        o[self.pos[0]], o[SIZE + self.pos[1]] = 1, 1
        return o

    def step(self, a):
        self.pos = np.clip(self.pos + [(0, 1), (1, 0), (0, -1), (-1, 0)][a], 0, SIZE - 1)
        done = bool((self.pos == SIZE - 1).all())
        return self.obs(), float(done) - 0.01, done


class Replay:
    def __init__(self, cap, dim):
        self.s = np.zeros((cap, dim), np.float32)
        self.s2 = np.zeros((cap, dim), np.float32)
        self.a = np.zeros(cap, np.int64)
        self.r = np.zeros(cap, np.float32)
        self.d = np.zeros(cap, np.float32)
        self.n, self.cap = 0, cap

    def add(self, s, a, r, s2, d):
        i = self.n % self.cap
        self.s[i], self.a[i], self.r[i], self.s2[i], self.d[i] = s, a, r, s2, d
        self.n += 1

    def sample(self, k, rng):
        i = rng.integers(0, min(self.n, self.cap), k)
        return tuple(torch.from_numpy(v[i]) for v in (self.s, self.a, self.r, self.s2, self.d))


class State(enum.Enum):
    COLLECT = 1
    LEARN = 2
    EVAL = 3
    DONE = 4


class Agent:
    def __init__(self):
        self.rng = np.random.default_rng(0)
        self.env, self.eval_env = GridWorld(self.rng), GridWorld(np.random.default_rng(1))
        self.q = nn.Sequential(nn.Linear(2 * SIZE, 128), nn.ReLU(), nn.Linear(128, 128),
                               nn.ReLU(), nn.Linear(128, ACTIONS))
        self.target = nn.Sequential(*[type(m)(m.in_features, m.out_features)
                                      if isinstance(m, nn.Linear) else nn.ReLU()
                                      for m in self.q])
        self.target.load_state_dict(self.q.state_dict())
        self.opt = torch.optim.Adam(self.q.parameters(), lr=1e-3)
        self.buf = Replay(20000, 2 * SIZE)
        self.obs, self.updates, self.state = self.env.reset(), 0, State.COLLECT

    def collect(self):
        for _ in range(4):
            if self.rng.random() < 0.2:
                a = int(self.rng.integers(ACTIONS))
            else:
                with torch.no_grad():
                    a = int(self.q(torch.from_numpy(self.obs)).argmax())
            s2, r, d = self.env.step(a)
            self.buf.add(self.obs, a, r, s2, d)
            self.obs = self.env.reset() if d else s2
        return State.LEARN if self.buf.n >= 256 else State.COLLECT

    def learn(self):
        s, a, r, s2, d = self.buf.sample(128, self.rng)
        with torch.no_grad():
            target = r + 0.97 * (1 - d) * self.target(s2).max(1).values
        q = self.q(s).gather(1, a[:, None]).squeeze(1)
        loss = nn.functional.smooth_l1_loss(q, target)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.updates += 1
        if self.updates % 200 == 0:
            self.target.load_state_dict(self.q.state_dict())
        if self.updates >= 3000:
            return State.DONE
        if FIXED:
            return State.EVAL if self.updates % 500 == 0 else State.COLLECT
        return State.EVAL

    def evaluate(self):
        total = 0.0
        for _ in range(20):
            o = self.eval_env.reset()
            for _ in range(20):
                with torch.no_grad():
                    o, r, d = self.eval_env.step(int(self.q(torch.from_numpy(o)).argmax()))
                total += r
                if d:
                    break
        if self.updates % 500 == 0:
            print(self.updates, total / 20)
        return State.COLLECT

    def run(self):
        table = {State.COLLECT: self.collect, State.LEARN: self.learn, State.EVAL: self.evaluate}
        while self.state is not State.DONE:
            self.state = table[self.state]()


if __name__ == "__main__":
    torch.manual_seed(0)
    Agent().run()
