"""Per-epoch history, measured without slowing the step.

Running sums (loss x samples, correct predictions, pre-clip gradient norms) stay tensors on the
device and are read once per epoch: a `.item()` per step would force a host-device sync and stall
the GPU queue every step.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch

from torchdoctor.process_memory import peak_rss_bytes

HISTORY_SCHEMA_VERSION = 1


@dataclass
class EpochRecord:
    epoch: int
    train_loss: float
    train_accuracy: float | None
    val_loss: float | None
    val_accuracy: float | None
    samples_per_s: float
    epoch_s: float
    peak_memory_bytes: int
    grad_norm: float | None  # mean pre-clip norm over the epoch's optimizer steps (clip only)
    steps: int  # global optimizer steps at the end of this epoch

    def to_dict(self) -> dict:
        return asdict(self)


class EpochMeter:
    """Sums for one pass over data; `add` is called per micro-batch and never syncs."""

    def __init__(self, device: torch.device, classification: bool):
        self.device = device
        self.classification = classification
        self.loss_sum = torch.zeros((), dtype=torch.float64, device=device)
        self.correct = torch.zeros((), dtype=torch.int64, device=device)
        self.grad_norm_sum = torch.zeros((), dtype=torch.float64, device=device)
        self.grad_norm_count = 0
        self.samples = 0

    def add(self, loss: torch.Tensor, outputs: torch.Tensor, targets, n: int) -> None:
        self.loss_sum.add_(loss.detach(), alpha=n)  # one kernel: sum += loss * n
        if self.classification:
            self.correct += (outputs.detach().argmax(dim=-1) == targets).sum()
        self.samples += n

    def add_grad_norm(self, norm: torch.Tensor) -> None:
        self.grad_norm_sum += norm.detach()
        self.grad_norm_count += 1

    def running_loss(self) -> float:
        """Syncs: call only when a progress bar is refreshed, not per step."""
        return self.loss_sum.item() / max(self.samples, 1)

    def state(self) -> dict:
        """Plain numbers for a mid-epoch checkpoint, so a resumed epoch reports the whole epoch."""
        return {
            "loss_sum": self.loss_sum.item(),
            "correct": int(self.correct.item()),
            "grad_norm_sum": self.grad_norm_sum.item(),
            "grad_norm_count": self.grad_norm_count,
            "samples": self.samples,
        }

    def load_state(self, state: dict) -> None:
        self.loss_sum.fill_(state["loss_sum"])
        self.correct.fill_(state["correct"])
        self.grad_norm_sum.fill_(state["grad_norm_sum"])
        self.grad_norm_count = state["grad_norm_count"]
        self.samples = state["samples"]

    def summary(self) -> tuple[float, float | None, float | None]:
        """(mean loss, accuracy or None, mean grad norm or None); one sync."""
        if self.samples == 0:
            return float("nan"), None, None
        loss = self.loss_sum.item() / self.samples
        accuracy = self.correct.item() / self.samples if self.classification else None
        grad_norm = (
            self.grad_norm_sum.item() / self.grad_norm_count if self.grad_norm_count else None
        )
        return loss, accuracy, grad_norm


def reset_peak_memory(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


def peak_memory_bytes(device: torch.device) -> int:
    """CUDA: peak bytes allocated by tensors since the epoch began. CPU: the process's peak
    resident set size so far (getrusage reports KiB on Linux, bytes on macOS)."""
    if device.type == "cuda":
        return int(torch.cuda.max_memory_allocated(device))
    return peak_rss_bytes()
