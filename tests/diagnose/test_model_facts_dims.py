"""Layers named for sizes that are not multiples of 8 (rule D208's evidence): only those that do a
share of the model's matmul work. On the H100 (round 13) a clean bf16 conv net got D208 for its
10-class head, Linear(256->10): the number of classes, 0.2% of the weights."""

from torch import nn

from torchdoctor.diagnose.probes.model_facts import describe_module


def conv_net() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 64, 3),
        nn.Conv2d(64, 128, 3),
        nn.Conv2d(128, 256, 3),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(256, 10),
    )


def test_a_small_classifier_head_is_not_named():
    assert describe_module(conv_net(), "x.py:1").dims_not_multiple_of_8 == []


def test_unaligned_layers_doing_the_work_are_named_not_their_10_class_head():
    model = nn.Sequential(nn.Linear(1000, 100), nn.ReLU(), nn.Linear(100, 10))
    assert describe_module(model, "x.py:1").dims_not_multiple_of_8 == ["0: Linear(1000->100)"]
