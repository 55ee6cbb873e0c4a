"""Training with the `logging` module configured at start (a file handler with a formatter and a
stream handler at WARNING), the per-step debug context logged at INFO to the file: the step, the
loss and a peek at the first outputs. A small MLP on generated tabular data.

Planted: the INFO line is written every step with the output tensor itself as an argument
(`logger.info("step %d loss %s out %s", step, loss, out[:4])`), so every step formats two tensor
reprs and writes a line to the file. --fixed: the INFO line every 200 steps.
"""

import logging
import os
import sys
import tempfile

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
LOG_EVERY = 200 if FIXED else 1

if __name__ == "__main__":
    torch.manual_seed(0)
    folder = tempfile.mkdtemp()
    logger = logging.getLogger("train")
    logger.setLevel(logging.INFO)
    handler = logging.FileHandler(os.path.join(folder, "train.log"))
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    console = logging.StreamHandler()
    console.setLevel(logging.WARNING)
    logger.addHandler(console)
    x = torch.randn(8000, 16)
    y = (x[:, 0] * x[:, 1] > 0).long()
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    step = 0
    for epoch in range(3):
        perm = torch.randperm(len(x))
        for start in range(0, len(x), 32):
            idx = perm[start : start + 32]
            out = model(x[idx])
            loss = nn.functional.cross_entropy(out, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % LOG_EVERY == 0:
                logger.info("step %d loss %s out %s", step, loss, out[:4])
            step += 1
        logger.warning("epoch %d done", epoch)
    handler.close()
