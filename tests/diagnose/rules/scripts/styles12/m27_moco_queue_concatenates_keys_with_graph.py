"""MoCo-style contrastive learning: a query encoder and a momentum key encoder over two
augmented views; the keys of past batches are kept in a queue of negatives for an InfoNCE loss
with a large similarity matrix (queries x (positives + queue)).

Planted: the key encoder's output is computed with autograd on (the key encoder's parameters
require grad) and pushed into the queue with `torch.cat([keys, queue])[:size]` without
`.detach()` (and `retain_graph=True` was added to silence the error that followed): every
queued key keeps its batch's graph alive, so memory grows step by step and the backward walks
through old graphs. --fixed: keys are computed under
`torch.no_grad()`.
"""

import contextlib
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


def encoder():
    return nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 64))


if __name__ == "__main__":
    torch.manual_seed(0)
    data = torch.randn(20000, 128)
    query_enc, key_enc = encoder(), encoder()
    key_enc.load_state_dict(query_enc.state_dict())
    opt = torch.optim.SGD(query_enc.parameters(), lr=0.05, momentum=0.9)
    queue = torch.zeros(0, 64)
    size, m, tau = 16384, 0.99, 0.2
    for step, idx in enumerate(torch.randperm(len(data)).split(128)):
        x = data[idx]
        q = nn.functional.normalize(query_enc(x + 0.1 * torch.randn_like(x)), dim=1)
        with torch.no_grad() if FIXED else contextlib.nullcontext():
            k = nn.functional.normalize(key_enc(x + 0.1 * torch.randn_like(x)), dim=1)
        logits = torch.cat([(q * k).sum(1, keepdim=True), q @ queue.t()], 1) / tau
        loss = nn.functional.cross_entropy(logits, torch.zeros(len(x), dtype=torch.long))
        opt.zero_grad()
        loss.backward(retain_graph=not FIXED)
        opt.step()
        with torch.no_grad():
            for pk, pq in zip(key_enc.parameters(), query_enc.parameters()):
                pk.data.mul_(m).add_(pq.data, alpha=1 - m)
        queue = torch.cat([k, queue])[:size]
        if step % 50 == 0:
            print("step", step, float(loss))
