"""A run that resumes: the script first trains a stage, snapshots it into an in-memory
checkpoint (`io.BytesIO`, as a preemptible job would write to disk), and then a
`load_for_resume(path)` helper rebuilds model and optimizer from the checkpoint and training
continues for the second stage. A GRU tagger with Dropout on generated sequences.

Planted: the helper was written for inference and ends with `model.eval()`; the resumed stage
never calls `model.train()`, so the whole second stage trains with Dropout off. --fixed: the
helper leaves the module in train mode.
"""

import io
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(300, 64)
        self.rnn = nn.GRU(64, 128, batch_first=True)
        self.drop = nn.Dropout(0.3)
        self.out = nn.Linear(128, 12)

    def forward(self, ids):
        return self.out(self.drop(self.rnn(self.emb(ids))[0]))


def train_stage(model, opt, ids, steps):
    for step in range(steps):
        batch = ids[torch.randint(0, len(ids), (32,))]
        loss = nn.functional.cross_entropy(model(batch).flatten(0, 1), (batch % 12).flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


def load_for_resume(buffer):
    buffer.seek(0)
    state = torch.load(buffer)
    model = Tagger()
    model.load_state_dict(state["model"])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    opt.load_state_dict(state["opt"])
    if not FIXED:
        model.eval()
    return model, opt


if __name__ == "__main__":
    torch.manual_seed(0)
    ids = torch.randint(0, 300, (2048, 40))
    model = Tagger()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    print("stage 1", train_stage(model, opt, ids, 20))
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, buffer)
    model, opt = load_for_resume(buffer)
    print("stage 2", train_stage(model, opt, ids, 400))
