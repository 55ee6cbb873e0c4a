"""A flat `if __name__ == "__main__":` block (no functions at all) training a CRNN line
recognizer with CTC on synthetic strips of 8 glyphs; hyper-parameters as module constants at
the top, the way a quick experiment starts.

Planted: `BATCH = 2` (left from a debugging session on a laptop): each step does almost no
arithmetic per op. --fixed: BATCH = 128.
"""

import sys

import torch
from torch import nn

BATCH = 128 if "--fixed" in sys.argv else 2
GLYPHS, WIDTH, LR = 12, 96, 1e-3

if __name__ == "__main__":
    torch.manual_seed(0)
    labels = torch.randint(1, GLYPHS + 1, (4096, 8))
    strips = torch.rand(4096, 1, 16, WIDTH) * 0.2
    for j in range(8):
        h = (labels[:, j] + 2)[:, None, None]
        strips[:, 0, :, j * 12:j * 12 + 8] += (torch.arange(16)[None, :, None] < h).float()
    cnn = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d((8, 1)))
    rnn = nn.GRU(32, 48, bidirectional=True, batch_first=True)
    fc = nn.Linear(96, GLYPHS + 1)
    ctc = nn.CTCLoss(zero_infinity=True)
    params = [*cnn.parameters(), *rnn.parameters(), *fc.parameters()]
    opt = torch.optim.Adam(params, lr=LR)
    for epoch in range(2):
        for idx in torch.randperm(len(labels)).split(BATCH):
            feats = cnn(strips[idx]).squeeze(2).transpose(1, 2)
            logp = fc(rnn(feats)[0]).log_softmax(-1).transpose(0, 1)
            T = torch.full((len(idx),), logp.shape[0], dtype=torch.long)
            loss = ctc(logp, labels[idx], T, torch.full((len(idx),), 8, dtype=torch.long))
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())
