"""A sequence model that dies of out-of-memory: one batch arrives with a sequence length far
beyond the others, and the attention scores (length x length) cannot be allocated."""

import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5  # (batch, length, length)
        return self.out(scores.softmax(dim=-1) @ v)


class Net(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.embed = nn.Linear(8, dim)
        self.attn = Attention(dim)
        self.head = nn.Linear(dim, 2)

    def forward(self, x):
        return self.head(self.attn(self.embed(x)).mean(dim=1))


def batches():
    for step in range(100):
        length = 64 if step < 6 else 200_000  # a corrupted sample: sequence length 200k
        yield torch.randn(4, length, 8), torch.randint(0, 2, (4,))


def main():
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    for x, y in batches():
        optimizer.zero_grad(set_to_none=True)
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
