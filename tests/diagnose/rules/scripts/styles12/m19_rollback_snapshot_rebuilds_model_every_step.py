"""Training with rollback on loss spikes: before each step a snapshot of the model is kept, and
if the step's loss exceeds twice its running average the model is restored from the snapshot
and the learning rate is halved. A transformer-encoder-like classifier (two layers).

Planted: the snapshot is taken every step by building a new model (`make_model()`) and
`load_state_dict(model.state_dict())` into it: a full model construction (parameter
initialisation included) and a copy of every weight each step, for a rollback that almost never
happens. --fixed: one snapshot model built once; each step copies the weights into it in place
with `torch._foreach_copy_`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def make_model():
    layer = nn.TransformerEncoderLayer(64, 4, 256, dropout=0.0, batch_first=True)
    return nn.Sequential(
        nn.TransformerEncoder(layer, 2, enable_nested_tensor=False),
        nn.Flatten(),
        nn.Linear(64 * 16, 2),
    )


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(4000, 16, 64)
    y = (x[:, 0, :4].sum(1) > 0).long()
    model = make_model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    snapshot = make_model() if FIXED else None
    running = None
    for epoch in range(3):
        for idx in torch.randperm(len(x)).split(64):
            if FIXED:
                torch._foreach_copy_(list(snapshot.parameters()), list(model.parameters()))
            else:
                snapshot = make_model()
                snapshot.load_state_dict(model.state_dict())
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            value = float(loss)
            if running is not None and value > 2 * running:
                model.load_state_dict(snapshot.state_dict())
                for group in opt.param_groups:
                    group["lr"] /= 2
            running = value if running is None else 0.9 * running + 0.1 * value
        print("epoch", epoch, running)
