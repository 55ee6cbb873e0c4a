"""Few-shot classification with prototypical networks: episodes of N-way K-shot support and query
sets drawn from synthetic classes, prototypes as the support embeddings' means, a softmax over
negative squared distances; an `EpisodicTrainer` class with a separate learning-rate scheduler.

Planted: the trainer has a second optimizer for the learnable distance temperature and clears
gradients through that one only (`self.temp_opt.zero_grad()`), so the encoder's gradients add up
over every episode. --fixed: both optimizers are cleared.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
WAYS, SHOTS, QUERIES, DIM = 5, 5, 10, 32


class EpisodicTrainer:
    def __init__(self, encoder, classes):
        self.encoder, self.classes = encoder, classes
        self.opt = torch.optim.Adam(encoder.parameters(), lr=1e-3)
        self.log_temp = nn.Parameter(torch.zeros(()))
        self.temp_opt = torch.optim.SGD([self.log_temp], lr=1e-2)
        self.sched = torch.optim.lr_scheduler.StepLR(self.opt, 200, 0.5)

    def sample_episode(self):
        chosen = torch.randperm(len(self.classes))[:WAYS]
        centers = self.classes[chosen]
        support = centers[:, None] + 0.5 * torch.randn(WAYS, SHOTS, DIM)
        query = centers[:, None] + 0.5 * torch.randn(WAYS, QUERIES, DIM)
        return support, query

    def episode_loss(self, support, query):
        protos = self.encoder(support.view(-1, DIM)).view(WAYS, SHOTS, -1).mean(1)
        q = self.encoder(query.view(-1, DIM))
        logits = -torch.cdist(q, protos).pow(2) * self.log_temp.exp()
        targets = torch.arange(WAYS).repeat_interleave(QUERIES)
        return nn.functional.cross_entropy(logits, targets), (
            logits.argmax(1) == targets
        ).float().mean()

    def train(self, episodes):
        for ep in range(episodes):
            loss, acc = self.episode_loss(*self.sample_episode())
            if FIXED:
                self.opt.zero_grad()
            self.temp_opt.zero_grad()
            loss.backward()
            self.opt.step()
            self.temp_opt.step()
            self.sched.step()
            if ep % 200 == 0:
                print(ep, loss.item(), acc.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(DIM, 128), nn.ReLU(), nn.Linear(128, 64))
    EpisodicTrainer(encoder, torch.randn(64, DIM) * 2).train(800)
