"""CLEAN: a small U-Net-like segmenter with EMA weights kept in a second model updated by
`torch._foreach_lerp_` each step, detached running metrics, evaluation of the EMA model per
epoch under no_grad in eval mode. Nothing is planted (`--fixed` changes nothing).
"""

import copy

import torch
from torch import nn


class TinySeg(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.mid = nn.Sequential(nn.Conv2d(16, 32, 3, padding=1), nn.ReLU())
        self.up = nn.ConvTranspose2d(32, 16, 2, stride=2)
        self.head = nn.Conv2d(32, 1, 1)

    def forward(self, x):
        s = self.down(x)
        m = self.mid(nn.functional.max_pool2d(s, 2))
        return self.head(torch.cat([self.up(m), s], 1))


def main():
    torch.manual_seed(0)
    images = torch.rand(512, 1, 32, 32)
    masks = (images > 0.6).float()
    model = TinySeg()
    ema = copy.deepcopy(model).eval()
    for p in ema.parameters():
        p.requires_grad_(False)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        running = torch.zeros(())
        for idx in torch.randperm(512).split(16):
            loss = nn.functional.binary_cross_entropy_with_logits(model(images[idx]), masks[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                torch._foreach_lerp_(list(ema.parameters()), list(model.parameters()), 0.01)
            running += loss.detach()
        with torch.no_grad():
            val = nn.functional.binary_cross_entropy_with_logits(ema(images[:128]), masks[:128])
        print(epoch, float(running) / 32, float(val))


if __name__ == "__main__":
    main()
