"""Planted: a conv net under bf16 autocast in NCHW memory format (D207), otherwise clean.
--fixed: model and inputs in torch.channels_last."""

import torch
from torch import nn

import _planted

args = _planted.arguments()
torch.backends.cudnn.benchmark = True
layout = torch.channels_last if args.fixed else torch.contiguous_format
model = _planted.convnet().cuda().to(memory_format=layout)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
loader = _planted.loader(_planted.images(), batch_size=256)
for _, x, y in _planted.batches(loader, args.steps):
    x = x.cuda(non_blocking=True).to(memory_format=layout)
    y = y.cuda(non_blocking=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
