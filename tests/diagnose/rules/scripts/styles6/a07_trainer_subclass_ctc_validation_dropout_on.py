"""A small framework `BaseTrainer` (fit loop, checkpoint hooks, `training_step` /
`validation_step` to override) and a `SpeechTrainer(BaseTrainer)` for a CTC acoustic model on
synthetic log-mel frames (a conv front end, a 2-layer GRU with dropout, a character head).

Planted: the subclass overrides `validate()` (to add a greedy-decode metric) and does not call
`self.model.eval()` as the base class's `validate()` does: validation runs with dropout on.
--fixed: the override sets eval mode first.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
MELS, CHARS = 40, 28


class BaseTrainer:
    def __init__(self, model, lr=1e-3, epochs=3):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.epochs = epochs

    def training_step(self, batch):
        raise NotImplementedError

    def validation_step(self, batch):
        raise NotImplementedError

    def validate(self, loader):
        self.model.eval()
        with torch.no_grad():
            losses = [self.validation_step(b) for b in loader]
        return sum(losses) / len(losses)

    def fit(self, train_loader, val_loader):
        for epoch in range(self.epochs):
            self.model.train()
            for batch in train_loader:
                loss = self.training_step(batch)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            print(f"epoch {epoch} val {self.validate(val_loader)}")


class AcousticModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.front = nn.Sequential(nn.Conv1d(MELS, 96, 5, stride=2, padding=2), nn.ReLU())
        self.rnn = nn.GRU(96, 96, num_layers=2, dropout=0.3, batch_first=True)
        self.drop = nn.Dropout(0.3)
        self.head = nn.Linear(96, CHARS)

    def forward(self, mel):
        h = self.front(mel.transpose(1, 2)).transpose(1, 2)
        return self.head(self.drop(self.rnn(h)[0])).log_softmax(-1)


class SpeechTrainer(BaseTrainer):
    ctc = nn.CTCLoss(zero_infinity=True)

    def _loss(self, batch):
        mel, text = batch
        logp = self.model(mel).transpose(0, 1)
        in_lens = torch.full((len(mel),), logp.shape[0], dtype=torch.long)
        out_lens = torch.full((len(mel),), text.shape[1], dtype=torch.long)
        return self.ctc(logp, text, in_lens, out_lens), logp

    def training_step(self, batch):
        return self._loss(batch)[0]

    def validation_step(self, batch):
        return self._loss(batch)[0].item()

    def validate(self, loader):
        if FIXED:
            self.model.eval()
        errs, total = 0, 0
        with torch.no_grad():
            for batch in loader:
                _, logp = self._loss(batch)
                best = logp.argmax(-1).T
                errs += int((best[:, : batch[1].shape[1]] != batch[1]).sum())
                total += batch[1].numel()
        return errs / total


def make_split(n, gen):
    text = torch.randint(1, CHARS, (n, 12), generator=gen)
    mel = torch.randn(n, 100, MELS, generator=gen) * 0.3
    mel[:, :96, :] += nn.functional.one_hot(text.repeat_interleave(8, 1), MELS)[:, :96].float()
    return [(mel[i:i + 16], text[i:i + 16]) for i in range(0, n, 16)]


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    trainer = SpeechTrainer(AcousticModel())
    trainer.fit(make_split(512, gen), make_split(256, gen))


if __name__ == "__main__":
    main()
