"""A training loop written as a state machine (`while state != "done"`, transitions returned by
handler functions) that is "resumable": the machine's state is saved so a killed job restarts
where it stopped.

Planted: the resume state (model, optimizer, machine context) is written with `torch.save` on
every transition, that is after every training step.
--fixed: saved on the "epoch_end" transition only.
"""

import os
import sys
import tempfile

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
RESUME = os.path.join(tempfile.gettempdir(), "r28_resume.pt")


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(4096, 128)
    y = (x[:, :5].sum(1) > 0).long()
    model = nn.Sequential(
        nn.Linear(128, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 2)
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    ctx = {"epoch": 0, "batches": None}

    def start_epoch():
        ctx["batches"] = iter(torch.randperm(len(x)).split(128))
        return "step"

    def step():
        idx = next(ctx["batches"], None)
        if idx is None:
            return "epoch_end"
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        ctx["loss"] = float(loss)
        return "step"

    def epoch_end():
        print("epoch", ctx["epoch"], ctx["loss"])
        ctx["epoch"] += 1
        return "done" if ctx["epoch"] == 3 else "start_epoch"

    handlers = {"start_epoch": start_epoch, "step": step, "epoch_end": epoch_end}
    state = "start_epoch"
    while state != "done":
        state = handlers[state]()
        if not FIXED or state == "epoch_end":
            saved = {k: v for k, v in ctx.items() if k != "batches"}
            torch.save(
                {
                    "model": model.state_dict(),
                    "opt": opt.state_dict(),
                    "ctx": saved,
                    "state": state,
                },
                RESUME,
            )
