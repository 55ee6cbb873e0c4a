"""Facts about a model, read once when it is first called: size, dtypes, layers, wrapper."""

from __future__ import annotations

import torch
from torch import nn

from torchdoctor.diagnose.observations import ModuleObservation


def unwrap(module: nn.Module) -> tuple[str | None, nn.Module]:
    """(wrapper name, the wrapped model) for DataParallel, DDP and torch.compile wrappers."""
    if isinstance(module, nn.parallel.DistributedDataParallel):
        return "DistributedDataParallel", module.module
    if isinstance(module, nn.DataParallel):
        return "DataParallel", module.module
    if type(module).__name__ == "OptimizedModule" and hasattr(module, "_orig_mod"):
        return "compiled", module._orig_mod
    return None, module


# A layer holding less of the model's matmul/conv weights than this does too little of its
# arithmetic for padding to show: a classifier head's Linear(256->10) of a conv net (0.2% of its
# weights) is the number of classes, nothing to pad, and was the finding on clean bf16 loops on
# the H100 (round 13), where the padded-layer what-if measured it at 0.98x.
MIN_WEIGHT_SHARE = 0.01


def _dims(name: str, layer: nn.Module) -> str | None:
    """ "fc1: Linear(100->37)" when an input or output width is not a multiple of 8."""
    if isinstance(layer, nn.Linear):
        kind, size_in, size_out = "Linear", layer.in_features, layer.out_features
    elif isinstance(layer, nn.modules.conv._ConvNd):
        kind, size_in, size_out = type(layer).__name__, layer.in_channels, layer.out_channels
        if size_in <= 4:  # the image channels of a first conv: nothing to change there
            size_in = 8
    else:
        return None
    if size_in % 8 == 0 and size_out % 8 == 0:
        return None
    return f"{name or '<root>'}: {kind}({layer_in(layer)}->{layer_out(layer)})"


def layer_in(layer: nn.Module) -> int:
    return layer.in_features if isinstance(layer, nn.Linear) else layer.in_channels


def layer_out(layer: nn.Module) -> int:
    return layer.out_features if isinstance(layer, nn.Linear) else layer.out_channels


def describe_module(module: nn.Module, location: str) -> ModuleObservation:
    wrapper, model = unwrap(module)
    params = list(model.parameters())
    dtypes: dict[str, int] = {}
    for p in params:
        name = str(p.dtype).replace("torch.", "")
        dtypes[name] = dtypes.get(name, 0) + p.numel()
    observation = ModuleObservation(
        class_name=type(model).__name__,
        location=location,
        device=str(params[0].device) if params else "cpu",
        parameters=sum(p.numel() for p in params),
        trainable_parameters=sum(p.numel() for p in params if p.requires_grad),
        parameter_bytes=sum(p.numel() * p.element_size() for p in params),
        parameter_dtypes=dtypes,
        wrapper=wrapper,
        parameter_tensors=len(params),
    )
    weighted = (nn.Linear, nn.modules.conv._ConvNd)
    weights = sum(m.weight.numel() for m in model.modules() if isinstance(m, weighted))
    for name, layer in model.named_modules():
        if isinstance(layer, nn.SyncBatchNorm):
            observation.sync_batchnorm_layers += 1
        if isinstance(layer, nn.modules.batchnorm._BatchNorm):
            observation.batchnorm_layers += 1
        elif isinstance(layer, nn.modules.dropout._DropoutNd):
            observation.dropout_layers += 1
        elif isinstance(layer, nn.modules.conv._ConvNd):
            observation.conv_layers += 1
        dims = _dims(name, layer)
        if dims and layer.weight.numel() >= MIN_WEIGHT_SHARE * weights:
            observation.dims_not_multiple_of_8.append(dims)
    return observation


def watch_conv_layouts(module: nn.Module, layouts: list[bool], keep_handle) -> None:
    """Record, once per Conv2d, whether its input arrived channels_last (then stop watching)."""
    _, model = unwrap(module)
    for layer in model.modules():
        if not isinstance(layer, nn.Conv2d):
            continue
        # this layer's own handle: a closure over the loop variable would remove the last
        # layer's hook from every layer, leaving the others' hooks (unpicklable local functions)
        # on the model for good, and torch.save(model) would fail under diagnose
        own: list = []

        def once(_layer, args, own=own):
            x = args[0] if args else None
            if isinstance(x, torch.Tensor) and x.dim() == 4:
                channels_last = x.is_contiguous(memory_format=torch.channels_last)
                layouts.append(channels_last and (not x.is_contiguous() or x.stride(1) == 1))
            own[0].remove()

        own.append(layer.register_forward_pre_hook(once))
        keep_handle(own[0])
