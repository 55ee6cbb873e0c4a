"""Batches made by a thread of the program's own (reading and decoding, here a sleep) and handed
to the training loop through a queue.Queue; the loop's blocking get() waits for each one."""

import queue
import threading
import time

import torch
from torch import nn


def produce(batches, count):
    for _ in range(count):
        x = torch.randn(64, 32)
        time.sleep(0.02)  # read and decode a batch
        batches.put((x, x.sum(1, keepdim=True)))
    batches.put(None)


batches = queue.Queue(maxsize=2)
threading.Thread(target=produce, args=(batches, 400), daemon=True).start()
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
while (item := batches.get()) is not None:  # the wait for data
    x, y = item
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
