"""A sequence tagger trained through a method of its own (`model.nll(tokens, tags)`, never
`model(x)`): the method calls its submodules (emissions), then runs a CRF-like forward algorithm
over the positions with the model's transition parameter, between and after those calls."""

import torch
from torch import nn

TAGS, VOCAB, SEQ = 6, 300, 24


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.lstm = nn.LSTM(16, 16, batch_first=True)
        self.emit = nn.Linear(16, TAGS)
        self.trans = nn.Parameter(torch.randn(TAGS, TAGS) * 0.1)

    def emissions(self, tokens):
        return self.emit(self.lstm(self.embed(tokens))[0])

    def nll(self, tokens, tags):
        em = self.emissions(tokens)
        alpha = em[:, 0]
        for _ in range(4):  # the forward algorithm: many small ops, no submodule
            for t in range(1, em.shape[1]):
                alpha = torch.logsumexp(alpha[:, :, None] + self.trans[None], 1) + em[:, t]
        gold = em.gather(2, tags[:, :, None]).squeeze(2).sum(1)
        return (torch.logsumexp(alpha, 1) - gold).mean()


torch.manual_seed(0)
tokens = torch.randint(0, VOCAB, (2000, SEQ))
tags = tokens % TAGS
model = Tagger()
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
for idx in torch.randperm(len(tokens)).split(16):
    loss = model.nll(tokens[idx], tags[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
