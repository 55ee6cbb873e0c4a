"""A masked-language-model pretraining script with a `DataCollatorForLanguageModeling`-like
class written by the author: the collator pads a list of token-id lists, picks 15% of the
positions, and replaces them 80/10/10 with [MASK] / a random token / the same token, building
`input_ids`, `attention_mask` and `labels`. A two-layer transformer encoder on generated text.

Planted: the collator walks every token of every sample in Python (a `random.random()` per
token and per-element tensor writes): about 8000 Python iterations per batch. --fixed: the same
masking with tensor ops on the padded batch (`torch.rand(...) < 0.15` and `torch.where`).
"""

import random
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader

FIXED = "--fixed" in sys.argv
PAD, MASK, VOCAB = 0, 1, 2000


class DataCollatorForLanguageModeling:
    def __init__(self, mlm_probability=0.15):
        self.p = mlm_probability

    def __call__(self, samples):
        length = max(len(s) for s in samples)
        ids = torch.full((len(samples), length), PAD)
        for row, s in enumerate(samples):
            ids[row, : len(s)] = torch.tensor(s)
        attention = (ids != PAD).long()
        labels = torch.full_like(ids, -100)
        if FIXED:
            chosen = (torch.rand(ids.shape) < self.p) & attention.bool()
            labels[chosen] = ids[chosen]
            roll = torch.rand(ids.shape)
            ids = torch.where(chosen & (roll < 0.8), MASK, ids)
            random_ids = torch.randint(2, VOCAB, ids.shape)
            ids = torch.where(chosen & (roll >= 0.8) & (roll < 0.9), random_ids, ids)
        else:
            for row, s in enumerate(samples):
                for col in range(len(s)):
                    if random.random() < self.p:
                        labels[row, col] = ids[row, col]
                        roll = random.random()
                        if roll < 0.8:
                            ids[row, col] = MASK
                        elif roll < 0.9:
                            ids[row, col] = random.randrange(2, VOCAB)
        return {"input_ids": ids, "attention_mask": attention, "labels": labels}


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 128)
        self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(128, 4, 256,
                                                                    batch_first=True), 2)
        self.lm = nn.Linear(128, VOCAB)

    def forward(self, ids, attention):
        return self.lm(self.enc(self.emb(ids), src_key_padding_mask=attention == 0))


if __name__ == "__main__":
    torch.manual_seed(0)
    random.seed(0)
    texts = [[random.randrange(2, VOCAB) for _ in range(random.randint(64, 128))]
             for _ in range(2048)]
    loader = DataLoader(texts, batch_size=64, shuffle=True, collate_fn=DataCollatorForLanguageModeling())
    model = Encoder()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(2):
        for batch in loader:
            logits = model(batch["input_ids"], batch["attention_mask"])
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten())
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
