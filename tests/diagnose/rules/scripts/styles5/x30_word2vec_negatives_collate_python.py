"""Skip-gram word2vec with negative sampling. The DataLoader yields (center, context) pairs and
a `NegativeSamplingCollator` object, called as the collate_fn, draws K negatives per pair from
the unigram^0.75 table with `random.choices`, one pair at a time, re-drawing any negative that
equals the context word, and builds the tensors from nested lists.

Planted: negatives drawn and checked pair by pair in Python in the collate_fn (training
process). --fixed: one `torch.multinomial` over the table for the whole batch.
"""

import random
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader

FIXED = "--fixed" in sys.argv
VOCAB, DIM, K, WINDOW = 3000, 64, 10, 2


class NegativeSamplingCollator:
    def __init__(self, counts):
        probs = counts.float() ** 0.75
        self.probs = probs / probs.sum()
        self.words, self.weights = list(range(VOCAB)), self.probs.tolist()

    def __call__(self, pairs):
        centers = torch.tensor([c for c, _ in pairs])
        contexts = torch.tensor([o for _, o in pairs])
        if FIXED:
            return centers, contexts, torch.multinomial(self.probs, len(pairs) * K, True).view(-1, K)
        negatives = []
        for _, ctx in pairs:
            drawn = []
            while len(drawn) < K:
                w = random.choices(self.words, self.weights)[0]
                if w != ctx:
                    drawn.append(w)
            negatives.append(drawn)
        return centers, contexts, torch.tensor(negatives)


class SkipGram(nn.Module):
    def __init__(self):
        super().__init__()
        self.center, self.context = nn.Embedding(VOCAB, DIM), nn.Embedding(VOCAB, DIM)

    def forward(self, c, o, neg):
        vc = self.center(c)
        pos = (vc * self.context(o)).sum(-1)
        negs = torch.bmm(self.context(neg), vc[:, :, None]).squeeze(-1)
        return -(nn.functional.logsigmoid(pos) + nn.functional.logsigmoid(-negs).sum(-1)).mean()


def main():
    random.seed(0)
    torch.manual_seed(0)
    corpus = torch.multinomial(1.0 / torch.arange(1, VOCAB + 1).float(), 20000, True)
    pairs = [(int(corpus[i]), int(corpus[i + d])) for i in range(WINDOW, len(corpus) - WINDOW)
             for d in (-2, -1, 1, 2)]
    collate = NegativeSamplingCollator(torch.bincount(corpus, minlength=VOCAB) + 1)
    loader = DataLoader(pairs, batch_size=256, shuffle=True, collate_fn=collate)
    model = SkipGram()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for step, (c, o, neg) in enumerate(loader):
        loss = model(c, o, neg)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(step, loss.item())


if __name__ == "__main__":
    main()
