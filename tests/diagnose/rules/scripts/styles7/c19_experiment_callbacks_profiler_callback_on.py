"""An `Experiment` class with a config dataclass and a list of callbacks built from the config
(`build_callbacks(cfg)`); a recurrent text classifier (LSTM) trained on synthetic sequences.

Planted: `cfg.profile` defaults to True, so `ProfilerCallback` wraps the whole fit in
`torch.profiler.profile(record_shapes=True)` and exports a summary at the end (meant for a
one-off investigation). --fixed: profile=False.
"""

import sys
from dataclasses import dataclass

import torch
import torch.profiler
from torch import nn

FIXED = "--fixed" in sys.argv


@dataclass
class Config:
    epochs: int = 3
    batch_size: int = 64
    lr: float = 2e-3
    profile: bool = not FIXED


class ProfilerCallback:
    def on_fit_start(self, exp):
        self.prof = torch.profiler.profile(record_shapes=True)
        self.prof.__enter__()

    def on_fit_end(self, exp):
        self.prof.__exit__(None, None, None)
        print(self.prof.key_averages().table(row_limit=5))


class LossPrinter:
    def on_fit_start(self, exp):
        pass

    def on_fit_end(self, exp):
        print("final loss", exp.last_loss)


def build_callbacks(cfg):
    callbacks = [LossPrinter()]
    if cfg.profile:
        callbacks.append(ProfilerCallback())
    return callbacks


class LSTMClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(200, 32)
        self.lstm = nn.LSTM(32, 64, batch_first=True)
        self.fc = nn.Linear(64, 3)

    def forward(self, x):
        out, _ = self.lstm(self.emb(x))
        return self.fc(out[:, -1])


class Experiment:
    def __init__(self, cfg):
        self.cfg, self.callbacks = cfg, build_callbacks(cfg)
        self.model = LSTMClassifier()
        self.opt = torch.optim.Adam(self.model.parameters(), lr=cfg.lr)
        g = torch.Generator().manual_seed(0)
        self.x = torch.randint(0, 200, (4000, 24), generator=g)
        self.y = self.x[:, -3:].sum(1) % 3

    def fit(self):
        for cb in self.callbacks:
            cb.on_fit_start(self)
        for _ in range(self.cfg.epochs):
            for idx in torch.randperm(len(self.x)).split(self.cfg.batch_size):
                loss = nn.functional.cross_entropy(self.model(self.x[idx]), self.y[idx])
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            self.last_loss = loss.item()
        for cb in self.callbacks:
            cb.on_fit_end(self)


if __name__ == "__main__":
    torch.manual_seed(0)
    Experiment(Config()).fit()
