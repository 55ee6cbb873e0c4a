"""Planted: a run whose allocated GPU memory stays above 90% of the card's (D501): a cache
tensor the program holds fills the card. --fixed: no cache tensor."""

import torch
from torch import nn

import _planted

args = _planted.arguments()
free, total = torch.cuda.mem_get_info()
cache = None if args.fixed else torch.empty(int(total * 0.93), dtype=torch.uint8, device="cuda")
model = _planted.mlp().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
loader = _planted.loader(_planted.vectors(), batch_size=1024)
for _, x, y in _planted.batches(loader, args.steps):
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
