"""A character-level language model (embedding, GRU, Dropout, head) trained as a callable
`Experiment` object; before training it prints a sample from the untrained model with
`generate()`, a greedy decode under `@torch.no_grad()`.

Planted: `generate()` calls `model.eval()` (Dropout off for decoding) and never switches back,
and the training loop does not call `model.train()`: the whole run trains with Dropout
disabled. --fixed: `generate()` restores the mode it found.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class CharLM(nn.Module):
    def __init__(self, vocab=64, dim=128):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.drop = nn.Dropout(0.3)
        self.head = nn.Linear(dim, vocab)

    def forward(self, x):
        return self.head(self.drop(self.rnn(self.drop(self.emb(x)))[0]))


@torch.no_grad()
def generate(model, start, length=40):
    was_training = model.training
    model.eval()
    seq = [start]
    for _ in range(length):
        logits = model(torch.tensor([seq]))[0, -1]
        seq.append(int(logits.argmax()))
    if FIXED:
        model.train(was_training)
    return seq


class Experiment:
    def __init__(self):
        torch.manual_seed(0)
        self.model = CharLM()
        self.opt = torch.optim.Adam(self.model.parameters(), lr=2e-3)
        text = torch.randint(0, 64, (200_000,))
        self.windows = text[: 200_000 // 65 * 65].view(-1, 65)

    def __call__(self, epochs=2):
        print("sample", generate(self.model, 1)[:10])
        for epoch in range(epochs):
            for idx in torch.randperm(len(self.windows)).split(64):
                w = self.windows[idx]
                logits = self.model(w[:, :-1])
                loss = nn.functional.cross_entropy(logits.reshape(-1, 64), w[:, 1:].reshape(-1))
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            print("epoch", epoch, float(loss))


if __name__ == "__main__":
    Experiment()()
