"""`torchvision.transforms.transforms`, the module the transforms live in (some scripts import
it by that name)."""

from torchvision.transforms import *  # noqa: F403
