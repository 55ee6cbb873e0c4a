"""A Hugging Face-like `Trainer` written by the author, used the way its docs suggest: the
user subclasses it and overrides `compute_loss(model, inputs, return_outputs=False)`; the
trainer's `training_step` calls `compute_loss` and then `loss.backward()`. Inputs are dicts
(`input_ids`, `labels`). A small token classifier on generated sequences.

Planted: the override back-propagates the auxiliary (length-regularisation) loss itself with
`aux.backward(retain_graph=True)` and returns the main loss, which the trainer back-propagates
again: two backward passes through the shared encoder every step. --fixed: the override
returns `main + aux` and the trainer's single backward does both.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Trainer:
    def __init__(self, model, args, train_dataset):
        self.model, self.args, self.train_dataset = model, args, train_dataset
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=args["learning_rate"])

    def compute_loss(self, model, inputs, return_outputs=False):
        outputs = model(inputs["input_ids"])
        loss = nn.functional.cross_entropy(outputs.flatten(0, 1), inputs["labels"].flatten())
        return (loss, outputs) if return_outputs else loss

    def training_step(self, model, inputs):
        model.train()
        loss = self.compute_loss(model, inputs)
        loss.backward()
        return loss.detach()

    def train(self):
        bs = self.args["per_device_train_batch_size"]
        for epoch in range(self.args["num_train_epochs"]):
            for start in range(0, len(self.train_dataset["input_ids"]), bs):
                inputs = {k: v[start : start + bs] for k, v in self.train_dataset.items()}
                loss = self.training_step(self.model, inputs)
                self.optimizer.step()
                self.optimizer.zero_grad()
            print("epoch", epoch, "loss", loss.item())


class TaggerTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        hidden = model.encode(inputs["input_ids"])
        logits = model.head(hidden)
        main = nn.functional.cross_entropy(logits.flatten(0, 1), inputs["labels"].flatten())
        aux = 1e-3 * hidden.pow(2).mean()
        if FIXED:
            return main + aux
        aux.backward(retain_graph=True)
        return main


class Tagger(nn.Module):
    def __init__(self, vocab=1000, dim=256, tags=9):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.enc = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(dim, 4, 512, dropout=0.1, batch_first=True), 2)
        self.head = nn.Linear(dim, tags)

    def encode(self, ids):
        return self.enc(self.emb(ids))

    def forward(self, ids):
        return self.head(self.encode(ids))


if __name__ == "__main__":
    torch.manual_seed(0)
    ids = torch.randint(0, 1000, (1024, 48))
    data = {"input_ids": ids, "labels": ids % 9}
    args = {"learning_rate": 3e-4, "per_device_train_batch_size": 32, "num_train_epochs": 2}
    TaggerTrainer(Tagger(), args, data).train()
