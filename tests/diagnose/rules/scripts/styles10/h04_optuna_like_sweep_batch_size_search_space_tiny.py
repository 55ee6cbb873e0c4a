"""A hyperparameter sweep in the style of Optuna written by the author: a `Study` runs
`objective(trial)` for several trials, `trial.suggest_int` / `suggest_float` draw the
hyperparameters, and each trial trains a fresh wide MLP for an epoch and reports validation
accuracy. Models are trained one after another in the same process.

Planted: the batch-size search space `suggest_int("batch_size", 2, 4)` (copied from a recipe
for a GPU that held one sample of a huge model): every forward and backward of every trial runs
on 2-4 rows of a model that would take 128 in the same time. --fixed: the space is 128-256.
"""

import random
import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv


class Trial:
    def __init__(self, rng):
        self.rng, self.params = rng, {}

    def suggest_int(self, name, low, high):
        self.params[name] = self.rng.randint(low, high)
        return self.params[name]

    def suggest_float(self, name, low, high, log=False):
        self.params[name] = self.rng.uniform(low, high)
        return self.params[name]


class Study:
    def __init__(self, seed=0):
        self.rng, self.trials = random.Random(seed), []

    def optimize(self, objective, n_trials):
        for number in range(n_trials):
            trial = Trial(self.rng)
            value = objective(trial)
            self.trials.append((value, trial.params))
            print("trial", number, value, trial.params)

    @property
    def best_params(self):
        return max(self.trials, key=lambda t: t[0])[1]


def make_objective(x, y, xv, yv):
    def objective(trial):
        batch = trial.suggest_int("batch_size", 128, 256) if FIXED else trial.suggest_int(
            "batch_size", 2, 4)
        lr = trial.suggest_float("lr", 1e-4, 3e-3, log=True)
        model = nn.Sequential(nn.Linear(64, 768), nn.ReLU(), nn.Linear(768, 768), nn.ReLU(),
                              nn.Linear(768, 2))
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        for start in range(0, 6000, batch):
            loss = nn.functional.cross_entropy(model(x[start : start + batch]),
                                               y[start : start + batch])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            return (model(xv).argmax(1) == yv).float().mean().item()

    return objective


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(40000, 64)
    y = (x[:, :6].sum(1) > 0).long()
    xv, yv = x[-2000:], y[-2000:]
    study = Study()
    study.optimize(make_objective(x, y, xv, yv), n_trials=3)
    print("best", study.best_params)
