"""Environment and memory, read once after the run: device, flags, peak memory."""

from __future__ import annotations

import os
import platform

import torch

from torchdoctor.cores import usable_cores
from torchdoctor.diagnose.observations import DistributedObservation
from torchdoctor.diagnose.probes.base import Probe
from torchdoctor.diagnose.probes.peak_flops import _cpu_name
from torchdoctor.process_memory import peak_rss_bytes


def _run_device(run) -> str:
    for model in run.models:
        return model.device
    return "cuda" if run.transfers.copies_per_step else "cpu"


class EnvironmentProbe(Probe):
    def install(self, patcher) -> None:
        # anomaly mode seen at a step end: in any step / at the last measured one (None: no such
        # step). The last, not any: a program that debugs its first steps and turns the mode off
        # (a "debug phase") has not left it on, though the first measured steps may have had it
        self.anomaly_any: bool | None = None
        self.anomaly_measured: bool | None = None
        self.default_dtype = None  # at the last step end (the run may reset it afterwards)

    def on_step_end(self, record) -> None:
        self.default_dtype = torch.get_default_dtype()
        on = torch.is_anomaly_enabled()
        self.anomaly_any = bool(self.anomaly_any) or on
        if self.session.measuring:
            self.anomaly_measured = on

    def contribute(self, run, measured) -> None:
        env = run.environment
        if self.default_dtype is not None:
            env.default_dtype = str(self.default_dtype).replace("torch.", "")
        measured_flag = self.anomaly_measured
        env.anomaly_detection = self.anomaly_any if measured_flag is None else measured_flag
        device = _run_device(run)
        env.device_type = device.split(":")[0]
        env.torch_version = torch.__version__
        env.python_version = platform.python_version()
        env.cpu_count = usable_cores()
        env.intra_op_threads = torch.get_num_threads()
        if hasattr(os, "getloadavg"):
            env.load_average = os.getloadavg()[0]
        env.tf32_matmul = torch.backends.cuda.matmul.allow_tf32
        env.tf32_cudnn = torch.backends.cudnn.allow_tf32
        env.cudnn_benchmark = torch.backends.cudnn.benchmark
        if env.device_type == "cuda" and torch.cuda.is_available():
            index = torch.device(device).index or 0
            env.device_name = torch.cuda.get_device_name(index)
            env.compute_capability = torch.cuda.get_device_capability(index)
            env.tensor_cores = env.compute_capability >= (7, 0)
            env.bf16_supported = torch.cuda.is_bf16_supported()
        else:
            env.device_name = _cpu_name()
            env.bf16_supported = True
        env.world_size = int(os.environ.get("WORLD_SIZE", "1"))
        env.rank = int(os.environ.get("RANK", "0"))
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            env.world_size = torch.distributed.get_world_size()
            env.rank = torch.distributed.get_rank()
        if env.world_size > 1:
            backend = ""
            if torch.distributed.is_available() and torch.distributed.is_initialized():
                backend = str(torch.distributed.get_backend())
            run.distributed = DistributedObservation(world_size=env.world_size, backend=backend)


class MemoryProbe(Probe):
    def contribute(self, run, measured) -> None:
        memory = run.memory  # the optimizer probe wrote the state bytes
        memory.parameter_bytes = sum(m.parameter_bytes for m in run.models) or None
        if run.environment.device_type == "cuda" and torch.cuda.is_available():
            memory.source = "cuda_allocator"
            memory.peak_bytes = torch.cuda.max_memory_allocated()
            memory.capacity_bytes = torch.cuda.get_device_properties(0).total_memory
            fixed = 2 * (memory.parameter_bytes or 0) + (memory.optimizer_state_bytes or 0)
            if memory.peak_bytes > fixed:
                memory.activations_bytes = memory.peak_bytes - fixed  # params + grads + state
        else:
            memory.source = "process_rss"
            memory.peak_bytes = peak_rss_bytes()
            try:
                memory.capacity_bytes = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
            except (ValueError, OSError):
                memory.capacity_bytes = None
        run.memory = memory
