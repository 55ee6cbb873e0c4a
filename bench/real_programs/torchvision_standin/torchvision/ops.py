"""Names of torchvision.ops that libraries (torchmetrics) import at import time; not computed."""

from __future__ import annotations


def _missing(*args, **kwargs):
    raise NotImplementedError("the torchvision stand-in has no box operations")


box_area = box_convert = box_iou = generalized_box_iou = _missing
distance_box_iou = complete_box_iou = _missing
