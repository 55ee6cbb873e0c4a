"""Optimizer probe: every torch.optim optimizer and GradScaler; optimizer steps end training steps.

Global step pre/post hooks (`register_optimizer_step_pre_hook` / `..._post_hook`) cover every
optimizer class, including ones created before we were installed. `Optimizer.__init__` is patched
only to learn the construction site and that an optimizer exists (then backward() does not end a
step). GradScaler.step is patched because it may skip `optimizer.step()` when gradients overflow;
the step still ends when it returns. Clipping is watched to catch clipping of still-scaled grads.
"""

from __future__ import annotations

import inspect
import sys
import time
import weakref
from types import FrameType

import torch
from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)

from torchdoctor.diagnose.callsite import is_library_file, user_location
from torchdoctor.diagnose.observations import OptimizerObservation
from torchdoctor.diagnose.probes.base import (
    RUSAGE_THREAD,
    THREAD_FAULTS,
    Probe,
    getrusage,
    per_step,
)
from torchdoctor.diagnose.probes.transfers import accelerator_available
from torchdoctor.diagnose.steps import OTHER
from torchdoctor.intercept.patching import dynamo_compiling, eager_under_dynamo, transforming

ZERO_FILL = "zero_fill_s:"  # + id(optimizer): time in zero_grad(set_to_none=False), per step
STEP_TIME = "optimizer_step_s:"  # + id(optimizer): time inside its step(), per step
STEP_FAULTS = "optimizer_faults:"  # + id(optimizer): minor page faults inside its step()


def _tensor_bytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors if isinstance(t, torch.Tensor))


def _state_bytes(optimizer) -> int:
    return sum(_tensor_bytes(state.values()) for state in optimizer.state.values())


def _param_bytes(optimizer) -> int:
    return _tensor_bytes(p for group in optimizer.param_groups for p in group["params"])


def _implementations(optimizer) -> tuple[str, ...]:
    """The implementation flags the optimizer accepts: named by its class's constructor, or kept
    in its defaults (torch's classes keep every flag they take there; a subclass's constructor
    may not repeat them)."""
    try:
        accepted = set(inspect.signature(type(optimizer).__init__).parameters)
    except (TypeError, ValueError):  # a constructor without a readable signature
        accepted = set()
    accepted |= set(getattr(optimizer, "defaults", {}))
    return tuple(flag for flag in ("foreach", "fused") if flag in accepted)


def _foreach_or_fused(optimizer) -> bool | None:
    flags = [optimizer.defaults.get(k) for k in ("foreach", "fused")]
    if all(flag is None for flag in flags):
        return None
    return any(bool(flag) for flag in flags)


