"""torchdoctor: find where each PyTorch training step's time goes, fix it, and prove the gain.

Public API (imported lazily so `import torchdoctor` stays cheap for the CLI):
    Trainer, TrainerConfig   the reference training loop  (torchdoctor.trainer)
    Recipe                   what a recipe returns         (torchdoctor.recipes.base)
    watch                    diagnose code in a notebook   (torchdoctor.diagnose.api)
"""

from __future__ import annotations

__version__ = "0.1.0"

_LAZY = {
    "Trainer": ("torchdoctor.trainer", "Trainer"),
    "TrainerConfig": ("torchdoctor.trainer.config", "TrainerConfig"),
    "Recipe": ("torchdoctor.recipes.base", "Recipe"),
    "watch": ("torchdoctor.diagnose.api", "watch"),
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module_name, attr = _LAZY[name]
        return getattr(importlib.import_module(module_name), attr)
    raise AttributeError(f"module 'torchdoctor' has no attribute {name!r}")


__all__ = ["__version__", *_LAZY]
