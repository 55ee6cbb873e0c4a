"""An asyncio program: the training loop is a coroutine that yields to the event loop after
every step (`await asyncio.sleep(0)`, so a status task can report progress), and an
`evaluate()` coroutine scores a held-out split after every epoch. A tabular MLP on generated
data.

Planted: `evaluate()` runs the model on 8192 held-out rows without `torch.no_grad()`: every
validation forward records the autograd graph. --fixed: `evaluate()` runs under
`torch.no_grad()`.
"""

import asyncio
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


async def evaluate(model, xv, yv):
    model.eval()
    correct = 0
    for start in range(0, len(xv), 512):
        if FIXED:
            with torch.no_grad():
                logits = model(xv[start : start + 512])
        else:
            logits = model(xv[start : start + 512])
        correct += (logits.argmax(1) == yv[start : start + 512]).sum()
        await asyncio.sleep(0)
    model.train()
    return correct.item() / len(xv)


async def status(progress):
    while not progress["done"]:
        await asyncio.sleep(0.5)


async def train(progress):
    torch.manual_seed(0)
    x = torch.randn(4096, 96)
    y = (x[:, :8].sum(1) > 0).long()
    xv = torch.randn(8192, 96)
    yv = (xv[:, :8].sum(1) > 0).long()
    model = nn.Sequential(nn.Linear(96, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Dropout(0.1), nn.Linear(512, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(4):
        perm = torch.randperm(len(x))
        for start in range(0, len(x), 128):
            idx = perm[start : start + 128]
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            progress["step"] += 1
            await asyncio.sleep(0)
        print("epoch", epoch, "val acc", await evaluate(model, xv, yv))
    progress["done"] = True


async def main():
    progress = {"step": 0, "done": False}
    await asyncio.gather(train(progress), status(progress))


if __name__ == "__main__":
    asyncio.run(main())
