"""Planted: an MLP under bf16 autocast whose widths are not multiples of 8 (D208).
--fixed: the same MLP with widths rounded up to multiples of 8."""

import torch
from torch import nn

import _planted

args = _planted.arguments()
width, hidden = (1024, 4096) if args.fixed else (1021, 4093)
model = _planted.mlp(width=width, hidden=hidden).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
loader = _planted.loader(_planted.vectors(width=width), batch_size=1024)
for _, x, y in _planted.batches(loader, args.steps):
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
