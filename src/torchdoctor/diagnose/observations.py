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
    # root model forwards of the step whose outputs got a gradient: many per backward() is a
    # model called once per sample or per environment step (an RL rollout with autograd on)
    training_forwards: int = 0
    # median first dimension of those forwards' first input (None: not seen): a model called
    # many times per backward() on batches of rows (an RL rollout over vectorised environments, a
    # meta-learning inner loop) runs the model's own ops each time, unlike a loop over samples
    training_forward_rows: int | None = None
    # elements of those forwards' first inputs, summed (None: no input seen): the step's work
    # in data (a batch of longer sequences has more); a step slow in proportion to it is not an
    # outlier (step_analysis)
    training_input_elements: int | None = None
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
    # memory in use when the step ended (MemoryObservation.step_source says what is measured):
    # read every step, one cheap read, so growth over the steps shows (rule D503)
    memory_bytes: int | None = None
    # (phase, start, end) in seconds since the diagnosis started: where each phase really ran,
    # evaluation cut out, same-phase neighbours merged, at most 64 per step
    phase_spans: list[tuple[str, float, float]] = field(default_factory=list)


@dataclass
class SyncSite:
    kind: str  # "item", "cpu", "numpy", "tolist", "bool", "print", "synchronize", ...
    location: str  # "file.py:LINE" in the user's code that caused it
    count: int
    per_step: float
    device: str = "cuda"  # device type of the tensor read; "cpu" reads are not real syncs
    # wall seconds per measured step inside these reads (the call itself, evaluation left out;
    # on CUDA the wait for the device's queue and the copy, on CPU the conversion); reads made
    # while formatting a tensor for printing are not timed here (io.tensor_format_s_per_step)
    seconds_per_step: float = 0.0
    # the tensor read was (a view of) the batch the DataLoader had just yielded, on the host: a
    # program on a GPU reads it before moving it (PointNet's NumPy augmentation), no sync there
    loader_batch: bool = False


