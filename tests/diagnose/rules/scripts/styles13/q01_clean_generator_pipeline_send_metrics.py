"""Clean: training written as generators and a coroutine: `batches()` slices the in-memory
tensors by a permutation each epoch, `train()` yields detached losses, and a metrics coroutine
receives them and keeps a running mean as a Python float. Evaluation once per epoch under
`inference_mode` in `eval()` mode. (`--fixed` changes nothing.)
"""

import torch
from torch import nn


def batches(x, y, epochs, size=128):
    for _ in range(epochs):
        for idx in torch.randperm(len(x)).split(size):
            yield x[idx], y[idx]
        yield None  # end of epoch


def train(model, opt, stream):
    for batch in stream:
        if batch is None:
            yield None
            continue
        x, y = batch
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        yield loss.detach()


def running_mean():
    total, count = 0.0, 0
    while True:
        value = yield (total / max(count, 1))
        if value is not None:
            total, count = total + float(value), count + 1


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(8192, 32)
    y = (x[:, 0] + x[:, 1] > 0).long()
    model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Dropout(0.1), nn.Linear(256, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
    meter = running_mean()
    next(meter)
    for loss in train(model, opt, batches(x[:6144], y[:6144], 4)):
        if loss is not None:
            meter.send(loss)
            continue
        model.eval()
        with torch.inference_mode():
            acc = (model(x[6144:]).argmax(1) == y[6144:]).float().mean()
        model.train()
        print("epoch mean loss", meter.send(None), "val acc", float(acc))
