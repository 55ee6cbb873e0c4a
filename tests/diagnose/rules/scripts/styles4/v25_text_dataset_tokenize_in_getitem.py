"""A text classifier: the Dataset keeps raw strings and tokenizes in __getitem__ with a word-level
tokenizer written in Python (lower-casing, splitting, vocabulary lookups, padding), on every
access; the DataLoader has num_workers=0, so it runs inside the training process.

Planted: tokenization per sample in __getitem__ in the main process. --fixed: the corpus is
tokenized once up front and __getitem__ indexes a tensor.
"""

import random
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

WORDS = [f"w{i}" for i in range(3000)]
MAX_LEN = 64


class Tokenizer:
    def __init__(self, words):
        self.vocab = {w: i + 2 for i, w in enumerate(words)}

    def encode(self, text):
        ids = []
        for token in text.lower().replace(",", " ").replace(".", " ").split():
            token = token.strip()
            ids.append(self.vocab.get(token, 1))
        ids = ids[:MAX_LEN]
        return ids + [0] * (MAX_LEN - len(ids))


class ReviewDataset(Dataset):
    def __init__(self, texts, labels, tokenizer, pretokenize):
        self.texts, self.labels, self.tok = texts, labels, tokenizer
        self.ids = (torch.tensor([tokenizer.encode(t) for t in texts]) if pretokenize else None)

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, i):
        if self.ids is not None:
            return self.ids[i], self.labels[i]
        return torch.tensor(self.tok.encode(self.texts[i])), self.labels[i]


class BagClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.EmbeddingBag(len(WORDS) + 2, 64, padding_idx=0)
        self.fc = nn.Linear(64, 2)

    def forward(self, ids):
        return self.fc(self.emb(ids))


def main():
    random.seed(0)
    torch.manual_seed(0)
    texts = [", ".join(random.choices(WORDS, k=random.randint(20, 80))).title() + "."
             for _ in range(6000)]
    labels = torch.tensor([int("w1" in t.lower().split(", ")[0]) for t in texts])
    ds = ReviewDataset(texts, labels, Tokenizer(WORDS), pretokenize="--fixed" in sys.argv)
    loader = DataLoader(ds, batch_size=64, shuffle=True)
    model = BagClassifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for ids, y in loader:
            loss = nn.functional.cross_entropy(model(ids), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
