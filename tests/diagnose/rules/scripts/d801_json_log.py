"""Writes every step's inputs and predictions to a JSON lines file."""

import json
import os
import tempfile

import torch
from torch import nn


class Trainer:
    def __init__(self, log_path):
        self.model = nn.Sequential(nn.Linear(20, 64), nn.Tanh(), nn.Linear(64, 3))
        self.optim = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)
        self.log_path = log_path

    def step(self, inputs, labels):
        self.optim.zero_grad()
        out = self.model(inputs)
        loss = nn.functional.cross_entropy(out, labels)
        loss.backward()
        self.optim.step()
        record = {"loss": loss.item(), "inputs": inputs.tolist(), "probs": out.softmax(-1).tolist()}
        with open(self.log_path, "a") as log:
            log.write(json.dumps(record) + "\n")


def main():
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        trainer = Trainer(os.path.join(tmp, "log.jsonl"))
        for _ in range(300):
            trainer.step(torch.randn(256, 20), torch.randint(0, 3, (256,)))


if __name__ == "__main__":
    main()
