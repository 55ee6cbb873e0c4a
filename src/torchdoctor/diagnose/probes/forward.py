"""Forward probe: times the root model's forward and records what it ran under.

Only the outermost module call (the root) matters, so `nn.Module.__call__` is wrapped and a
nested call costs one flag test: it runs torch's own `__call__` in the wrapper's frame, one
Python frame a module call as without us. (Global forward pre/post hooks, the documented alternative, were
measured slower: while any global hook exists, *every* submodule call takes `_call_impl`'s slow
path, about 4 us each, i.e. ~0.6 ms per ResNet-50 forward; they also skip their cleanup on
BaseExceptions such as KeyboardInterrupt.) A root module without parameters (a loss module such as
nn.CrossEntropyLoss) is timed as forward but is not a model. For each model forward we record
grad mode, train mode, autocast, batch size and input shape, and hang a pre-hook on the grad_fn of
every tensor of its output (in whatever container: a tuple, a dict, a ModelOutput, a
SimpleNamespace): if autograd ever runs one of them in a backward, it was a training forward.
That is decided by autograd, not by the output's Python type.
"""

from __future__ import annotations

import inspect
import sys
import time
import weakref
from collections.abc import Callable
from functools import partial, wraps
from typing import Any

import torch
import torch.optim.swa_utils
from torch import nn

from torchdoctor.diagnose.callsite import user_location
from torchdoctor.diagnose.probes.base import (
    RUSAGE_THREAD,
    THREAD_FAULTS,
    Probe,
    first_tensor,
    getrusage,
    grad_fns,
)
from torchdoctor.diagnose.probes.method_spans import MethodSpans, in_a_constructor
from torchdoctor.diagnose.probes.model_facts import describe_module, watch_conv_layouts
from torchdoctor.diagnose.steps import ForwardRecord, counted_median, only_itself
from torchdoctor.intercept.patching import transforming


def _torch_call_code():
    """The code of torch's nn.Module.__call__ when it is the one forward.py inlines in nested
    calls (torch 2.x: `self._compiled_call_impl(...)` when the module was compiled in place by
    `module.compile()`, else `self._call_impl(...)`); None for any other body."""
    code = getattr(getattr(nn.Module, "_wrapped_call_impl", None), "__code__", None)
    if code is None or code.co_names != ("_compiled_call_impl", "_call_impl"):
        return None
    return code


_TORCH_CALL = _torch_call_code()
# looked up once: the run check (_repeated) calls them at every repeated forward
Tensor = torch.Tensor
is_grad_enabled = torch.is_grad_enabled
is_inference_mode_enabled = torch.is_inference_mode_enabled
perf_counter = time.perf_counter


def _any_autocast_check() -> Callable[[], bool]:
    """A C call telling whether autocast is on for any device (torch >= 2.4); else a call that
    says "maybe", so the dtypes are compared."""
    return getattr(torch._C, "_is_any_autocast_enabled", lambda: True)


any_autocast_enabled = _any_autocast_check()


def autocast_dtype(device_type: str) -> str | None:
    """The autocast dtype active for `device_type`, None when autocast is off."""
    try:
        enabled = torch.is_autocast_enabled(device_type)
    except TypeError:  # torch < 2.4
        if device_type == "cuda":
            enabled = torch.is_autocast_enabled()
        else:
            enabled = torch.is_autocast_cpu_enabled()
    if not enabled:
        return None
    try:
        dtype = torch.get_autocast_dtype(device_type)
    except AttributeError:  # torch < 2.4
        dtype = (
            torch.get_autocast_gpu_dtype()
            if device_type == "cuda"
            else torch.get_autocast_cpu_dtype()
        )
    return str(dtype).replace("torch.", "")


def _mark_training(record: ForwardRecord, grad_outputs) -> None:
    record.got_grad = True


LINK_LOOKBACK = 8  # earlier forwards of the step compared with a new one (bounded per forward)


def _same_data(tensor, other) -> bool:
    return other is not None and (tensor is other or getattr(tensor, "_base", None) is other)


