"""A "preemption-safe" training script as written for a spot-instance cluster: the entry point
sits under `if __name__ == "__main__":` with `multiprocessing.freeze_support()` and
`set_start_method("spawn")`, a SIGTERM handler sets a flag, and a checkpoint helper writes the
model, optimizer and step atomically (temp file + `os.replace`). A small ResNet-ish CNN with a wide
classifier head (2M parameters, Adam: a 25 MB checkpoint).

Planted: the helper is called after every optimizer step ("so no work is lost when the node is
reclaimed"), not when the SIGTERM flag is set or every N minutes. --fixed: saved when the flag
is set and at the end.
"""

import multiprocessing as mp
import os
import signal
import sys
import tempfile

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
PREEMPTED = False


def on_sigterm(signum, frame):
    global PREEMPTED
    PREEMPTED = True


def save_atomically(path, model, opt, step):
    tmp = path + ".tmp"
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step}, tmp)
    os.replace(tmp, path)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(),
                                  nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c))

    def forward(self, x):
        return torch.relu(x + self.body(x))


def run(ckpt_path):
    torch.manual_seed(0)
    x = torch.randn(3000, 3, 16, 16)
    y = (x[:, 1].mean((1, 2)) > 0).long()
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), Block(16), Block(16),
                          nn.Flatten(), nn.Linear(16 * 16 * 16, 512), nn.ReLU(),
                          nn.Linear(512, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(200):
        idx = torch.randint(0, len(x), (32,))
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if not FIXED or PREEMPTED:
            save_atomically(ckpt_path, model, opt, step)
        if PREEMPTED:
            return
        if step % 50 == 0:
            print(step, float(loss))
    save_atomically(ckpt_path, model, opt, step)


if __name__ == "__main__":
    mp.freeze_support()
    mp.set_start_method("spawn", force=True)
    signal.signal(signal.SIGTERM, on_sigterm)
    with tempfile.TemporaryDirectory() as tmp:
        run(os.path.join(tmp, "last.pt"))