@dataclass
class LoaderObservation:
    location: str  # where the DataLoader was constructed (user file:line)
    role: Literal["train", "eval", "unknown"] = "unknown"
    dataset_type: str = ""
    # the datasets under torch's index-remapping wrappers (Subset, ConcatDataset, StackDataset,
    # random_split's Subsets), innermost types; () when the dataset is no such wrapper
    wrapped_dataset_types: tuple[str, ...] = ()
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
    # mean bytes of the tensors a collate returned (main process only; None: not timed)
    collate_bytes: int | None = None
    # workers only: mean CPU seconds the worker processes ran per batch they delivered (all of
    # them together; from /proc, so Linux only; None: not read): the work a batch is, which a
    # busy machine's wall times do not tell (rule D110)
    worker_cpu_s: float | None = None
    # the typical samples per batch fetched in this process (their median, not the mean a short
    # last batch pulls down; main process only; None: not timed): the batch size of a loader
    # built with a batch_sampler (its batch_size is None)
    samples_per_batch: float | None = None
    cpu_count: int | None = None
    # the DataLoader(...) call as the user wrote it ("" when its source could not be read): fixes
    # rewrite this call, so that they keep the user's own shuffle, sampler, collate_fn, ...
    call_source: str = ""
    sampler_type: str = ""  # type of loader.sampler: "RandomSampler", "SequentialSampler", ...
    drop_last: bool = False
    # DataLoader objects built at this site with these settings (one observation for them all):
    # more than one is a loader built again every epoch, its workers started again each time
    loaders_built: int = 1


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
    param_tensors: int = 0  # the tensors it steps (a functional model's, when no module is called)
    state_bytes: int = 0  # optimizer state after the first step
    steps: int = 0
    grad_scaler: bool = False  # stepped through a torch.amp.GradScaler
    set_to_none: bool | None = None  # zero_grad(set_to_none=...) as called
    clip_before_unscale: int = 0  # clip_grad_* calls on still-scaled gradients
    foreach_or_fused: bool | None = None
    # the implementation flags ("foreach", "fused") its class's constructor accepts: what it could
    # run instead of the per-tensor loop (RAdam, NAdam, RMSprop... have foreach only; LBFGS,
    # SparseAdam and most third-party optimizers neither)
    implementations: tuple[str, ...] = ()
    # mean seconds per measured step spent in zero_grad(set_to_none=False) (None: not called so)
    zero_fill_s: float | None = None
    # the zero-filling was the model's `zero_grad(set_to_none=False)` (nn.Module's), clearing
    # this optimizer's parameters
    filled_by_module: bool = False
    # steps whose gradients were still the previous step's tensor, added to, with no zero_grad
    # (optimizer's or module's) between the two steps: gradients never cleared (rule D221)
    grads_carried_over: int = 0
    # steps that ended with no gradient on any of its parameters: zero_grad() between backward()
    # and step(), or a loss that never reaches them (rule D222)
    steps_without_gradients: int = 0
    # mean seconds per measured step inside this optimizer's step() (None: not stepped while
    # measuring): its part of the optimizer phase when several optimizers step (rule D210)
    step_s: float | None = None
    # mean minor page faults per measured step inside this optimizer's step(), read on the
    # stepping thread (None: not read, no per-thread rusage here): a per-tensor CPU step whose
    # temporaries' memory went back to the system between steps pays them each step, and its
    # what-if clone must pay them too (rule D210)
    step_page_faults: float | None = None


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
    # evaluation forwards in train mode left out of `in_train_mode`: samples of a model trained
    # through another model's forward (a GAN's generator) or on its outputs (an autoencoder's
    # decoder, here fed noise), whose outputs feed no model
    generator_samples: int = 0
    train_mode_sensitive: bool = False  # model has Dropout/BatchNorm, so train mode changes outputs
    seconds: float = 0.0
    locations: list[str] = field(default_factory=list)
    # seconds inside the evaluation forwards themselves (part of `seconds`, which also holds the
    # evaluation loaders' waits and the code between the forwards): what autograd can slow down
    forward_seconds: float = 0.0
    # ... of which ran the model that trains on a batch a training forward of it had just seen
    # (a second forward for a metric); None: not recorded. Acting forwards of RL loops and a
    # target network's forwards are not (D801 offers "reuse the training forward" only then)
    on_training_batches: int | None = None
    # where the `with_grad` forwards were called (first 10, sorted): D301 names these, not the
    # no_grad ones beside them (SAC's target networks next to its autograd-on acting)
    with_grad_locations: list[str] = field(default_factory=list)
    # median first dimension of the evaluation forwards' first input (None: not seen): the
    # evaluation what-ifs time a copy's forward on a batch of this size, since a fix's gain
    # depends on it (float32 made a 512-row forward 0.37x, a 128-row one 0.54x)
    batch_size: int | None = None
    # ... of which a model that never trained ran without autograd before its step's backward, on
    # a batch of the training forward's size: a frozen teacher (distillation) or a target
    # network whose outputs the step's loss uses, not validation (D304)
    beside_training: int = 0
    # ... and the same forwards run WITH autograd (a teacher whose weights still require grad,
    # its output detached for the loss): still part of the step, not validation (D304); their
    # autograd is D301's
    beside_training_with_grad: int = 0
    # mean minor page faults of the thread during an autograd-on evaluation forward (None: not
    # read): the saved activations freed at once can go back to the system and be faulted in
    # again by the next forward, a cost the fix removes; the evaluation what-if then starts its
    # copy's forwards from memory handed back too (rule D301)
    with_grad_page_faults: float | None = None


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
    # records emitted through the logging module (Logger._log: the record, its handlers' writes)
    log_records_per_step: float = 0.0
    log_s_per_step: float = 0.0
    # where the print and logging calls of the measured steps were made (`locations` also has
    # the torch.save calls): the line profile's time on those lines includes building the message
    write_locations: list[str] = field(default_factory=list)
    # the same seconds per step with each step that wrote at the median of those steps (count
    # of such steps kept): one write that another process stalled on a busy machine, in a
    # program that writes every few steps, does not make writing look costly (D701, D702)
    save_s_per_step_typical: float = 0.0
    write_s_per_step_typical: float = 0.0  # print, logging and tensor formatting together


