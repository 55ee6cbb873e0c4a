"""Evaluation and prediction passes: `model.eval()` (dropout off, BatchNorm running statistics)
and `torch.inference_mode()` (no autograd graph, no version counters), with every submodule put
back into the mode it had before."""

from __future__ import annotations

import contextlib

import torch
from torch import nn

from torchdoctor.trainer.data import LoaderHandle, batch_size_of, split_batch, to_device
from torchdoctor.trainer.history import EpochMeter
from torchdoctor.trainer.setup import ResolvedSetup
from torchdoctor.trainer.steps import StepParts, forward_loss


@contextlib.contextmanager
def eval_mode(model: nn.Module):
    """model.eval() for the block, then every submodule back to its own previous mode (a user
    may keep e.g. a frozen BatchNorm in eval while the rest trains)."""
    modes = [(module, module.training) for module in model.modules()]
    model.eval()
    try:
        yield model
    finally:
        for module, training in modes:
            module.training = training


def evaluate_loader(
    model: nn.Module,
    parts: StepParts,
    loader: LoaderHandle,
    setup: ResolvedSetup,
    classification: bool,
) -> dict:
    """{"loss", "accuracy"}: sample-weighted means over the loader (one sync at the end)."""
    device, non_blocking, channels_last = setup.device, setup.non_blocking, setup.channels_last
    with eval_mode(model), torch.inference_mode():
        meter = EpochMeter(device, classification)
        for batch in loader.epoch_batches(0):
            inputs, targets = split_batch(batch)
            n = batch_size_of(inputs)
            inputs = to_device(inputs, device, non_blocking, channels_last)
            targets = to_device(targets, device, non_blocking, False)
            loss, outputs = forward_loss(parts, inputs, targets)
            meter.add(loss, outputs, targets, n)
        loss, accuracy, _ = meter.summary()
    return {"loss": loss, "accuracy": accuracy}


def predict_loader(
    model: nn.Module, parts: StepParts, loader: LoaderHandle, setup: ResolvedSetup
) -> torch.Tensor:
    """Outputs for every sample, in order; batches may be (inputs, targets) or inputs only."""
    outputs = []
    with eval_mode(model), torch.inference_mode():
        for batch in loader.epoch_batches(0):
            inputs, _ = split_batch(batch)
            inputs = to_device(inputs, setup.device, setup.non_blocking, setup.channels_last)
            with parts.autocast():
                outputs.append(parts.model(inputs))
    return torch.cat(outputs) if outputs else torch.empty(0)
