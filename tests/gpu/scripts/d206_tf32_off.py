"""Planted: float32 training (kept in float32 on purpose: no autocast) with TF32 matmuls off,
PyTorch's default (D206). --fixed: torch.backends.cuda.matmul.allow_tf32 = True."""

import torch
from torch import nn

import _planted

args = _planted.arguments()
torch.backends.cuda.matmul.allow_tf32 = args.fixed
torch.backends.cudnn.allow_tf32 = True
model = _planted.mlp().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
loader = _planted.loader(_planted.vectors(), batch_size=1024)
for _, x, y in _planted.batches(loader, args.steps):
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
