"""Each built-in recipe learns at a tiny size, trained by torchdoctor.Trainer on the CPU."""

from __future__ import annotations

import torch

from torchdoctor.recipes.loading import load_recipe
from torchdoctor.trainer import Trainer, TrainerConfig


def fit(recipe, **config):
    trainer = Trainer.from_recipe(
        recipe, TrainerConfig(workers=0, device="cpu", quiet=True, **config)
    )
    return trainer, trainer.fit(recipe.train_data, recipe.val_data)


def test_shapes_reaches_90_percent_validation_accuracy(tmp_path):
    recipe = load_recipe("shapes", n_train=100, n_val=25, image_size=32, cache_dir=str(tmp_path))
    assert len(recipe.train_data) == 400 and recipe.train_data.classes[0] == "circle"
    _, history = fit(recipe, epochs=8, batch_size=32)
    assert history[-1].val_accuracy > 0.9


def test_cifar_resnet_learns_well_above_chance():
    recipe = load_recipe("cifar-resnet", n_train=400, n_val=100, width=8)
    image, label = recipe.train_data[0]
    assert image.shape == (3, 32, 32) and image.dtype == torch.float32
    assert 0 <= int(label) < 10
    _, history = fit(recipe, epochs=4, batch_size=32)
    assert history[-1].val_accuracy > 0.5  # chance is 0.1


def test_checkerboard_loss_falls_well_below_its_start():
    recipe = load_recipe("checkerboard", count=128, width=32)
    trainer = Trainer.from_recipe(
        recipe, TrainerConfig(workers=0, device="cpu", quiet=True, epochs=5, batch_size=16)
    )
    before = trainer.evaluate(recipe.val_data)["loss"]
    history = trainer.fit(recipe.train_data, recipe.val_data)
    assert history[-1].val_accuracy is None  # a regression: no accuracy
    assert history[-1].val_loss < 0.4 * before
