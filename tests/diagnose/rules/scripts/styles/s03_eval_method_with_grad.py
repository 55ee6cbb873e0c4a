"""An Experiment class; its validate() method runs the validation set with autograd on.

Planted: validate() has no torch.no_grad()/inference_mode. --fixed: @torch.inference_mode().
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def maybe_inference(fn):
    return torch.inference_mode()(fn) if FIXED else fn


class Experiment:
    def __init__(self):
        torch.manual_seed(0)
        self.net = nn.Sequential(nn.Linear(96, 384), nn.ReLU(), nn.Dropout(0.2),
                                 nn.Linear(384, 384), nn.ReLU(), nn.Linear(384, 5))
        self.opt = torch.optim.AdamW(self.net.parameters(), lr=3e-4, foreach=True)
        data = torch.randn(6000, 96)
        labels = data[:, :5].argmax(1)
        self.train_set = (data[:1000], labels[:1000])
        self.val_set = (data[1000:], labels[1000:])

    def train_epoch(self):
        self.net.train()
        xs, ys = self.train_set
        perm = torch.randperm(len(xs))
        for i in range(0, len(xs), 100):
            idx = perm[i:i + 100]
            loss = nn.functional.cross_entropy(self.net(xs[idx]), ys[idx])
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()

    @maybe_inference
    def validate(self):
        self.net.eval()
        xs, ys = self.val_set
        hits = torch.zeros((), dtype=torch.long)
        for i in range(0, len(xs), 250):
            hits += (self.net(xs[i:i + 250]).argmax(1) == ys[i:i + 250]).sum()
        return hits / len(xs)

    def run(self, epochs):
        for epoch in range(epochs):
            self.train_epoch()
            acc = self.validate()
            print(f"epoch {epoch}: val acc {float(acc):.3f}")


if __name__ == "__main__":
    Experiment().run(6)
