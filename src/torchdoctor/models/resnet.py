"""ResNet-18 with torchvision's layout (seed 001 uses `torchvision.models.resnet18` with a new fc),
written here because torchvision is not a dependency. Same modules, names and parameter count:
conv1 7x7/2 + BN + ReLU + maxpool 3x3/2, four stages of two BasicBlocks (64, 128, 256, 512
channels, stride 2 from stage 2 on, 1x1 conv + BN downsample), global average pool, fc.
`width` scales every stage (64 is torchvision's) so the model can be made small for a CPU.
"""

from __future__ import annotations

import torch
from torch import nn


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes: int, planes: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or in_planes != planes:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False),
                nn.BatchNorm2d(planes),
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class ResNet(nn.Module):
    def __init__(self, layers=(2, 2, 2, 2), num_classes: int = 1000, width: int = 64):
        super().__init__()
        self.in_planes = width
        self.conv1 = nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        self.layer1 = self._stage(width, layers[0], stride=1)
        self.layer2 = self._stage(width * 2, layers[1], stride=2)
        self.layer3 = self._stage(width * 4, layers[2], stride=2)
        self.layer4 = self._stage(width * 8, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 8, num_classes)
        self._init_weights()

    def _stage(self, planes: int, blocks: int, stride: int) -> nn.Sequential:
        modules = [BasicBlock(self.in_planes, planes, stride)]
        self.in_planes = planes
        modules += [BasicBlock(planes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*modules)

    def _init_weights(self) -> None:
        # torchvision's initialisation: He (fan_out) for convs, BN weight 1 and bias 0.
        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(module, nn.BatchNorm2d):
                nn.init.ones_(module.weight)
                nn.init.zeros_(module.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet18(num_classes: int = 1000, width: int = 64) -> ResNet:
    return ResNet((2, 2, 2, 2), num_classes=num_classes, width=width)
