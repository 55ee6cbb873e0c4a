"""A research repo's train.py for keyword spotting with CTC: argparse, a `utils` section with
`sample_batch(loader)`, `count_parameters`, `AverageMeter`; the Dataset synthesizes MFCC-like
frames with a tiny per-sample augmentation; the loop runs a fixed number of iterations
(`--iters`) rather than epochs, as many speech repos do.

Planted: `sample_batch(loader)` returns `next(iter(loader))`: every iteration builds a new
iterator over a 2-worker loader (workers started and stopped each step). --fixed: one
infinite iterator made once (`cycle`), drawn from with next().
"""

import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

# ---- utils ------------------------------------------------------------------------------------


def sample_batch(loader):
    return next(iter(loader))


def cycle(loader):
    while True:
        yield from loader


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, v, n=1):
        self.sum += v * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


# ---- data and model ---------------------------------------------------------------------------
class Keywords(Dataset):
    def __init__(self, n, frames=60, feats=20, vocab=8):
        g = torch.Generator().manual_seed(0)
        self.words = torch.randint(1, vocab, (n, 4), generator=g)
        self.frames, self.feats = frames, feats

    def __len__(self):
        return len(self.words)

    def __getitem__(self, i):
        w = self.words[i]
        x = 0.3 * torch.randn(self.frames, self.feats)
        x[:56] += nn.functional.one_hot(w.repeat_interleave(14), self.feats).float()
        return x * (0.9 + 0.2 * torch.rand(1)), w


class KWS(nn.Module):
    def __init__(self, feats=20, vocab=8):
        super().__init__()
        self.rnn = nn.LSTM(feats, 64, batch_first=True, bidirectional=True)
        self.out = nn.Linear(128, vocab)

    def forward(self, x):
        return self.out(self.rnn(x)[0]).log_softmax(-1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=400)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--fixed", action="store_true")
    args = p.parse_args()
    torch.manual_seed(0)
    loader = DataLoader(Keywords(4000), batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers)
    model = KWS()
    print("params", count_parameters(model))
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    ctc, meter = nn.CTCLoss(), AverageMeter()
    stream = cycle(loader) if args.fixed else None
    for it in range(args.iters):
        x, w = next(stream) if args.fixed else sample_batch(loader)
        logp = model(x).transpose(0, 1)
        n = len(x)
        loss = ctc(logp, w, torch.full((n,), logp.shape[0]), torch.full((n,), 4))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if it % 100 == 0:
            meter.update(loss.item())
            print(it, meter.avg)


if __name__ == "__main__":
    main()
