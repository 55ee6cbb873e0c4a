"""A script that profiles "a few steps" with `torch.profiler.profile` created as an object and
driven by hand: `prof.start()` before the loop, `prof.step()` after each step, and
`prof.stop()` plus a printed table after training; a small GRU language model on generated
tokens.

Planted: the profiler is built with no `schedule`, so it records every op of every step of the
whole run (the "few steps" never end). --fixed: `schedule(wait=1, warmup=1, active=3,
repeat=1)`, so it records three steps and then stands aside.
"""

import sys

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, schedule

FIXED = "--fixed" in sys.argv
VOCAB = 200


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 64)
        self.gru = nn.GRU(64, 128, batch_first=True)
        self.head = nn.Linear(128, VOCAB)

    def forward(self, tokens):
        return self.head(self.gru(self.embed(tokens))[0])


if __name__ == "__main__":
    torch.manual_seed(0)
    data = torch.randint(0, VOCAB, (3000, 33))
    model = TinyLM()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    kwargs = {"schedule": schedule(wait=1, warmup=1, active=3, repeat=1)} if FIXED else {}
    prof = profile(activities=[ProfilerActivity.CPU], **kwargs)
    prof.start()
    for epoch in range(3):
        perm = torch.randperm(len(data))
        for start in range(0, len(data), 32):
            seq = data[perm[start : start + 32]]
            logits = model(seq[:, :-1])
            loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), seq[:, 1:].reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            prof.step()
        print("epoch", epoch, loss.item())
    prof.stop()
    print(prof.key_averages().table(row_limit=5))
