"""Online learning from an event stream: a click-through-rate model (hashed feature embeddings +
MLP) is updated as each event arrives from a generator that simulates a message queue; a
progressive validation metric (predict, then learn) is printed every 500 events.

Planted: the model learns from one event at a time (`batch of 1`, as "online" was read), so the
step is all per-op overhead. --fixed: events are buffered into mini-batches of 256 before each
update (a common micro-batching of the stream).
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
BATCH = 256 if FIXED else 1


def event_stream(n, fields=12, buckets=2**16, seed=0):
    g = torch.Generator().manual_seed(seed)
    for _ in range(max(1, n // 512)):
        feats = torch.randint(0, buckets, (512, fields), generator=g)
        clicks = ((feats[:, 0] % 5 == 0) | (feats[:, 3] % 7 == 0)).float()
        yield from zip(feats, clicks)


class CTR(nn.Module):
    def __init__(self, buckets=2**16, fields=12, dim=16):
        super().__init__()
        self.emb = nn.Embedding(buckets, dim)
        self.mlp = nn.Sequential(nn.Linear(fields * dim, 256), nn.ReLU(), nn.Linear(256, 256),
                                 nn.ReLU(), nn.Linear(256, 1))

    def forward(self, feats):
        return self.mlp(self.emb(feats).flatten(1)).squeeze(-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = CTR()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.02)
    seen, correct, pending = 0, 0.0, []
    for feats, click in event_stream(BATCH * 600):
        pending.append((feats, click))
        if len(pending) < BATCH:
            continue
        xb = torch.stack([f for f, _ in pending])
        yb = torch.stack([c for _, c in pending])
        pending.clear()
        logits = model(xb)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        seen += len(yb)
        if seen % 5120 < len(yb):
            print(seen, float(loss))
