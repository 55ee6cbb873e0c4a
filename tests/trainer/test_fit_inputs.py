"""fit() on a ready DataLoader, max_steps, per-optimizer-step scheduling, the progress bar path."""

import torch
from torch import nn
from torch.utils.data import DataLoader
from trainer_fixtures import make_dataset, make_mlp

import torchdoctor.trainer.progress as progress
from torchdoctor.trainer import Trainer, TrainerConfig


def sgd(params):
    return torch.optim.SGD(params, lr=0.1)


def test_fit_accepts_a_ready_dataloader_and_learns():
    dataset = make_dataset(64)
    loader = DataLoader(dataset, batch_size=16, shuffle=False)
    config = TrainerConfig(epochs=4, workers=0, quiet=True)
    history = Trainer(make_mlp(), sgd, nn.CrossEntropyLoss(), config).fit(loader, loader)
    assert [r.steps for r in history] == [4, 8, 12, 16]
    assert history[-1].train_loss < history[0].train_loss
    assert all(r.samples_per_s > 0 and r.peak_memory_bytes > 0 for r in history)


def test_max_steps_stops_mid_epoch_and_scheduler_steps_per_optimizer_step():
    # 40 samples, batch 4, accumulate 2 -> 5 optimizer steps per epoch; stop after 7
    config = TrainerConfig(epochs=5, batch_size=4, accumulate=2, max_steps=7, workers=0, quiet=True)
    scheduler_factory = lambda opt: torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)  # noqa: E731
    trainer = Trainer(make_mlp(), sgd, nn.CrossEntropyLoss(), config, scheduler=scheduler_factory)
    history = trainer.fit(make_dataset(40))
    assert [r.steps for r in history] == [5, 7]  # the partial second epoch is reported
    assert trainer.scheduler.last_epoch == 7
    assert trainer.optimizer.param_groups[0]["lr"] == 0.1 * 0.5**7


def test_progress_bar_path_runs_when_enabled(monkeypatch, capsys):
    monkeypatch.setattr(progress, "progress_enabled", lambda quiet: not quiet)
    monkeypatch.setattr(progress, "REFRESH_S", 0.0)  # refresh (and read the loss) every step
    config = TrainerConfig(epochs=2, batch_size=8, workers=0)
    history = Trainer(make_mlp(), sgd, nn.CrossEntropyLoss(), config).fit(make_dataset(32))
    assert len(history) == 2
    assert capsys.readouterr().out == ""  # the bar goes to stderr, never into piped stdout
