"""A small language model with tied input/output embeddings (the decoder's weight is the
embedding's); the training function calls `model.zero_grad` without parentheses, so nothing is
ever cleared and the gradients add up across steps.

Planted: gradients never cleared (`model.zero_grad` is not called). --fixed: called.
"""

import sys

import torch
from torch import nn

VOCAB, DIM, CONTEXT = 500, 64, 16


class TiedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.mix = nn.Sequential(nn.Linear(DIM * CONTEXT, 256), nn.GELU(), nn.Linear(256, DIM))
        self.decoder = nn.Linear(DIM, VOCAB, bias=False)
        self.decoder.weight = self.embed.weight

    def forward(self, ids):
        return self.decoder(self.mix(self.embed(ids).flatten(1)))


def train_epoch(model, opt, data, fixed):
    for i in range(0, len(data) - CONTEXT - 1, 64 * 4):
        starts = torch.arange(i, i + 64 * 4, 4).clamp(max=len(data) - CONTEXT - 2)
        ctx = torch.stack([data[s:s + CONTEXT] for s in starts.tolist()])
        target = data[starts + CONTEXT]
        loss = nn.functional.cross_entropy(model(ctx), target)
        if fixed:
            model.zero_grad()
        else:
            model.zero_grad  # noqa: B018  (the bug: not called)
        loss.backward()
        opt.step()
    return loss


if __name__ == "__main__":
    torch.manual_seed(0)
    data = torch.randint(0, VOCAB, (60000,))
    model = TiedLM()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        print(epoch, train_epoch(model, opt, data, "--fixed" in sys.argv).item())
