"""CLEAN: an EMA of the weights kept the right way: a shadow copy made once, updated in place
every step with torch._foreach_lerp_ under no_grad; evaluation of the EMA model under
inference_mode once per epoch. Nothing is planted (`--fixed` changes nothing).
"""

import copy

import torch
from torch import nn


class EMA:
    def __init__(self, model, decay=0.999):
        self.decay = decay
        self.shadow = copy.deepcopy(model).eval()
        for p in self.shadow.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        torch._foreach_lerp_(list(self.shadow.parameters()), list(model.parameters()),
                             1 - self.decay)


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 4))
    ema = EMA(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(12800, 32), torch.randint(0, 4, (12800,))
    vx, vy = torch.randn(1024, 32), torch.randint(0, 4, (1024,))
    for epoch in range(3):
        for xb, yb in zip(x.split(64), y.split(64)):
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            ema.update(model)
        with torch.inference_mode():
            acc = (ema.shadow(vx).argmax(1) == vy).float().mean()
        print(f"epoch {epoch} ema acc {acc.item():.3f}")


if __name__ == "__main__":
    main()
