"""Planted: a matmul-bound MLP trained in plain float32 on a tensor-core GPU (D204).
--fixed: the forward under torch.autocast(bfloat16)."""

import contextlib

import torch
from torch import nn

import _planted

args = _planted.arguments()
model = _planted.mlp().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
loader = _planted.loader(_planted.vectors(), batch_size=1024)
for _, x, y in _planted.batches(loader, args.steps):
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    precision = (
        torch.autocast("cuda", dtype=torch.bfloat16) if args.fixed else contextlib.nullcontext()
    )
    with precision:
        loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
