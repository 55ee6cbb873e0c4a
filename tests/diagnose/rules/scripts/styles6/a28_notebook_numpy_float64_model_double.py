"""A notebook-style forecasting script: the series is prepared in NumPy (rolling means,
differencing, a lag matrix), turned into tensors with `torch.from_numpy`, and an MLP on the
lag features is trained with globals and `# %%` cells.

Planted: NumPy's arrays are float64, `torch.from_numpy` keeps that, and the first run failed
with "mat1 and mat2 must have the same dtype", so the author added `model = model.double()`:
the whole training runs in float64. --fixed: the arrays cast to float32, no `.double()`.
"""

# %%
import sys

import numpy as np
import torch
from torch import nn

FIXED = "--fixed" in sys.argv
rng = np.random.default_rng(0)
LAGS, HORIZON = 96, 12

# %%
t = np.arange(40000)
raw = np.sin(t / 24) + 0.3 * np.sin(t / 168) + 0.05 * rng.standard_normal(40000).cumsum() / 50
smooth = np.convolve(raw, np.ones(5) / 5, mode="same")
diff = np.diff(smooth, prepend=smooth[0])
idx = np.arange(LAGS, len(diff) - HORIZON)
X = np.stack([diff[i - LAGS:i] for i in idx[::4]])
Y = np.stack([diff[i:i + HORIZON] for i in idx[::4]])
if FIXED:
    X, Y = X.astype(np.float32), Y.astype(np.float32)
X, Y = torch.from_numpy(X), torch.from_numpy(Y)

# %%
model = nn.Sequential(nn.Linear(LAGS, 512), nn.GELU(), nn.Linear(512, 512), nn.GELU(),
                      nn.Linear(512, HORIZON))
if not FIXED:
    model = model.double()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)

# %%
for epoch in range(3):
    perm = torch.randperm(len(X))
    for b in perm.split(128):
        pred = model(X[b])
        loss = ((pred - Y[b]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(epoch, loss.item())