@dataclass
class TensorCreationObservation:
    from_ndarray: int = 0  # torch.tensor(ndarray) calls per step (train loop + data loading)
    from_ndarray_list: int = 0  # torch.tensor([ndarray, ...]) calls per step
    from_nested_list: int = 0  # torch.tensor([[x, ...], ...]) calls per step (rows of numbers)
    seconds_per_step: float = 0.0
    locations: list[str] = field(default_factory=list)
    # where torch.tensor was called on rows of numbers (from_nested_list): kept apart, so that a
    # hot line building the rows is still D801's to name
    row_locations: list[str] = field(default_factory=list)


@dataclass
class MemoryPoint:
    """Memory at one point of the sampled step ("before_forward", "after_forward",
    "after_backward", "after_optimizer")."""

    at: str
    allocated_bytes: int | None  # CUDA: allocated by tensors; CPU: process resident memory
    reserved_bytes: int | None = None  # CUDA: held by the caching allocator (allocated + free)


@dataclass
class ModuleActivations:
    """Bytes autograd saved for backward while a module ran (its submodules included), counted
    once per storage; parameters excluded."""

    name: str  # qualified name in the root model, e.g. "encoder.layers.3"; "" is the root itself
    class_name: str
    bytes: int
    depth: int  # 0: the root model, 1: its children, ...
    has_children: bool = False  # a container (a block of layers), not a single layer
    # bytes of the tensors passed into its forward: what a checkpoint of it keeps anyway
    input_bytes: int = 0
    # the program's name for its root model (`Enc1`), which `name` then starts with, where two
    # root models have modules of the same name; "" otherwise (names are the root's own)
    root: str = ""


@dataclass
class RetainedTensors:
    """Tensors of earlier steps still referenced later: what keeps memory alive (rule D503)."""

    # "loss" (passed to backward()), "term" (a loss term: another scalar with a graph in the
    # function that calls backward()), "output" (the model's output), or "graph": a variable of
    # the training loop whose autograd graph spans several steps (`total_loss += loss`)
    kind: str
    steps_alive: int  # how many earlier steps' tensors are still alive at the end of the run
    steps_checked: int  # how many earlier steps were checked
    with_graph: bool  # they still hold an autograd graph (grad_fn): not .detach()ed
    bytes: int  # of the retained tensors themselves (not their graphs)
    location: str  # the user's line that made them (model call) or used them (backward call)
    holder: str = ""  # what holds them, e.g. "list `losses` (24 items)", when found


@dataclass
class GrowingTensor:
    """A tensor among the training loop's variables that is larger at every check, by about the
    same number of elements per step: a history rebuilt from itself every step (`seen =
    torch.cat([seen, batch])`), whose copy (and whatever reads it) costs more every step (D504).
    Or a list of tensors or numbers growing the same way, read whole by a line of the program
    (`torch.quantile(torch.stack(norms), 0.9)`)."""

    name: str  # the variable, e.g. "seen" or "self.history"
    first_step: int  # the check where the run of growth began
    last_step: int
    first_numel: int
    last_numel: int
    bytes: int  # of the tensor at the last check
    location: str = ""  # the user's line that rebuilds it from itself
    # "list" or "deque": a Python container the loop appends to every step (sizes in items),
    # whose whole content a line reads into one array (`torch.stack(history)`); "" for a tensor
    container: str = ""


@dataclass
class OutOfMemoryObservation:
    """The program died allocating memory (CUDA OOM or a CPU allocation failure)."""

    message: str  # the error's first line
    device: str = "cpu"
    step: int | None = None  # index of the step it died in
    phase: str | None = None  # "forward", "backward", "optimizer", or None when elsewhere
    module: str | None = None  # innermost module whose forward was running ("name (Class)")
    location: str | None = None  # the user's line in the traceback, innermost
    requested_bytes: int | None = None  # the allocation that failed, when the message says
    allocated_bytes: int | None = None  # CUDA: in use by tensors at that moment
    reserved_free_bytes: int | None = None  # CUDA: reserved by the allocator but unallocated
    capacity_bytes: int | None = None
    # activations saved for backward in the failing step up to the failure, when it was the
    # counted step; else None (the counted step's by-module numbers are in MemoryObservation)
    activations_bytes: int | None = None


