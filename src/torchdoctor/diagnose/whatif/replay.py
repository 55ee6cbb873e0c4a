"""A replay of the program's training compute: a deep copy of its model called on the real batch
it last trained on (kept by the forward probe), forward and backward, so the program's own model,
gradients and buffers are never touched."""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from functools import cache
from typing import Any

import torch

from torchdoctor.diagnose.probes.base import first_tensor
from torchdoctor.diagnose.whatif.guard import require

MAX_COPY_BYTES = 2 * 2**30  # a bigger model is not copied: the probes that need it are skipped
SAMPLE_BYTES = 4 * 2**20  # the tensor whose clone times this machine's copy rate
# a module in a large model copies slower than the one-layer sample: 200-240 us per Linear in
# Sequentials of 300-3000 of them against 61-65 us alone (more objects, longer collector passes)
MODULE_COST_MARGIN = 4
CONTAINER_DEPTH = 3  # how deep in a module's list, tuple or dict attributes copy_model looks


def _parameter_bytes(module: torch.nn.Module) -> int:
    return sum(p.numel() * p.element_size() for p in module.parameters())


@cache
def _copy_costs() -> tuple[float, float]:
    """(seconds per byte of a tensor clone, seconds per deep-copied module), each the fastest of
    three timings of a small sample here: what a model's deep copy costs on this machine."""

    def fastest(work) -> float:
        times = []
        for _ in range(3):
            started = time.perf_counter()
            work()
            times.append(time.perf_counter() - started)
        return min(times)

    sample = torch.empty(SAMPLE_BYTES, dtype=torch.uint8)
    layer = torch.nn.Linear(1, 1)
    return fastest(sample.clone) / SAMPLE_BYTES, fastest(lambda: copy.deepcopy(layer))


def predicted_copy_s(module: torch.nn.Module) -> float:
    """Seconds a deep copy of `module` should take: its parameter and buffer bytes at this
    machine's copy rate, and its submodules at the cost of a one-layer module's copy."""
    per_byte, per_module = _copy_costs()
    tensors = [*module.parameters(), *module.buffers()]
    size = sum(t.numel() * t.element_size() for t in tensors)
    modules = sum(1 for _ in module.modules())
    return size * per_byte + modules * per_module * MODULE_COST_MARGIN


def copy_model(module: torch.nn.Module) -> torch.nn.Module:
    """A deep copy of `module`. A tensor a module keeps as a plain attribute that autograd computed
    (the deprecated `torch.nn.utils.weight_norm` and `spectral_norm` keep `weight` so, recomputed
    from their parameters by a pre-hook before every forward) cannot be deep-copied once a forward
    ran: the copy gets it detached, which its hook replaces at the copy's first call. So do such
    tensors inside a list, tuple or dict attribute (minimalRL's REINFORCE keeps every step's
    `(reward, log-probability)` in `self.data`: "the model could not be copied (RuntimeError)",
    and none of its what-ifs ran)."""
    memo: dict[int, Any] = {}
    for submodule in module.modules():
        for value in vars(submodule).values():
            _detached_into(memo, value)
    return copy.deepcopy(module, memo)


def _detached_into(memo: dict[int, Any], value: Any, depth: int = 0) -> None:
    """A detached clone in `memo` for each tensor autograd computed in `value`, looked for in
    containers a few levels deep (a list of tuples, a dict of lists)."""
    if isinstance(value, torch.Tensor):
        if not value.is_leaf and id(value) not in memo:
            memo[id(value)] = value.detach().clone()
    elif isinstance(value, (list, tuple, dict)) and depth < CONTAINER_DEPTH:
        for item in value.values() if isinstance(value, dict) else value:
            _detached_into(memo, item, depth + 1)


@dataclass
class Replay:
    model: torch.nn.Module  # the copy
    args: tuple
    kwargs: dict
    device_type: str

    def forward(self) -> Any:
        return self.model(*self.args, **self.kwargs)

    def forward_backward(self) -> None:
        output = first_tensor(self.forward())
        trained = [p for p in self.model.parameters() if p.requires_grad]
        if output is not None and output.requires_grad and output.is_floating_point() and trained:
            # to the copy's parameters only: an input another model computed with autograd (SAC's
            # critic on the policy's action) reaches into the program's graph, which its own
            # backward freed ("Trying to backward through the graph a second time")
            output.float().mean().backward(inputs=trained)
        for parameter in self.model.parameters():
            parameter.grad = None


_MODULE_HOOKS = ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks")


