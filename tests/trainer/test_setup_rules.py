"""The "auto" rules as pure functions, including the CUDA branches (no GPU needed to test them)."""

import pytest
import torch
from torch import nn

from torchdoctor.errors import UsageError
from torchdoctor.trainer import TrainerConfig
from torchdoctor.trainer.setup import (
    has_conv,
    resolve_channels_last,
    resolve_cuda_switch,
    resolve_device,
    resolve_pin_memory,
    resolve_precision,
    resolve_setup,
    resolve_workers,
    validate_config,
)

CPU, CUDA = torch.device("cpu"), torch.device("cuda")


@pytest.mark.parametrize("cores, expected", [(1, 0), (2, 1), (4, 3), (5, 4), (64, 4)])
def test_auto_workers_leave_one_core_and_cap_at_four(cores, expected):
    assert resolve_workers("auto", cores) == expected


def test_explicit_workers_are_kept_and_bad_ones_rejected():
    assert resolve_workers(7, 2) == 7
    for bad in (-1, "x", 1.5, True):
        with pytest.raises(UsageError):
            resolve_workers(bad, 2)


def test_pin_memory_only_for_cuda():
    assert resolve_pin_memory("auto", CUDA) is True
    assert resolve_pin_memory("auto", CPU) is False
    assert resolve_pin_memory(True, CPU) is False  # pinning for a CPU run only costs
    assert resolve_pin_memory(False, CUDA) is False


def test_precision_auto_is_bf16_on_capable_gpus_else_fp32():
    assert resolve_precision("auto", CUDA, bf16_supported=True) == "bf16"
    assert resolve_precision("auto", CUDA, bf16_supported=False) == "fp32"
    assert resolve_precision("auto", CPU, bf16_supported=False) == "fp32"
    assert resolve_precision("bf16", CPU, bf16_supported=False) == "bf16"  # CPU autocast works
    with pytest.raises(UsageError):
        resolve_precision("bf16", CUDA, bf16_supported=False)
    with pytest.raises(UsageError):
        resolve_precision("fp8", CPU, bf16_supported=False)


def test_channels_last_and_cuda_switches_follow_the_device():
    assert resolve_channels_last("auto", CUDA, model_has_conv=True) is True
    assert resolve_channels_last("auto", CUDA, model_has_conv=False) is False
    assert resolve_channels_last("auto", CPU, model_has_conv=True) is False
    assert resolve_channels_last(True, CPU, model_has_conv=True) is True
    assert resolve_cuda_switch("auto", CUDA) is True and resolve_cuda_switch("auto", CPU) is False
    assert has_conv(nn.Sequential(nn.Conv2d(1, 1, 1))) and not has_conv(nn.Linear(1, 1))


def test_scaler_only_for_fp16_and_loader_extras_only_with_workers():
    model = nn.Linear(2, 2)
    fp16 = resolve_setup(TrainerConfig(device="cpu", precision="fp16", workers=0), model)
    assert fp16.use_scaler and fp16.persistent_workers is False and fp16.prefetch_factor is None
    bf16 = resolve_setup(TrainerConfig(device="cpu", precision="bf16", workers=2), model)
    assert not bf16.use_scaler and bf16.persistent_workers and bf16.prefetch_factor == 2
    assert bf16.autocast_dtype == torch.bfloat16 and not bf16.non_blocking  # nothing to overlap


@pytest.mark.parametrize(
    "field, value",
    [
        ("batch_size", 0),
        ("accumulate", -1),
        ("epochs", 0),
        ("clip_norm", 0.0),
        ("precision", "fp8"),
        ("workers", "x"),
        ("max_steps", 0),
        ("resume", True),
    ],
)
def test_bad_settings_are_usage_errors_naming_the_setting(field, value):
    with pytest.raises(UsageError) as info:
        validate_config(TrainerConfig(**{field: value}))
    assert field.split("_")[0] in str(info.value)


@pytest.mark.parametrize(
    "name, message",
    [
        # QA3 F13: these used to fail inside model.to(device) with a traceback
        ("meta", "device 'meta' is not supported: use cpu, cuda or cuda:N"),
        ("xpu", "device 'xpu' is not supported: use cpu, cuda or cuda:N"),
        ("gpu", "unknown device 'gpu'"),
    ],
)
def test_devices_the_loop_cannot_use_are_usage_errors(name, message):
    with pytest.raises(UsageError) as error:
        resolve_device(name)
    assert str(error.value) == message


@pytest.mark.skipif(torch.backends.mps.is_available(), reason="this machine has MPS")
def test_mps_without_mps_is_a_usage_error():
    with pytest.raises(UsageError, match="^device 'mps' requested but MPS is not available$"):
        resolve_device("mps")
