"""An image-denoising model with EMA weights (`torch.optim.swa_utils.AveragedModel` with an
exponential `multi_avg_fn`). A `setup_debugging(cfg)` helper, run once at start-up, turns on
anomaly detection when `cfg.debug` is set; the dataclass config defaults `debug` to True.

Planted: torch.autograd.set_detect_anomaly(True) for the whole run. --fixed: debug=False.
"""

import sys
from dataclasses import dataclass

import torch
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn


@dataclass
class Config:
    epochs: int = 2
    batch_size: int = 32
    lr: float = 2e-3
    ema_decay: float = 0.999
    debug: bool = True


def setup_debugging(cfg):
    torch.autograd.set_detect_anomaly(cfg.debug)


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(32, 1, 3, padding=1))

    def forward(self, x):
        return x - self.net(x)


def main():
    cfg = Config(debug="--fixed" not in sys.argv)
    setup_debugging(cfg)
    torch.manual_seed(0)
    clean = torch.rand(1024, 1, 24, 24)
    model = Denoiser()
    ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(cfg.ema_decay))
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    for epoch in range(cfg.epochs):
        for idx in torch.randperm(len(clean)).split(cfg.batch_size):
            noisy = clean[idx] + 0.1 * torch.randn_like(clean[idx])
            loss = nn.functional.mse_loss(model(noisy), clean[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            ema.update_parameters(model)
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
