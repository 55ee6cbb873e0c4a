"""Everything built from short spec strings, the way a sweep's command line carries them:
`"mlp:in=64,hidden=256x3,out=8"` for the model and `"RMSprop:lr=1e-3,alpha=0.9,foreach=0"`
for the optimizer, parsed by small factories (`getattr(torch.optim, name)(params, **kwargs)`,
no `eval`).

Planted: the optimizer spec carries `foreach=0` (copied from a reproducibility note): RMSprop
updates its 8 parameter tensors one at a time, several small ops each, every step.
--fixed: `foreach=1`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
MODEL_SPEC = "mlp:in=64,hidden=96x12,out=8"
OPTIM_SPEC = "RMSprop:lr=1e-3,alpha=0.9,foreach=" + ("1" if FIXED else "0")


def parse(spec):
    name, _, args = spec.partition(":")
    return name, dict(kv.split("=") for kv in args.split(","))


def build_model(spec):
    _, args = parse(spec)
    width, depth = (int(v) for v in args["hidden"].split("x"))
    layers, last = [], int(args["in"])
    for _ in range(depth):
        layers += [nn.Linear(last, width), nn.Tanh()]
        last = width
    return nn.Sequential(*layers, nn.Linear(last, int(args["out"])))


def build_optimizer(spec, params):
    name, args = parse(spec)
    kwargs = {k: (bool(int(v)) if k == "foreach" else float(v)) for k, v in args.items()}
    return getattr(torch.optim, name)(params, **kwargs)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = build_model(MODEL_SPEC)
    opt = build_optimizer(OPTIM_SPEC, model.parameters())
    x = torch.randn(4096, 64)
    y = x[:, :8].argmax(1)
    for epoch in range(3):
        for idx in torch.randperm(len(x)).split(64):
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
