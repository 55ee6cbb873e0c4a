"""The memory part of the Report: what every renderer shows about memory, computed once here
(per-phase memory of the sampled step, what the step's tensors hold, activations by module,
memory over the steps, the out-of-memory summary). Renderers only lay it out."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from torchdoctor.diagnose.observations import RunObservation

TOP_MODULES = 5
SOURCE_WORDS = {
    "cuda_allocator": "CUDA caching allocator (allocated; reserved = allocated + cached free)",
    "process_rss": "process resident memory (CPU; torch keeps no CPU allocator statistics)",
    "cuda_allocated": "CUDA allocated",
}
POINT_WORDS = {
    "before_forward": "before forward",
    "after_forward": "after forward",
    "after_backward": "after backward",
    "after_optimizer": "after optimizer step",
}


@dataclass
class PhasePoint:
    at: str  # "before_forward", ...
    label: str  # "before forward"
    allocated_bytes: int | None
    reserved_bytes: int | None
    change_bytes: int | None  # allocated minus the previous point's (None for the first)
    peak_bytes: int | None = None  # CUDA: the peak inside the phase that ends here


@dataclass
class ModuleShare:
    name: str  # qualified name, "" for a root (then class_name says which)
    class_name: str
    bytes: int
    share: float  # of the saved activations


@dataclass
class MemoryView:
    phase_source: str = ""  # words: what per-phase memory was read from
    phase_step: int | None = None
    points: list[PhasePoint] = field(default_factory=list)
    # what the step's tensors hold: parameters, gradients, optimizer state, activations
    held: dict[str, int] = field(default_factory=dict)
    top_modules: list[ModuleShare] = field(default_factory=list)
    step_source: str = ""
    step_memory: list[tuple[int, int]] = field(default_factory=list)  # (step index, bytes)
    out_of_memory: dict | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def build_memory_view(run: RunObservation) -> MemoryView | None:
    memory = run.memory
    view = MemoryView()
    view.phase_source = SOURCE_WORDS.get(memory.phase_source or "", memory.phase_source or "")
    view.phase_step = memory.phase_step
    previous = None
    for point in memory.phases:
        change = None
        if previous is not None and point.allocated_bytes is not None:
            change = point.allocated_bytes - previous
        phase = {"after_forward": "forward", "after_backward": "backward"}.get(point.at)
        phase = phase or ("optimizer" if point.at == "after_optimizer" else None)
        peak = memory.phase_peaks.get(phase) if phase else None
        view.points.append(
            PhasePoint(point.at, POINT_WORDS.get(point.at, point.at), point.allocated_bytes,
                       point.reserved_bytes, change, peak)
        )  # fmt: skip
        previous = point.allocated_bytes
    held = {
        "parameters": memory.parameter_bytes,
        "gradients": memory.gradient_bytes,
        "optimizer state": memory.optimizer_state_bytes,
        "activations saved for backward": memory.saved_activation_bytes,
    }
    view.held = {k: v for k, v in held.items() if v}
    saved = memory.saved_activation_bytes or 0
    if saved:
        modules = [m for m in memory.activations_by_module if m.depth >= 1][:TOP_MODULES]
        view.top_modules = [
            ModuleShare(m.name, m.class_name, m.bytes, m.bytes / saved) for m in modules
        ]
    view.step_source = SOURCE_WORDS.get(memory.step_source or "", memory.step_source or "")
    view.step_memory = [(s.index, s.memory_bytes) for s in run.steps if s.memory_bytes is not None]
    if memory.out_of_memory is not None:
        view.out_of_memory = asdict(memory.out_of_memory)
    empty = not (view.points or view.held or view.step_memory or view.out_of_memory)
    return None if empty else view
