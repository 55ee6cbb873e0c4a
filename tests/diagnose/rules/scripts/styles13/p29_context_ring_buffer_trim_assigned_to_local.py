"""A streaming text model with a "ring buffer" of recent context embeddings: each step the
encoder's pooled states (detached) are pushed into the buffer, and the model attends over the
whole buffer as an extra memory.

Planted: `ContextBuffer.push` trims with `items = self.items[-self.size:]`, assigned to a local
name, so `self.items` is never trimmed: the memory the model attends over (a `torch.cat` of all
items) grows by one batch every step, and so does every step's time. --fixed: `self.items =
self.items[-self.size:]`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class ContextBuffer:
    def __init__(self, size=8):
        self.items, self.size = [], size

    def push(self, states):
        self.items.append(states.detach())
        if FIXED:
            self.items = self.items[-self.size :]
        else:
            items = self.items[-self.size :]  # noqa: F841

    def memory(self):
        return torch.cat(self.items)


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
    model = MemoryLM()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    buffer = ContextBuffer()
    buffer.push(torch.zeros(32, 64))
    for step in range(1500):
        tokens = torch.randint(0, 300, (32, 33))
        logits, pooled = model(tokens[:, :-1], buffer.memory())
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        buffer.push(pooled)
        if step % 100 == 0:
            print(step, float(loss))