def _without_program_hooks(model: torch.nn.Module) -> None:
    """The copy keeps the program's own module hooks, which would run again in every timed call:
    a hook that logs activations to a file wrote 24 more lines into the program's log. They come
    off the copy; torch's own (weight_norm's, pruning's: they compute the weights) stay."""
    for module in model.modules():
        for name in _MODULE_HOOKS:
            hooks = getattr(module, name, None)
            if not hooks:
                continue
            for key in [key for key, hook in hooks.items() if not _torch_owned(hook)]:
                del hooks[key]


def _torch_owned(hook) -> bool:
    owner = getattr(hook, "__module__", None) or type(hook).__module__
    return owner == "torch" or owner.startswith("torch.")


def make_replay(training_calls: dict[int, tuple]) -> tuple[Replay | None, str]:
    """The replay of the largest trained model, or None and why not. Raises guard.OverBudget,
    copying nothing, when the copy's predicted time does not fit in the active budget."""
    if not training_calls:
        return None, "no training forward was seen"
    module, args, kwargs = max(training_calls.values(), key=lambda c: _parameter_bytes(c[0]))
    if _parameter_bytes(module) > MAX_COPY_BYTES:
        return None, "the model is too large to copy (over 2 GiB of parameters)"
    require(predicted_copy_s(module), "copying the model")
    try:
        model = copy_model(module)
    except Exception as exc:  # DDP, a compiled module, unpicklable attributes
        return None, f"the model could not be copied ({type(exc).__name__})"
    _without_program_hooks(model)
    x = first_tensor(args) if args else first_tensor(kwargs)
    device_type = x.device.type if x is not None else "cpu"
    return Replay(model, tuple(args), dict(kwargs), device_type), ""


MAX_BATCH_FACTOR = 8  # an evaluation batch is built at most this many times the training one


def at_batch(replay: Replay, batch: int | None) -> Replay:
    """The replay on `batch` samples (the evaluation's batch size): every input whose first
    dimension is the replayed batch repeated, then cut to `batch` (at most MAX_BATCH_FACTOR
    times the replayed batch). A fix's gain on a forward depends on the batch: float32 made a
    512-row forward of an MLP 0.37x, a 128-row one 0.54x; the evaluation ran the larger. The
    replay itself where the batch is unknown, the same, or the first dimension may be time."""
    # imported here: batch.py builds on Replay
    from torchdoctor.diagnose.whatif.batch import replay_batch, sequence_first

    seen = replay_batch(replay)
    if not batch or not seen or batch == seen or sequence_first(replay.model):
        return replay
    return resized(replay, seen, min(batch, seen * MAX_BATCH_FACTOR))


TYPICAL_BATCH_TOLERANCE = 0.25  # a replayed batch this close to the steps' typical one is kept


def at_typical_batch(replay: Replay, rows: int | None) -> Replay:
    """The replay on the steps' typical batch (`rows`, the median first dimension of their
    training forwards), where the call it kept had another: the last training call is often an
    epoch's short last batch (DKT: 28 rows where the steps had 256), and a fix's gain on 28 rows
    is not its gain on 256, which the rules apply to the whole step's forward and backward.
    The replay as it is where the model refuses the resized inputs (`at_batch`)."""
    # imported here: batch.py builds on Replay
    from torchdoctor.diagnose.whatif.batch import replay_batch

    seen = replay_batch(replay)
    if not rows or seen is None or abs(seen - rows) <= TYPICAL_BATCH_TOLERANCE * rows:
        return replay
    return taken_at_batch(replay, rows)


def taken_at_batch(replay: Replay, batch: int | None) -> Replay:
    """The replay at `batch` (`at_batch`), or as it is where the model refuses the resized inputs
    (an input whose first dimension only happened to equal the batch)."""
    resized_replay = at_batch(replay, batch)
    if resized_replay is replay:
        return replay
    try:
        with torch.inference_mode():
            resized_replay.forward()
    except Exception:  # noqa: BLE001  # the program's model: any error means "not this batch"
        return replay
    return resized_replay


def resized(replay: Replay, seen: int, target: int) -> Replay:
    """The replay on `target` samples: every input whose first dimension is the replayed batch
    `seen` repeated, then cut to `target` (other inputs, e.g. a shared mask, are kept)."""
    # imported here: precision.py builds on Replay
    from torchdoctor.diagnose.whatif.precision import convert_tensors

    copies = -(-target // seen)

    def resize(tensor: torch.Tensor) -> torch.Tensor:
        if tensor.dim() == 0 or tensor.shape[0] != seen:
            return tensor
        return torch.cat([tensor] * copies, dim=0)[:target] if copies > 1 else tensor[:target]

    return Replay(
        replay.model,
        convert_tensors(replay.args, resize),
        convert_tensors(replay.kwargs, resize),
        replay.device_type,
    )
