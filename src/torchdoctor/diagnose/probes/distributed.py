"""Distributed probe: how long DDP's gradient all-reduces take, and which backward() calls sync.

Each `DistributedDataParallel` model gets a timing communication hook when its forward first runs
(not in `__init__`: a model may register one hook only, and the program's own
`register_comm_hook` call usually follows the constructor). The hook calls DDP's default
all-reduce (`default_hooks.allreduce_hook`) and times each bucket from launch until its future
completes. A hook the program registers itself runs inside the timed one instead (registered
before the first forward, or after it: the timed hook then calls the program's). Per step,
communication time is the union of the buckets' intervals (buckets overlap each other and the
backward). On CUDA the interval is taken with CUDA events, read after the run (no sync during it).

A backward() that ran a bucket's all-reduce synchronized gradients: with gradient accumulation
(several backwards per optimizer step), every syncing backward but the last is a micro-step that
could have run under `model.no_sync()` (rule D603).

A registered comm hook cannot be removed: after the diagnosis (the `watch()` API) the hook stays
on the model but only calls the model's hook (the default all-reduce or the program's own),
recording nothing.
"""

from __future__ import annotations

import time
import weakref

import torch

from torchdoctor.diagnose.observations import DistributedObservation
from torchdoctor.diagnose.probes.base import Probe, per_step

MAX_CUDA_STEPS = 200  # latest steps whose CUDA events are kept (memory stays bounded)


def union_seconds(intervals: list[tuple[float, float]]) -> float:
    """Total length covered by possibly overlapping (start, end) intervals."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def _dist_facts() -> tuple[int, str] | None:
    dist = torch.distributed
    if not (dist.is_available() and dist.is_initialized()):
        return None
    return dist.get_world_size(), str(dist.get_backend())


def _default_hook():
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

    return allreduce_hook


def _python_builtin(comm_hook_type):
    """The Python hook equal to a built-in (C++) one, so it can run inside our timed hook."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    kinds = {
        "ALLREDUCE": default_hooks.allreduce_hook,
        "FP16_COMPRESS": default_hooks.fp16_compress_hook,
    }
    return kinds.get(getattr(comm_hook_type, "name", ""))


