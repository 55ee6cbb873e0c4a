"""The Trainer's CUDA path on a real GPU: bf16 and fp16 (GradScaler, clipping after unscale),
channels_last, cudnn.benchmark/TF32, pinned non_blocking copies, a checkpoint saved on CUDA and
resumed on the CPU and back."""

import torch
from torch import nn
from torch.utils.data import TensorDataset

from torchdoctor.trainer import Trainer, TrainerConfig


def conv_net() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(16, 4),
    )


def images(n: int = 64) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(n, 3, 16, 16, generator=generator)
    return TensorDataset(x, (x.mean(dim=(1, 2, 3)) > 0).long() + 2 * (x[:, 0, 0, 0] > 0).long())


def fit(precision: str, **config) -> Trainer:
    settings = dict(batch_size=16, epochs=2, workers=0, quiet=True, seed=0, device="cuda")
    settings.update(config)
    trainer = Trainer(
        conv_net(),
        lambda p: torch.optim.AdamW(p, lr=1e-2),
        nn.CrossEntropyLoss(),
        TrainerConfig(precision=precision, **settings),
    )
    trainer.fit(images(), images(32))
    return trainer


def test_bf16_on_cuda_resolves_the_gpu_techniques_and_trains():
    trainer = fit("auto")
    setup = trainer.setup
    assert setup.device.type == "cuda" and setup.precision == "bf16" and not setup.use_scaler
    assert setup.pin_memory and setup.non_blocking and setup.cudnn_benchmark and setup.tf32
    assert setup.channels_last
    assert next(trainer.model.parameters()).is_cuda
    weight = trainer.model[0].weight
    assert weight.is_contiguous(memory_format=torch.channels_last)
    assert torch.backends.cudnn.benchmark and torch.backends.cuda.matmul.allow_tf32
    first, last = trainer.history[0], trainer.history[-1]
    assert (
        torch.isfinite(torch.tensor(last.train_loss)) and last.train_loss < first.train_loss * 1.5
    )
    assert last.peak_memory_bytes > 0


def test_fp16_uses_a_grad_scaler_and_clips_the_unscaled_gradients():
    trainer = fit("fp16", clip_norm=1e6)
    assert trainer.setup.use_scaler and trainer.scaler is not None
    assert trainer.scaler.get_scale() > 1.0  # the scaler really scaled the loss
    # the recorded pre-clip norm is the true gradients' (unscaled) norm: a scaled one would be
    # the scale (2**16 at the start) times larger
    norm = trainer.history[-1].grad_norm
    assert norm is not None and 0 < norm < 1e3


def test_checkpoint_saved_on_cuda_resumes_on_cpu_and_back(tmp_path):
    trainer = fit("bf16", checkpoint_dir=str(tmp_path), epochs=1)
    resume = dict(checkpoint_dir=str(tmp_path), resume=True)
    on_cpu = fit("auto", device="cpu", epochs=2, **resume)
    assert on_cpu.resumed_from is not None
    assert all(not p.is_cuda for p in on_cpu.model.parameters())
    assert len(on_cpu.history) == 2
    assert on_cpu.history[0].train_loss == trainer.history[0].train_loss
    back = fit("auto", device="cuda", epochs=3, **resume)
    assert back.resumed_from is not None and len(back.history) == 3
    assert all(p.is_cuda for p in back.model.parameters())


def test_pinned_non_blocking_batches_arrive_intact():
    # a pinned host batch copied with non_blocking=True must equal the source once used
    source = torch.randn(256, 1024).pin_memory()
    copies = [source.to("cuda", non_blocking=True) * 1.0 for _ in range(8)]
    torch.cuda.synchronize()
    for copy in copies:
        torch.testing.assert_close(copy.cpu(), source)
