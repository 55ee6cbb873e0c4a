"""Seed 003's checkerboard network: 1x1 convolutions with BatchNorm, i.e. a per-pixel MLP over
the (x, y) coordinate channels, predicting one value per pixel."""

from __future__ import annotations

from torch import nn


def pointwise_net(width: int = 256, in_channels: int = 2, out_channels: int = 1, depth: int = 3):
    layers: list[nn.Module] = []
    channels = in_channels
    for _ in range(depth):
        layers += [nn.Conv2d(channels, width, 1), nn.BatchNorm2d(width), nn.ReLU()]
        channels = width
    layers.append(nn.Conv2d(channels, out_channels, 1))
    return nn.Sequential(*layers)
