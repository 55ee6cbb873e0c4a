"""A trainer that is an iterator: `Trainer.__iter__` returns itself and `__next__` runs one
optimisation step and returns that step's outputs, so the user's loop is `for out in trainer:`
and the loop body decides what to keep. A small autoencoder on generated vectors.

Planted: `__next__` returns the reconstruction and the loss as they are (with their autograd
graphs), and the user's loop keeps every step's outputs in `history` to plot them at the end:
each kept step keeps its whole graph (activations included) alive. --fixed: `__next__`
returns detached outputs.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Trainer:
    def __init__(self, model, data, steps):
        self.model, self.data, self.steps = model, data, steps
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.step = 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.step == self.steps:
            raise StopIteration
        batch = self.data[torch.randint(0, len(self.data), (256,))]
        recon = self.model(batch)
        loss = nn.functional.mse_loss(recon, batch)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.step += 1
        if FIXED:
            return {"step": self.step, "loss": loss.detach(), "recon": recon.detach()[:4]}
        return {"step": self.step, "loss": loss, "recon": recon[:4]}


if __name__ == "__main__":
    torch.manual_seed(0)
    data = torch.randn(10000, 256)
    model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 64), nn.ReLU(),
                          nn.Linear(64, 1024), nn.ReLU(), nn.Linear(1024, 256))
    history = []
    for out in Trainer(model, data, steps=600):
        history.append(out)
        if out["step"] % 200 == 0:
            print("step", out["step"], float(out["loss"]))
    print("kept", len(history))
