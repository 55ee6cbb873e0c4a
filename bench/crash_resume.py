"""Kill a training run with SIGKILL at random moments, resume it, and check it ends bit-identical.

    python bench/crash_resume.py                 # 20 kills, one process
    python bench/crash_resume.py --runs 5 --nproc 2   # under torchrun, 2 gloo ranks

One uninterrupted reference run first; then, per run: start the same command in a fresh
checkpoint directory, wait for its first checkpoint, SIGKILL its whole process group after a
random delay (so the kill lands anywhere: mid-step, mid-save, between saves), read every
checkpoint file left on disk, then rerun with --resume and compare the final checkpoint with the
reference: model, optimizer and scheduler state, step, and the per-epoch losses, bit for bit.
Prints a summary line per run and a total; --json writes the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import torch

from torchdoctor.errors import CheckpointError
from torchdoctor.trainer.checkpoint import CheckpointManager, load_checkpoint

RECIPE = Path(__file__).resolve().parent.parent / "tests" / "trainer" / "crash_recipe.py"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def train_command(directory: Path, nproc: int, resume: bool, args) -> list[str]:
    launcher = [sys.executable, "-m", "torchdoctor"]
    if nproc > 1:
        # a free port per launch: torchrun's default 29500 may belong to another job on this machine
        launcher = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc_per_node",
            str(nproc),
            "--master_port",
            str(free_port()),
            "-m",
            "torchdoctor",
        ]
    command = launcher + [
        "train",
        str(RECIPE),
        "--epochs",
        str(args.epochs),
        "--batch-size",
        str(args.batch_size),
        "--checkpoint-dir",
        str(directory),
        "--checkpoint-every",
        str(args.every),
        "--workers",
        "0",
        "--quiet",
        "-o",
        f"sleep={args.sleep}",
        "-o",
        f"count={args.count}",
    ]
    return command + (["--resume"] if resume else [])


def run_env() -> dict:
    return {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}


def run_to_end(command: list[str], timeout: float) -> None:
    done = subprocess.run(command, env=run_env(), capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise SystemExit(f"training failed ({done.returncode}):\n{done.stderr[-3000:]}")


def final_state(directory: Path) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = CheckpointManager(directory).latest()
    if path is None:
        raise SystemExit(f"no checkpoint in {directory}")
    return load_checkpoint(path)


def same(a, b) -> bool:
    """Bitwise equality of nested checkpoint data (tensors compared with torch.equal)."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (
            isinstance(a, torch.Tensor)
            and isinstance(b, torch.Tensor)
            and a.dtype == b.dtype
            and torch.equal(a, b)
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def comparable(state: dict) -> dict:
    """What must match: everything except timings (and where the file was written)."""
    history = [
        {k: r[k] for k in ("epoch", "train_loss", "train_accuracy", "steps")}
        for r in state["history"]
    ]
    return {k: state[k] for k in ("model", "optimizer", "scheduler", "step", "epoch", "rng")} | {
        "history": history
    }


def wait_for_first_checkpoint(directory: Path, process: subprocess.Popen, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(directory.glob("ckpt-*.pt")):
            return True
        if process.poll() is not None:
            return False
        time.sleep(0.01)
    return False


def unreadable_checkpoints(directory: Path) -> list[str]:
    bad = []
    for path in sorted(directory.glob("ckpt-*.pt")):
        try:
            load_checkpoint(path)
        except CheckpointError as error:
            bad.append(str(error))
    return bad


def kill_and_resume(
    index: int, root: Path, reference: dict, window: float, rng: random.Random, args
) -> dict:
    directory = root / f"run-{index}"
    process = subprocess.Popen(
        train_command(directory, args.nproc, False, args),
        env=run_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    started = wait_for_first_checkpoint(directory, process, args.timeout)
    delay = rng.uniform(0, window)
    time.sleep(delay)
    finished_before_kill = process.poll() is not None
    if not finished_before_kill:
        os.killpg(process.pid, signal.SIGKILL)  # the whole job at once, like a lost node
    process.wait()
    temp_left = sorted(p.name for p in directory.glob(".tmp-*"))
    bad = unreadable_checkpoints(directory)
    run_to_end(train_command(directory, args.nproc, True, args), args.timeout)
    identical = same(comparable(final_state(directory)), reference)
    return {
        "run": index,
        "killed_after_s": round(delay, 3),
        "reached_first_checkpoint": started,
        "finished_before_kill": finished_before_kill,
        "killed_mid_save": bool(temp_left),
        "unreadable_checkpoints": bad,
        "identical": identical,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--nproc", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--count", type=int, default=256, help="training samples")
    parser.add_argument("--every", type=int, default=2, help="checkpoint every N steps")
    parser.add_argument("--sleep", type=float, default=0.01, help="seconds added to each forward")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--json", dest="json_path")
    args = parser.parse_args(argv)

    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="crash-resume-") as tmp:
        root = Path(tmp)
        reference_dir = root / "reference"
        process = subprocess.Popen(
            train_command(reference_dir, args.nproc, False, args),
            env=run_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        if not wait_for_first_checkpoint(reference_dir, process, args.timeout):
            raise SystemExit(
                f"reference run wrote no checkpoint:\n{process.communicate()[1][-3000:]}"
            )
        first_checkpoint_wall = time.time()
        if process.wait(timeout=args.timeout) != 0:
            raise SystemExit(f"reference run failed:\n{process.stderr.read()[-3000:]}")
        # kills land anywhere between the first and the last checkpoint of the reference run
        # (measured by the files' mtimes: the interpreter's exit after them tests nothing)
        last_write = max(p.stat().st_mtime for p in reference_dir.glob("ckpt-*.pt"))
        window = max(last_write - first_checkpoint_wall, 0.1)
        reference = comparable(final_state(reference_dir))

        results = []
        for index in range(args.runs):
            result = kill_and_resume(index, root, reference, window, rng, args)
            results.append(result)
            print(
                f"run {index + 1:2d}/{args.runs}: killed {result['killed_after_s']:.2f}s after the first "
                f"checkpoint{' (mid-save)' if result['killed_mid_save'] else ''}"
                f"{' (had already finished)' if result['finished_before_kill'] else ''}, "
                f"unreadable checkpoints: {len(result['unreadable_checkpoints'])}, "
                f"identical: {result['identical']}",
                flush=True,
            )

    summary = {
        "runs": len(results),
        "identical": sum(r["identical"] for r in results),
        "killed_mid_save": sum(r["killed_mid_save"] for r in results),
        "runs_with_unreadable_checkpoint": sum(bool(r["unreadable_checkpoints"]) for r in results),
        "nproc": args.nproc,
        "kill_window_s": round(window, 3),
        "results": results,
    }
    print(
        f"{summary['identical']}/{summary['runs']} resumed runs ended bit-identical to the uninterrupted run; "
        f"{summary['killed_mid_save']} kills landed mid-save; "
        f"runs that ever saw an unreadable checkpoint: {summary['runs_with_unreadable_checkpoint']}"
    )
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(summary, indent=2))
    ok = summary["identical"] == summary["runs"] and summary["runs_with_unreadable_checkpoint"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
