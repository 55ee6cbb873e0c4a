"""A script split over two files in one folder: the dataset and model are imported from the
sibling `e05_spectrogram_utils.py`; this file holds the configuration, the loop and the
evaluation. Keyword-spotting-like clips turned into log spectrograms.

Planted: the sibling's `ClipDataset.__getitem__` frames and windows each clip in a pure-Python
double loop (a float per sample) before the FFT, so loading a batch costs more than training on
it. --fixed: the dataset frames with `unfold` and multiplies by a Hann window tensor.
"""

import os
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e05_spectrogram_utils import ClipDataset, SpecNet  # noqa: E402

FIXED = "--fixed" in sys.argv


def run_epoch(model, loader, opt):
    model.train()
    for spec, label in loader:
        loss = nn.functional.cross_entropy(model(spec), label)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    train = DataLoader(ClipDataset(1024, fast=FIXED), batch_size=32, shuffle=True)
    model = SpecNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        print("epoch", epoch, run_epoch(model, train, opt))
