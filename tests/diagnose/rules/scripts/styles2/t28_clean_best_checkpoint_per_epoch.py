"""A clean, idiomatic program: per-epoch validation under inference_mode, a cosine schedule,
the best model written with torch.save once per epoch when the validation loss improves, and a
log line every 25 steps.

Planted: nothing (a control for false alarms: D701 'checkpoint inside the step' must not fire
for a once-per-epoch save, and no warnings). --fixed: the same program.
"""

import os
import tempfile

import torch
from torch import nn


def make_model():
    return nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Dropout(0.1), nn.Linear(512, 512),
                         nn.ReLU(), nn.Linear(512, 8))


@torch.inference_mode()
def validate(model, x, y):
    model.eval()
    loss = nn.functional.cross_entropy(model(x), y)
    model.train()
    return loss.item()


def main():
    torch.manual_seed(0)
    x, y = torch.randn(8000, 64), torch.randint(0, 8, (8000,))
    xtr, ytr, xva, yva = x[:6400], y[:6400], x[6400:], y[6400:]
    model = make_model()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    epochs, batch = 4, 64
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs * len(xtr) // batch)
    best, path = float("inf"), os.path.join(tempfile.mkdtemp(), "best.pt")
    step = 0
    for epoch in range(epochs):
        model.train()
        for idx in torch.randperm(len(xtr)).split(batch):
            loss = nn.functional.cross_entropy(model(xtr[idx]), ytr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            if step % 25 == 0:
                print(f"step {step}: loss {loss.item():.4f}")
        val = validate(model, xva, yva)
        if val < best:
            best = val
            torch.save({"model": model.state_dict(), "epoch": epoch}, path)
        print(f"epoch {epoch}: val {val:.4f} (best {best:.4f})")


if __name__ == "__main__":
    main()