class DistributedProbe(Probe):
    def install(self, patcher) -> None:
        self.active = True
        self.hooked: weakref.WeakSet = weakref.WeakSet()  # models with a (timed or builtin) hook
        # model -> [state, hook] our timed hook calls (a list, so a later registration swaps it)
        self.delegates: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.replaced: weakref.WeakSet = weakref.WeakSet()  # the program's hook now delegated to
        self.models = 0  # DDP models seen
        self.timed = 0  # ... of which carry our timed hook
        self.facts: tuple[int, str] | None = None
        self.pending: list = []  # this step's bucket timings: (t0, t1) or CUDA event pairs
        self.syncing_backwards: set[int] = set()  # tracker.backwards values that all-reduced
        self.cuda_steps: dict[int, list] = {}  # measured step index -> CUDA event pairs
        if not torch.distributed.is_available():
            return
        ddp = torch.nn.parallel.DistributedDataParallel
        patcher.replace(ddp, "forward", self._wrap_forward)
        patcher.replace(ddp, "register_comm_hook", self._wrap_register)
        if hasattr(ddp, "_register_builtin_comm_hook"):
            patcher.replace(ddp, "_register_builtin_comm_hook", self._wrap_builtin)

    # -- patches ------------------------------------------------------------------------------
    def _wrap_forward(self, original):
        probe = self

        def forward(model, *args, **kwargs):
            if model not in probe.hooked:
                probe.hooked.add(model)
                probe._attach(model, model.process_group, _default_hook())
            return original(model, *args, **kwargs)

        return forward

    def _attach(self, model, state, hook) -> None:
        """Register our timed hook once per model; it calls the model's delegate, so a hook the
        program registers later replaces the call instead of failing ("only once")."""
        self.models += 1
        self.facts = _dist_facts() or self.facts
        if getattr(model, "_comm_hooks", None):  # the program registered one before we patched
            return
        self.delegates[model] = [state, hook]
        self.timed += 1
        self.register(model, state=self.delegates[model], hook=self.timed_hook())

    def _wrap_register(self, original):
        probe = self
        self.register = original

        def register_comm_hook(model, state, hook):
            delegate = probe.delegates.get(model)
            if delegate is None and model not in probe.hooked:  # before its first forward
                probe.hooked.add(model)
                probe.replaced.add(model)  # theirs is the one: a second call fails
                return probe._attach(model, state, hook)
            if delegate is not None and model not in probe.replaced:
                probe.replaced.add(model)  # after its first forward: ours calls theirs now
                delegate[:] = [state, hook]
                return None
            return original(model, state, hook)  # a second registration: DDP's own error

        return register_comm_hook

    def _wrap_builtin(self, original):
        probe = self

        def register_builtin(model, comm_hook_type):
            delegate = probe.delegates.get(model)
            python_hook = _python_builtin(comm_hook_type)
            if delegate is not None and python_hook is not None and model not in probe.replaced:
                probe.replaced.add(model)  # ours is in place: it calls the Python equivalent
                delegate[:] = [model.process_group, python_hook]
                return None
            if model not in probe.hooked:
                probe.hooked.add(model)  # a C++ hook: not timed
                probe.models += 1
            return original(model, comm_hook_type)

        return register_builtin

    def timed_hook(self):
        probe = self

        def timed_comm_hook(delegate, bucket):
            state, hook = delegate
            if not probe.active:
                return hook(state, bucket)
            probe.syncing_backwards.add(probe.tracker.backwards)
            if bucket.buffer().is_cuda:
                start = torch.cuda.Event(enable_timing=True)
                start.record()
            else:
                start = time.perf_counter()
            future = hook(state, bucket)

            def done(fut):
                if isinstance(start, float):
                    probe.pending.append((start, time.perf_counter()))
                else:
                    end = torch.cuda.Event(enable_timing=True)
                    end.record()  # on the stream the all-reduce's result is ready on
                    probe.pending.append((start, end))
                return fut.value()

            return future.then(done)

        return timed_comm_hook

    # -- steps --------------------------------------------------------------------------------
    def on_step_end(self, record) -> None:
        if not self.timed:  # no DDP model, or only untimed (C++) hooks: nothing to book
            if self.pending or self.syncing_backwards:  # else nothing new to make (every step)
                self.pending, self.syncing_backwards = [], set()
            return
        pending, self.pending = self.pending, []
        syncing, self.syncing_backwards = len(self.syncing_backwards), set()
        record.counters["allreduces"] = len(pending)
        # every syncing backward but the last of the step could have skipped its all-reduce
        record.counters["syncing_micro_steps"] = max(0, min(syncing, record.micro_batches) - 1)
        cuda = [pair for pair in pending if not isinstance(pair[0], float)]
        if cuda:  # read after the run; the latest steps are the measured ones
            self.cuda_steps[record.index] = cuda
            if len(self.cuda_steps) > MAX_CUDA_STEPS:
                del self.cuda_steps[next(iter(self.cuda_steps))]
        else:
            record.counters["comm_s"] = union_seconds(pending)

    def stop(self) -> None:
        self.active = False

    def _resolve_cuda(self, measured) -> None:
        """CUDA event pairs -> seconds per step (after the run: reading them syncs)."""
        try:
            torch.cuda.synchronize()
            for record in measured:
                pairs = self.cuda_steps.get(record.index)
                if pairs:
                    origin = pairs[0][0]
                    record.counters["comm_s"] = union_seconds(
                        [
                            (origin.elapsed_time(s) / 1e3, origin.elapsed_time(e) / 1e3)
                            for s, e in pairs
                        ]
                    )
        except RuntimeError:  # an event never recorded (a failed all-reduce): leave it unknown
            return

    def contribute(self, run, measured) -> None:
        if not self.models:
            return
        if self.cuda_steps and torch.cuda.is_available():
            self._resolve_cuda(measured)
        world_size, backend = self.facts or (run.environment.world_size, "")
        if run.distributed is None:
            if world_size <= 1:
                return
            run.distributed = DistributedObservation(world_size=world_size, backend=backend)
        dist = run.distributed
        dist.backend = dist.backend or backend
        timed = [r for r in measured if "comm_s" in r.counters]
        if timed:
            dist.comm_s_per_step = per_step(timed, "comm_s")
            dist.allreduce_per_step = per_step(timed, "allreduces")
        else:
            run.notes.append(
                "DDP gradient communication was not timed (a built-in comm hook, "
                "or no measured step all-reduced)"
            )
        dist.micro_steps_syncing = round(
            sum(r.counters.get("syncing_micro_steps", 0) for r in measured)
        )
