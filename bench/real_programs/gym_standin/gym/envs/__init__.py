"""`gym.envs` as gymnasium's, for programs that import it (`import gym.envs.box2d`)."""

from gymnasium.envs import *  # noqa: F403
