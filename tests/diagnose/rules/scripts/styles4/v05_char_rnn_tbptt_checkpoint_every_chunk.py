"""A char-RNN (LSTM) trained with truncated backpropagation through time over one long text; the
hidden state is carried across chunks and detached. Checkpoints are written every `--save-every`
chunks, and the argparse default is 1.

Planted: torch.save of model and optimizer every training step. --fixed: --save-every 500 (once
per run here).
"""

import argparse
import os
import sys
import tempfile

import torch
from torch import nn

TEXT = ("the quick brown fox jumps over the lazy dog while the cat sleeps by the fire " * 400)


class CharRNN(nn.Module):
    def __init__(self, vocab, hidden=384):
        super().__init__()
        self.emb = nn.Embedding(vocab, 64)
        self.lstm = nn.LSTM(64, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        out, state = self.lstm(self.emb(x), state)
        return self.head(out), state


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--bptt", type=int, default=32)
    p.add_argument("--save-every", type=int, default=1)
    p.add_argument("--fixed", action="store_true")
    args = p.parse_args(argv)
    if args.fixed:
        args.save_every = 500
    chars = sorted(set(TEXT))
    data = torch.tensor([chars.index(c) for c in TEXT]).view(8, -1)
    model = CharRNN(len(chars))
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    ckpt_dir = tempfile.mkdtemp()
    state, step = None, 0
    for epoch in range(3):
        for i in range(0, data.size(1) - 1 - args.bptt, args.bptt):
            x, y = data[:, i : i + args.bptt], data[:, i + 1 : i + 1 + args.bptt]
            if state is not None:
                state = tuple(s.detach() for s in state)
            logits, state = model(x, state)
            loss = nn.functional.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            step += 1
            if step % args.save_every == 0:
                torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step},
                           os.path.join(ckpt_dir, "last.pt"))
        print(f"epoch {epoch} loss {loss.item():.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
