"""Audio clips stored as raw 16-bit PCM records in one bytes blob (a header per record written
with `struct`, as a WAV-chunk reader would), decoded in the dataset into float waveforms for a
small 1D CNN.

Planted: `__getitem__` decodes each clip sample by sample with `struct.unpack_from("<h", ...)`
in a Python loop (4000 samples per clip), in the training process. --fixed: the clip is decoded
with one `np.frombuffer(..., dtype="<i2")`.
"""

import struct
import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
SAMPLES = 4000
HEADER = struct.Struct("<II")


def make_blob(n=1200):
    rng = np.random.default_rng(0)
    out = bytearray()
    for i in range(n):
        label = i % 4
        t = np.arange(SAMPLES) / SAMPLES
        wave = np.sin(2 * np.pi * (150 + 120 * label) * t) + 0.3 * rng.standard_normal(SAMPLES)
        pcm = (wave * 8000).astype("<i2").tobytes()
        out += HEADER.pack(label, len(pcm)) + pcm
    return bytes(out)


class PcmRecords(Dataset):
    def __init__(self, blob):
        self.blob, self.offsets = blob, []
        pos = 0
        while pos < len(blob):
            self.offsets.append(pos)
            pos += HEADER.size + HEADER.unpack_from(blob, pos)[1]

    def __len__(self):
        return len(self.offsets)

    def __getitem__(self, i):
        pos = self.offsets[i]
        label, size = HEADER.unpack_from(self.blob, pos)
        start = pos + HEADER.size
        if FIXED:
            wave = np.frombuffer(self.blob, dtype="<i2", count=size // 2, offset=start)
        else:
            wave = [struct.unpack_from("<h", self.blob, start + 2 * k)[0] for k in range(size // 2)]
        return torch.tensor(np.asarray(wave, dtype=np.float32) / 8000).unsqueeze(0), label


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(PcmRecords(make_blob()), batch_size=32, shuffle=True)
    model = nn.Sequential(
        nn.Conv1d(1, 16, 31, stride=4),
        nn.ReLU(),
        nn.Conv1d(16, 32, 15, stride=4),
        nn.ReLU(),
        nn.AdaptiveAvgPool1d(1),
        nn.Flatten(),
        nn.Linear(32, 4),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
