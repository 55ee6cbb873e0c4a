"""A text classifier fed raw strings: the training loop takes a batch of generated "reviews",
tokenizes them with a small word-piece-like tokenizer written in Python (lowercase, split,
greedy longest-match against a vocabulary dict), pads them and runs an embedding-bag model.

Planted: the strings are tokenized again in the training loop every step, every epoch (the
same strings each epoch), character by character in the greedy matcher. --fixed: the corpus is
tokenized once before training and the loop indexes the padded token tensor.
"""

import random
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
WORDS = [
    "good",
    "bad",
    "great",
    "awful",
    "movie",
    "plot",
    "actor",
    "fine",
    "boring",
    "fun",
    "the",
    "a",
    "was",
    "really",
    "not",
    "very",
    "story",
    "ending",
    "scene",
    "music",
]


def build_vocab():
    vocab = {"[pad]": 0, "[unk]": 1}
    for w in WORDS:
        for end in range(1, len(w) + 1):
            vocab.setdefault(w[:end], len(vocab))
    return vocab


def tokenize(text, vocab, length=64):
    ids = []
    for word in text.lower().split():
        start = 0
        while start < len(word):
            end = len(word)
            while end > start and word[start:end] not in vocab:
                end -= 1
            ids.append(vocab.get(word[start:end], 1) if end > start else 1)
            start = max(end, start + 1)
    ids = ids[:length]
    return ids + [0] * (length - len(ids))


if __name__ == "__main__":
    torch.manual_seed(0)
    random.seed(0)
    vocab = build_vocab()
    texts = [" ".join(random.choice(WORDS) for _ in range(30)) for _ in range(4000)]
    labels = torch.tensor(
        [t.count("good") + t.count("great") > t.count("bad") for t in texts]
    ).long()
    encoded = torch.tensor([tokenize(t, vocab) for t in texts]) if FIXED else None
    model = nn.Sequential(nn.EmbeddingBag(len(vocab), 64, padding_idx=0), nn.Linear(64, 2))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(3):
        for idx in torch.randperm(len(texts)).split(64):
            if FIXED:
                tokens = encoded[idx]
            else:
                tokens = torch.tensor([tokenize(texts[i], vocab) for i in idx.tolist()])
            loss = nn.functional.cross_entropy(model(tokens), labels[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, float(loss))
