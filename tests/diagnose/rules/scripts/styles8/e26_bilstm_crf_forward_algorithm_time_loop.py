"""Sequence tagging with a BiLSTM-CRF: emissions from a bidirectional LSTM, a learned transition
matrix, the CRF negative log-likelihood (partition function by the forward algorithm minus the
gold path's score) and Viterbi decoding for the per-epoch tag accuracy.

Planted: the forward algorithm walks the sequence one position at a time and, inside, one tag at
a time (`logsumexp` of a small vector per tag per position), thousands of tiny ops per step.
--fixed: one `logsumexp` over a (batch, tags, tags) tensor per position.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
TAGS, VOCAB, SEQ = 6, 300, 24


class BiLSTMCRF(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 32)
        self.lstm = nn.LSTM(32, 32, batch_first=True, bidirectional=True)
        self.emit = nn.Linear(64, TAGS)
        self.trans = nn.Parameter(torch.randn(TAGS, TAGS) * 0.1)

    def emissions(self, tokens):
        return self.emit(self.lstm(self.embed(tokens))[0])

    def log_partition(self, em):
        alpha = em[:, 0]
        for t in range(1, em.shape[1]):
            if FIXED:
                alpha = torch.logsumexp(alpha[:, :, None] + self.trans[None], 1) + em[:, t]
            else:
                alpha = torch.stack(
                    [
                        torch.logsumexp(alpha + self.trans[:, j], 1) + em[:, t, j]
                        for j in range(TAGS)
                    ],
                    1,
                )
        return torch.logsumexp(alpha, 1)

    def gold_score(self, em, tags):
        score = em.gather(2, tags[:, :, None]).squeeze(2).sum(1)
        return score + self.trans[tags[:, :-1], tags[:, 1:]].sum(1)

    def nll(self, tokens, tags):
        em = self.emissions(tokens)
        return (self.log_partition(em) - self.gold_score(em, tags)).mean()

    @torch.no_grad()
    def viterbi(self, tokens):
        em = self.emissions(tokens)
        score, back = em[:, 0], []
        for t in range(1, em.shape[1]):
            best, idx = (score[:, :, None] + self.trans[None]).max(1)
            score = best + em[:, t]
            back.append(idx)
        path = [score.argmax(1)]
        for idx in reversed(back):
            path.append(idx.gather(1, path[-1][:, None]).squeeze(1))
        return torch.stack(path[::-1], 1)


if __name__ == "__main__":
    torch.manual_seed(0)
    tokens = torch.randint(0, VOCAB, (3000, SEQ))
    tags = tokens % TAGS
    model = BiLSTMCRF()
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    for epoch in range(2):
        model.train()
        for idx in torch.randperm(len(tokens)).split(32):
            loss = model.nll(tokens[idx], tags[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        acc = (model.viterbi(tokens[:500]) == tags[:500]).float().mean().item()
        print("epoch", epoch, loss.item(), acc)
