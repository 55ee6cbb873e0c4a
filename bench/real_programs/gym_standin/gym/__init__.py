"""`gym` as gymnasium: programs written for gym 0.26's API (`s, info = env.reset()`, five values
from `env.step`), the API gymnasium kept, import `gym`, which is not installed here."""

from gymnasium import *  # noqa: F403
from gymnasium import make, spaces  # noqa: F401
