"""evaluate/predict: no autograd graph, dropout off, every module's mode restored."""

import torch
from torch import nn
from trainer_fixtures import make_dataset, make_mlp

from torchdoctor.trainer import Trainer, TrainerConfig


def make_trainer(model, **config):
    # the CPU: these tests compare the Trainer's outputs with the model called on CPU tensors
    config = TrainerConfig(workers=0, quiet=True, batch_size=8, device="cpu", **config)
    return Trainer(model, lambda p: torch.optim.SGD(p, lr=0.1), nn.CrossEntropyLoss(), config)


def test_evaluate_builds_no_graph_and_restores_each_modules_mode():
    model = make_mlp(dropout=0.5)
    model.train()
    model[2].eval()  # a user-frozen submodule must stay in eval afterwards
    seen = []
    model[0].register_forward_hook(
        lambda mod, inp, out: seen.append(
            (torch.is_inference_mode_enabled(), out.requires_grad, mod.training)
        )
    )
    metrics = make_trainer(model).evaluate(make_dataset(20))

    assert set(metrics) == {"loss", "accuracy"}
    assert 0.0 <= metrics["accuracy"] <= 1.0
    assert seen and all(s == (True, False, False) for s in seen)
    assert model.training and model[0].training and not model[2].training


def test_predict_returns_graph_free_outputs_in_order():
    dataset = make_dataset(20)
    model = make_mlp()
    outputs = make_trainer(model).predict(dataset)
    assert outputs.shape == (20, 2)
    assert not outputs.requires_grad and outputs.grad_fn is None
    with torch.no_grad():
        torch.testing.assert_close(outputs, model(dataset.tensors[0]))


def test_dropout_model_evaluates_deterministically():
    model = make_mlp(dropout=0.5)
    trainer = make_trainer(model)
    dataset = make_dataset(40)
    assert trainer.evaluate(dataset) == trainer.evaluate(dataset)
    assert torch.equal(trainer.predict(dataset), trainer.predict(dataset))
    # and dropout is really active in training mode, so the equality above means something
    model.train()
    x = dataset.tensors[0]
    assert not torch.equal(model(x), model(x))


def test_regression_reports_no_accuracy():
    dataset = make_dataset(16)
    targets = torch.nn.functional.one_hot(dataset.tensors[1], 2).float()
    regression = torch.utils.data.TensorDataset(dataset.tensors[0], targets)
    config = TrainerConfig(workers=0, quiet=True, batch_size=8)
    trainer = Trainer(
        make_mlp(), lambda p: torch.optim.SGD(p, lr=0.1), nn.MSELoss(), config, classification=False
    )
    (record,) = trainer.fit(regression, regression)
    assert record.train_accuracy is None and record.val_accuracy is None
    assert trainer.evaluate(regression)["accuracy"] is None
