"""ResNet-18/34/50 as torchvision builds them (attribute names, layer order, `fc.in_features`),
random weights only: programs that build one with `weights=None` train it; nothing downloads.
VGG16 also with its weights named (random too: a style transfer's frozen perceptual-loss network,
whose ImageNet weights are a download). Other constructors are named so that imports succeed and
fail when called."""

from __future__ import annotations

from torch import nn


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample=None) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(out)) + identity)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample=None) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        return self.relu(self.bn3(self.conv3(out)) + identity)


class ResNet(nn.Module):
    def __init__(self, block, layers: list[int], num_classes: int = 1000) -> None:
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._layer(block, 64, layers[0], 1)
        self.layer2 = self._layer(block, 128, layers[1], 2)
        self.layer3 = self._layer(block, 256, layers[2], 2)
        self.layer4 = self._layer(block, 512, layers[3], 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)

    def _layer(self, block, planes: int, blocks: int, stride: int) -> nn.Sequential:
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * block.expansion, 1, stride, bias=False),
                nn.BatchNorm2d(planes * block.expansion),
            )
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(self.avgpool(x).flatten(1))


def _no_weights(weights, kwargs: dict) -> None:
    # torchvision < 0.13 spelled it `pretrained=True/False`
    if weights is not None or kwargs.pop("pretrained", False):
        raise RuntimeError("the torchvision stand-in has no pretrained weights")


def resnet18(weights=None, progress=True, **kwargs) -> ResNet:
    _no_weights(weights, kwargs)
    return ResNet(BasicBlock, [2, 2, 2, 2], **kwargs)


def resnet34(weights=None, progress=True, **kwargs) -> ResNet:
    _no_weights(weights, kwargs)
    return ResNet(BasicBlock, [3, 4, 6, 3], **kwargs)


def resnet50(weights=None, progress=True, **kwargs) -> ResNet:
    _no_weights(weights, kwargs)
    return ResNet(Bottleneck, [3, 4, 6, 3], **kwargs)


class VGG16_Weights:  # noqa: N801 (torchvision's name)
    # a feature extractor's weights (a perceptual loss): the stand-in's VGG16 is random either
    # way, as the stand-in's data is; naming them builds the same layers
    IMAGENET1K_V1 = "IMAGENET1K_V1"
    IMAGENET1K_FEATURES = "IMAGENET1K_FEATURES"
    DEFAULT = IMAGENET1K_V1


_VGG16_LAYERS = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
                 512, 512, 512, "M"]  # fmt: skip


class VGG(nn.Module):
    """torchvision's VGG: `features` (3x3 convolutions and ReLUs, max pools), `avgpool`,
    `classifier`, with its indices."""

    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        channels = 3
        for width in _VGG16_LAYERS:
            if width == "M":
                layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            else:
                layers += [nn.Conv2d(channels, int(width), 3, padding=1), nn.ReLU(inplace=True)]
                channels = int(width)
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(),
            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(),
            nn.Linear(4096, num_classes),
        )  # fmt: skip

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


def vgg16(weights=None, progress=True, **kwargs) -> VGG:
    """Random weights, named weights or not (a frozen perceptual-loss network here)."""
    kwargs.pop("pretrained", None)
    return VGG(**kwargs)
