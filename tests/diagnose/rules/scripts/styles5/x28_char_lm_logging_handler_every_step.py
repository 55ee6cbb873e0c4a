"""A character-level language model (embedding + 2-layer LSTM) with Python `logging` set up the
way a service would: a FileHandler with a verbose formatter. The training step logs a line
with the loss, perplexity, learning rate and gradient norm at INFO on every step, and the file
handler flushes each record.

Planted: a formatted log record written to a file every step (plus the host reads for its
numbers). --fixed: a record every 100 steps.
"""

import logging
import math
import os
import sys
import tempfile

import torch
from torch import nn

LOG_EVERY = 100 if "--fixed" in sys.argv else 1
log = logging.getLogger("charlm")


class CharLM(nn.Module):
    def __init__(self, vocab=64, dim=64):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, dim, num_layers=2, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def forward(self, x):
        return self.out(self.rnn(self.emb(x))[0])


def main(logdir):
    handler = logging.FileHandler(os.path.join(logdir, "train.log"))
    handler.setFormatter(logging.Formatter(
        "%(asctime)s %(process)d %(threadName)s %(name)s %(levelname)s %(pathname)s:%(lineno)d "
        "%(funcName)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    torch.manual_seed(0)
    text = torch.randint(0, 64, (40000,))
    model = CharLM()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    for step in range(300):
        starts = torch.randint(0, len(text) - 33, (16,))
        batch = torch.stack([text[s:s + 33] for s in starts])
        logits = model(batch[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, 64), batch[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % LOG_EVERY == 0:
            value = loss.item()
            log.info("step=%d loss=%.4f ppl=%.2f lr=%.2e grad_norm=%.3f params=%s", step, value,
                     math.exp(value), opt.param_groups[0]["lr"], norm.item(),
                     [tuple(p.shape) for p in model.parameters()])


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        main(tmp)
