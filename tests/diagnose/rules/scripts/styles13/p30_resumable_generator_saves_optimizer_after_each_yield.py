"""A "resumable" training generator: after each step it yields control back to a scheduler (for
preemption), and before yielding it writes a resume file so the job can continue where it
stopped: the optimizer's state (Adam moments) and the step counter.

Planted: the resume file is written with `torch.save({"optimizer": opt.state_dict(), "step":
step}, path)` before every yield, i.e. after every step (two moment tensors per parameter of
a 3M-parameter model, every step). --fixed: the resume file is written every 200 steps and at
the end of each epoch.
"""

import os
import sys
import tempfile

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def training(model, opt, x, y, path, epochs=3):
    step = 0
    for epoch in range(epochs):
        order = torch.randperm(len(x)).split(64)
        for k, idx in enumerate(order):
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if not FIXED or step % 200 == 0 or k == len(order) - 1:
                torch.save({"optimizer": opt.state_dict(), "step": step}, path)
            yield epoch, float(loss)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(4096, 256)
    y = x[:, :10].argmax(1)
    path = os.path.join(tempfile.mkdtemp(), "resume.pt")
    last = None
    for epoch, loss in training(model, opt, x, y, path):
        if epoch != last:
            print("epoch", epoch, loss)
            last = epoch
