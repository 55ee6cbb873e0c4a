"""The rule catalogue: every module in this package named `td<code>_<name>.py` holds one rule."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from torchdoctor.lint.rule import Rule


@lru_cache(maxsize=1)
def _rule_classes() -> tuple[type[Rule], ...]:
    found = []
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("td"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Rule)
                and value is not Rule
                and value.code
            ):
                found.append(value)
    return tuple(sorted(found, key=lambda cls: cls.code))


def all_rules() -> list[Rule]:
    return [cls() for cls in _rule_classes()]


def rule_classes() -> tuple[type[Rule], ...]:
    return _rule_classes()


def known_codes() -> list[str]:
    return ["TD000", *(cls.code for cls in _rule_classes())]
