"""Saves a full checkpoint after every optimizer step."""

import os
import tempfile

import torch
from torch import nn


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    out_dir = tempfile.mkdtemp(prefix="ckpt_")
    for step in range(40):
        x = torch.randn(32, 512)
        y = torch.randint(0, 10, (32,))
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "step": step}, os.path.join(out_dir, "last.pt"))


if __name__ == "__main__":
    main()
