"""Planted: batches copied from pageable memory with blocking `.to("cuda")` (D402/D104).
--fixed: pin_memory=True in the DataLoader and non_blocking=True copies."""

import torch
from torch import nn

import _planted

args = _planted.arguments()
torch.backends.cudnn.benchmark = True
model = _planted.mlp(width=4096, hidden=1024, depth=3).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
loader = _planted.loader(_planted.vectors(width=4096), batch_size=1024, pinned=args.fixed)
for _, x, y in _planted.batches(loader, args.steps):
    x, y = x.to("cuda", non_blocking=args.fixed), y.to("cuda", non_blocking=args.fixed)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
