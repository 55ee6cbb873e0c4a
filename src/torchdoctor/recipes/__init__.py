"""Built-in recipes (name -> factory) and the loader for user recipe files.

    from torchdoctor.recipes.loading import load_recipe
    recipe = load_recipe("shapes", n_train=100)          # a built-in
    recipe = load_recipe("path/to/my_recipe.py", lr=3e-4)  # a file defining recipe(**options)

Each factory takes keyword options only and returns a `torchdoctor.recipes.base.Recipe`.
Generating data happens when a factory is called, never at import.
"""

from __future__ import annotations

from collections.abc import Callable

from torchdoctor.recipes import checkerboard, cifar_resnet, shapes
from torchdoctor.recipes.base import Recipe

REGISTRY: dict[str, Callable[..., Recipe]] = {
    "shapes": shapes.recipe,
    "cifar-resnet": cifar_resnet.recipe,
    "checkerboard": checkerboard.recipe,
}

__all__ = ["REGISTRY", "Recipe"]
