"""Two patchers stacked on one attribute (the --try hooks under diagnose's probes) survive the
moment every patch is taken off while dynamo's tables are rebuilt: found when --try lost its
loss trajectory in trials whose probes happened to iterate in another order."""

from __future__ import annotations

import types

from torchdoctor.intercept import patching
from torchdoctor.intercept.patching import Patcher


def test_stacked_patchers_come_back_in_their_order_after_all_patches_off():
    owner = types.SimpleNamespace(f=lambda: ["real"])
    calls: list[str] = []

    def wrap(tag):
        def make(original):
            def wrapper():
                calls.append(tag)
                return original()

            return wrapper

        return make

    patchers = [Patcher() for _ in range(4)]
    for index, patcher in enumerate(patchers):  # each newer one wraps the older ones
        patcher.replace(owner, "f", wrap(f"p{index}"))
    with patching._all_patches_off():
        assert owner.f() == ["real"] and calls == []  # torch as torch made it, meanwhile
    owner.f()
    assert calls == ["p3", "p2", "p1", "p0"]  # the whole chain is back, outermost first
    for patcher in reversed(patchers):
        patcher.restore()
    calls.clear()
    assert owner.f() == ["real"] and calls == []
