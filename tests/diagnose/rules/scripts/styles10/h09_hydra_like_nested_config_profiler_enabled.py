"""A Hydra-like program: a nested config (YAML text parsed into attribute-access dicts, with
`defaults` merged and `key=value` overrides from the command line) selects the model, the
optimizer and the debug options, and `main(cfg)` is wrapped by a `@hydra_main` decorator
written by the author. A GRU classifier on generated sequences.

Planted: the config's `debug.profiler.enabled: true` (left from a profiling session): the whole
training runs inside `torch.profiler.profile(record_shapes=True, with_stack=True)`, which
records every op of every step. --fixed: the override `debug.profiler.enabled=false`.
"""

import contextlib
import functools
import sys

import torch
from torch import nn

CONFIG = """
model: {hidden: 128, layers: 1}
optim: {lr: 0.002}
trainer: {epochs: 2, batch_size: 64}
debug: {profiler: {enabled: true, record_shapes: true, with_stack: true}}
"""


class Node(dict):
    __getattr__ = dict.__getitem__


def parse(text):
    def value(v):
        v = v.strip()
        if v.startswith("{"):
            return block(v[1:-1])
        if v in ("true", "false"):
            return v == "true"
        return float(v) if "." in v else int(v)

    def block(body):
        node, depth, key, start = Node(), 0, None, 0
        for i, ch in enumerate(body + ","):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == ":" and depth == 0 and key is None:
                key, start = body[start:i].strip(), i + 1
            elif ch == "," and depth == 0:
                node[key] = value(body[start:i])
                key, start = None, i + 1
        return node

    return Node({line.split(":", 1)[0]: value(line.split(":", 1)[1])
                 for line in text.strip().splitlines()})


def override(cfg, arg):
    path, raw = arg.split("=")
    *parents, leaf = path.split(".")
    for p in parents:
        cfg = cfg[p]
    cfg[leaf] = raw == "true" if raw in ("true", "false") else raw


def hydra_main(fn):
    @functools.wraps(fn)
    def run():
        cfg = parse(CONFIG)
        overrides = [a for a in sys.argv[1:] if "=" in a]
        if "--fixed" in sys.argv:
            overrides.append("debug.profiler.enabled=false")
        for arg in overrides:
            override(cfg, arg)
        return fn(cfg)

    return run


class Classifier(nn.Module):
    def __init__(self, hidden, layers):
        super().__init__()
        self.rnn = nn.GRU(16, hidden, layers, batch_first=True)
        self.head = nn.Linear(hidden, 4)

    def forward(self, x):
        return self.head(self.rnn(x)[0][:, -1])


@hydra_main
def main(cfg):
    torch.manual_seed(0)
    x = torch.randn(4096, 24, 16)
    y = (x[:, :, 0].sum(1) > 0).long() + 2 * (x[:, :, 1].sum(1) > 0).long()
    model = Classifier(cfg.model.hidden, cfg.model.layers)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.optim.lr)
    prof = cfg.debug.profiler
    profiler = (torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                       record_shapes=prof.record_shapes,
                                       with_stack=prof.with_stack)
                if prof.enabled else contextlib.nullcontext())
    bs = cfg.trainer.batch_size
    with profiler:
        for epoch in range(cfg.trainer.epochs):
            for start in range(0, len(x), bs):
                loss = nn.functional.cross_entropy(model(x[start : start + bs]),
                                                   y[start : start + bs])
                opt.zero_grad()
                loss.backward()
                opt.step()
            print("epoch", epoch, loss.item())


if __name__ == "__main__":
    main()
