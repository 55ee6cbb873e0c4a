"""Logs every step through the logging module (a file handler and the console).

Planted: log.info(...) with a formatted loss on every step. --fixed: every 100 steps.
"""

import logging
import os
import sys
import tempfile

import torch
from torch import nn

log = logging.getLogger("trainer")


def setup_logging(directory):
    log.setLevel(logging.INFO)
    log.propagate = False
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    for handler in (logging.FileHandler(os.path.join(directory, "train.log")),
                    logging.StreamHandler(sys.stderr)):
        handler.setFormatter(fmt)
        log.addHandler(handler)


def main():
    log_every = 100 if "--fixed" in sys.argv else 1
    torch.manual_seed(0)
    x = torch.randn(2048, 16)
    y = x @ torch.randn(16, 1)
    reg = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))
    opt = torch.optim.SGD(reg.parameters(), lr=0.01)
    with tempfile.TemporaryDirectory() as tmp:
        setup_logging(tmp)
        global_step = 0
        for epoch in range(4):
            for xb, yb in zip(x.split(32), y.split(32)):
                opt.zero_grad()
                loss = nn.functional.mse_loss(reg(xb), yb)
                loss.backward()
                opt.step()
                global_step += 1
                if global_step % log_every == 0:
                    log.info("epoch=%d step=%d loss=%.5f grad_norm=%.4f lr=%g", epoch, global_step,
                             loss, sum(p.grad.norm() for p in reg.parameters()),
                             opt.param_groups[0]["lr"])
        for handler in list(log.handlers):
            handler.close()
            log.removeHandler(handler)


if __name__ == "__main__":
    main()
