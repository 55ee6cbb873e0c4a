"""Clean: a streaming language model with a bounded memory: a `collections.deque(maxlen=8)` of
detached pooled states serves as the attention memory (constant size), token windows come from
a ring of NumPy slots stored as one 2D array and are batched with `torch.from_numpy(ring[picks])`.
(`--fixed` changes nothing.)
"""

from collections import deque

import numpy as np
import torch
from torch import nn


class MemoryLM(nn.Module):
    def __init__(self, vocab=300, dim=64):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.attn = nn.MultiheadAttention(dim, 4, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens, memory):
        h = self.emb(tokens)
        mem = memory.unsqueeze(0).expand(len(tokens), -1, -1)
        ctx, _ = self.attn(h, mem, mem)
        return self.out(h + ctx), h.mean(1)


if __name__ == "__main__":
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    ring = np.zeros((256, 33), dtype=np.int64)
    head = 0
    memory = deque([torch.zeros(32, 64)], maxlen=8)
    model = MemoryLM()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
    for step in range(1200):
        ring[head] = rng.integers(0, 300, 33)
        head = (head + 1) % len(ring)
        tokens = torch.from_numpy(ring[rng.integers(0, max(head, 32), 32)])
        logits, pooled = model(tokens[:, :-1], torch.cat(tuple(memory)))
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        memory.append(pooled.detach())
        if step % 200 == 0:
            print(step, float(loss))
