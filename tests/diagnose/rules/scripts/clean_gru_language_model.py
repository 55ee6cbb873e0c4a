"""A word-level language model with nn.GRU on CPU, trained by truncated BPTT: ATen runs the GRU
as many small ops per time step inside one call, but there is no Python loop to vectorise."""

import torch
from torch import nn


class GRUModel(nn.Module):
    def __init__(self, vocab=500, size=32, layers=2):
        super().__init__()
        self.encoder = nn.Embedding(vocab, size)
        self.rnn = nn.GRU(size, size, layers)
        self.decoder = nn.Linear(size, vocab)

    def forward(self, tokens, hidden):
        output, hidden = self.rnn(self.encoder(tokens), hidden)
        return self.decoder(output).view(-1, self.decoder.out_features), hidden


def main():
    torch.manual_seed(0)
    data = torch.randint(0, 500, (4000, 10))  # (time, batch)
    model = GRUModel()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    hidden = torch.zeros(2, 10, 32)
    bptt = 35
    for start in range(0, 60 * bptt, bptt):
        tokens = data[start : start + bptt]
        targets = data[start + 1 : start + 1 + bptt].reshape(-1)
        hidden = hidden.detach()
        optimizer.zero_grad()
        output, hidden = model(tokens, hidden)
        loss = criterion(output, targets)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()


if __name__ == "__main__":
    main()
