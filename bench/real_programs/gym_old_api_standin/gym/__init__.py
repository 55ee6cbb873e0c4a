"""`gym` before 0.26 (`env.reset()` returns the observation, `env.step` four values) for the
MuJoCo locomotion tasks the Decision Transformer scripts evaluate on, which need MuJoCo (not
installed): `make("HalfCheetah-v3")` gives an environment of the task's dimensions whose state
follows a random linear system driven by the action (standins.d4rl_trajectories draws its data
set the same way), episodes of `max_episode_steps`. A stand-in for the data, not the physics."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

DIMENSIONS = {"HalfCheetah": (17, 6), "Hopper": (11, 3), "Walker2d": (17, 6)}


class _LinearLocomotion:
    def __init__(self, state_dim: int, act_dim: int, max_episode_steps: int = 1000) -> None:
        rng = np.random.default_rng(29)
        self.dynamics = rng.normal(0, 0.3, (state_dim, state_dim)) / np.sqrt(state_dim)
        self.control = rng.normal(0, 0.3, (act_dim, state_dim))
        self.observation_space = spaces.Box(-np.inf, np.inf, (state_dim,), np.float64)
        self.action_space = spaces.Box(-1.0, 1.0, (act_dim,), np.float32)
        self.max_episode_steps = max_episode_steps
        self.rng = np.random.default_rng(0)
        self.state = np.zeros(state_dim)
        self.t = 0

    def seed(self, seed=None):
        self.rng = np.random.default_rng(seed)
        return [seed]

    def reset(self):
        self.t = 0
        self.state = self.rng.normal(0, 0.1, self.state.shape)
        return self.state.copy()

    def step(self, action):
        action = np.clip(np.asarray(action, dtype=np.float64), -1, 1)
        self.state = np.tanh(self.state @ self.dynamics + action @ self.control)
        self.t += 1
        reward = float(self.state[0] - 0.1 * (action**2).sum())
        return self.state.copy(), reward, self.t >= self.max_episode_steps, {}

    def render(self, *args, **kwargs):
        return None

    def close(self):
        pass


def make(name: str, **kwargs):
    task = name.split("-")[0]
    if task not in DIMENSIONS:
        raise ValueError(f"gym stand-in: no environment {name!r}")
    return _LinearLocomotion(*DIMENSIONS[task])
