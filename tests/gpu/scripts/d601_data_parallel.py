"""Planted: nn.DataParallel wrapping the model (D601), otherwise clean.
--fixed: the plain model (one GPU; DistributedDataParallel for several)."""

import torch
from torch import nn

import _planted

args = _planted.arguments()
model = _planted.mlp().cuda()
trained = model if args.fixed else nn.DataParallel(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
loader = _planted.loader(_planted.vectors(), batch_size=1024)
for _, x, y in _planted.batches(loader, args.steps):
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(trained(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
