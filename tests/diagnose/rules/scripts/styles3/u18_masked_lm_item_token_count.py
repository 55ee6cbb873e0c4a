"""A masked-language-model objective on a tiny Transformer encoder: 15% of the tokens are masked
each step, and the loss is normalized by the number of masked tokens read back as a Python int
(`mask.sum().item()`) to divide a summed loss.

Planted: a host read every step (`.item()` of the masked-token count). --fixed: the count stays
a tensor.
"""

import sys

import torch
from torch import nn

VOCAB, LENGTH, MASK_ID = 300, 32, 1
FIXED = "--fixed" in sys.argv


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, 64)
        self.pos = nn.Parameter(torch.zeros(LENGTH, 64))
        layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.1, batch_first=True)
        self.body = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(64, VOCAB)

    def forward(self, ids):
        return self.head(self.body(self.tok(ids) + self.pos))


def main():
    torch.manual_seed(0)
    corpus = torch.randint(2, VOCAB, (6400, LENGTH))
    model = Encoder()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4)
    for epoch in range(3):
        for ids in corpus.split(32):
            mask = torch.rand(ids.shape) < 0.15
            inputs = ids.masked_fill(mask, MASK_ID)
            logits = model(inputs)
            summed = nn.functional.cross_entropy(logits[mask], ids[mask], reduction="sum")
            count = mask.sum().clamp(min=1) if FIXED else max(mask.sum().item(), 1)
            loss = summed / count
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, float(loss))


if __name__ == "__main__":
    main()