def _link_shared_data(record: ForwardRecord, x, base, recent: list[ForwardRecord]) -> None:
    """Link `record` to earlier forwards of its step that had the same input `x`, or whose output
    `x` is (or is a view of): a no-grad forward linked to a training one is part of training.
    Not the same model switched between train and eval mode: that is the program evaluating it
    on its training data (full-batch GNNs: `model.eval()` then the same `data.x` each epoch).
    Weak references: identity, never a data pointer a freed tensor's memory could reuse. `base`:
    `x._base` (None unless `x` is a view)."""
    for earlier in recent:
        if earlier.module_id == record.module_id and earlier.train_mode != record.train_mode:
            continue
        output = earlier.output_ref
        output = output() if output is not None else None
        from_output = output is not None and (output is x or output is base)
        if not from_output:
            earlier_input = earlier.input_ref
            earlier_input = earlier_input() if earlier_input is not None else None
            if earlier_input is None or (earlier_input is not x and earlier_input is not base):
                continue
        earlier.linked += (record,)
        record.linked += (earlier,)
        if from_output and earlier.module_id != record.module_id:
            earlier.feeds_model = record.fed_by_model = True


class ForwardProbe(Probe):
    def install(self, patcher) -> None:
        self.in_root = False
        self.models: dict[int, tuple] = {}  # id(module) -> (module, observation or None)
        self.held: set[int] = set()  # ids of the submodules of the models seen
        self.conv_layouts: dict[int, list[bool]] = {}
        self.checkpointing = False
        # id(module) -> (module, args, kwargs) of its latest call with autograd on in train mode:
        # the real batch the what-if probes replay on copies after the run (diagnose/whatif)
        self.training_calls: dict[int, tuple] = {}
        self.last_grad_input: dict[int | None, Any] = {}  # id(module) -> weakref to its input
        # id -> weak reference of the first input and output tensor of each earlier forward of
        # the step, from its second forward on: a forward whose input is none of them (nor a
        # view of one) shares no data with them, found without comparing it with each (an RL
        # loop's acting forwards, dozens a step, each on a new observation). Identity through
        # the weak reference: a freed tensor's id is soon another tensor's.
        self.step_tensors: dict[int, Any] = {}
        self._keep = patcher.keep_handle
        # the program's call site of the latest forward record, its code and instruction, and
        # the tracker's boundaries then: where a run of identical forwards (one record) goes on
        self._run_code: Any = None
        self._run_lasti = -1
        self._run_boundaries = -1
        self._call_codes: set[Any] = set()  # the codes of our `__call__` wrappers
        # a model's method called instead of the model (`model.nll(x, y)`): a root forward too
        self.method_spans = MethodSpans(
            patcher, self._root_call, lambda: self.in_root, self.training_calls
        )
        self.tracker.submodule_ids = self._submodule_ids
        self.tracker.trains = self._trains
        self.tracker.torch_call_outside = self.method_spans.torch_call_outside
        patcher.replace(nn.Module, "__call__", self._wrap_call)
        patcher.replace(torch.utils.checkpoint, "checkpoint", self._wrap_checkpoint)
        # torch's own forwards, not the program's evaluation; inside them every module call
        # passes through as a nested call: torch.jit.trace checks its trace by running the model
        # again under no_grad (a script that traced its model once for export got D303), and
        # register_parametrization (weight_norm, spectral_norm, orthogonal) calls the
        # parametrization module once on the weight it takes over (D301 on a clean script)
        if hasattr(torch.jit._trace, "_check_trace"):
            patcher.replace(torch.jit._trace, "_check_trace", self._torch_own_forwards)
        parametrize = torch.nn.utils.parametrize
        patcher.replace(parametrize, "register_parametrization", self._torch_own_forwards)

    def _torch_own_forwards(self, original):
        probe = self

        def torch_own_forwards(*args, **kwargs):
            was_in_root, probe.in_root = probe.in_root, True
            try:
                return original(*args, **kwargs)
            finally:
                probe.in_root = was_in_root

        return wraps(original)(torch_own_forwards)

    def _wrap_checkpoint(self, original):
        probe = self

        def checkpoint(*args, **kwargs):
            if transforming():
                return original(*args, **kwargs)
            probe.checkpointing = True
            return original(*args, **kwargs)

        return checkpoint

    def _wrap_call(self, original):
        probe = self
        root_call = self._root_call

        # the first parameter must be called `self`: torch.profiler(with_stack=True) reads the
        # module from the local `self` of whatever code is nn.Module.__call__ (else it crashes).
        # A nested call (most module calls: every submodule's) costs one flag test; the root
        # call's work is in _root_call.
        if _TORCH_CALL is not None and getattr(original, "__code__", None) is _TORCH_CALL:
            # torch's own __call__: a nested call does what it does, in this frame instead of
            # calling it (one Python frame a module call, as without us)
            def __call__(self, *args, **kwargs):
                if probe.in_root:  # nested: not a root
                    if self._compiled_call_impl is None:
                        return self._call_impl(*args, **kwargs)
                    return original(self, *args, **kwargs)
                return root_call(original, self, args, kwargs)

        else:  # another wrapper (a --try hook's) or another torch: called as it is

            def __call__(self, *args, **kwargs):
                if probe.in_root:  # nested: not a root
                    return original(self, *args, **kwargs)
                return root_call(original, self, args, kwargs)

        self._call_codes.add(__call__.__code__)
        return __call__

    def _root_call(self, original, module, args, kwargs):
        """A module call outside any root forward: a root forward, timed and recorded, unless it
        runs inside backward() or under a tracer."""
        tracker = self.tracker
        stack = tracker.stack
        if stack and stack[-1] == "backward":
            # recomputed inside backward(): activation checkpointing, or an autograd.Function
            # whose backward runs the module again (torchdiffeq's adjoint): the module trains
            # in this step, though its forwards' outputs got no gradient
            tracker.called_in_backward.add(id(module))
            return original(module, *args, **kwargs)
        if stack and stack[-1] == "data" and id(module) not in self.training_calls:
            # called while the loader fetches a batch (a dataset's transform blurs with a Conv2d,
            # SimCLR's augmentation): the data's work, no forward of the program's model. A
            # model the program trains stays a forward there (an RL rollout generator that acts
            # inside an IterableDataset)
            return original(module, *args, **kwargs)
        if transforming():
            # traced by torch.jit.trace / dynamo (which must record the program, not us)
            return original(module, *args, **kwargs)
        self.in_root = True
        tracker.push("forward")
        try:
            # the step's first forward (the usual step's only one) repeats none: no call
            run = self._repeated(module, args, kwargs) if tracker.step_forwards else None
            if run is not None:  # counted into the record of the run it repeats
                record = None
                t0 = perf_counter()
                output = original(module, *args, **kwargs)
                t1 = perf_counter()
            else:
                record = self._root_enter(module, args, kwargs)
                if record is None:
                    output = original(module, *args, **kwargs)
                elif self.session.hooks.around_forward:
                    output = self._call_through_hooks(original, module, record, args, kwargs)
                else:
                    record.autocast = autocast_dtype(record.device_type)
                    output = original(module, *args, **kwargs)
        finally:
            tracker.pop()
            self.in_root = False
        if run is not None:
            # one more forward of the run: its time, its output for the next forward's links
            # (spelled out: an RL step runs this at every action)
            run.count += 1
            run.seconds += t1 - t0
            run.t1 = t1
            tensor = output if type(output) is Tensor else first_tensor(output)
            if tensor is not None:
                run.output_ref = weakref.ref(tensor)
            tracker.forwards_seen += 1
        elif record is not None:
            self._root_exit(record, output)
            caller = sys._getframe(1)  # our `__call__` wrapper's frame, or a method span's
            if caller.f_code in self._call_codes:
                caller = caller.f_back  # the program's frame: the call site
                self._run_code, self._run_lasti = caller.f_code, caller.f_lasti
                self._run_boundaries = tracker.boundaries
            else:
                self._run_code = None
        return output

    def _repeated(self, module, args, kwargs) -> ForwardRecord | None:
        """The step's latest forward record, when this forward repeats it: the same module from
        the same call site (code and instruction), in the same grad, train and inference mode,
        on an input of the same shape, under the same autocast, with no backward, optimizer
        update or data wait since (an RL episode's acting forwards, an RNN cell per timestep).
        Its outcome is the record's: autograd's verdict (the pre-hook) on the run's first
        output stands for the run, and no link is looked for (their inputs are new tensors
        each time; the run's last output is kept for the next forward's). A forward on the
        input of the module's last training forward starts a record of its own (D304 counts
        those), as does a forward through --try hooks."""
        if self._run_code is None:
            return None
        record = self.tracker.step_forwards[-1]
        if (
            record.module_id != id(module)
            or record.t1 is None  # still running: a recursive call
            or record.on_training_batch
            or self._run_boundaries != self.tracker.boundaries
            or record.grad_enabled != is_grad_enabled()
            or record.train_mode != module.training
            or record.inference_mode != is_inference_mode_enabled()
            or self.session.hooks.around_forward
        ):
            return None
        caller = sys._getframe(3)  # frames: this, _root_call, the `__call__` wrapper
        if caller.f_code is not self._run_code or caller.f_lasti != self._run_lasti:
            return None
        x = args[0] if args and type(args[0]) is Tensor else first_tensor(args or kwargs)
        if (None if x is None else x.shape) != record.shape:
            return None
        # autocast off then and now (the usual run) is told by one C call, without the dtype
        if (record.autocast is not None or any_autocast_enabled()) and autocast_dtype(
            record.device_type
        ) != record.autocast:
            return None
        if record.grad_enabled and record.train_mode:
            self.training_calls[id(module)] = (module, args, kwargs)  # the latest batch
            if x is not None:
                self.last_grad_input[id(module)] = weakref.ref(x)
        else:
            seen = self.last_grad_input.get(id(module))
            if seen is not None and _same_data(x, seen()):
                return None  # on the batch it just trained on: a record of its own
            if not record.grad_enabled:
                self.session.evaluation_forward_starting()  # may stop the program
        return record

    def _submodule_ids(self, module_id: int | None) -> set[int]:
        """The ids of a root module seen and of its submodules (steps.py asks, rarely: whether a
        backward ran part of it again)."""
        module = self._seen_module(module_id)
        if module is None:
            return only_itself(module_id)
        return {id(submodule) for submodule in module.modules()}

    def _seen_module(self, module_id: int | None) -> nn.Module | None:
        """The root module of that id, when a forward of it was seen."""
        entry = self.models.get(module_id) if module_id is not None else None
        return entry[0] if entry is not None else None

    def _model_entry(self, module) -> tuple:
        entry = self.models.get(id(module))
        if entry is None:
            # 4: the caller of the `__call__` wrapper (frames: this, _root_enter, _root_call)
            caller = sys._getframe(4)
            if in_a_constructor(caller):
                # a model's __init__ probing its layers' output shape on a dummy input: no
                # forward of the program's (not an evaluation in train mode); not remembered, so
                # the module's next call is seen as a first one
                return (module, None)
            has_params = next(module.parameters(), None) is not None
            observation = describe_module(module, user_location()) if has_params else None
            entry = self.models[id(module)] = (module, observation)
            if observation is not None:
                self.held.update(id(m) for m in module.modules() if m is not module)
            self.method_spans.first_root_call(module, caller)
            if observation is not None and observation.wrapper == "compiled":
                self.session.compiled_model_seen = True
            if observation is not None:
                layouts = self.conv_layouts[id(module)] = []
                watch_conv_layouts(module, layouts, self._keep)
        return entry

    def _root_enter(self, module, args, kwargs) -> ForwardRecord | None:
        entry = self.models.get(id(module))  # seen before: every forward after the first
        if entry is None:
            entry = self._model_entry(module)
        elif id(module) in self.held:  # a model's submodule called on its own: from a method?
            self.method_spans.held_root_call(module, sys._getframe(3))
        facts = entry[1]
        if facts is None:
            return None
        session = self.session
        session.last_model = module
        grad_enabled, train_mode = torch.is_grad_enabled(), module.training
        record = ForwardRecord(
            t0=time.perf_counter(),
            grad_enabled=grad_enabled,
            inference_mode=torch.is_inference_mode_enabled(),
            train_mode=train_mode,
            # 4: the caller of the `__call__` wrapper (its frame, _root_call's and this one are
            # ours, which the walk skips), the program's own line in the usual call: one look-up
            location=user_location(4),
            module_id=id(module),
        )
        training = grad_enabled and train_mode
        if grad_enabled:
            if train_mode:
                self.training_calls[id(module)] = (module, args, kwargs)
            record.mode_sensitive = bool(facts.dropout_layers or facts.batchnorm_layers)
        if THREAD_FAULTS and not training:
            # may be evaluation; read inline (a C call): the Python calls per step are budgeted
            record.page_faults = -getrusage(RUSAGE_THREAD).ru_minflt
        # a tensor as the first argument (the usual call) is found without a call
        x = args[0] if args and isinstance(args[0], torch.Tensor) else first_tensor(args or kwargs)
        if x is not None:
            record.input_ref = weakref.ref(x)  # a tensor: weak-referenceable
            try:
                record.input_version = x._version
            except RuntimeError:  # an inference tensor has no version counter
                pass
            if training:  # the usual forward: its input is what later forwards are compared with
                self.last_grad_input[id(module)] = record.input_ref
            else:
                self._note_training_batch(record, x)
            record.shape = shape = tuple(x.shape)
            record.batch_size = shape[0] if shape else None
            record.device_type = x.device.type
        forwards = self.tracker.step_forwards  # the step's earlier forwards, in call order
        if forwards:  # the first forward of a step has none
            # link it to those it shares data with, when its input is one of their tensors
            # (step_tensors, kept up to date here, inline: an RL step runs this dozens of times;
            # a step of one forward, the usual one, never builds the map)
            if len(forwards) == 1:  # the step's second forward: the map starts with the first's
                tensors = self.step_tensors = {}
                ref = forwards[0].input_ref
                earlier = ref() if ref is not None else None
                if earlier is not None:
                    tensors[id(earlier)] = ref
            else:  # the inputs of the forwards before went in when they started
                tensors = self.step_tensors
            ref = forwards[-1].output_ref  # the output of the forward before
            earlier = ref() if ref is not None else None
            if earlier is not None:
                tensors[id(earlier)] = ref
            if x is not None:
                base = getattr(x, "_base", None)
                seen = tensors.get(id(x))
                if (seen is not None and seen() is x) or (
                    base is not None
                    and (seen := tensors.get(id(base))) is not None
                    and seen() is base
                ):
                    _link_shared_data(record, x, base, forwards[-LINK_LOOKBACK:])
                tensors[id(x)] = record.input_ref
        if not grad_enabled and train_mode:
            record.refreshes_batchnorm = _called_by(sys._getframe(3), _UPDATE_BN) or bool(
                facts.batchnorm_layers and _averages_batchnorm(module)
            )
        self.tracker.forward_started(record)
        if not grad_enabled:
            session.evaluation_forward_starting()  # may stop the program: the budget ran out
        return record

    def _note_training_batch(self, record: ForwardRecord, x) -> None:
        """A forward without autograd, or in eval mode, on the input of the same model's last
        grad forward in train mode (the batch it just trained on): a second forward for a metric,
        or full-batch validation (pyGAT validates in eval mode with autograd on); not acting or
        a target net. (A training forward's input is remembered by _root_enter.)"""
        seen = self.last_grad_input.get(record.module_id)
        record.on_training_batch = seen is not None and _same_data(x, seen())

    def _call_through_hooks(self, original, module, record: ForwardRecord, args, kwargs):
        """The forward through the `around_forward` hook points (a --try fix's autocast or
        inference mode): autocast is read innermost, as the forward itself sees it."""

        def innermost(module, *args, **kwargs):
            record.autocast = autocast_dtype(record.device_type)
            return original(module, *args, **kwargs)

        return self.session.hooks.run_forward(innermost, module, args, kwargs)

    def _root_exit(self, record: ForwardRecord, output) -> None:
        record.t1 = time.perf_counter()
        record.seconds = record.t1 - record.t0
        if record.page_faults is not None:
            record.page_faults += getrusage(RUSAGE_THREAD).ru_minflt
        single = isinstance(output, torch.Tensor)  # the usual output: no walk, no call
        tensor = output if single else first_tensor(output)
        if tensor is not None:
            record.output_ref = weakref.ref(tensor)
        if not record.grad_enabled:
            return
        if single:  # the usual output: its one node, without a list
            node = output.grad_fn
            if node is not None:
                node.register_prehook(partial(_mark_training, record))
                record.awaits_grad = True  # judged when the step after this one closes
            return
        nodes = grad_fns(output)
        if nodes:
            mark = partial(_mark_training, record)
            for node in nodes:
                node.register_prehook(mark)
            record.awaits_grad = True

    def contribute(self, run, measured) -> None:
        held = _inside_another_model(self.models)
        for module_id, (_, observation) in self.models.items():
            if observation is None or module_id in held:
                continue
            layouts = self.conv_layouts.get(module_id)
            if layouts:
                observation.conv_channels_last_inputs = all(layouts)
            observation.activation_checkpointing = self.checkpointing
            run.models.append(observation)
        training = [f for record in measured for f in record.training_forwards]
        precision = run.precision
        precision.forwards = sum(f.count for f in training)
        precision.autocast_forwards = sum(f.count for f in training if f.autocast)
        dtypes = {f.autocast for f in training if f.autocast}
        precision.autocast_dtype = sorted(dtypes)[0] if dtypes else None
        shapes = {f.shape for f in training if f.shape is not None}
        run.environment.input_shapes_fixed = len(shapes) == 1 if shapes else None
        eval_mode = _eval_mode_training(measured, self._trains)
        run.habits.eval_mode_training_forwards = sum(f.count for f in eval_mode)
        run.habits.eval_mode_training_locations = sorted({f.location for f in eval_mode})[:10]
        run.habits.training_input_repeated = _input_repeated(measured)
        self._contribute_evaluation(run)

    def _trains(self, module_id: int | None) -> bool:
        """The model has parameters that take gradients (not a frozen network a loss runs the
        trained model's output through: a perceptual loss's VGG)."""
        module = self._seen_module(module_id)
        return module is not None and any(p.requires_grad for p in module.parameters())

    def _contribute_evaluation(self, run) -> None:
        evaluation = run.evaluation
        forwards = self.tracker.eval_forwards
        # a record stands for `count` forwards (a run of identical ones)
        evaluation.forwards = sum(f.count for f in forwards)
        # autograd on and a graph built: a frozen network's forward on data that takes no
        # gradient (a style transfer's style targets, computed once by its frozen VGG) builds
        # none and saves nothing, as under no_grad
        with_graph = [
            f for f in forwards if f.grad_enabled and (f.awaits_grad or self._trains(f.module_id))
        ]
        evaluation.with_grad = sum(f.count for f in with_graph)
        evaluation.under_inference_mode = sum(f.count for f in forwards if f.inference_mode)
        evaluation.under_no_grad = sum(
            f.count for f in forwards if not f.grad_enabled and not f.inference_mode
        )
        samples = _generator_samples(forwards, self.tracker.steps)
        evaluation.generator_samples = len(samples)
        evaluation.in_train_mode = sum(
            f.count
            for f in forwards
            if f.train_mode and not f.refreshes_batchnorm and id(f) not in samples
        )
        evaluation.train_mode_sensitive = any(
            m.dropout_layers or m.batchnorm_layers for m in run.models
        )
        evaluation.seconds = self.tracker.eval_seconds
        evaluation.forward_seconds = sum(f.seconds for f in forwards if f.t1 is not None)
        faults = [f.page_faults for f in forwards if f.grad_enabled and f.page_faults is not None]
        evaluation.with_grad_page_faults = sum(faults) / len(faults) if faults else None
        evaluation.on_training_batches = sum(f.count for f in forwards if f.on_training_batch)
        evaluation.locations = sorted({f.location for f in forwards})[:10]
        evaluation.with_grad_locations = sorted({f.location for f in with_graph})[:10]
        evaluation.batch_size = counted_median(
            (f.batch_size, f.count) for f in forwards if f.batch_size
        )
        # over every step kept, warm-up too: `forwards` counts those
        evaluation.beside_training = _beside_training(self.tracker.steps, self.tracker.origin)
        evaluation.beside_training_with_grad = _beside_training(
            self.tracker.steps, self.tracker.origin, with_grad=True
        )


