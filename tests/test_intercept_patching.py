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


def test_a_lifted_patch_comes_back_and_a_newer_patchers_wrapper_is_never_lifted():
    """Patcher.lift takes one of its patches off for a moment (the optimizer probe lifts the
    host-read wrapper of `.item()` during torch's own optimizer steps); put_on puts it back."""

    class Owner:
        def f(self):
            return "real"

    ours, newer = Patcher(), Patcher()
    ours.replace(Owner, "f", lambda original: lambda self: "ours")
    assert ours.lift(Owner, "f") and Owner().f() == "real" and "f" in Owner.__dict__
    ours.put_on()
    assert Owner().f() == "ours" and not ours.lifted
    newer.replace(Owner, "f", lambda original: lambda self: "newer")
    assert not ours.lift(Owner, "f") and Owner().f() == "newer"  # not ours on top: untouched
    newer.restore()
    assert ours.lift(Owner, "f")
    ours.restore()  # restored while lifted: the original, and nothing left to put back
    ours.put_on()
    assert Owner().f() == "real"


def test_a_torch_module_imported_while_patched_lets_our_wrapper_go_at_restore():
    # dynamo imported while our patches are on keeps `torch.nn.Module.__call__` as a module
    # global (`unpatched_nn_module_call`): our wrapper, and through it the session, lived on
    import sys

    import torch

    patcher = Patcher()
    original = torch.nn.Module.__call__
    patcher.replace(torch.nn.Module, "__call__", lambda real: lambda *a, **k: real(*a, **k))
    module = types.ModuleType("torch._torchdoctor_test_capture")
    sys.modules[module.__name__] = module
    try:
        exec("import torch\nunpatched = torch.nn.Module.__call__\nother = len\n", module.__dict__)
        assert module.unpatched is not original
        patcher.restore()
        assert module.unpatched is original and module.other is len
    finally:
        del sys.modules[module.__name__]
        patcher.restore()
