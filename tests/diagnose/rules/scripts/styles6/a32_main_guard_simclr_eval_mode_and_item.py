"""SimCLR on synthetic image pairs, written entirely under `if __name__ == "__main__":`: two
augmented views per image, a BatchNorm convnet + projection head, NT-Xent with a learnable
temperature. Two problems are planted, as they come together in quick experiments:

1. `model.eval()` is called before the loop "to make the augmentation deterministic" (the
   author confused it with seeding): BatchNorm trains with frozen running statistics.
2. the temperature and the top-1 pair accuracy are read with `.item()` on every step for the
   progress line.

--fixed: no eval(), the values read every 100 steps.
"""

import sys

import torch
from torch import nn

if __name__ == "__main__":
    FIXED = "--fixed" in sys.argv
    torch.manual_seed(0)
    images = torch.randn(4096, 3, 16, 16)
    encoder = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                            nn.Conv2d(32, 64, 3, 2, 1), nn.BatchNorm2d(64), nn.ReLU(),
                            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 64),
                            nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 32))
    log_temp = nn.Parameter(torch.tensor(-2.0))
    opt = torch.optim.Adam([*encoder.parameters(), log_temp], lr=1e-3)
    if not FIXED:
        encoder.eval()
    step = 0
    for epoch in range(2):
        for idx in torch.randperm(len(images)).split(128):
            x = images[idx]
            v1 = x.flip(-1) * (0.8 + 0.4 * torch.rand(len(x), 1, 1, 1))
            v2 = x + 0.1 * torch.randn_like(x)
            z = nn.functional.normalize(encoder(torch.cat([v1, v2])), dim=1)
            sim = z @ z.T / log_temp.exp()
            sim.fill_diagonal_(float("-inf"))
            n = len(x)
            target = torch.cat([torch.arange(n, 2 * n), torch.arange(n)])
            loss = nn.functional.cross_entropy(sim, target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if not FIXED or step % 100 == 0:
                temp = log_temp.exp().item()
                acc = (sim.argmax(1) == target).float().mean().item()
                print(f"\rstep {step} loss {loss.item():.3f} T={temp:.3f} acc={acc:.2f}", end="")
            step += 1