def _inside_another_model(models: dict[int, tuple]) -> set[int]:
    """The ids of models seen that are submodules of another model seen: counted inside it (a
    model's method called directly made its submodules roots at first; `model.module(x)` beside
    its DataParallel wrapper's call; `model.encoder(x)` beside `model(x)`), not again."""
    return {
        id(m)
        for module, observation in models.values()
        if observation is not None
        for m in module.modules()
        if m is not module
    }


def _generator_samples(forwards, steps) -> set[int]:
    """Evaluation forwards in train mode, whose own output goes to no model, of a model that
    generates through another in training: a GAN's generator (its training outputs are the
    discriminator's input) or an autoencoder's decoder (its training inputs are the encoder's
    outputs) called on no model's output, i.e. on noise from the prior. Samples kept or saved
    (DCGAN's images of `fixed_noise`, an adversarial autoencoder's `decoder(z)`), judged by no
    metric of that model, so its train mode is no evaluation error (rule D302)."""
    training = [f for record in steps for f in record.training_forwards]
    feeders = {f.module_id for f in training if f.feeds_model}
    decoders = {f.module_id for f in training if f.fed_by_model}
    if not feeders and not decoders:
        return set()
    return {
        id(f)
        for f in forwards
        if f.train_mode
        and not f.feeds_model
        and (f.module_id in feeders or (f.module_id in decoders and not f.fed_by_model))
    }


