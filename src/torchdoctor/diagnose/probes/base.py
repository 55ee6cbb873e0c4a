"""What every probe implements. A probe patches torch in `install` (through the Patcher, so the
session can undo it), reacts to step ends, and writes its part of the RunObservation at the end."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torchdoctor.diagnose.observations import RunObservation
    from torchdoctor.diagnose.session import Session
    from torchdoctor.diagnose.steps import StepRecord
    from torchdoctor.intercept.patching import Patcher


class Probe:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.tracker = session.tracker

    def install(self, patcher: Patcher) -> None:
        """Patch torch; every change goes through `patcher` so it is undone on exit."""

    def on_step_end(self, record: StepRecord) -> None:
        """A training step just closed."""

    def reacts_to_steps(self) -> bool:
        """Asked once, after install: False keeps `on_step_end` off the per-step path."""
        return type(self).on_step_end is not Probe.on_step_end

    def on_crash(self, exc: BaseException) -> None:
        """The program raised `exc`; called before its frames are released."""

    def stop(self) -> None:
        """The run is over (before the patches are removed): leave any mode or profiler."""

    def contribute(self, run: RunObservation, measured: list[StepRecord]) -> None:
        """Fill this probe's part of the observation (after the run, patches removed)."""


try:
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]
# per-thread rusage (Linux; elsewhere THREAD_FAULTS is False and page faults are not read)
THREAD_FAULTS = resource is not None and hasattr(resource, "RUSAGE_THREAD")
RUSAGE_THREAD: int = getattr(resource, "RUSAGE_THREAD", 0)
getrusage: Callable[[int], Any] = getattr(resource, "getrusage", lambda who: None)


def thread_page_faults() -> int | None:
    """Minor page faults of the calling thread so far (None: no per-thread rusage here)."""
    return getrusage(RUSAGE_THREAD).ru_minflt if THREAD_FAULTS else None


def per_step(measured: list[StepRecord], counter: str) -> float:
    """Mean of a per-step counter over the measured steps."""
    if not measured:
        return 0.0
    return sum(r.counters.get(counter, 0.0) for r in measured) / len(measured)


MAX_GRAD_FNS = 16  # autograd nodes hooked per forward output (a model returning many tensors)


def grad_fns(value, found: dict | None = None, depth: int = 0) -> list:
    """The distinct autograd nodes (`grad_fn`) of the tensors in a forward's output, whatever
    carries them: tuples and lists (a PPO agent's (action, logprob, entropy, value)), dicts and
    dict subclasses (Hugging Face ModelOutput), dataclasses, and plain objects such as
    SimpleNamespace(loss=..., logits=...). At most MAX_GRAD_FNS, a few levels deep."""
    import torch

    if found is None:
        found = {}
    if isinstance(value, torch.Tensor):
        node = value.grad_fn
        if node is not None:
            found.setdefault(id(node), node)
        return list(found.values())
    if depth > 3 or len(found) >= MAX_GRAD_FNS:
        return list(found.values())
    if isinstance(value, dict):
        items = list(value.values())
    elif isinstance(value, (list, tuple)):
        items = list(value)
    elif hasattr(value, "__dataclass_fields__"):
        items = [getattr(value, name, None) for name in value.__dataclass_fields__]
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        items = list(vars(value).values())
    else:
        return list(found.values())
    for item in items:
        if len(found) >= MAX_GRAD_FNS:
            break
        grad_fns(item, found, depth + 1)
    return list(found.values())


def first_tensor(value, depth: int = 0):
    """The first tensor in a forward's arguments or output (tuples, lists, dicts, dataclasses)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value
    if depth > 2:
        return None
    if isinstance(value, dict):
        items = value.values()
    elif isinstance(value, (list, tuple)):
        items = value
    elif hasattr(value, "__dataclass_fields__"):
        items = (getattr(value, name, None) for name in value.__dataclass_fields__)
    else:
        return None
    for item in items:
        found = first_tensor(item, depth + 1)
        if found is not None:
            return found
    return None
