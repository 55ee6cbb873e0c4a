"""save_image / make_grid: enough for scripts that write sample grids."""

from __future__ import annotations

import numpy as np
import torch
from PIL import Image


def make_grid(tensor, nrow=8, padding=2, normalize=False, **kwargs):
    if isinstance(tensor, list):
        tensor = torch.stack(tensor)
    if tensor.dim() == 3:
        tensor = tensor.unsqueeze(0)
    n, c, h, w = tensor.shape
    rows = (n + nrow - 1) // nrow
    grid = torch.zeros(c, rows * (h + padding) + padding, nrow * (w + padding) + padding)
    for i in range(n):
        r, col = divmod(i, nrow)
        top, left = r * (h + padding) + padding, col * (w + padding) + padding
        grid[:, top : top + h, left : left + w] = tensor[i]
    if normalize:
        grid = (grid - grid.min()) / max(float(grid.max() - grid.min()), 1e-12)
    return grid


def save_image(tensor, fp, **kwargs):
    grid = make_grid(tensor.detach().cpu().float(), **kwargs)
    array = (grid.clamp(0, 1) * 255).byte().permute(1, 2, 0).numpy()
    image = array[:, :, 0] if array.shape[2] == 1 else array
    Image.fromarray(np.ascontiguousarray(image)).save(fp)
