"""`gym.envs.box2d` without Box2D (not installed): World Models' utils import it to resize the
CarRacing frames (`car_racing.STATE_W = 64`) in scripts that never make the environment; making
one raises as gymnasium does without Box2D."""

from . import car_racing  # noqa: F401
