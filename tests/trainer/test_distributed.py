"""Two gloo ranks on CPU: equivalence with one process at twice the batch, agreement checks,
timeouts, and resume under torchrun. Real processes, real collectives."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from torchdoctor.errors import TorchdoctorError, UsageError
from torchdoctor.recipes.loading import load_recipe
from torchdoctor.trainer import Trainer, TrainerConfig, distributed
from torchdoctor.trainer.checkpoint import CheckpointManager, load_checkpoint
from torchdoctor.trainer.sync_batchnorm import (
    CpuSyncBatchNorm,
    convert_cpu_sync_batchnorm,
    convert_sync_batchnorm,
)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import dist_worker  # noqa: E402
from dist_launch import free_port, launch  # noqa: E402

RECIPE = HERE / "crash_recipe.py"
# no dropout or data noise: one process and two ranks draw different random numbers for those
EXACT = ["-o", "dropout=0", "-o", "noise=0", "-o", "count=128"]


def train_args(directory: Path, batch: int, *extra: str) -> list[str]:
    return [
        "train",
        str(RECIPE),
        "--epochs",
        "2",
        "--batch-size",
        str(batch),
        "--workers",
        "0",
        "--quiet",
        "--checkpoint-dir",
        str(directory),
        "--checkpoint-every",
        "3",
        *EXACT,
        *extra,
    ]


def torchrun(directory: Path, batch: int, *extra: str) -> None:
    """The documented way: `torchrun --nproc_per_node 2 -m torchdoctor train ...`."""
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "2",
        "--master_port",
        str(free_port()),
        "-m",
        "torchdoctor",
        *train_args(directory, batch, *extra),
    ]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]


def two_rank_cli(directory: Path, batch: int, *extra: str) -> None:
    """The same environment as torchrun without its agent process (cheaper, for repeat runs)."""
    results = launch(["-m", "torchdoctor", *train_args(directory, batch, *extra)], 2, timeout=240)
    assert all(r.returncode == 0 for r in results), (
        results[0].stderr[-3000:] + results[1].stderr[-3000:]
    )


def one_process(directory: Path, batch: int) -> None:
    """In this process (no RANK/WORLD_SIZE set): the single-process reference."""
    config = TrainerConfig(
        device="cpu",
        epochs=2,
        batch_size=batch,
        workers=0,
        quiet=True,
        checkpoint_dir=str(directory),
        checkpoint_every_steps=3,
    )
    Trainer.from_recipe(load_recipe(str(RECIPE), dropout="0", noise="0", count="128"), config).fit()


def final(directory: Path) -> dict:
    return load_checkpoint(CheckpointManager(directory).latest())


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("ddp")
    torchrun(directory, 8, "--keep-last", "20")  # keep the mid-run checkpoints for the resume test
    return directory


@pytest.fixture(scope="module")
def two_rank_checks(tmp_path_factory):
    """One 2-rank launch for two checks (process start-up is most of the cost)."""
    out = tmp_path_factory.mktemp("plain") / "plain.pt"
    results = launch([str(HERE / "dist_worker.py"), "checks", str(out), "8", "8"], 2, timeout=120)
    return out, results


def test_two_ranks_at_batch_b_match_one_process_at_batch_2b(two_ranks, tmp_path):
    # What must hold: the same global order split r::2 (ResumableSampler), mean loss per rank
    # with equal per-rank batches (DDP averages gradients), and BatchNorm statistics over the
    # global batch (SyncBatchNorm). Then only float summation order differs.
    one_process(tmp_path, batch=16)
    ddp, single = final(two_ranks), final(tmp_path)
    assert ddp["step"] == single["step"] == 16
    for name, value in single["model"].items():
        assert torch.allclose(ddp["model"][name].double(), value.double(), atol=1e-5, rtol=0), name
    for ours, theirs in zip(ddp["history"], single["history"]):
        assert ours["train_loss"] == pytest.approx(theirs["train_loss"], abs=1e-6)
        assert ours["train_accuracy"] == theirs["train_accuracy"]  # summed over both ranks


def test_without_sync_batchnorm_the_two_would_differ(two_rank_checks, tmp_path):
    # the counter-check: plain BatchNorm under DDP normalizes per rank, so equivalence fails
    out, results = two_rank_checks
    assert out.is_file(), results[0].stderr[-2000:]
    reference = tmp_path / "one.pt"
    dist_worker.train(str(reference), 16, 8)  # in this process: no process group, plain BatchNorm
    plain, one = torch.load(out)["state"], torch.load(reference)["state"]
    assert max((plain[k].double() - one[k].double()).abs().max().item() for k in one) > 1e-4


def test_two_ranks_resumed_mid_epoch_end_bit_identical(two_ranks, tmp_path):
    # as if the job had died after step 9 (epoch 2, batch 1 of 8): only that checkpoint survives
    (tmp_path / "ckpt-000000009.pt").write_bytes((two_ranks / "ckpt-000000009.pt").read_bytes())
    two_rank_cli(tmp_path, 8, "--resume")
    ddp, resumed = final(two_ranks), final(tmp_path)
    assert resumed["step"] == 16
    for name, value in ddp["model"].items():
        assert torch.equal(value, resumed["model"][name]), name
    assert [h["train_loss"] for h in resumed["history"]] == [
        h["train_loss"] for h in ddp["history"]
    ]


def test_resuming_a_two_rank_checkpoint_in_one_process_is_refused(two_ranks, tmp_path):
    (tmp_path / "ckpt-000000009.pt").write_bytes((two_ranks / "ckpt-000000009.pt").read_bytes())
    config = TrainerConfig(
        device="cpu",
        epochs=2,
        batch_size=8,
        workers=0,
        quiet=True,
        checkpoint_dir=str(tmp_path),
        resume=True,
    )
    trainer = Trainer.from_recipe(
        load_recipe(str(RECIPE), dropout="0", noise="0", count="128"), config
    )
    with pytest.raises(
        UsageError, match="written by 2 rank\\(s\\), this run has 1; resume with the same number"
    ):
        trainer.fit()


def test_ranks_with_different_settings_fail_on_every_rank_without_hanging(two_rank_checks):
    _, results = two_rank_checks  # launch() would have killed a hang after its timeout
    for result in results:
        assert result.returncode == 1
        assert (
            "ranks disagree on the trainer config: batch_size=32 on rank 0 but 64 on rank 1"
            in result.stdout
        )


def test_a_nan_on_one_rank_makes_every_rank_skip_the_step(two_rank_checks):
    _, results = two_rank_checks
    assert (
        "rank 0: step_ok=False warning=loss is nan at epoch 1, step 4, batch index 3 (on another rank)"
        in results[0].stdout
    )
    assert (
        "rank 1: step_ok=False warning=loss is nan at epoch 1, step 4, batch index 3; skipping"
        in results[1].stdout
    )


def test_unreachable_rank_zero_times_out_with_one_line(monkeypatch):
    # in this process: a failed rendezvous leaves no process group behind
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(free_port()))  # nobody listens there
    with pytest.raises(TorchdoctorError) as caught:
        distributed.setup(
            distributed.DistEnv(rank=1, local_rank=1, world_size=2), "cpu", timeout_s=2
        )
    message = str(caught.value)
    assert (
        message.startswith("rank 1 could not join the gloo process group at 127.0.0.1:")
        and "within 2s" in message
    )
    assert "\n" not in message
    assert not torch.distributed.is_initialized()


def test_detect_reads_torchrun_variables(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    single = distributed.detect()
    assert (single.world_size, single.is_distributed, single.is_main) == (1, False, True)
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("LOCAL_RANK", "1")
    with pytest.raises(UsageError, match="MASTER_ADDR and MASTER_PORT not set"):
        distributed.detect()
    monkeypatch.setenv("MASTER_ADDR", "localhost")
    monkeypatch.setenv("MASTER_PORT", "29500")
    env = distributed.detect()
    assert (env.rank, env.local_rank, env.world_size, env.is_main) == (3, 1, 4, False)
    assert distributed.rank_device(env, "cuda") == torch.device("cuda", 1)
    monkeypatch.setenv("RANK", "x")
    with pytest.raises(UsageError, match="RANK='x' is not an integer"):
        distributed.detect()


def test_single_process_helpers_are_no_ops():
    env = distributed.DistEnv()
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    assert distributed.prepare_model(model, env, "cpu") is model
    assert isinstance(model[1], nn.BatchNorm1d)  # no conversion without a process group
    assert distributed.all_reduce_mean(2.5, env) == 2.5
    distributed.check_agreement({"a": 1}, env, "x")
    assert distributed.rank_zero_only(lambda: "ran")() == "ran"


def test_gpu_choices_as_pure_functions():
    assert distributed.backend_for(torch.device("cuda", 0)) == "nccl"
    assert distributed.backend_for(torch.device("cpu")) == "gloo"
    on_gpu = convert_sync_batchnorm(
        nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)), torch.device("cuda")
    )
    assert type(on_gpu[1]) is nn.SyncBatchNorm  # the fused CUDA implementation, not ours
    on_cpu = convert_sync_batchnorm(
        nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)), torch.device("cpu")
    )
    assert type(on_cpu[1]) is CpuSyncBatchNorm


def test_cpu_sync_batchnorm_keeps_parameters_and_acts_like_batchnorm_alone():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4))
    weight = model[1].weight
    reference = nn.Sequential(nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4))
    reference.load_state_dict(model.state_dict())
    converted = convert_cpu_sync_batchnorm(model)
    assert isinstance(converted[1], CpuSyncBatchNorm) and converted[1].weight is weight
    x = torch.randn(5, 3, 6, 6)
    assert torch.allclose(converted(x), reference(x), atol=1e-6)
    assert set(converted.state_dict()) == set(reference.state_dict())  # checkpoints interchange
