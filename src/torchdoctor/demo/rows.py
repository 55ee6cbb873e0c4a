"""Run the demo's rows: seed 001's loop with the fixes so far, or torchdoctor.Trainer.

Rows run interleaved epoch by epoch (interleave.py). Every row trains a freshly initialised
model (same seed) for the same epochs on the same samples; its accuracy is then measured the
same way for all rows (fp32, inference_mode, the whole validation set), outside the timed region.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from torchdoctor.demo import naive_loop
from torchdoctor.demo.interleave import EpochBaton, run_interleaved
from torchdoctor.demo.stack import (
    BASELINE_CONFIG,
    LARGE_BATCH,
    NAIVE_BATCH,
    Step,
    cumulative_config,
    dataset_form,
    lr_scale,
    uses_fused_optimizer,
    uses_trainer,
)
from torchdoctor.demo.timing import TickOnIter, spread, steady_epoch_s
from torchdoctor.demo.workload import Workload


@dataclass
class RowResult:
    key: str
    name: str
    label: str
    source: str
    changes_semantics: str | None
    dataset: str
    config: dict[str, Any]
    epochs: int
    train_samples: int  # per epoch
    wall_s: float  # the whole row: loader set-up, every epoch, evaluation
    peak_memory_bytes: int | None
    final_accuracy: float | None
    epoch_times_s: list[float] = field(default_factory=list)  # each epoch, evaluation included
    speedup_vs_naive: float | None = None
    step_speedup: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def epoch_s(self) -> float:
        """Steady state: the median epoch after the first (see timing.py)."""
        if not self.epoch_times_s:
            return self.wall_s / self.epochs
        return steady_epoch_s(self.epoch_times_s)

    @property
    def first_epoch_s(self) -> float | None:
        return self.epoch_times_s[0] if self.epoch_times_s else None

    @property
    def spread(self) -> float:
        return spread(self.epoch_times_s) if self.epoch_times_s else 0.0

    @property
    def samples_per_s(self) -> float:
        return self.train_samples / max(self.epoch_s, 1e-9)


def run_rows(
    workload: Workload, steps: list[Step], device: torch.device, on_turn=None
) -> list[RowResult]:
    """Every row of the plan, interleaved epoch by epoch (interleave.py), then each final model's
    accuracy. `on_turn(index, baton)` is called after each epoch of each row (progress)."""
    programs = [_row_program(workload, steps, index, device) for index in range(len(steps))]
    outcomes = run_interleaved(programs, device, on_turn)
    results = []
    for index, (baton, wall_s, peak) in enumerate(outcomes):
        step = steps[index]
        model, config = baton.result
        results.append(
            RowResult(
                key=step.key,
                name=step.name,
                label=step.label,
                source=step.source,
                changes_semantics=step.changes_semantics,
                dataset=dataset_form(steps, index),
                config=config,
                epochs=workload.size.epochs,
                train_samples=workload.n_train,
                wall_s=wall_s,
                peak_memory_bytes=peak,
                final_accuracy=validation_accuracy(model, workload, device),
                epoch_times_s=baton.times,
            )
        )
        baton.result = None
    gc.collect()  # persistent DataLoader workers exit with their loaders
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return results


def _row_program(workload: Workload, steps: list[Step], index: int, device: torch.device):
    if uses_trainer(steps, index):
        return lambda baton: _run_trainer(workload, steps, index, device, baton)
    return lambda baton: _run_script_loop(workload, steps, index, device, baton)


def _run_script_loop(
    workload: Workload, steps: list[Step], index: int, device: torch.device, baton: EpochBaton
):
    """Seed 001's own loop (`naive_loop.train`), with the fixes of rows 1..index applied to it
    the way a user would: a fused optimizer, the float32 data set, DataLoader workers."""
    from torchdoctor.cores import usable_cores
    from torchdoctor.trainer.setup import resolve_workers

    train, val = workload.datasets(dataset_form(steps, index))
    shuffle = torch.Generator().manual_seed(workload.seed)  # the rows share no RNG stream
    workers = resolve_workers(cumulative_config(steps, index)["workers"], usable_cores())
    loading = {"num_workers": workers, "persistent_workers": workers > 0}

    def epoch_start():
        baton.epoch_start()
        _baseline_backend(device)  # global switches: another row may have changed them

    dl = {  # each pass over the training loader starts one epoch of the script's loop
        "train": TickOnIter(
            torch.utils.data.DataLoader(
                train, batch_size=NAIVE_BATCH, shuffle=True, generator=shuffle, **loading
            ),
            epoch_start,
        ),
        "test": torch.utils.data.DataLoader(val, batch_size=NAIVE_BATCH, shuffle=False, **loading),
    }
    model = workload.new_model()
    fused = uses_fused_optimizer(steps, index)
    if fused:
        optimizer = workload.optimizer_factory(fused=True, device_type=device.type)(
            model.parameters()
        )
    else:
        optimizer = naive_loop.build_optimizer(workload.recipe, model)  # as the script has it
    naive_loop.train(
        model, dl, optimizer, epochs=workload.size.epochs, device=str(device), log=None
    )
    config = {
        "batch_size": NAIVE_BATCH,
        "workers": workers,
        "device": str(device),
        "optimizer": type(optimizer).__name__ + (" (fused)" if fused else ""),
    }
    return model, config


def _baseline_backend(device: torch.device) -> None:
    """The GPU switches of the Trainer rows' baseline (cudnn.benchmark and TF32 off), so row 0
    and row 1 differ by the loop only. (PyTorch's own default allows TF32 in cuDNN convs.)"""
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = BASELINE_CONFIG["cudnn_benchmark"]
        torch.backends.cudnn.allow_tf32 = BASELINE_CONFIG["tf32"]
        torch.backends.cuda.matmul.allow_tf32 = BASELINE_CONFIG["tf32"]


def _run_trainer(
    workload: Workload, steps: list[Step], index: int, device: torch.device, baton: EpochBaton
):
    from torchdoctor.trainer import Trainer, TrainerConfig
    from torchdoctor.trainer.setup import apply_backend_flags

    config = cumulative_config(steps, index)
    if config["precision"] == "auto" and device.type == "cuda":
        # The AMP row must use autocast: "auto" would fall back to fp32 on GPUs without bf16.
        config["precision"] = "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    trainer_config = TrainerConfig(
        **config, epochs=workload.size.epochs, device=str(device), quiet=True, seed=workload.seed
    )
    train, val = workload.datasets(dataset_form(steps, index))
    fused = uses_fused_optimizer(steps, index)
    scale = lr_scale(steps, index)
    optimizer = workload.optimizer_factory(fused=fused, device_type=device.type, lr_scale=scale)
    trainer = Trainer(workload.new_model(), optimizer, nn.CrossEntropyLoss(), trainer_config)

    # seed 001's epochs include evaluation and EpochRecord.epoch_s leaves it out, so the baton
    # clocks each epoch from the end of the previous one (after its validation) instead.
    def next_epoch(record) -> None:
        if record.epoch < trainer_config.epochs:  # the last epoch's turn ends with the row
            baton.epoch_start()
            apply_backend_flags(trainer.setup)  # global switches: another row may have changed them

    baton.epoch_start()
    apply_backend_flags(trainer.setup)
    trainer.fit(train, val, on_epoch_end=next_epoch)
    config["workers"] = trainer.setup.workers  # what "auto" became on this machine
    config["optimizer"] = type(trainer.optimizer).__name__ + (" (fused)" if fused else "")
    config["device"] = str(device)
    if scale != 1.0:
        config["lr_scale"] = scale
    return trainer.model, config


def warm_up(
    workload: Workload, device: torch.device, batch_sizes=(NAIVE_BATCH, LARGE_BATCH)
) -> None:
    """A few untimed steps at each batch size the rows use, so one-time costs (kernel selection,
    thread pools, allocator growth, CUDA context) are not charged to the first row."""
    model = workload.new_model().to(device)
    optimizer = workload.optimizer_factory()(model.parameters())
    train, _ = workload.datasets("vectorised")
    for size in batch_sizes:
        images = train.images[:size].to(device)
        labels = train.labels[:size].to(device)
        for _ in range(2):
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(images), labels).backward()
            optimizer.step()
    validation_accuracy(model, workload, device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def validation_accuracy(model: nn.Module, workload: Workload, device: torch.device) -> float:
    _, val = workload.datasets("vectorised")
    model.eval()
    correct = 0
    with torch.inference_mode():
        for start in range(0, len(val), 256):
            images = val.images[start : start + 256].to(device)
            labels = val.labels[start : start + 256].to(device)
            correct += int((model(images).argmax(dim=1) == labels).sum())
    return correct / len(val)
