"""Callbacks registered by event name in a module-level registry (decorator style); the
`on_batch_end` checkpoint callback was meant to fire every 1000 batches but its interval is read
from a config key that does not exist, so it falls back to 1.

Planted: torch.save of model + optimizer every step. --fixed: the key exists (1000).
"""

import io
import os
import sys
import tempfile

import torch
from torch import nn

CALLBACKS = {}


def on(event):
    def register(fn):
        CALLBACKS.setdefault(event, []).append(fn)
        return fn
    return register


def fire(event, state):
    for fn in CALLBACKS.get(event, []):
        fn(state)


CONFIG = {"lr": 3e-4, "batch": 64}
if "--fixed" in sys.argv:
    CONFIG["checkpoint_every"] = 1000


@on("batch_end")
def checkpoint(state):
    if state["step"] % CONFIG.get("checkpoint_every", 1) == 0:
        path = os.path.join(state["dir"], "last.pt")
        torch.save({"model": state["model"].state_dict(), "opt": state["opt"].state_dict(),
                    "step": state["step"]}, path)


@on("epoch_end")
def report(state):
    print(f"epoch {state['epoch']} loss {state['loss']:.4f}")


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(128, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 128))
    opt = torch.optim.Adam(model.parameters(), lr=CONFIG["lr"])
    data = torch.randn(16384, 128)
    with tempfile.TemporaryDirectory() as tmp:
        state = {"model": model, "opt": opt, "dir": tmp, "step": 0}
        for epoch in range(3):
            for xb in data.split(CONFIG["batch"]):
                loss = (model(xb) - xb).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                state["step"] += 1
                fire("batch_end", state)
            state.update(epoch=epoch, loss=loss.item())
            fire("epoch_end", state)


if __name__ == "__main__":
    main()
