"""A character-level transformer trained on random windows; the training loop builds the causal
attention mask for each batch with a helper that fills a nested Python list position by position
(a port of a JavaScript tutorial) and passes it to the model.

Planted: one line of the program's own Python (the mask helper) takes a large share of every
step. --fixed: the mask is built once, before the loop, with torch.triu.
"""

import sys

import torch
from torch import nn

SEQ, VOCAB, DIM = 96, 64, 64
FIXED = "--fixed" in sys.argv


def causal_mask(n):
    rows = []
    for i in range(n):
        rows.append([0.0 if j <= i else float("-inf") for j in range(n)])
    return torch.tensor(rows)


class CharTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Parameter(torch.zeros(SEQ, DIM))
        layer = nn.TransformerEncoderLayer(DIM, 4, 2 * DIM, dropout=0.0, batch_first=True)
        self.body = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, idx, mask):
        return self.head(self.body(self.tok(idx) + self.pos, mask=mask))


def main():
    torch.manual_seed(0)
    text = torch.randint(0, VOCAB, (100_000,))
    model = CharTransformer()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    fixed_mask = torch.triu(torch.full((SEQ, SEQ), float("-inf")), 1)
    for step in range(300):
        starts = torch.randint(0, len(text) - SEQ - 1, (8,))
        x = torch.stack([text[s : s + SEQ] for s in starts])
        y = torch.stack([text[s + 1 : s + SEQ + 1] for s in starts])
        mask = fixed_mask if FIXED else causal_mask(x.size(1))
        loss = nn.functional.cross_entropy(model(x, mask).flatten(0, 1), y.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(step, loss.item())


if __name__ == "__main__":
    main()
