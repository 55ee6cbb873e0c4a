"""A loop that draws from every random stream the what-if probes could disturb: a shuffled
DataLoader, a dataset with its own NumPy generator and Python's random, Dropout, evaluation with
autograd on and in train mode, a shuffled in-memory TensorDataset fetched per sample, and a
validation loader whose worker processes are started again at every pass (they draw their seeds
from torch's generator, and augment with torch.randn). `train(steps)` returns the losses, to run
under torchdoctor.watch() and then on after it."""

import random

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset


class NoisyFeatures(Dataset):
    # 10 batches: the workers what-if times at most 5 of them per setting, whatever its allowance
    def __init__(self, n=320):
        self.x = np.random.default_rng(0).standard_normal((n, 64)).astype(np.float32)
        self.rng = np.random.default_rng(1)  # the dataset's own augmentation stream

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        noise = self.rng.standard_normal(64).astype(np.float32) * 0.1
        scale = 1.0 + 0.1 * random.random() + 0.1 * float(np.random.rand())
        sample = (self.x[i] + noise) * scale
        for _ in range(60):  # per-sample work: data time far above the 5% a data probe needs
            sample = np.tanh(sample) + 0.01 * sample
        return torch.from_numpy(sample), int(self.x[i, 0] > 0)


class JitteredFeatures(Dataset):
    def __init__(self, x):
        self.x = x

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i] + 0.01 * torch.randn(self.x.shape[1])


def build():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    features = torch.randn(512, 64)
    extra = DataLoader(TensorDataset(features, (features[:, 0] > 0).long()), 32, shuffle=True)
    validation = DataLoader(JitteredFeatures(features[:64]), batch_size=32, num_workers=1)
    loader = DataLoader(NoisyFeatures(), batch_size=32, shuffle=True)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Dropout(0.2), nn.Linear(128, 2))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    return (loader, extra, validation), model, optimizer


def _next(streams, loaders, i):
    try:
        return next(streams[i])
    except StopIteration:
        streams[i] = iter(loaders[i])
        return next(streams[i])


def train(loaders, model, optimizer, steps):
    criterion = nn.CrossEntropyLoss()
    losses = []
    streams = [iter(loader) for loader in loaders[:2]]
    for step in range(steps):
        x, y = _next(streams, loaders, 0)
        x2, y2 = _next(streams, loaders, 1)
        model.train()
        optimizer.zero_grad()
        loss = criterion(model(x), y) + criterion(model(x2), y2)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if step % 4 == 3:
            model(x[:8]).sum()  # evaluation with autograd on, in train mode (Dropout active)
        if step % 6 == 5:  # validation: new worker processes every pass
            with torch.no_grad():
                losses.extend(model(v).sum().item() for v in loaders[2])
    return losses
