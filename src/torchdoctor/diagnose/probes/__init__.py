"""Probes: each module watches one concern of a run through hooks on torch.

Order matters only for `contribute` (after the run): later probes read what earlier ones wrote
(memory reads the optimizer state, compute reads the sampled counts and the environment).
"""

from __future__ import annotations

from torchdoctor.diagnose.probes.backward import BackwardProbe
from torchdoctor.diagnose.probes.base import Probe
from torchdoctor.diagnose.probes.compute import ComputeProbe
from torchdoctor.diagnose.probes.cuda_timing import CudaPhaseProbe
from torchdoctor.diagnose.probes.distributed import DistributedProbe
from torchdoctor.diagnose.probes.environment import EnvironmentProbe, MemoryProbe
from torchdoctor.diagnose.probes.forward import ForwardProbe
from torchdoctor.diagnose.probes.habits import HabitsProbe
from torchdoctor.diagnose.probes.io import IOProbe
from torchdoctor.diagnose.probes.lines import LineSampler
from torchdoctor.diagnose.probes.loader import LoaderProbe
from torchdoctor.diagnose.probes.memory import MemoryTimelineProbe
from torchdoctor.diagnose.probes.optimizer import OptimizerProbe
from torchdoctor.diagnose.probes.processes import ChildProcessProbe
from torchdoctor.diagnose.probes.profiler import ProfilerProbe
from torchdoctor.diagnose.probes.queue_wait import QueueWaitProbe
from torchdoctor.diagnose.probes.sampling import SamplingProbe
from torchdoctor.diagnose.probes.syncs import SyncProbe
from torchdoctor.diagnose.probes.tensor_creation import TensorCreationProbe
from torchdoctor.diagnose.probes.transfers import TransferProbe

PROBE_TYPES: tuple[type[Probe], ...] = (
    LoaderProbe,
    QueueWaitProbe,  # a producer thread's queue: data, like a DataLoader's next()
    OptimizerProbe,
    ForwardProbe,
    BackwardProbe,
    SyncProbe,
    TransferProbe,
    IOProbe,
    TensorCreationProbe,
    SamplingProbe,
    CudaPhaseProbe,
    ProfilerProbe,
    EnvironmentProbe,
    ChildProcessProbe,
    DistributedProbe,  # after EnvironmentProbe: completes run.distributed
    MemoryProbe,
    MemoryTimelineProbe,  # after MemoryProbe: completes run.memory
    ComputeProbe,
    HabitsProbe,  # after the probes whose patches it wraps (backward, checkpoint)
    LineSampler,
)


def make_probes(session) -> list[Probe]:
    config = session.config
    wanted = [
        t
        for t in PROBE_TYPES
        if (t is not LineSampler or config.line_profile) and t.__name__ not in config.without_probes
    ]
    return [probe_type(session) for probe_type in wanted]
