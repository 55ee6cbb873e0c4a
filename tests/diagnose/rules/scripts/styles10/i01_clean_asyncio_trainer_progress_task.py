"""Clean: an asyncio training coroutine that yields to the event loop after every step so a
status task can report progress, with an `evaluate()` coroutine under `torch.no_grad()` in
`eval()` mode once per epoch. A tabular MLP on generated data.

No planted problem; `--fixed` changes nothing (kept for the bench's control run).
"""

import asyncio

import torch
from torch import nn


async def evaluate(model, xv, yv):
    model.eval()
    with torch.no_grad():
        acc = (model(xv).argmax(1) == yv).float().mean().item()
    model.train()
    return acc


async def status(progress):
    while not progress["done"]:
        await asyncio.sleep(0.5)
        print("step", progress["step"])


async def train(progress):
    torch.manual_seed(0)
    x = torch.randn(8192, 96)
    y = (x[:, :8].sum(1) > 0).long()
    xv, yv = x[-1024:], y[-1024:]
    model = nn.Sequential(nn.Linear(96, 512), nn.ReLU(), nn.Dropout(0.1), nn.Linear(512, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(3):
        perm = torch.randperm(7168)
        for start in range(0, 7168, 128):
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
