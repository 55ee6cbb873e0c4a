#!/usr/bin/env python
# coding: utf-8
"""A notebook exported with `jupyter nbconvert --to script`: `# In[N]:` cell markers, globals
shared between cells, a `display`-guarded cell, and a training cell that calls a helper defined
in an earlier cell. A small CNN on generated 28x28 images through a DataLoader with workers.

Planted: the helper cell defines `get_batch()` as `next(iter(train_dl))`, and the training
cell calls it every step: every step builds a new iterator, which starts two fresh worker
processes and throws them away after one batch. --fixed: the training cell iterates over the
loader once per epoch.
"""

# In[1]:


import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FIXED = "--fixed" in sys.argv
torch.manual_seed(0)


# In[2]:


class Digits(Dataset):
    def __init__(self, n):
        self.images = torch.randn(n, 1, 28, 28)
        self.labels = torch.randint(0, 10, (n,))

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return self.images[i], self.labels[i]


train_ds = Digits(4096)
train_dl = DataLoader(train_ds, batch_size=64, shuffle=True, num_workers=2)
len(train_ds)


# In[3]:


def get_batch():
    return next(iter(train_dl))


xb, yb = get_batch()
xb.shape


# In[4]:


model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(32 * 49, 10))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)


# In[5]:


if __name__ == "__main__":
    for epoch in range(2):
        batches = iter(train_dl) if FIXED else (get_batch() for _ in range(len(train_dl)))
        for xb, yb in batches:
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())
