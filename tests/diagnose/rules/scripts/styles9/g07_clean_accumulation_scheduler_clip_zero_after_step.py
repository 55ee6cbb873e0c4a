"""Clean: gradient accumulation over 4 micro-batches with gradient clipping and a cosine
schedule stepped per update, `zero_grad(set_to_none=True)` after every update, the update count
(`global_step`) carried across epochs, and evaluation every 20 updates inside the epoch on a
fixed held-out batch under `torch.inference_mode()` in `eval()` mode.

No planted problem; `--fixed` changes nothing (kept for the bench's control run).
"""

import torch
from torch import nn

ACCUM, MICRO = 4, 32

if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(8192, 48)
    y = (x[:, :6].sum(1) > 0).long()
    xv, yv = x[-512:], y[-512:]
    model = nn.Sequential(nn.Linear(48, 256), nn.GELU(), nn.Dropout(0.1), nn.Linear(256, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    epochs = 3
    updates = epochs * (7680 // (MICRO * ACCUM))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=updates)
    global_step = 0
    for epoch in range(epochs):
        perm = torch.randperm(7680)
        for i, start in enumerate(range(0, 7680, MICRO)):
            idx = perm[start : start + MICRO]
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx]) / ACCUM
            loss.backward()
            if (i + 1) % ACCUM == 0:
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                sched.step()
                opt.zero_grad(set_to_none=True)
                global_step += 1
                if global_step % 20 == 0:
                    model.eval()
                    with torch.inference_mode():
                        acc = (model(xv).argmax(1) == yv).float().mean().item()
                    model.train()
        print("epoch", epoch, "update", global_step, "acc", acc)
