"""channels_last, activation checkpointing and bf16 autocast on a real conv model."""

import copy

import torch
from torch import nn
from torch.utils.data import TensorDataset

from torchdoctor.errors import UsageError
from torchdoctor.trainer import Trainer, TrainerConfig
from torchdoctor.trainer.modelprep import checkpoint_submodules


class SmallConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.block = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 1))
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        x = self.block(torch.relu(self.stem(x)))
        return self.head(x.mean(dim=(2, 3)))


def image_data(n=12):
    g = torch.Generator().manual_seed(0)
    images = torch.randn(n, 3, 8, 8, generator=g)
    return TensorDataset(images, torch.randint(0, 3, (n,), generator=g))


def conv_trainer(model, **config):
    config = TrainerConfig(workers=0, quiet=True, batch_size=4, **config)
    return Trainer(model, lambda p: torch.optim.SGD(p, lr=0.01), nn.CrossEntropyLoss(), config)


def test_channels_last_converts_weights_and_inputs():
    torch.manual_seed(0)
    model = SmallConvNet()
    layouts = []
    model.stem.register_forward_pre_hook(
        lambda mod, args: layouts.append(args[0].is_contiguous(memory_format=torch.channels_last))
    )
    conv_trainer(model, channels_last=True).fit(image_data())
    assert model.stem.weight.is_contiguous(memory_format=torch.channels_last)
    assert not model.stem.weight.is_contiguous()  # really NHWC, not a 1x1 corner case
    assert layouts and all(layouts)


def test_channels_last_auto_is_off_on_cpu():
    model = SmallConvNet()
    conv_trainer(model, device="cpu").fit(image_data())
    assert model.stem.weight.is_contiguous()


def test_activation_checkpointing_recomputes_and_gives_equal_gradients():
    torch.manual_seed(0)
    plain = SmallConvNet()
    checkpointed = copy.deepcopy(plain)
    checkpoint_submodules(checkpointed, ["block"])
    calls = []
    checkpointed.block[0].register_forward_hook(lambda *_: calls.append(1))
    x, y = image_data().tensors

    for model in (plain, checkpointed):
        nn.functional.cross_entropy(model(x), y).backward()
    assert len(calls) == 2  # forward + recomputation in backward: checkpointing really ran
    for (name, a), (_, b) in zip(plain.named_parameters(), checkpointed.named_parameters()):
        torch.testing.assert_close(a.grad, b.grad, atol=1e-6, rtol=0, msg=name)
    assert plain.state_dict().keys() == checkpointed.state_dict().keys()


def test_activation_checkpointing_unknown_submodule_is_a_usage_error():
    try:
        conv_trainer(SmallConvNet(), activation_checkpointing=["nope"])
    except UsageError as exc:
        assert "nope" in str(exc)
    else:
        raise AssertionError("expected UsageError")


def test_bf16_autocast_trains_on_cpu():
    model = SmallConvNet()
    dtypes = []
    model.head.register_forward_hook(lambda mod, inp, out: dtypes.append(out.dtype))
    (record,) = conv_trainer(model, precision="bf16").fit(image_data())
    assert dtypes and all(d == torch.bfloat16 for d in dtypes)
    assert model.head.weight.dtype == torch.float32  # master weights stay fp32
    assert record.train_loss == record.train_loss  # finite, not NaN
