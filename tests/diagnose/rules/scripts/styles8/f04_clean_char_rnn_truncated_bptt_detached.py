"""Clean: a character-level GRU language model with truncated backpropagation through time: the
hidden state carried across chunks is detached at each chunk; a sample is generated at the end."""

import torch
from torch import nn

CHUNK, BATCH = 32, 32
TEXT = "to be or not to be that is the question whether tis nobler in the mind to suffer " * 500


class CharGRU(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.embed = nn.Embedding(vocab, 32)
        self.gru = nn.GRU(32, 96, batch_first=True)
        self.out = nn.Linear(96, vocab)

    def forward(self, x, h=None):
        y, h = self.gru(self.embed(x), h)
        return self.out(y), h


if __name__ == "__main__":
    torch.manual_seed(0)
    chars = sorted(set(TEXT))
    data = torch.tensor([chars.index(c) for c in TEXT])
    per_row = len(data) // BATCH
    streams = data[: per_row * BATCH].view(BATCH, per_row)
    model = CharGRU(len(chars))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(2):
        h = None
        for start in range(0, per_row - CHUNK - 1, CHUNK):
            x, y = streams[:, start : start + CHUNK], streams[:, start + 1 : start + CHUNK + 1]
            if h is not None:
                h = h.detach()
            logits, h = model(x, h)
            loss = nn.functional.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, loss.item())
    with torch.no_grad():
        idx, h, out = torch.tensor([[chars.index("t")]]), None, []
        for _ in range(40):
            logits, h = model(idx, h)
            idx = logits[:, -1].softmax(-1).multinomial(1)
            out.append(chars[idx.item()])
    print("".join(out))