class OptimizerProbe(Probe):
    def install(self, patcher) -> None:
        self.optimizers: dict[int, tuple[object, OptimizerObservation]] = {}
        self.scaled_this_step = False
        self.unscaled_this_step: set[int] = set()
        # id(optimizer) -> torch's own optimizer that reads per-parameter CPU step counts with
        # `.item()` in its step (decided after its first step, from its state)
        self.reads_own_steps: dict[int, bool] = {}
        # (optimizer, torch's hook-wrapper frame, start time, page faults so far, closure
        # seconds so far) of each step() call in progress, outermost first: a step called inside
        # another is one program step
        self.active_steps: list[tuple[object, object, float, int | None, float]] = []
        self.closure_s = 0.0  # seconds inside step() closures (LBFGS's, Lightning's), in all
        self.counter_keys: dict[int, tuple[str, str]] = {}  # id(optimizer) -> _counter_keys()
        patcher.replace(torch.optim.Optimizer, "__init__", self._wrap_init)
        patcher.replace(torch.optim.Optimizer, "zero_grad", self._wrap_zero_grad)
        patcher.replace(torch.nn.Module, "zero_grad", self._wrap_module_zero_grad)
        # rule D221: per optimizer the clears so far that reach its gradients (its own
        # zero_grad, or a module's zero_grad on a module holding its first parameter: a GAN's
        # generator optimizer clearing its gradients does not clear the discriminator's, and
        # `teacher.zero_grad()` does not clear the student's), and its first gradient tensor (a
        # weak reference) and its clear count at its latest step
        self.module_owners: dict[int, object] = {}  # id(module) -> the optimizer updating it
        # id(module) -> (optimizers known then, ids of those whose first parameter it holds)
        self.module_clears: dict[int, tuple[int, list[int]]] = {}
        self.optimizer_clears: dict[int, int] = {}
        self.last_grads: dict[int, tuple[object, int]] = {}
        # a step compiled whole (`torch.compile` around zero_grad, backward and step): the
        # hooks run eagerly at a graph break, never traced
        # inlined into one graph (fullgraph=True), the step runs no hook of ours: the session
        # ends steps at backward() instead
        eager_under_dynamo(OptimizerProbe._pre_step, self.session.optimizer_step_in_one_graph)
        eager_under_dynamo(OptimizerProbe._post_step)
        patcher.keep_handle(register_optimizer_step_pre_hook(self._pre_step))
        patcher.keep_handle(register_optimizer_step_post_hook(self._post_step))
        scaler_class = torch.amp.GradScaler
        patcher.replace(scaler_class, "step", self._wrap_scaler_step)
        patcher.replace(scaler_class, "scale", self._wrap_scale)
        patcher.replace(scaler_class, "unscale_", self._wrap_unscale)
        for name in ("clip_grad_norm_", "clip_grad_value_"):
            patcher.replace(torch.nn.utils, name, self._wrap_clip)
            patcher.replace(torch.nn.utils.clip_grad, name, self._wrap_clip)

    def _observe(self, optimizer, location: str | None = None) -> OptimizerObservation:
        entry = self.optimizers.get(id(optimizer))
        if entry is None:
            observation = OptimizerObservation(
                class_name=type(optimizer).__name__,
                location=location or "<constructed before diagnosis>",
            )
            entry = self.optimizers[id(optimizer)] = (optimizer, observation)
        return entry[1]

    # -- optimizer ----------------------------------------------------------------------------
    def _wrap_init(self, original):
        probe = self

        def __init__(optimizer, *args, **kwargs):
            original(optimizer, *args, **kwargs)
            if id(optimizer) not in probe.optimizers:
                probe._observe(optimizer, _construction_site(optimizer))
                probe.session.optimizers_created += 1

        return __init__

    def _wrap_zero_grad(self, original):
        probe = self
        default = inspect.signature(original).parameters["set_to_none"].default

        def zero_grad(optimizer, *args, **kwargs):
            key = id(optimizer)
            probe.optimizer_clears[key] = probe.optimizer_clears.get(key, 0) + 1
            if transforming():
                return original(optimizer, *args, **kwargs)
            set_to_none = kwargs.get("set_to_none", args[0] if args else default)
            entry = probe.optimizers.get(key)  # seen before (every step after the first)
            observation = entry[1] if entry is not None else probe._observe(optimizer)
            observation.set_to_none = bool(set_to_none)
            probe.tracker.push("optimizer")
            started = time.perf_counter()
            try:
                return original(optimizer, *args, **kwargs)
            finally:
                if not set_to_none:  # gradients filled with zeros: rule D220's cost
                    key = f"{ZERO_FILL}{id(optimizer)}"
                    probe.tracker.counters[key] += time.perf_counter() - started
                probe.tracker.pop()

        return zero_grad

    def _wrap_module_zero_grad(self, original):
        probe = self
        default = inspect.signature(original).parameters["set_to_none"].default

        def zero_grad(module, *args, **kwargs):
            for key in probe._optimizers_cleared_by(module):
                probe.optimizer_clears[key] = probe.optimizer_clears.get(key, 0) + 1
            set_to_none = kwargs.get("set_to_none", args[0] if args else default)
            owner = None if set_to_none or transforming() else probe._owner_of(module)
            if owner is None:
                return original(module, *args, **kwargs)
            # `model.zero_grad(set_to_none=False)` fills the gradients of the optimizer that
            # updates the model: timed as that optimizer's zero-filling (rule D220)
            observation = probe._observe(owner)
            observation.set_to_none, observation.filled_by_module = False, True
            probe.tracker.push("optimizer")
            started = time.perf_counter()
            try:
                return original(module, *args, **kwargs)
            finally:
                probe.tracker.counters[f"{ZERO_FILL}{id(owner)}"] += time.perf_counter() - started
                probe.tracker.pop()

        return zero_grad

    def _optimizers_cleared_by(self, module) -> list[int]:
        """Ids of the optimizers whose first parameter the module holds (its zero_grad clears
        their gradients), computed again only when an optimizer was created since."""
        known = len(self.optimizers)
        cached = self.module_clears.get(id(module))
        if cached is not None and cached[0] == known:
            return cached[1]
        held = {id(p) for p in module.parameters()}
        ids = [
            key
            for key, (optimizer, _) in self.optimizers.items()
            if id(_first_param(optimizer)) in held
        ]
        self.module_clears[id(module)] = (known, ids)
        return ids

    def _owner_of(self, module):
        """The optimizer that updates the module's first parameter (None: none seen)."""
        first = next(module.parameters(), None)
        if first is None:
            return None
        owner = self.module_owners.get(id(module))
        if owner is None:
            owner = next(
                (
                    optimizer
                    for optimizer, _ in self.optimizers.values()
                    if any(p is first for group in optimizer.param_groups for p in group["params"])
                ),
                None,
            )
            if owner is not None:
                self.module_owners[id(module)] = owner
        return owner

    def _pre_step(self, optimizer, args, kwargs) -> tuple[tuple, dict] | None:
        if dynamo_compiling():  # inlined into a step compiled as one graph: not timed
            return None
        patcher = self.session.patcher
        if patcher.lifted:  # an earlier step raised before its post hook
            patcher.put_on()
        if self.active_steps and not _running_below(self.active_steps[-1][1]):
            self.active_steps.clear()  # an earlier step raised before its post hook
        self.tracker.push("optimizer")
        if (
            self.reads_own_steps.get(id(optimizer))
            and len(args) <= 1
            and not kwargs
            and not optimizer._optimizer_step_pre_hooks
            and not optimizer._optimizer_step_post_hooks
            and not transforming()
        ):
            # torch's own optimizer, no closure and no hooks of the program's: the only `.item()`
            # reads in its step are its own of CPU step counts, which the sync probe dismisses
            # (two Python calls each: 256 a step for AdamW over 128 parameters). Its wrapper is
            # off for the step; the post hook puts it back. (A read by another thread of the
            # program in that moment goes unseen.)
            patcher.lift(torch.Tensor, "item")
        # torch's hook wrapper of this step() call is frame 1: a step() called inside this one
        # (a subclass's super().step(), a Lookahead's inner optimizer) finds it on its stack.
        # Faults are read inline (a C call): the probes' Python calls per step are budgeted
        faults = getrusage(RUSAGE_THREAD).ru_minflt if THREAD_FAULTS else None
        frame = sys._getframe(1)
        self.active_steps.append((optimizer, frame, time.perf_counter(), faults, self.closure_s))
        # torch's args start with the optimizer itself: step(closure) has it second
        closure = kwargs.get("closure", args[1] if len(args) > 1 else None)
        return self._closure_outside_the_step(closure, args, kwargs) if callable(closure) else None

    def _closure_outside_the_step(self, closure, args, kwargs) -> tuple[tuple, dict]:
        """step(closure) runs the closure's forward and backward inside the step (LBFGS; Lightning
        hands its whole training step in as the closure): the closure's own code between them
        is the step's other work, not the optimizer's, and its time is not the optimizer step's
        (D210 times that). Torch passes on the args and kwargs a pre hook returns."""
        probe, tracker = self, self.tracker

        def closure_outside_the_step(*closure_args, **closure_kwargs):
            tracker.push(OTHER)
            started = time.perf_counter()
            try:
                return closure(*closure_args, **closure_kwargs)
            finally:
                probe.closure_s += time.perf_counter() - started
                tracker.pop()

        if "closure" in kwargs:
            return args, {**kwargs, "closure": closure_outside_the_step}
        return (args[0], closure_outside_the_step, *args[2:]), kwargs

    def _post_step(self, optimizer, args, kwargs) -> None:
        if dynamo_compiling():  # inlined into a step compiled as one graph: not timed
            return
        now = time.perf_counter()
        # no entry: its pre hook ran before diagnosis began
        _, _, started, faults, closure_s = (
            self.active_steps.pop() if self.active_steps else (0, 0, now, None, self.closure_s)
        )
        if self.active_steps and _stepping_already(self.active_steps, optimizer):
            # a subclass's step calling super().step(): one step of this optimizer, counted once
            # by the outermost call (round 7 counted each as two steps: per-step figures halved)
            self.tracker.pop()
            return
        counters = self.tracker.counters
        time_key, faults_key = self.counter_keys.get(id(optimizer)) or self._counter_keys(optimizer)
        counters[time_key] += now - started - (self.closure_s - closure_s)
        if faults is not None:
            counters[faults_key] += getrusage(RUSAGE_THREAD).ru_minflt - faults
        if self.session.patcher.lifted:
            self.session.patcher.put_on()
        self.tracker.pop()
        entry = self.optimizers.get(id(optimizer))  # seen before (every step after the first)
        observation = entry[1] if entry is not None else self._observe(optimizer)
        observation.steps += 1
        if observation.steps == 1:
            observation.state_bytes = _state_bytes(optimizer)
            observation.param_bytes = _param_bytes(optimizer)
            observation.param_tensors = sum(
                len(group["params"]) for group in optimizer.param_groups
            )
            observation.foreach_or_fused = _foreach_or_fused(optimizer)
            observation.implementations = _implementations(optimizer)
            self.reads_own_steps[id(optimizer)] = _reads_cpu_step_counts(optimizer)
        self._watch_gradients(optimizer, observation)
        if self.active_steps:
            return  # a wrapper's inner optimizer (Lookahead): the wrapper's step ends the step
        self.scaled_this_step = False
        self.unscaled_this_step.clear()
        self.session.optimizer_step_done(optimizer)

    def _counter_keys(self, optimizer) -> tuple[str, str]:
        """The step counters' keys of an optimizer (its step time, its page faults), made once:
        formatted at every step they were a tenth of the post-step hook's instructions."""
        key = id(optimizer)
        keys = self.counter_keys[key] = (f"{STEP_TIME}{key}", f"{STEP_FAULTS}{key}")
        return keys

    def _watch_gradients(self, optimizer, observation: OptimizerObservation) -> None:
        """Rules D221/D222: after a step, is its first gradient the one of the previous step
        (no zero_grad since: gradients add up), or has it no gradient at all?"""
        grad = _first_grad(optimizer)
        if grad is None:
            observation.steps_without_gradients += 1
            return
        clears = self.optimizer_clears.get(id(optimizer), 0)
        previous = self.last_grads.get(id(optimizer))
        if previous is not None and previous[1] == clears:
            ref = previous[0]
            if callable(ref) and ref() is grad:
                observation.grads_carried_over += 1
        try:
            self.last_grads[id(optimizer)] = (weakref.ref(grad), clears)
        except TypeError:
            pass

    # -- GradScaler ---------------------------------------------------------------------------
    def _wrap_scale(self, original):
        probe = self

        def scale(scaler, outputs):
            scaled = original(scaler, outputs)
            probe.scaled_this_step = bool(scaler.is_enabled())
            if isinstance(outputs, torch.Tensor):
                probe.session.unscaled_loss = (scaled, outputs)
            return scaled

        return scale

    def _wrap_unscale(self, original):
        probe = self

        def unscale_(scaler, optimizer):
            probe.unscaled_this_step.add(id(optimizer))
            return original(scaler, optimizer)

        return unscale_

    def _wrap_scaler_step(self, original):
        probe = self

        def step(scaler, optimizer, *args, **kwargs):
            probe._observe(optimizer).grad_scaler = True
            probe.session.scaler_depth += 1
            probe.tracker.push("optimizer")
            try:
                result = original(scaler, optimizer, *args, **kwargs)
            finally:
                probe.tracker.pop()
                probe.session.scaler_depth -= 1
            if not probe.session.scaler_depth:
                probe.scaled_this_step = False
                probe.unscaled_this_step.clear()
                probe.session.scaler_step_done(optimizer)
            return result

        return step

    def _wrap_clip(self, original):
        probe = self
        session = self.session
        without_accelerator = not accelerator_available()

        def clip(*args, **kwargs):
            if probe.scaled_this_step:
                unscaled = probe.unscaled_this_step
                for optimizer, observation in probe.optimizers.values():
                    if id(optimizer) not in unscaled:
                        observation.clip_before_unscale += 1
                        break
            # torch's clipping moves each gradient's norm with `.to(device)` (per gradient
            # without foreach: 29 a step in a small transformer). Without an accelerator no
            # copy is from host to a device, so the copy probe has nothing to record: its
            # wrapper is off while clipping runs, unless a --try fix rewrites copies
            lifted = (
                without_accelerator
                and not session.hooks.tensor_to
                and not transforming()
                and session.patcher.lift(torch.Tensor, "to")
            )
            try:
                return original(*args, **kwargs)
            finally:
                if lifted:
                    session.patcher.put_on()

        return clip

    def contribute(self, run, measured) -> None:
        run.optimizers = [observation for _, observation in self.optimizers.values()]
        for key, (_, observation) in self.optimizers.items():
            if any(f"{STEP_TIME}{key}" in r.counters for r in measured):
                observation.step_s = per_step(measured, f"{STEP_TIME}{key}")
            if any(f"{STEP_FAULTS}{key}" in r.counters for r in measured):
                observation.step_page_faults = per_step(measured, f"{STEP_FAULTS}{key}")
            if observation.set_to_none is False:
                observation.zero_fill_s = per_step(measured, f"{ZERO_FILL}{key}")
        run.memory.optimizer_state_bytes = sum(o.state_bytes for o in run.optimizers) or None


