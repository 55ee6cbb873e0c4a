"""Our ResNet-18 has torchvision's layout and parameter count."""

from __future__ import annotations

import torch
from torch import nn

from torchdoctor.models.resnet import BasicBlock, resnet18

TORCHVISION_RESNET18_FC10_PARAMS = 11_181_642  # torchvision resnet18 with fc = Linear(512, 10)
TORCHVISION_RESNET18_PARAMS = 11_689_512  # torchvision resnet18, 1000 classes


def count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def test_parameter_count_matches_torchvision():
    assert count(resnet18(num_classes=10)) == TORCHVISION_RESNET18_FC10_PARAMS
    assert count(resnet18()) == TORCHVISION_RESNET18_PARAMS


def test_layout():
    model = resnet18(num_classes=10)
    assert model.conv1.kernel_size == (7, 7) and model.conv1.stride == (2, 2)
    assert isinstance(model.maxpool, nn.MaxPool2d)
    for name, planes, stride in (
        ("layer1", 64, 1),
        ("layer2", 128, 2),
        ("layer3", 256, 2),
        ("layer4", 512, 2),
    ):
        stage = getattr(model, name)
        assert len(stage) == 2 and all(isinstance(b, BasicBlock) for b in stage)
        assert stage[0].conv1.out_channels == planes and stage[0].conv1.stride == (stride, stride)
        assert (stage[0].downsample is not None) == (name != "layer1")
    assert model.fc.in_features == 512 and model.fc.out_features == 10
    # torchvision's state_dict key names, so its checkpoints would load
    keys = set(model.state_dict())
    assert {
        "conv1.weight",
        "bn1.running_mean",
        "layer2.0.downsample.0.weight",
        "layer4.1.bn2.weight",
        "fc.bias",
    } <= keys


def test_cifar_sized_forward_and_width():
    small = resnet18(num_classes=10, width=8)
    assert small(torch.randn(2, 3, 32, 32)).shape == (2, 10)
    assert count(small) < count(resnet18(num_classes=10)) / 30
