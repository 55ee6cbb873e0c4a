"""Planted: a conv net with fixed input shapes and cudnn.benchmark off (D205), otherwise clean
(bf16 autocast, channels_last, pinned non_blocking copies). --fixed: cudnn.benchmark = True."""

import torch
from torch import nn

import _planted

args = _planted.arguments()
torch.backends.cudnn.benchmark = args.fixed
model = _planted.convnet().cuda().to(memory_format=torch.channels_last)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
loader = _planted.loader(_planted.images(), batch_size=256)
for _, x, y in _planted.batches(loader, args.steps):
    x = x.cuda(non_blocking=True).to(memory_format=torch.channels_last)
    y = y.cuda(non_blocking=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