@dataclass
class MemoryObservation:
    source: Literal["cuda_allocator", "process_rss", "unknown"] = "unknown"
    peak_bytes: int | None = None
    capacity_bytes: int | None = None  # device memory (CUDA) or machine RAM (CPU)
    activations_bytes: int | None = None
    optimizer_state_bytes: int | None = None
    parameter_bytes: int | None = None
    gradient_bytes: int | None = None  # .grad tensors of the models' parameters after the run
    # per-phase memory of the counted step (`phase_step`, a warm-up step); `phase_source` says
    # what was read: "cuda_allocator" (allocated and reserved) or "process_rss" (CPU: resident
    # memory of the process, the best cheap CPU source; no peak inside a phase)
    phase_step: int | None = None
    phase_source: str | None = None
    phases: list[MemoryPoint] = field(default_factory=list)
    phase_peaks: dict[str, int] = field(default_factory=dict)  # CUDA: phase -> peak allocated
    # what StepObservation.memory_bytes measures: "cuda_allocated" or "process_rss"
    step_source: str | None = None
    # autograd's saved tensors in the counted step, deduplicated by storage (any device)
    saved_activation_bytes: int | None = None
    activations_by_module: list[ModuleActivations] = field(default_factory=list)  # largest first
    retained: list[RetainedTensors] = field(default_factory=list)
    growing: list[GrowingTensor] = field(default_factory=list)
    # (step index, bytes) the C heap had in use (glibc; CPU tensors live there) at a few steps:
    # what the resident memory cannot tell, whether live memory grew (rule D503)
    heap_in_use: list[tuple[int, int]] = field(default_factory=list)
    out_of_memory: OutOfMemoryObservation | None = None


@dataclass
class OpCount:
    """One aten op of the sampled step: how often it was dispatched and its counted FLOPs."""

    op: str  # "aten.addmm"
    count: int
    flops: float = 0.0


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
    # ops of ops_per_step dispatched inside optimizer.step(): their size is the parameters', not
    # the batch's (rule D202 judges the batch on the other ops). None when not counted
    optimizer_ops_per_step: float | None = None
    # torch calls the program issued from Python in the sampled step, outside the "data" phase
    # (functions, Tensor methods, module forwards' torch calls; not the ops ATen or autograd
    # issue inside them): far fewer than ops_per_step when one call decomposes into many ops
    # inside C++ (nn.GRU/LSTM/RNN on CPU), close to it when a Python loop issues them. D203
    # reads it; None when not counted (older reports, torch.compile)
    python_calls_per_step: float | None = None
    # ops and Python torch calls of ops_per_step / python_calls_per_step dispatched inside the
    # evaluation spans cut out of the sampled step (validation, RL acting forwards of one
    # observation and the code between them): the step's time leaves them out, so rules
    # D202/D203 do too. None when not counted (older reports)
    evaluation_ops_per_step: float | None = None
    evaluation_python_calls_per_step: float | None = None
    # median StepObservation.cpu_share of the measured steps. On a CPU run with one torch thread,
    # well below 1 means the machine was busy: wall times per op (mean_op_s) are inflated by about
    # 1/cpu_share while dispatch_overhead_s (a tight loop, best of 3) is not
    cpu_share: float | None = None
    # the sampled step's most dispatched ops (most FLOPs first among equals), at most TOP_OPS
    top_ops: list[OpCount] = field(default_factory=list)


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
    # torch.get_num_threads() after the run: the cores the training's own CPU work keeps busy
    # (D101's estimate of the cores left free for DataLoader workers); None: not read
    intra_op_threads: int | None = None
    # the OS's 1-minute load average after the run (None where the OS has none): said next to an
    # estimate that assumes idle cores, never used to compute one (it moves with others' jobs)
    load_average: float | None = None


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
    # per rank: the share of the steps (paired by step index across ranks) in which it was busier
    # (step minus its communication) than the median of the other ranks: a straggler is slower in
    # nearly every step, noise makes one rank slower in about half of them (D604)
    per_rank_slower_share: list[float] = field(default_factory=list)