def _beside_training(steps, origin: float, with_grad: bool = False) -> int:
    """Evaluation forwards of a model that never trained, without autograd (`with_grad`: with
    it), before their step's first backward, at a training forward's batch size: a frozen
    teacher's soft targets or a target network's values, which the step's loss uses (the
    forward's output has no grad_fn to tell it by, or one the loss detached: this is its place
    in the step)."""
    trained = {f.module_id for record in steps for f in record.training_forwards}
    count = 0
    for record in steps:
        backward = [start for phase, start, _ in record.spans if phase == "backward"]
        if not backward or not record.eval_forwards:
            continue
        first_backward = origin + min(backward)
        batches = {f.batch_size for f in record.training_forwards}
        count += sum(
            f.count
            for f in record.eval_forwards
            if f.module_id not in trained
            and f.grad_enabled == with_grad
            and f.t1 is not None
            and f.t1 <= first_backward
            and f.batch_size in batches
        )
    return count


# update_bn's own code, not its @torch.no_grad() wrapper's: that wrapper's code is the one every
# no_grad-decorated function shares, and any `@torch.no_grad() def evaluate(...)` that ran its
# model in train mode passed for a statistics refresh (D302 silent)
_UPDATE_BN = inspect.unwrap(torch.optim.swa_utils.update_bn).__code__


