"""Planted: fp16 training with a GradScaler whose gradients are clipped while still scaled
(D209). --fixed: scaler.unscale_(optimizer) before clip_grad_norm_."""

import torch
from torch import nn

import _planted

args = _planted.arguments()
model = _planted.mlp().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
scaler = torch.amp.GradScaler("cuda")
loader = _planted.loader(_planted.vectors(), batch_size=1024)
for _, x, y in _planted.batches(loader, args.steps):
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    with torch.autocast("cuda", dtype=torch.float16):
        loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    if args.fixed:
        scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
