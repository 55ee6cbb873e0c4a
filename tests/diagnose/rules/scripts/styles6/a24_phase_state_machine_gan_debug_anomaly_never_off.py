"""A GAN trained by a phase state machine: `Phase.DEBUG` (a few steps with checks on),
`Phase.TRAIN`, `Phase.SAMPLE` (every 200 steps), `Phase.STOP`, with `enter_<phase>` methods
called on each transition. A DCGAN-like pair on 16x16 synthetic rings.

Planted: `enter_debug` turns on `torch.autograd.set_detect_anomaly(True)`; `enter_train` was
meant to turn it off but only flips the trainer's own `self.debug` flag: anomaly detection
stays on for the whole run. --fixed: `enter_train` turns it off.
"""

import enum
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Phase(enum.Enum):
    DEBUG = "debug"
    TRAIN = "train"
    SAMPLE = "sample"
    STOP = "stop"


def rings(n):
    yy, xx = torch.meshgrid(torch.arange(16.0), torch.arange(16.0), indexing="ij")
    r = torch.rand(n, 1, 1) * 4 + 3
    d = ((xx - 7.5) ** 2 + (yy - 7.5) ** 2).sqrt()
    return (torch.exp(-((d - r) ** 2)) * 2 - 1)[:, None]


class GANMachine:
    def __init__(self):
        self.G = nn.Sequential(nn.Linear(32, 64 * 4 * 4), nn.Unflatten(1, (64, 4, 4)), nn.ReLU(),
                               nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.BatchNorm2d(32),
                               nn.ReLU(), nn.ConvTranspose2d(32, 1, 4, 2, 1), nn.Tanh())
        self.D = nn.Sequential(nn.Conv2d(1, 32, 4, 2, 1), nn.LeakyReLU(0.2),
                               nn.Conv2d(32, 64, 4, 2, 1), nn.LeakyReLU(0.2), nn.Flatten(),
                               nn.Linear(64 * 4 * 4, 1))
        self.opt_g = torch.optim.Adam(self.G.parameters(), 2e-4, betas=(0.5, 0.999))
        self.opt_d = torch.optim.Adam(self.D.parameters(), 2e-4, betas=(0.5, 0.999))
        self.data, self.step, self.debug = rings(8192), 0, False
        self.phase = None
        self.go(Phase.DEBUG)

    def go(self, phase):
        self.phase = phase
        getattr(self, f"enter_{phase.value}", lambda: None)()

    def enter_debug(self):
        self.debug = True
        torch.autograd.set_detect_anomaly(True)

    def enter_train(self):
        self.debug = False
        if FIXED:
            torch.autograd.set_detect_anomaly(False)

    def enter_sample(self):
        with torch.no_grad():
            self.G.eval()
            print(self.step, float(self.G(torch.randn(16, 32)).mean()))
            self.G.train()
        self.go(Phase.TRAIN)

    def train_step(self):
        real = self.data[torch.randint(0, len(self.data), (64,))]
        fake = self.G(torch.randn(64, 32))
        ones, zeros = torch.ones(64, 1), torch.zeros(64, 1)
        bce = nn.functional.binary_cross_entropy_with_logits
        d_loss = bce(self.D(real), ones) + bce(self.D(fake.detach()), zeros)
        self.opt_d.zero_grad()
        d_loss.backward()
        self.opt_d.step()
        g_loss = bce(self.D(fake), ones)
        self.opt_g.zero_grad()
        g_loss.backward()
        self.opt_g.step()
        self.step += 1

    def run(self, total=1000):
        while self.phase is not Phase.STOP:
            self.train_step()
            if self.phase is Phase.DEBUG and self.step >= 3:
                self.go(Phase.TRAIN)
            elif self.step % 200 == 0:
                self.go(Phase.SAMPLE)
            if self.step >= total:
                self.go(Phase.STOP)


if __name__ == "__main__":
    torch.manual_seed(0)
    GANMachine().run()
