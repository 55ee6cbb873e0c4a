"""Planted: `.item()` of the loss every step (a host sync that drains the GPU's queue) on a
short-kernel model (D401). --fixed: losses summed on the device, read once per 100 steps."""

import torch
from torch import nn

import _planted

args = _planted.arguments(steps=400)
model = _planted.mlp(width=256, hidden=512, depth=6).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
loader = _planted.loader(_planted.vectors(width=256, count=16384), batch_size=64)
total = torch.zeros((), device="cuda")
for step, (_, x, y) in enumerate(_planted.batches(loader, args.steps)):
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    if args.fixed:
        total += loss.detach()
        if step % 100 == 99:
            print(f"step {step} loss {total.item() / 100:.4f}")
            total.zero_()
    else:
        running = loss.item()
        if step % 100 == 99:
            print(f"step {step} loss {running:.4f}")
