"""Clean: an `IterableDataset` that streams generated sentences, tokenizes them with a
hand-written character tokenizer and yields fixed-length token windows; one DataLoader worker
(seeded per worker) with batches of 128 windows, so the tokenization runs beside training. A
small GRU language model; a fixed number of steps per "epoch" of the stream.

No planted problem; `--fixed` changes nothing (kept for the bench's control run).
"""

import random

import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "far", "away", "and", "slept"]
CHARS = sorted({c for w in WORDS for c in w} | {" "})
STOI = {c: i for i, c in enumerate(CHARS)}
WINDOW = 48


class TextStream(IterableDataset):
    def __iter__(self):
        info = get_worker_info()
        rng = random.Random(7 + (info.id if info else 0))
        buffer = []
        while True:
            sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12))) + " "
            buffer.extend(STOI[c] for c in sentence)
            while len(buffer) > WINDOW + 1:
                yield torch.tensor(buffer[: WINDOW + 1])
                buffer = buffer[WINDOW:]


if __name__ == "__main__":
    torch.manual_seed(0)
    loader = DataLoader(TextStream(), batch_size=128, num_workers=1)
    embed, gru, head = nn.Embedding(len(CHARS), 32), nn.GRU(32, 96, batch_first=True), None
    head = nn.Linear(96, len(CHARS))
    params = [*embed.parameters(), *gru.parameters(), *head.parameters()]
    opt = torch.optim.Adam(params, lr=3e-3)
    stream = iter(loader)
    for epoch in range(3):
        for _ in range(40):
            seq = next(stream)
            logits = head(gru(embed(seq[:, :-1]))[0])
            loss = nn.functional.cross_entropy(logits.reshape(-1, len(CHARS)), seq[:, 1:].reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