def _averages_batchnorm(module) -> bool:
    """A BatchNorm layer of the model keeps a cumulative average (`momentum=None`): what a
    statistics refresh sets before its train-mode forwards over the data (update_bn's own way,
    copied by programs that recompute the statistics for averaged or pruned weights)."""
    return any(
        isinstance(m, nn.modules.batchnorm._BatchNorm) and m.momentum is None
        for m in module.modules()
    )


CALLER_FRAMES = 4  # frames above the root forward searched for update_bn (hooks, wrappers)


def _called_by(frame, code) -> bool:
    """Is `code` running in `frame` or one of the CALLER_FRAMES frames above it?"""
    for _ in range(CALLER_FRAMES):
        if frame is None:
            return False
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False


MIN_PAIRS = 3  # of consecutive measured steps, for habits.training_input_repeated


def _same_input(a: ForwardRecord, b: ForwardRecord) -> bool:
    if a.input_ref is None or b.input_ref is None:  # no tensor input: the model holds its data
        return a.input_ref is None and b.input_ref is None
    tensor = a.input_ref()
    # the same tensor with the same data: a batch copied into a fixed buffer bumps its version
    return tensor is not None and tensor is b.input_ref() and a.input_version == b.input_version


def _input_repeated(measured) -> float | None:
    """The share of consecutive measured steps whose first training forward ran on the very
    tensor the step before's did, unchanged (or both on none): full-batch training, where each
    step is an epoch. A mini-batch's tensor is freed or replaced by the next step (weak
    references), or written into the same buffer (its version counter moves)."""
    firsts = [record.training_forwards[0] for record in measured if record.training_forwards]
    pairs = list(zip(firsts, firsts[1:]))
    if len(pairs) < MIN_PAIRS:
        return None
    return sum(1 for a, b in pairs if _same_input(a, b)) / len(pairs)


def _eval_mode_training(measured, trains: Callable[[int | None], bool]) -> list[ForwardRecord]:
    """Rule D305: training forwards of a Dropout/BatchNorm model that `trains` in steps where
    every such forward of that model ran in eval mode. A model that also trains in train mode in
    the step (adversarial training crafts its attack on the model in eval mode, then trains it in
    train mode) is not one; a GAN's generator left in eval mode beside its discriminator training
    in train mode is; a frozen network in eval mode that a loss runs the output through is not."""
    found: list[ForwardRecord] = []
    for record in measured:
        by_model: dict[int | None, list[ForwardRecord]] = {}
        for f in record.training_forwards:
            if f.mode_sensitive and trains(f.module_id):
                by_model.setdefault(f.module_id, []).append(f)
        for sensitive in by_model.values():
            if not any(f.train_mode for f in sensitive):
                found.extend(sensitive)
    return found