@dataclass
class LineStat:
    """Time of one line of the program's own code (not torch, site-packages, the standard library
    or torchdoctor) within one phase, from the line sampler (probes/lines.py)."""

    location: str  # "file.py:LINE"
    phase: str  # data, h2d, forward, backward, optimizer, other, or evaluation
    samples: int = 0  # samples with this line on the stack of user frames (it or its callees)
    self_samples: int = 0  # samples with this line as the innermost user frame
    seconds_per_step: float = 0.0  # inclusive time per measured step (samples x sample time)
    share: float = 0.0  # seconds_per_step / the mean measured step (evaluation is not in it)
    self_share: float = 0.0  # the same for self_samples
    function: str = ""  # the function the line is in
    code: str = ""  # the source line, stripped
    context: list[str] = field(default_factory=list)  # "LINE: text" around it (HTML report)
    # enclosing innermost loop's header ("for p in model.parameters():"), when the line is in a
    # loop that runs within the step (not the training loop itself)
    loop: str = ""
    # user frames that called it, innermost first ("train.py:88 in train_step")
    chain: list[str] = field(default_factory=list)
    # library functions below the line while sampled: first the one the line itself called most
    # often ("copy.deepcopy"), then the others seen, most frequent first ("torch.nn.modules.
    # module.Module.state_dict"); empty: time in the line itself or in C code
    callees: list[str] = field(default_factory=list)
    # the line also sits on the stack of training compute samples (model forward, backward,
    # optimizer, data loading): it is the loop or a call that contains it, not a hot spot
    encloses_training: bool = False
    # share of its samples taken while the tracker was in the model's forward (evaluation lines:
    # the time of the model call itself)
    model_share: float = 0.0
    # measured steps with a sample on the line (0: not counted, older reports): a line that
    # runs once an epoch (a profiler's table, a checkpoint) is seen in one step, not in every one
    steps_seen: int = 0


@dataclass
class LinesObservation:
    """The phase-aware line profile of the measured steps (a sampler thread reading the training
    thread's Python stack; no tracing)."""

    interval_s: float = 0.0  # sampling interval asked for at the start (full rate)
    samples: int = 0  # samples taken within measured steps (evaluation spans included)
    steps: int = 0  # measured steps the samples were taken in (the windows)
    seconds_per_sample: float = 0.0  # measured time the average sample stands for
    phase_samples: dict[str, int] = field(default_factory=dict)
    # phase -> seconds per measured step the samples stand for (each weighted by the time since
    # the one before it): comparable with the step tracker's breakdown, which books the time
    # torchdoctor takes to close a step (here "torchdoctor") to the next step's "other"
    phase_seconds: dict[str, float] = field(default_factory=dict)
    lines: list[LineStat] = field(default_factory=list)  # the top lines per phase, by samples


@dataclass
class HabitsObservation:
    """Debugging modes and training-loop habits seen during the measured steps (probes/habits.py)."""

    # torch.profiler recorded during this share of the measured steps (the program's own
    # profiler, not --profile); None: no step seen
    profiler_active_share: float | None = None
    # extra seconds per dispatched op with the mode on (the program's torch.profiler / anomaly
    # detection): a small forward+backward timed with the mode on at a warm-up step end, minus
    # the same timed before the program ran, over its ops; None: not measured
    profiler_op_overhead_s: float | None = None
    anomaly_op_overhead_s: float | None = None
    # the options the program's torch.profiler.profile recorded with (record_shapes, with_stack,
    # profile_memory, with_flops, with_modules: those set True), as last started
    profiler_options: list[str] = field(default_factory=list)
    # backward() calls with retain_graph=True followed by another backward through the same
    # graph (with no model forward between, or walking back into the retained graph after one),
    # per step
    retained_backwards_per_step: float = 0.0
    retained_backward_locations: list[str] = field(default_factory=list)
    # seconds per step spent in the backward() calls after the first of such a chain
    second_backward_s_per_step: float = 0.0
    # of retained_backwards_per_step: those after a model forward, whose graph walked back into
    # the retained one (a generator output not detached for the discriminator's loss; a hidden
    # state carried across steps)
    retained_reused_after_forward_per_step: float = 0.0
    # seconds per step spent recomputing checkpointed segments inside backward (activation
    # checkpointing); None: no checkpointing seen
    checkpoint_recompute_s_per_step: float | None = None
    # installed packages whose code made the torch.utils.checkpoint calls (e.g. "transformers",
    # whose gradient_checkpointing option TRL's configs turn on by default): the program switched
    # checkpointing on through their option, not in its own code; empty: its own code called it
    checkpoint_caller_packages: list[str] = field(default_factory=list)
    # training forwards (a gradient reached their output) of a model with Dropout/BatchNorm that
    # was in eval() mode, in measured steps with no such forward in train mode, and where they
    # were called (rule D305)
    eval_mode_training_forwards: int = 0
    eval_mode_training_locations: list[str] = field(default_factory=list)
    # share of consecutive measured steps whose first training forward ran on the very tensor
    # the step before's did, its data unchanged (same version counter: not a batch copied into
    # a fixed buffer), or both on none (the model holds its data): full-batch training,
    # each step an epoch (a GNN on its one graph); None: fewer than 3 pairs of steps
    training_input_repeated: float | None = None


