"""Validation on a wall-clock schedule, as long-running jobs do: the config says
`val_interval_minutes: 0.5`, and the loop validates when enough time has passed since the last
validation (`time.monotonic() - last_val`). A small transformer classifier on generated
sequences.

Planted: the comparison mixes units: `time.monotonic() - last_val >= cfg["val_interval_minutes"]`
compares SECONDS with 0.5, so validation (2048 sequences) runs every half second instead of
every 30 s: about every few steps. --fixed: the interval is converted to seconds (`* 60`).
"""

import sys
import time

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
CFG = {"val_interval_minutes": 0.5, "batch_size": 32, "epochs": 2}

if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randint(0, 200, (4096, 32))
    y = (x[:, 0] % 3)
    xv = torch.randint(0, 200, (2048, 32))
    yv = xv[:, 0] % 3
    model = nn.Sequential(nn.Embedding(200, 96),
                          nn.TransformerEncoder(nn.TransformerEncoderLayer(96, 4, 192,
                                                                           batch_first=True), 2),
                          nn.Flatten(), nn.Linear(32 * 96, 3))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    interval = CFG["val_interval_minutes"] * (60 if FIXED else 1)
    last_val = time.monotonic()
    bs = CFG["batch_size"]
    for epoch in range(CFG["epochs"]):
        for start in range(0, len(x), bs):
            loss = nn.functional.cross_entropy(model(x[start : start + bs]), y[start : start + bs])
            opt.zero_grad()
            loss.backward()
            opt.step()
            if time.monotonic() - last_val >= interval:
                model.eval()
                with torch.no_grad():
                    acc = sum((model(xv[i : i + 256]).argmax(1) == yv[i : i + 256]).sum().item()
                              for i in range(0, len(xv), 256)) / len(xv)
                model.train()
                print("val acc", acc)
                last_val = time.monotonic()
        print("epoch", epoch, loss.item())
