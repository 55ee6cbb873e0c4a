"""Mixed CPU preprocessing in the training loop: each batch's targets arrive as packed binary
records (`struct` layout `<HfB`: class id, a sample weight and a flag, as a C producer writes
them) held in a Python `array` of bytes, and are decoded in the loop before the loss.

Planted: the loop decodes the batch's records one by one with `struct.unpack_from` into Python
lists and builds three tensors from them, for 512 records per step: the training step spends
more time decoding than computing. --fixed: the records are decoded once with a NumPy
structured dtype (`np.frombuffer(..., dtype=[("cls","<u2"),("w","<f4"),("flag","u1")])`) and
the batch indexes the arrays.
"""

import struct
import sys
from array import array

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv
RECORD = struct.Struct("<HfB")


if __name__ == "__main__":
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    n = 16384
    x = torch.randn(n, 32)
    classes = x[:, :4].argmax(1).tolist()
    blob = array("B")
    for c in classes:
        blob.frombytes(RECORD.pack(c, float(rng.uniform(0.5, 1.5)), int(rng.integers(0, 2))))
    raw = blob.tobytes()
    if FIXED:
        table = np.frombuffer(raw, dtype=np.dtype([("cls", "<u2"), ("w", "<f4"), ("flag", "u1")]))
        cls_all = torch.from_numpy(table["cls"].astype(np.int64))
        w_all = torch.from_numpy(table["w"].copy())
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(3):
        for idx in torch.randperm(n).split(512):
            if FIXED:
                cls, weight = cls_all[idx], w_all[idx]
            else:
                recs = [RECORD.unpack_from(raw, RECORD.size * i) for i in idx.tolist()]
                cls = torch.tensor([r[0] for r in recs])
                weight = torch.tensor([r[1] for r in recs])
            loss = (
                nn.functional.cross_entropy(model(x[idx]), cls, reduction="none") * weight
            ).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
