"""Applying fixes: a libcst transformer that swaps original nodes (by identity) for their
replacements, so untouched code keeps its exact formatting and comments."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.model import Fix


class _Replace(cst.CSTTransformer):
    def __init__(self, fixes: list[Fix]):
        self._by_id = {}
        self._keep_alive = []
        for fix in fixes:
            for original, replacement in fix.replacements:
                self._by_id[id(original)] = replacement
                self._keep_alive.append(original)

    def on_leave(self, original_node, updated_node):
        return self._by_id.get(id(original_node), updated_node)


def non_overlapping(fixes: list[Fix]) -> list[Fix]:
    """Fixes whose spans do not overlap, first come first served (the rest wait a round)."""
    chosen: list[Fix] = []
    for fix in sorted(fixes, key=lambda f: f.span):
        start, end = fix.span[:2], fix.span[2:]
        if all(end <= c.span[:2] or start >= c.span[2:] for c in chosen):
            chosen.append(fix)
    return chosen


def apply_fixes(module: cst.Module, fixes: list[Fix]) -> str:
    return module.visit(_Replace(fixes)).code
