"""Synchronized BatchNorm that also works on CPU (gloo), where `nn.SyncBatchNorm` refuses to run.

Seed 004: under DDP each rank normalizes with the statistics of its own slice of the batch, so
BatchNorm sees per-rank batch B, not global batch W*B, unless it is converted to a synchronized
BatchNorm *before* wrapping in DDP. `nn.SyncBatchNorm` does that on GPUs only (it raises
"SyncBatchNorm expected input tensor to be on GPU" for CPU tensors), so CPU runs get
`CpuSyncBatchNorm`: mean and variance over the whole global batch via differentiable all-reduces.
That makes W ranks at batch B compute the same statistics, running buffers and gradients as one
process at batch W*B.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm


class _AllReduceSum(torch.autograd.Function):
    """Sum across ranks; the gradient of a sum is the sum of the gradients on every rank."""

    @staticmethod
    def forward(ctx, tensor: torch.Tensor) -> torch.Tensor:
        tensor = tensor.clone()
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        return tensor

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        grad = grad.clone()
        dist.all_reduce(grad, op=dist.ReduceOp.SUM)
        return grad


class CpuSyncBatchNorm(_BatchNorm):
    """BatchNorm over the global batch of all ranks, any input rank (N, C, *)."""

    def _check_input_dim(self, input: torch.Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        self._check_input_dim(input)
        synced = (
            self.training
            and dist.is_available()
            and dist.is_initialized()
            and dist.get_world_size() > 1
        )
        if not synced:
            return super().forward(input)
        dims = [d for d in range(input.dim()) if d != 1]
        shape = [1, -1] + [1] * (input.dim() - 2)
        count = _AllReduceSum.apply(
            torch.tensor([input.numel() / input.shape[1]], dtype=input.dtype)
        )
        # two passes (mean, then squared deviations) match single-process BatchNorm's precision
        mean = _AllReduceSum.apply(input.sum(dims)) / count
        centered = input - mean.view(shape)
        var = _AllReduceSum.apply((centered * centered).sum(dims)) / count
        output = centered * torch.rsqrt(var.view(shape) + self.eps)
        if self.affine:
            output = output * self.weight.view(shape) + self.bias.view(shape)
        if self.track_running_stats:
            self._update_running_stats(mean.detach(), var.detach(), float(count.item()))
        return output

    @torch.no_grad()
    def _update_running_stats(self, mean: torch.Tensor, var: torch.Tensor, count: float) -> None:
        self.num_batches_tracked.add_(1)
        momentum = (
            self.momentum
            if self.momentum is not None
            else 1.0 / float(self.num_batches_tracked.item())
        )
        unbiased = var * (
            count / max(count - 1.0, 1.0)
        )  # running_var is unbiased, like BatchNorm's
        self.running_mean.mul_(1 - momentum).add_(mean, alpha=momentum)
        self.running_var.mul_(1 - momentum).add_(unbiased, alpha=momentum)


def has_batchnorm(model: nn.Module) -> bool:
    return any(isinstance(module, _BatchNorm) for module in model.modules())


def convert_cpu_sync_batchnorm(module: nn.Module) -> nn.Module:
    """Replace every BatchNorm in `module` by CpuSyncBatchNorm, keeping its parameters and buffers."""
    if isinstance(module, _BatchNorm) and not isinstance(module, CpuSyncBatchNorm):
        synced = CpuSyncBatchNorm(
            module.num_features,
            module.eps,
            module.momentum,
            module.affine,
            module.track_running_stats,
        )
        if module.affine:
            with torch.no_grad():
                synced.weight = module.weight
                synced.bias = module.bias
        synced.running_mean = module.running_mean
        synced.running_var = module.running_var
        synced.num_batches_tracked = module.num_batches_tracked
        synced.train(module.training)
        return synced
    for name, child in module.named_children():
        module.add_module(name, convert_cpu_sync_batchnorm(child))
    return module


def convert_sync_batchnorm(model: nn.Module, device: torch.device) -> nn.Module:
    """nn.SyncBatchNorm on GPUs (fused kernels), CpuSyncBatchNorm elsewhere."""
    if device.type == "cuda":
        return nn.SyncBatchNorm.convert_sync_batchnorm(model)
    return convert_cpu_sync_batchnorm(model)
