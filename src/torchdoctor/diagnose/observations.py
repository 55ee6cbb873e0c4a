"""Observations: plain data that the probes collect from a run and the rules read.

This module is the contract between the probes (torchdoctor.diagnose.probes, which touch torch)
and the rules (torchdoctor.diagnose.rules, pure functions). Nothing here imports torch, so rules
and their tests run anywhere, including GPU rules on a CPU machine fed recorded observations.

Conventions: times in seconds, sizes in bytes, "per step" means per measured training step
(warm-up steps excluded). `None` means "not observed / unknown", never zero.
Evolving this file: add fields with defaults; never rename or remove one (the JSON schema and the
recorded fixtures depend on them).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

PHASES = ("data", "h2d", "forward", "backward", "optimizer", "other")
Phase = Literal["data", "h2d", "forward", "backward", "optimizer", "other"]


@dataclass
class StepObservation:
    index: int
    wall_s: float
    phases: dict[str, float]  # phase -> seconds; the phases sum to wall_s
    device_phases: dict[str, float] | None = None  # CUDA: device-true seconds per phase
    gpu_idle_s: float | None = None  # CUDA: time the device had no work during the step
    batch_size: int | None = None  # samples consumed by this step (all micro-batches)
    micro_batches: int = 1  # backward() calls per optimizer update (>1: gradient accumulation)
    syncs: int = 0  # host-device synchronizations during the step
    ops: int | None = None  # aten ops dispatched during the step, when counted
    loss: float | None = None  # the loss, read without forcing an extra sync when possible
    start_s: float | None = None  # when the step started, seconds since the diagnosis started
    host_reads: int = 0  # item()/tolist()/float()... by the user's code, any device (syncs: CUDA)
    evaluation_s: float = 0.0  # evaluation cut out of this step (not part of wall_s)
    # main thread's CPU time / elapsed time over the step (evaluation included), at most 1:
    # below 1 the thread waited (other processes had the CPU, blocking I/O, the GPU)
    cpu_share: float | None = None
    compiles: int = 0  # frames torch.compile compiled during the step (recompiles), evaluation too


@dataclass
class SyncSite:
    kind: str  # "item", "cpu", "numpy", "tolist", "bool", "print", "synchronize", ...
    location: str  # "file.py:LINE" in the user's code that caused it
    count: int
    per_step: float
    device: str = "cuda"  # device type of the tensor read; "cpu" reads are not real syncs


@dataclass
class LoaderObservation:
    location: str  # where the DataLoader was constructed (user file:line)
    role: Literal["train", "eval", "unknown"] = "unknown"
    dataset_type: str = ""
    dataset_len: int | None = None
    iterable_dataset: bool = False
    batch_size: int | None = None
    num_workers: int = 0
    pin_memory: bool = False
    persistent_workers: bool = False
    prefetch_factor: int | None = None
    epochs_started: int = 0  # times iter() was called on it
    workers_spawned: int = 0  # worker processes started in total across epochs
    worker_startup_s: list[float] = field(default_factory=list)  # per iter(): time to 1st batch
    batches: int = 0
    wait_s: float = 0.0  # total time the main process blocked in next()
    item_s: float | None = None  # mean seconds in dataset __getitem__ (main process only)
    collate_s: float | None = None  # mean seconds in collate per batch (main process only)
    cpu_count: int | None = None


@dataclass
class ModuleObservation:
    class_name: str
    location: str = ""
    device: str = "cpu"
    parameters: int = 0
    trainable_parameters: int = 0
    parameter_bytes: int = 0
    parameter_dtypes: dict[str, int] = field(default_factory=dict)  # dtype name -> param count
    wrapper: str | None = None  # "DataParallel", "DistributedDataParallel", "compiled", None
    batchnorm_layers: int = 0
    sync_batchnorm_layers: int = 0
    dropout_layers: int = 0
    conv_layers: int = 0
    conv_channels_last_inputs: bool | None = None  # were conv inputs channels_last?
    dims_not_multiple_of_8: list[str] = field(default_factory=list)  # "fc1: Linear(100->37)"
    activation_checkpointing: bool = False
    # nn.Parameter tensors (rule D203: ops expected per step scale with it)
    parameter_tensors: int = 0


@dataclass
class OptimizerObservation:
    class_name: str
    location: str = ""
    param_bytes: int = 0
    state_bytes: int = 0  # optimizer state after the first step
    steps: int = 0
    grad_scaler: bool = False  # stepped through a torch.amp.GradScaler
    set_to_none: bool | None = None  # zero_grad(set_to_none=...) as called
    clip_before_unscale: int = 0  # clip_grad_* calls on still-scaled gradients
    foreach_or_fused: bool | None = None


@dataclass
class PrecisionObservation:
    autocast_forwards: int = 0  # training forwards that ran under autocast
    forwards: int = 0
    autocast_dtype: str | None = None
    float64_ops: int = 0  # compute ops (matmul/conv/linear) run in float64 per step
    float32_ops: int = 0
    low_precision_ops: int = 0  # fp16/bf16 compute ops per step


@dataclass
class TransferObservation:
    copies_per_step: float = 0.0  # host-to-device copies
    bytes_per_step: float = 0.0
    pinned_fraction: float | None = None  # of bytes copied, share from pinned memory
    non_blocking_fraction: float | None = None
    seconds_per_step: float = 0.0
    locations: list[str] = field(default_factory=list)


@dataclass
class EvaluationObservation:
    forwards: int = 0  # forward passes of the root model not followed by backward()
    with_grad: int = 0  # ... of which ran with autograd enabled (no no_grad/inference_mode)
    under_no_grad: int = 0
    under_inference_mode: int = 0
    in_train_mode: int = 0  # ... of which ran while the model was in train() mode
    train_mode_sensitive: bool = False  # model has Dropout/BatchNorm, so train mode changes outputs
    seconds: float = 0.0
    locations: list[str] = field(default_factory=list)


@dataclass
class IOObservation:
    saves_in_steps: int = 0  # torch.save calls inside measured steps
    save_s_per_step: float = 0.0
    prints_per_step: float = 0.0
    print_s_per_step: float = 0.0
    # seconds per step turning tensors into text (Tensor.__repr__/__format__) outside print():
    # an f-string is formatted before print() is called, so print_s_per_step misses it (D702)
    tensor_format_s_per_step: float = 0.0
    locations: list[str] = field(default_factory=list)


@dataclass
class TensorCreationObservation:
    from_ndarray: int = 0  # torch.tensor(ndarray) calls per step (train loop + data loading)
    from_ndarray_list: int = 0  # torch.tensor([ndarray, ...]) calls per step
    seconds_per_step: float = 0.0
    locations: list[str] = field(default_factory=list)


@dataclass
class MemoryObservation:
    source: Literal["cuda_allocator", "process_rss", "unknown"] = "unknown"
    peak_bytes: int | None = None
    capacity_bytes: int | None = None  # device memory (CUDA) or machine RAM (CPU)
    activations_bytes: int | None = None
    optimizer_state_bytes: int | None = None
    parameter_bytes: int | None = None


@dataclass
class ComputeObservation:
    flops_per_step: float | None = None
    achieved_flops_per_s: float | None = None
    peak_flops_per_s: float | None = None
    peak_source: str = "unknown"  # "table: NVIDIA H100 (bf16 dense)", "measured CPU matmul"
    utilization: float | None = None  # achieved / peak
    ops_per_step: float | None = None  # aten ops dispatched per step
    mean_op_s: float | None = None  # step compute time / ops: small -> overhead-bound
    # measured seconds to dispatch one trivial op on the run's device (eager overhead floor);
    # rules D202/D203 call a run overhead-bound when mean_op_s is within a few times of it
    dispatch_overhead_s: float | None = None
    # ops of ops_per_step dispatched in the "data" phase (per-sample indexing and collate in the
    # training process); rules D202/D203 leave them out: a bigger batch or vectorising the model
    # does not remove them (D108 does)
    data_ops_per_step: float | None = None
    # torch calls the program issued from Python in the sampled step, outside the "data" phase
    # (functions, Tensor methods, module forwards' torch calls; not the ops ATen or autograd
    # issue inside them): far fewer than ops_per_step when one call decomposes into many ops
    # inside C++ (nn.GRU/LSTM/RNN on CPU), close to it when a Python loop issues them. D203
    # reads it; None when not counted (older reports, torch.compile)
    python_calls_per_step: float | None = None
    # median StepObservation.cpu_share of the measured steps. On a CPU run with one torch thread,
    # well below 1 means the machine was busy: wall times per op (mean_op_s) are inflated by about
    # 1/cpu_share while dispatch_overhead_s (a tight loop, best of 3) is not
    cpu_share: float | None = None


@dataclass
class EnvironmentObservation:
    device_type: str = "cpu"  # "cpu" or "cuda"
    device_name: str = ""
    compute_capability: tuple[int, int] | None = None
    tensor_cores: bool = False
    bf16_supported: bool = False
    torch_version: str = ""
    python_version: str = ""
    cpu_count: int | None = None
    cudnn_benchmark: bool | None = None
    tf32_matmul: bool | None = None
    tf32_cudnn: bool | None = None
    input_shapes_fixed: bool | None = None  # all training batches had the same shapes
    world_size: int = 1
    rank: int = 0
    # torch.autograd anomaly detection was on during measured steps (a traceback recorded per
    # op, every backward output checked for NaN): a debugging mode left on; None: no step seen
    anomaly_detection: bool | None = None
    # torch.get_default_dtype() at the last step end, e.g. "float64" after set_default_dtype
    default_dtype: str | None = None


@dataclass
class DistributedObservation:
    world_size: int
    backend: str = ""
    per_rank_step_s: list[float] = field(default_factory=list)  # median step time per rank
    per_rank_batch: list[int] = field(default_factory=list)
    comm_s_per_step: float | None = None
    allreduce_per_step: float | None = None  # gradient all-reduces per optimizer step
    micro_steps_syncing: int = 0  # accumulation micro-steps that synced gradients (no no_sync)
    # comm_s_per_step of each rank (merged from --rank-dir): a fast rank's step looks as slow as
    # the straggler's because it waits in the all-reduce; step minus communication tells them apart
    per_rank_comm_s: list[float] = field(default_factory=list)


RunStatus = Literal[
    "completed",  # the script ran to its end
    "stopped",  # we stopped it after --steps measured steps
    "crashed",  # the script raised
    "interrupted",  # Ctrl-C
    "no_training_loop",  # it ended without a single training step
]


@dataclass
class RunObservation:
    """Everything observed in one run; the input of every rule."""

    target: str  # script path or -m module
    argv: list[str] = field(default_factory=list)
    status: RunStatus = "completed"
    exit_code: int = 0
    error: str | None = None  # one line; the traceback is printed separately
    warmup_steps: int = 0
    steps: list[StepObservation] = field(default_factory=list)
    environment: EnvironmentObservation = field(default_factory=EnvironmentObservation)
    loaders: list[LoaderObservation] = field(default_factory=list)
    models: list[ModuleObservation] = field(default_factory=list)
    optimizers: list[OptimizerObservation] = field(default_factory=list)
    manual_updates: bool = False  # parameters updated by hand (no torch.optim optimizer)
    precision: PrecisionObservation = field(default_factory=PrecisionObservation)
    transfers: TransferObservation = field(default_factory=TransferObservation)
    sync_sites: list[SyncSite] = field(default_factory=list)
    evaluation: EvaluationObservation = field(default_factory=EvaluationObservation)
    io: IOObservation = field(default_factory=IOObservation)
    tensor_creation: TensorCreationObservation = field(default_factory=TensorCreationObservation)
    memory: MemoryObservation = field(default_factory=MemoryObservation)
    compute: ComputeObservation = field(default_factory=ComputeObservation)
    distributed: DistributedObservation | None = None
    notes: list[str] = field(default_factory=list)  # what was and was not seen, in words
    # the run ended within warm-up: `steps` holds warm-up steps (start-up costs included), and no
    # breakdown or verdict is drawn from them
    warmup_only: bool = False
    # processes the program started through multiprocessing (torch.multiprocessing.Process,
    # mp.spawn, a Pool; DataLoader workers not counted), and the functions they ran: diagnose
    # does not follow them, so training that ran only there is not seen
    child_processes: int = 0
    child_process_targets: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)
