"""fit() on a ready DataLoader, max_steps, per-optimizer-step scheduling, the progress bar path."""

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader
from trainer_fixtures import make_dataset, make_mlp

import torchdoctor.trainer.progress as progress
from torchdoctor.errors import UsageError
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

    def halve_every_step(opt):
        return torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)

    trainer = Trainer(make_mlp(), sgd, nn.CrossEntropyLoss(), config, scheduler=halve_every_step)
    history = trainer.fit(make_dataset(40))
    assert [r.steps for r in history] == [5, 7]  # the partial second epoch is reported
    assert trainer.scheduler.last_epoch == 7
    assert trainer.optimizer.param_groups[0]["lr"] == 0.1 * 0.5**7


def test_on_epoch_end_sees_each_record_after_its_checkpoint_including_a_partial_epoch(tmp_path):
    # 40 samples, batch 8 -> 5 steps per epoch; max_steps 7 stops epoch 2 after 2 of its steps
    config = TrainerConfig(
        epochs=3, batch_size=8, max_steps=7, workers=0, quiet=True, checkpoint_dir=str(tmp_path)
    )
    trainer = Trainer(make_mlp(), sgd, nn.CrossEntropyLoss(), config)
    seen = []

    def on_epoch_end(record):
        saved = sorted(p.name for p in tmp_path.iterdir())
        seen.append((record.epoch, record.steps, list(trainer.history), saved))

    history = trainer.fit(make_dataset(40), make_dataset(16, seed=1), on_epoch_end=on_epoch_end)
    assert [(epoch, steps) for epoch, steps, _, _ in seen] == [(1, 5), (2, 7)]
    assert seen[0][2] == history[:1] and seen[1][2] == history  # already in the history
    assert seen[0][3] == ["ckpt-000000005.pt"]  # the epoch's checkpoint is written first
    assert seen[1][3] == ["ckpt-000000005.pt", "ckpt-000000007.pt"]
    assert history[0].val_loss is not None  # called after validation


def test_progress_bar_path_runs_when_enabled(monkeypatch, capsys):
    monkeypatch.setattr(progress, "progress_enabled", lambda quiet: not quiet)
    monkeypatch.setattr(progress, "REFRESH_S", 0.0)  # refresh (and read the loss) every step
    config = TrainerConfig(epochs=2, batch_size=8, workers=0)
    history = Trainer(make_mlp(), sgd, nn.CrossEntropyLoss(), config).fit(make_dataset(32))
    assert len(history) == 2
    assert capsys.readouterr().out == ""  # the bar goes to stderr, never into piped stdout


def test_resume_with_an_empty_directory_starts_fresh_and_leaves_a_checkpoint(tmp_path):
    config = TrainerConfig(
        epochs=1,
        batch_size=8,
        workers=0,
        quiet=True,
        resume=True,
        checkpoint_dir=str(tmp_path / "ckpt"),
    )
    (record,) = Trainer(make_mlp(), sgd, nn.CrossEntropyLoss(), config).fit(make_dataset(32))
    assert record.steps == 4
    assert [p.name for p in (tmp_path / "ckpt").iterdir()] == ["ckpt-000000004.pt"]


def test_from_recipe_applies_recipe_defaults_and_trains_on_its_data():
    from torchdoctor.recipes.base import Recipe

    recipe = Recipe(
        name="t",
        model=make_mlp(),
        train_data=make_dataset(24),
        loss_fn=nn.CrossEntropyLoss(),
        optimizer=sgd,
        val_data=make_dataset(8, seed=1),
        defaults={"batch_size": 6, "epochs": 2, "workers": 0, "quiet": True},
    )
    trainer = Trainer.from_recipe(recipe)
    history = trainer.fit()
    assert trainer.config.batch_size == 6 and [r.steps for r in history] == [4, 8]
    assert history[-1].val_loss is not None


def test_a_pathlib_checkpoint_dir_saves_and_resumes(tmp_path):
    # the config is stored in each checkpoint: a Path in it made the first save fail, after the
    # epoch's work (weights_only loading cannot read a Path back)
    def run(resume, max_steps):
        config = TrainerConfig(
            epochs=2,
            batch_size=8,
            workers=0,
            quiet=True,
            resume=resume,
            checkpoint_dir=tmp_path / "ckpt",
            max_steps=max_steps,
        )
        return Trainer(make_mlp(), sgd, nn.CrossEntropyLoss(), config).fit(make_dataset(32))

    assert [r.steps for r in run(False, 6)] == [4, 6]
    assert [r.steps for r in run(True, None)] == [4, 8]  # continued from step 6


def test_an_optimizer_of_another_models_parameters_is_refused_up_front():
    # QA3 F6: it used to "train" without ever changing the model
    config = TrainerConfig(workers=0, quiet=True)
    stray = torch.optim.SGD(make_mlp().parameters(), lr=0.1)
    with pytest.raises(UsageError, match="holds none of the model's parameters"):
        Trainer(make_mlp(), stray, nn.CrossEntropyLoss(), config)
    model = make_mlp()
    head_only = torch.optim.SGD(list(model.parameters())[-2:], lr=0.1)  # partial is a choice
    Trainer(model, head_only, nn.CrossEntropyLoss(), config).fit(make_dataset(16))


def test_empty_data_is_named_by_what_it_is_for():
    # QA3 F7: evaluate()/predict() on empty data used to say "the training data is empty"
    trainer = Trainer(make_mlp(), sgd, nn.CrossEntropyLoss(), TrainerConfig(workers=0, quiet=True))
    empty = make_dataset(0)
    with pytest.raises(UsageError, match="^the evaluation data is empty$"):
        trainer.evaluate(empty)
    with pytest.raises(UsageError, match="^the prediction data is empty$"):
        trainer.predict(empty)
    with pytest.raises(UsageError, match="^the validation data is empty$"):
        trainer.fit(make_dataset(8), empty)
    with pytest.raises(UsageError, match="^the training data is empty$"):
        trainer.fit(empty)
