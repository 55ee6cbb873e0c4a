"""Resample: a module from one sample rate to another (linear interpolation, not torchaudio's
windowed sinc: the shapes and the cost per sample are what the stand-in keeps)."""

from __future__ import annotations

import torch
from torch import nn


class Resample(nn.Module):
    def __init__(self, orig_freq: int = 16000, new_freq: int = 16000, **kwargs) -> None:
        super().__init__()
        self.orig_freq, self.new_freq = int(orig_freq), int(new_freq)

    def forward(self, waveform: torch.Tensor) -> torch.Tensor:
        if self.orig_freq == self.new_freq:
            return waveform
        shape = waveform.shape
        flat = waveform.reshape(-1, 1, shape[-1])
        size = max(1, shape[-1] * self.new_freq // self.orig_freq)
        out = nn.functional.interpolate(flat, size=size, mode="linear", align_corners=False)
        return out.reshape(*shape[:-1], size)
