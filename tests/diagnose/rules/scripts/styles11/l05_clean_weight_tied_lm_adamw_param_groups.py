"""A clean program: a small weight-tied LSTM language model (the output layer shares the
embedding matrix) on a generated token stream, AdamW with per-parameter-group options (no weight
decay on biases, norms and the tied embedding; the default foreach implementation), truncated
BPTT with the hidden state detached between chunks, a cosine schedule. --fixed: same program.
"""

import math

import torch
from torch import nn


class TiedLM(nn.Module):
    def __init__(self, vocab=2000, dim=256):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, dim, batch_first=True)
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab)
        self.out.weight = self.emb.weight

    def forward(self, tokens, state=None):
        h, state = self.rnn(self.emb(tokens), state)
        return self.out(self.norm(h)), state


if __name__ == "__main__":
    torch.manual_seed(0)
    stream = torch.randint(0, 2000, (32, 20000))
    model = TiedLM()
    decay, no_decay, seen = [], [], set()
    for name, p in model.named_parameters():
        if id(p) in seen:
            continue
        seen.add(id(p))
        (decay if p.ndim > 1 and "emb" not in name else no_decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}], lr=2e-3)
    total = 300
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * s / total)))
    state = None
    for step in range(total):
        chunk = stream[:, step * 35:(step + 1) * 35 + 1]
        logits, state = model(chunk[:, :-1], state)
        state = tuple(s.detach() for s in state)
        loss = nn.functional.cross_entropy(logits.reshape(-1, 2000), chunk[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()
        sched.step()
        if step % 100 == 0:
            print(step, float(loss))
