"""Compile the root model with `torch.compile` (seed 004: after data loading and AMP).

TorchDynamo captures the forward (and AOTAutograd the backward) and Inductor fuses the
element-wise work into fewer kernels, which helps most when the step is launch/overhead-bound.
The first steps pay the compilation, so trials exclude warm-up steps from timing; the time to
compile is reported in the worker's elapsed time. Fused kernels round differently, last bits only.
"""

from __future__ import annotations

import shutil

import torch

from torchdoctor.techniques import finding_codes_for_fix

NAME = "compile"
SUMMARY = "model.compile() (torch.compile of the root model)"
TOLERANCE = 1e-3
TOLERANCE_REASON = "fused kernels sum in another order (float32 rounding)"
FINDING_CODES = finding_codes_for_fix(NAME)  # from the technique registry
# Compiled dropout draws its masks from its own generator (Inductor's Philox stream), so with
# active Dropout the losses differ from eager by design: the comparison cannot tell.
REDRAWS_DROPOUT = True
PERMANENT = "model.compile()  # or model = torch.compile(model), after .to(device)"


def applies_to(run) -> bool:
    if run is None or not run.models:
        return False
    if run.environment.device_type == "cpu" and not compiler_available():
        return False
    return all(model.wrapper != "compiled" for model in run.models)


def compiler_available() -> bool:
    """Inductor's CPU backend writes C++: it needs a compiler on PATH."""
    return any(shutil.which(name) for name in ("g++", "c++", "clang++"))


def apply(hooks) -> None:
    if hooks.device_type == "cpu" and not compiler_available():
        raise RuntimeError("torch.compile on CPU needs a C++ compiler (g++/clang++); none found")
    compiled: set[int] = set()

    def forward(module, call, args, kwargs):
        if id(module) not in compiled:
            compiled.add(id(module))
            if not isinstance(module, torch._dynamo.eval_frame.OptimizedModule):
                module.compile()  # in place: same parameters, the optimizer is unaffected
                hooks.mark_used(NAME)
        return call(module, args, kwargs)

    hooks.around_forward.append(forward)
