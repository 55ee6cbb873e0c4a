"""Gradient accumulation weighting, clipping order, and zero_grad(set_to_none) in the real loop."""

import torch
from torch import nn
from trainer_fixtures import RecordingSGD, make_dataset, make_mlp, total_norm

from torchdoctor.trainer import Trainer, TrainerConfig
from torchdoctor.trainer.sampler import ResumableSampler
from torchdoctor.trainer.steps import StepParts, backward, forward_loss, optimizer_step


def full_batch_grads(model, dataset, indices):
    model.zero_grad(set_to_none=True)
    x, y = dataset.tensors[0][indices], dataset.tensors[1][indices]
    nn.functional.cross_entropy(model(x), y).backward()
    return [p.grad.clone() for p in model.parameters()]


def test_accumulated_windows_match_full_batch_including_short_last_window():
    # 37 samples at batch 4 -> 10 micro-batches (the last holds 1 sample); accumulate=4 ->
    # windows of 4, 4 and 2 micro-batches = 16, 16 and 5 samples.
    dataset, batch, accumulate = make_dataset(37), 4, 4
    model = make_mlp()
    optimizer = RecordingSGD(model.parameters(), lr=0.0)  # lr 0: every window sees same weights
    model(dataset.tensors[0]).sum().backward()  # stale gradients fit() must not add to window 1
    config = TrainerConfig(
        batch_size=batch, accumulate=accumulate, workers=0, quiet=True, seed=3, device="cpu"
    )  # the CPU: the windows' gradients are compared with gradients computed on CPU tensors
    trainer = Trainer(model, optimizer, nn.CrossEntropyLoss(), config)
    trainer.fit(dataset)

    assert len(optimizer.seen) == 3
    # set_to_none: the loop leaves no gradient tensors behind after its last step
    assert all(p.grad is None for p in model.parameters())
    order = ResumableSampler(len(dataset), shuffle=True, seed=3).rank_order(0)
    bounds = [(0, 16), (16, 32), (32, 37)]
    for seen, (start, end) in zip(optimizer.seen, bounds):
        expected = full_batch_grads(model, dataset, order[start:end])
        for got, want in zip(seen, expected):
            torch.testing.assert_close(got, want, atol=1e-6, rtol=0)


def step_parts(model, optimizer, clip, scaler=None):
    return StepParts(
        model=model,
        optimizer=optimizer,
        loss_fn=nn.CrossEntropyLoss(),
        parameters=list(model.parameters()),
        device_type="cpu",
        autocast_dtype=None,
        scaler=scaler,
        clip_norm=clip,
    )


def test_clipping_returns_pre_clip_norm_and_bounds_applied_gradients():
    dataset = make_dataset(32)
    model = make_mlp()
    x, y = dataset.tensors
    optimizer = RecordingSGD(model.parameters())
    true_norm = total_norm(full_batch_grads(model, dataset, slice(None)))
    model.zero_grad(set_to_none=True)

    clip = true_norm / 10
    parts = step_parts(model, optimizer, clip)
    loss, _ = forward_loss(parts, x, y)
    backward(parts, loss, 1.0)
    norm = optimizer_step(parts)

    assert abs(norm.item() - true_norm) < 1e-5
    assert total_norm(optimizer.seen[0]) <= clip * (1 + 1e-5)
    assert all(p.grad is None for p in model.parameters())


def test_fp16_scaler_path_clips_unscaled_gradients():
    # A real GradScaler on CPU multiplies the loss by 2**12 before backward. If the loop clipped
    # before unscale_, the recorded norm would be 4096x too large and the applied gradient would be
    # clipped to clip/4096. (What CPU cannot show: fp16 kernels' underflow on a GPU.)
    dataset = make_dataset(32)
    model = make_mlp()
    x, y = dataset.tensors
    true_norm = total_norm(full_batch_grads(model, dataset, slice(None)))
    model.zero_grad(set_to_none=True)

    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**12)
    optimizer = RecordingSGD(model.parameters())
    clip = true_norm * 2  # a bound the true gradient satisfies, the scaled one would not
    parts = step_parts(model, optimizer, clip, scaler)
    loss, _ = forward_loss(parts, x, y)
    backward(parts, loss, 1.0)
    assert total_norm([p.grad for p in model.parameters()]) > 1000 * true_norm  # really scaled
    norm = optimizer_step(parts)

    assert abs(norm.item() - true_norm) < 1e-4 * true_norm
    # unclipped (true norm < clip) and unscaled: the optimizer saw the true gradient
    assert abs(total_norm(optimizer.seen[0]) - true_norm) < 1e-4 * true_norm
    assert scaler.get_scale() == 2.0**12  # finite grads: scale kept, step taken


def test_fit_records_mean_pre_clip_norm_per_epoch():
    model = make_mlp()
    config = TrainerConfig(batch_size=8, workers=0, quiet=True, clip_norm=1e-3, epochs=1)
    trainer = Trainer(model, lambda p: torch.optim.SGD(p, lr=0.1), nn.CrossEntropyLoss(), config)
    (record,) = trainer.fit(make_dataset(32))
    assert record.grad_norm is not None and record.grad_norm > 1e-3  # pre-clip, not post-clip
    assert record.steps == 4