# the name of a reference timing: the replayed model's forward and backward as run, no fix
# (timed by the optimizer what-if; rules/_unprobed.py reads it)
FORWARD_BACKWARD_TIMING = "copy.forward_backward"


@dataclass
class WhatIfTiming:
    """One measured counterfactual: the same work timed as the program ran it and with a fix, on
    copies of the program's own objects, after the run (diagnose/whatif)."""

    name: str  # e.g. "optimizer.fused", "evaluation.inference_mode", "data.workers"
    unit: str  # what one timing covers: "optimizer step", "evaluation forward", "training step"
    as_run_s: float  # median seconds per unit as the program ran it
    alternative_s: float  # median seconds per unit with the fix
    repeats: int = 0  # timed repetitions of each (interleaved)
    setting: str = ""  # the alternative's setting, e.g. "fused=True", "num_workers=1"
    # outputs that the alternative changes, as a relative L2 difference (train vs eval mode)
    output_change: float | None = None
    startup_s: float | None = None  # one-off cost the alternative pays (workers' start-up)
    # the batch what-if: the alternative ran this many times the program's batch, and its
    # alternative_s is per as many samples as the program's batch (so `ratio` is per sample)
    batch_factor: int | None = None
    # where the timed object was built (a DataLoader's file:line), when the probe chose one of
    # several: a rule applies the timing only to that object
    subject: str = ""
    # what as_run_s and alternative_s count: "wall" seconds, or "cpu" seconds of this process
    # (guard.compute_clock: a CPU with one torch thread, where another process's load is not
    # the fix's doing); a rule comparing them with the steps' wall times scales by cpu_share
    clock: str = "wall"
    # the lowest and highest ratio (alternative / as run) of the timed pairs, for a probe that
    # times its two sides in back-to-back pairs (profiler.off): pairs on both sides of 1 did not
    # decide which is faster; None: not timed in pairs
    pair_ratios: tuple[float, float] | None = None
    # how each timed call began where not as the calls came ("" for those): e.g. from memory
    # handed back to the system, as the program's calls page-faulted (whatif/allocator.py)
    started_from: str = ""

    @property
    def ratio(self) -> float:
        """alternative / as run: below 1 the fix is faster."""
        return self.alternative_s / self.as_run_s if self.as_run_s > 0 else 1.0


@dataclass
class WhatIfObservation:
    timings: list[WhatIfTiming] = field(default_factory=list)
    seconds: float = 0.0  # wall time all what-if probes took together
    budget_s: float = 0.0  # what they were allowed (a share of the diagnosed wall time)
    skipped: list[str] = field(default_factory=list)  # what was not measured, and why


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
    # blocking gets the training thread made on a queue a producer of the program's fills
    # (probes/queue_wait.py): booked as data
    queue_waits: int = 0
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
    backwards_seen: int = 0  # backward() calls seen, warm-up included (none: no training loop)
    # training seconds of every step, warm-up included, evaluation cut out: the whole run's
    # training time where the run completed (evaluation seen only outside the measured steps)
    training_s_seen: float = 0.0
    forwards_seen: int = 0  # root model forward passes seen, training and evaluation
    lines: LinesObservation = field(default_factory=LinesObservation)
    habits: HabitsObservation = field(default_factory=HabitsObservation)
    whatif: WhatIfObservation = field(default_factory=WhatIfObservation)
    # processes the program started through multiprocessing (torch.multiprocessing.Process,
    # mp.spawn, a Pool; DataLoader workers not counted), and the functions they ran: diagnose
    # does not follow them, so training that ran only there is not seen
    child_processes: int = 0
    child_process_targets: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)
