"""Run one row of the demo: the naive script's loop, or torchdoctor.Trainer with the stack so far.

Every row trains a freshly initialised model (same seed) for the same epochs on the same
samples; its accuracy is then measured the same way for all rows (fp32, inference_mode, the whole
validation set), outside the timed region.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from torchdoctor.demo import naive_loop
from torchdoctor.demo.meters import RowMeter
from torchdoctor.demo.stack import (BASELINE_CONFIG, LARGE_BATCH, Step, cumulative_config,
                                    dataset_form, uses_fused_optimizer)
from torchdoctor.demo.workload import Workload

NAIVE_BATCH = 32


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
    wall_s: float
    peak_memory_bytes: int | None
    final_accuracy: float | None
    speedup_vs_naive: float | None = None
    step_speedup: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def epoch_s(self) -> float:
        return self.wall_s / self.epochs

    @property
    def samples_per_s(self) -> float:
        return self.train_samples * self.epochs / max(self.wall_s, 1e-9)


def run_row(workload: Workload, steps: list[Step], index: int, device: torch.device) -> RowResult:
    step = steps[index]
    epochs = workload.size.epochs
    if index == 0:
        model, config, meter = _run_naive(workload, epochs, device)
    else:
        model, config, meter = _run_trainer(workload, steps, index, epochs, device)
    accuracy = validation_accuracy(model, workload, device)
    result = RowResult(
        key=step.key,
        name=step.name,
        label=step.label,
        source=step.source,
        changes_semantics=step.changes_semantics,
        dataset=dataset_form(steps, index),
        config=config,
        epochs=epochs,
        train_samples=workload.n_train,
        wall_s=meter.wall_s,
        peak_memory_bytes=meter.peak_memory_bytes,
        final_accuracy=accuracy,
    )
    del model
    gc.collect()  # persistent DataLoader workers of this row exit before the next row starts
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return result


def _run_naive(workload: Workload, epochs: int, device: torch.device):
    ds = workload.naive_data
    dl = {
        "train": torch.utils.data.DataLoader(ds["train"], batch_size=NAIVE_BATCH, shuffle=True),
        "test": torch.utils.data.DataLoader(ds["test"], batch_size=NAIVE_BATCH, shuffle=False),
    }
    model = workload.new_model()
    optimizer = naive_loop.build_optimizer(workload.recipe, model)
    torch.manual_seed(workload.seed)  # the shuffle order
    _baseline_backend(device)
    with RowMeter(device) as meter:
        naive_loop.train(model, dl, optimizer, epochs=epochs, device=str(device), log=None)
    config = {"batch_size": NAIVE_BATCH, "workers": 0, "device": str(device),
              "optimizer": type(optimizer).__name__}
    return model, config, meter


def _baseline_backend(device: torch.device) -> None:
    """The GPU switches of the Trainer rows' baseline (cudnn.benchmark and TF32 off), so row 0
    and row 1 differ by the loop only. (PyTorch's own default allows TF32 in cuDNN convs.)"""
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = BASELINE_CONFIG["cudnn_benchmark"]
        torch.backends.cudnn.allow_tf32 = BASELINE_CONFIG["tf32"]
        torch.backends.cuda.matmul.allow_tf32 = BASELINE_CONFIG["tf32"]


def _run_trainer(workload: Workload, steps: list[Step], index: int, epochs: int,
                 device: torch.device):
    from torchdoctor.trainer import Trainer, TrainerConfig

    config = cumulative_config(steps, index)
    if config["precision"] == "auto" and device.type == "cuda":
        # The AMP row must use autocast: "auto" would fall back to fp32 on GPUs without bf16.
        config["precision"] = "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    trainer_config = TrainerConfig(**config, epochs=epochs, device=str(device), quiet=True,
                                   seed=workload.seed)
    train, val = workload.datasets(dataset_form(steps, index))
    fused = uses_fused_optimizer(steps, index)
    optimizer = workload.optimizer_factory(fused=fused, device_type=device.type)
    trainer = Trainer(workload.new_model(), optimizer, nn.CrossEntropyLoss(), trainer_config)
    with RowMeter(device) as meter:
        trainer.fit(train, val)
    config["workers"] = trainer.setup.workers  # what "auto" became on this machine
    config["optimizer"] = type(trainer.optimizer).__name__ + (" (fused)" if fused else "")
    config["device"] = str(device)
    return trainer.model, config, meter


def warm_up(workload: Workload, device: torch.device, batch_sizes=(NAIVE_BATCH, LARGE_BATCH)) -> None:
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
