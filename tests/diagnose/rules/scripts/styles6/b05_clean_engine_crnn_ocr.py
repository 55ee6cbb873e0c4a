"""CLEAN: an engine (`train_one_epoch` / `evaluate`) for a small CRNN with CTC on synthetic
strips, `evaluate` under `torch.inference_mode()` in eval mode once per epoch, a metric
logger reading the loss every 50 iterations. Nothing is planted (`--fixed` changes nothing).
"""

import torch
from torch import nn

GLYPHS = 10


class CRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.cnn = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                 nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
                                 nn.MaxPool2d((8, 1)))
        self.rnn = nn.GRU(64, 64, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(128, GLYPHS + 1)

    def forward(self, x):
        return self.fc(self.rnn(self.cnn(x).squeeze(2).transpose(1, 2))[0]).log_softmax(-1)


def strips(n, gen):
    y = torch.randint(1, GLYPHS + 1, (n, 5), generator=gen)
    x = torch.rand(n, 1, 16, 80, generator=gen) * 0.2
    for j in range(5):
        x[:, 0, :, j * 16:j * 16 + 10] += (torch.arange(16)[None, :, None]
                                           < (y[:, j] + 3)[:, None, None]).float()
    return x, y


def train_one_epoch(model, ctc, opt, data, epoch):
    model.train()
    x, y = data
    for i, idx in enumerate(torch.randperm(len(x)).split(32)):
        logp = model(x[idx]).transpose(0, 1)
        n = len(idx)
        loss = ctc(logp, y[idx], torch.full((n,), logp.shape[0]), torch.full((n,), 5))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if i % 50 == 0:
            print(f"Epoch [{epoch}] it {i} loss {loss.item():.3f}")


@torch.inference_mode()
def evaluate(model, data):
    model.eval()
    x, y = data
    best = torch.cat([model(xb).argmax(-1) for xb in x.split(128)])
    return float((best != 0).float().mean())


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    train, val = strips(1536, gen), strips(256, gen)
    model = CRNN()
    ctc = nn.CTCLoss(zero_infinity=True)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(3):
        train_one_epoch(model, ctc, opt, train, epoch)
        print("non-blank", evaluate(model, val))


if __name__ == "__main__":
    main()
