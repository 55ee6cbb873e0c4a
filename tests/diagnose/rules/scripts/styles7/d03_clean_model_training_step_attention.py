"""CLEAN: the training step is a method on the model (`model.training_step(batch)`,
`model.validation_step(batch)`, `model.configure_optimizers()`), a small self-attention
classifier; the driver clears, backpropagates and steps in order and validates per epoch in eval
mode under no_grad. Nothing is planted (`--fixed` changes nothing).
"""

import torch
from torch import nn

VOCAB, SEQ, DIM = 500, 32, 64


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.attn = nn.MultiheadAttention(DIM, 4, batch_first=True, dropout=0.1)
        self.norm = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, 2)

    def forward(self, tokens):
        h = self.embed(tokens)
        a, _ = self.attn(h, h, h, need_weights=False)
        return self.head(self.norm(h + a).mean(1))

    def training_step(self, batch):
        tokens, labels = batch
        return nn.functional.cross_entropy(self(tokens), labels)

    def validation_step(self, batch):
        tokens, labels = batch
        return (self(tokens).argmax(1) == labels).float().mean()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def batches(n, size, g):
    tokens = torch.randint(0, VOCAB, (n, SEQ), generator=g)
    labels = (tokens[:, :4].sum(1) % 2).long()
    return list(zip(tokens.split(size), labels.split(size)))


if __name__ == "__main__":
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    model = Classifier()
    opt = model.configure_optimizers()
    train, val = batches(9600, 64, g), batches(1280, 256, g)
    for epoch in range(3):
        model.train()
        for batch in train:
            loss = model.training_step(batch)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            acc = torch.stack([model.validation_step(b) for b in val]).mean()
        print(epoch, float(loss), float(acc))
