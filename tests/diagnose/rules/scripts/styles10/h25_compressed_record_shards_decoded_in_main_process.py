"""Records stored compressed, as a WebDataset-like shard reader would hand them over: each
sample is a zlib-compressed float16 image plus a label, and the map-style `Dataset` decodes one
record (decompress, `np.frombuffer`, reshape, normalise) per `__getitem__`. A small CNN on
generated 48x48 images.

Planted: the DataLoader has `num_workers=0`: every record of every batch is decompressed and
decoded in the training process, between steps. --fixed: `num_workers=1` with
`persistent_workers=True` (one spare core on this machine) so decoding overlaps the step.
"""

import sys
import zlib

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv


class CompressedShard(Dataset):
    def __init__(self, n, rng):
        self.records = []
        for _ in range(n):
            img = (rng.standard_normal((3, 48, 48)) * 40 + 128).clip(0, 255).astype(np.float16)
            self.records.append((zlib.compress(img.tobytes(), 6), int(rng.integers(0, 6))))

    def __len__(self):
        return len(self.records)

    def __getitem__(self, i):
        blob, label = self.records[i]
        img = np.frombuffer(zlib.decompress(blob), dtype=np.float16).reshape(3, 48, 48)
        img = (img.astype(np.float32) / 255.0 - 0.5) / 0.25
        return torch.from_numpy(img), label


if __name__ == "__main__":
    torch.manual_seed(0)
    shard = CompressedShard(3000, np.random.default_rng(0))
    loader = DataLoader(shard, batch_size=64, shuffle=True, num_workers=1 if FIXED else 0,
                        persistent_workers=FIXED)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
                          nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 6))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(3):
        for xb, yb in loader:
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