FRAMES_SEARCHED = 64  # a nested step() is a few frames below the outer one's hook wrapper


def _running_below(frame) -> bool:
    """Is `frame` on the caller's stack (within FRAMES_SEARCHED frames)?"""
    current: FrameType | None = sys._getframe(2)
    for _ in range(FRAMES_SEARCHED):
        if current is None:
            return False
        if current is frame:
            return True
        current = current.f_back
    return False


def _stepping_already(active_steps, optimizer) -> bool:
    return any(outer is optimizer for outer, *_ in active_steps)


def _reads_cpu_step_counts(optimizer) -> bool:
    """One of torch's optimizers (exactly its class) keeping per-parameter step counts as CPU
    tensors and neither fused nor capturable: its step reads them on the host with `.item()`."""
    if not type(optimizer).__module__.startswith("torch.optim."):
        return False
    if any(optimizer.defaults.get(flag) for flag in ("fused", "capturable", "differentiable")):
        return False
    for state in optimizer.state.values():
        step = state.get("step") if isinstance(state, dict) else None
        return isinstance(step, torch.Tensor) and step.is_cpu
    return False


def _first_param(optimizer):
    """The optimizer's first parameter (None: it has none)."""
    return next((p for group in optimizer.param_groups for p in group["params"]), None)


def _first_grad(optimizer):
    """The first gradient tensor of the optimizer's parameters (None: none has a gradient)."""
    for group in optimizer.param_groups:
        for param in group["params"]:
            if param.grad is not None:
                return param.grad
    return None


def _construction_site(optimizer) -> str:
    """The user's line that built the optimizer, past the `__init__` of a user subclass (a Lion
    whose `super().__init__` line is not where the optimizer was made)."""
    depth, frame = 2, sys._getframe(2)  # 0: here, 1: the __init__ wrapper, 2: its caller
    while frame is not None and (
        is_library_file(frame.f_code.co_filename) or frame.f_locals.get("self") is optimizer
    ):
        frame, depth = frame.f_back, depth + 1
    return user_location(depth + 1) if frame is not None else user_location(3)
