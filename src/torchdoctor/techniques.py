"""The technique registry: one row per performance technique, naming every place it lives.

Like Ruff's `codes.rs`, this table is the one source for "which diagnose finding does this fix
answer, which lint rule makes it permanent, which demo row shows it, which page explains it".
`FINDING_CODES` in each `--try` fix, `LINT_CODES` in trials/permanent.py and `findings=` in
demo/stack.py read from it, and docs/techniques.md is generated from it:

    python -m torchdoctor.techniques > docs/techniques.md      (`make docs`)

A new diagnose rule, lint rule or `--try` fix must be added to a row here (a test fails
otherwise). A code may belong to several techniques (D203, a loop of tiny ops, is answered by
torch.compile and by vectorising the loop). In a row with `--try` fixes, every lint code's autofix
must make that fix's change in the source: the measured fix is then offered as that diff.
Pure data, no torch import.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Technique:
    key: str  # stable id
    title: str
    diagnose: tuple[str, ...] = ()  # diagnose rule codes whose finding this technique answers
    lint: tuple[str, ...] = ()  # lint rule codes that find its absence in the source
    fixes: tuple[str, ...] = ()  # `diagnose --try` fix names that apply it at run time
    trainer: tuple[str, ...] = ()  # TrainerConfig fields that switch it
    trainer_always: bool = False  # torchdoctor.Trainer always does it (no switch)
    demo: str | None = None  # key of the `torchdoctor demo` row that adds it
    page: str | None = None  # docs/techniques/<page>


TECHNIQUES: tuple[Technique, ...] = (
    Technique(
        "dataloader_workers",
        "DataLoader workers (persistent, prefetching)",
        diagnose=("D101", "D102", "D103", "D107"),
        lint=("TD102", "TD129"),
        fixes=("workers",),
        trainer=("workers", "persistent_workers", "prefetch_factor"),
        demo="workers",
        page="data-loading.md",
    ),
    Technique(
        "persistent_workers",
        "DataLoader workers kept alive across epochs (persistent_workers=True)",
        diagnose=("D103",),
        fixes=("persistent_workers",),
        trainer=("persistent_workers",),
        page="data-loading.md",
    ),
    Technique(
        "batched_data",
        "Batched data pipeline (in-memory tensors indexed per batch, vectorised preprocessing)",
        diagnose=("D105", "D108", "D109", "D110", "D111", "D112"),
        demo="vectorised",
        page="data-loading.md",
    ),
    Technique(
        "batched_fetch",
        "Whole batches indexed at once (a BatchSampler as sampler, batch_size=None)",
        diagnose=("D108",),
        fixes=("batched_fetch",),
        page="data-loading.md",
    ),
    Technique(
        "tensor_creation",
        "Tensor creation with torch.from_numpy / torch.as_tensor",
        diagnose=("D106",),
        lint=("TD101",),
        demo="vectorised",
        page="tensor-creation.md",
    ),
    Technique(
        "pin_memory",
        "Pinned host memory for host-to-device copies",
        diagnose=("D104", "D402"),
        lint=("TD103",),
        fixes=("pin_memory",),
        trainer=("pin_memory",),
        demo="pinned",
        page="pinned-memory-non-blocking.md",
    ),
    Technique(
        "non_blocking",
        "Non-blocking host-to-device copies",
        diagnose=("D104", "D402"),
        lint=("TD104",),
        fixes=("non_blocking",),
        trainer=("non_blocking",),
        demo="pinned",
        page="pinned-memory-non-blocking.md",
    ),
    Technique(
        "float32",
        "float32 compute instead of float64",
        diagnose=("D201",),
        lint=("TD128",),
        fixes=("float32",),
        page="mixed-precision.md",
    ),
    Technique(
        "mixed_precision",
        "Mixed precision (autocast, bf16 / fp16 + GradScaler)",
        diagnose=("D204",),
        fixes=("autocast",),
        trainer=("precision",),
        demo="amp",
        page="mixed-precision.md",
    ),
    Technique(
        "amp_api",
        "The torch.amp API (torch.cuda.amp is deprecated)",
        lint=("TD115",),
        trainer_always=True,
        page="mixed-precision.md",
    ),
    Technique(
        "tf32",
        "TF32 for float32 matmuls on Ampere and newer",
        diagnose=("D206",),
        fixes=("tf32",),
        trainer=("tf32",),
        demo="cudnn_benchmark",
        page="cudnn-benchmark-and-tf32.md",
    ),
    Technique(
        "cudnn_benchmark",
        "cudnn.benchmark for fixed input shapes",
        diagnose=("D205",),
        lint=("TD121",),
        fixes=("cudnn_benchmark",),
        trainer=("cudnn_benchmark",),
        demo="cudnn_benchmark",
        page="cudnn-benchmark-and-tf32.md",
    ),
    Technique(
        "channels_last",
        "channels_last memory format for conv nets",
        diagnose=("D207",),
        fixes=("channels_last",),
        trainer=("channels_last",),
        demo="channels_last",
        page="channels-last.md",
    ),
    Technique(
        "dims_multiple_of_8",
        "Layer sizes and batch size as multiples of 8",
        diagnose=("D208",),
        page="dims-multiple-of-8.md",
    ),
    Technique(
        "torch_compile",
        "torch.compile",
        diagnose=("D203",),
        fixes=("compile",),
        trainer=("compile", "compile_mode"),
        page="torch-compile.md",
    ),
    Technique(
        "vectorize_loops",
        "Vectorised tensor code instead of Python loops over elements",
        diagnose=("D203",),
        lint=("TD120", "TD135"),
        page="vectorize-python-loops.md",
    ),
    Technique(
        "broadcasting",
        "Broadcasting with explicit dimensions",
        lint=("TD119",),
        page="broadcasting-explicit-dims.md",
    ),
    Technique(
        "batch_size",
        "A batch large enough for the device (learning rate rescaled)",
        diagnose=("D202",),
        fixes=("batch_size",),
        trainer=("batch_size", "eval_batch_size"),
        demo="large_batch",
        page="batch-size.md",
    ),
    Technique(
        "fused_optimizer",
        "Fused / multi-tensor (foreach) optimizer step",
        diagnose=("D210",),
        lint=("TD136",),
        fixes=("fused_optimizer",),
        demo="fused_optimizer",
    ),
    Technique(
        "inference_mode_eval",
        "Evaluation under model.eval() and torch.inference_mode()",
        diagnose=("D301", "D302", "D303"),
        lint=("TD105", "TD106", "TD107", "TD123"),
        fixes=("inference_mode",),
        trainer_always=True,
        demo="trainer_loop",
        page="inference-mode-and-eval.md",
    ),
    Technique(
        "eval_mode",
        "Evaluation with the model in eval() mode (Dropout off, BatchNorm running statistics)",
        diagnose=("D302",),
        fixes=("eval_mode",),
        trainer_always=True,
        page="inference-mode-and-eval.md",
    ),
    Technique(
        "train_mode",
        "Training with the model in train() mode (model.train() after every evaluation)",
        diagnose=("D305",),
        lint=("TD126",),
        trainer_always=True,
        page="inference-mode-and-eval.md",
    ),
    Technique(
        "no_host_syncs",
        "No host-device synchronisation (.item(), .cpu(), print of a tensor) in every step",
        diagnose=("D401",),
        lint=("TD116",),
        trainer_always=True,
        demo="trainer_loop",
    ),
    Technique(
        "zero_grad_set_to_none",
        "zero_grad(set_to_none=True)",
        diagnose=("D220",),
        lint=("TD122",),
        fixes=("set_to_none",),
        trainer_always=True,
        demo="trainer_loop",
        page="zero-grad-set-to-none.md",
    ),
    Technique(
        "zero_grad_each_step",
        "Gradients cleared once per optimizer step, before backward() (never between it and step)",
        diagnose=("D221", "D222"),
        lint=("TD124", "TD125"),
        trainer_always=True,
        page="zero-grad-set-to-none.md",
    ),
    Technique(
        "gradient_clipping",
        "Gradient clipping after GradScaler.unscale_",
        diagnose=("D209",),
        lint=("TD108",),
        trainer=("clip_norm",),
        page="gradient-clipping.md",
    ),
    Technique(
        "gradient_accumulation",
        "Gradient accumulation (loss scaled, no_sync under DDP)",
        diagnose=("D603",),
        lint=("TD109",),
        trainer=("accumulate",),
        page="gradient-accumulation.md",
    ),
    Technique(
        "numerical_stability",
        "Numerically stable log_softmax, logsumexp and softmax",
        lint=("TD112", "TD113", "TD114"),
        page="numerical-stability.md",
    ),
    Technique(
        "activation_checkpointing",
        "Activation checkpointing",
        diagnose=("D501", "D505", "D506", "D213"),
        trainer=("activation_checkpointing",),
        page="activation-checkpointing.md",
    ),
    Technique(
        "memory_growth",
        "No graph kept alive across steps (detach what you log)",
        diagnose=("D503", "D504"),
        lint=("TD133",),
        page="memory-growth.md",
    ),
    Technique(
        "optimizer_state_memory",
        "Optimizer state memory",
        diagnose=("D501", "D502"),
        page="optimizer-state-memory.md",
    ),
    Technique(
        "distributed_data_parallel",
        "DistributedDataParallel instead of nn.DataParallel",
        diagnose=("D601",),
        lint=("TD118",),
        page="syncbatchnorm-ddp.md",
    ),
    Technique(
        "sync_batchnorm",
        "SyncBatchNorm under DistributedDataParallel",
        diagnose=("D602",),
        lint=("TD117",),
        page="syncbatchnorm-ddp.md",
    ),
    Technique(
        "balanced_ranks",
        "Balanced work across ranks (DistributedSampler, equal batches)",
        diagnose=("D604", "D605"),
    ),
    Technique(
        "checkpoint_io",
        "Checkpoints saved off the step path and loaded safely",
        diagnose=("D701",),
        lint=("TD110", "TD111", "TD132"),
        trainer=("checkpoint_every_steps", "checkpoint_every_seconds"),
        page="checkpoint-resume.md",
    ),
    Technique(
        "quiet_logging",
        "Logging every N steps instead of every step",
        diagnose=("D702",),
    ),
    Technique(
        "anomaly_detection_off",
        "Autograd anomaly detection off outside debugging",
        diagnose=("D211",),
        lint=("TD127",),
        fixes=("anomaly_off",),
    ),
    Technique(
        "profiler_off",
        "No torch profiler left on around the training steps",
        diagnose=("D212",),
        lint=("TD134",),
        fixes=("profiler_off",),
    ),
    Technique(
        "single_backward",
        "One backward of the summed losses instead of retain_graph=True and a second backward",
        diagnose=("D214",),
        lint=("TD131",),
    ),
    Technique(
        "no_model_copy_per_step",
        "EMA / best-model tracking without copying the whole model every step",
        diagnose=("D215",),
        lint=("TD130",),
    ),
    Technique(
        "evaluation_frequency",
        "Evaluation at a frequency the run can afford",
        diagnose=("D304",),
    ),
    Technique(
        "user_lines",
        "The program's own slow lines, found by the phase-aware line profile",
        diagnose=("D801",),
    ),
)


def _codes(rows, column: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(code for row in rows for code in getattr(row, column)))


def finding_codes_for_fix(fix: str) -> tuple[str, ...]:
    """Diagnose codes whose finding the `--try` fix answers (`--try all` picks it for them)."""
    return _codes([t for t in TECHNIQUES if fix in t.fixes], "diagnose")


def lint_codes_for_fix(fix: str) -> tuple[str, ...]:
    """Lint codes whose autofix makes the `--try` fix's change in the source."""
    return _codes([t for t in TECHNIQUES if fix in t.fixes], "lint")


def finding_codes_for_demo_row(row: str) -> tuple[str, ...]:
    """Diagnose codes the demo row answers: its place when the rows follow the diagnosis."""
    return _codes([t for t in TECHNIQUES if t.demo == row], "diagnose")


def techniques_for_code(code: str) -> list[Technique]:
    """The techniques answering a diagnose or lint code (empty: not registered)."""
    return [t for t in TECHNIQUES if code in t.diagnose or code in t.lint]


HEADER = """\
# Techniques: cross-reference

Generated by `python -m torchdoctor.techniques` from the technique registry
(`src/torchdoctor/techniques.py`); do not edit by hand (a test fails when this file is stale).

One row per performance technique: the `torchdoctor diagnose` findings it answers
([diagnose-rules.md](diagnose-rules.md)), the `torchdoctor lint` rules that find it missing in the
source ([lint-rules.md](lint-rules.md)), the `diagnose --try` fix that applies and measures it at
run time ([try.md](try.md)), the `TrainerConfig` fields that switch it in `torchdoctor.Trainer`
([trainer.md](trainer.md); "always": the Trainer does it with no switch), the `torchdoctor demo`
row that adds it ([demo.md](demo.md)) and the page that explains it.
"""


def render() -> str:
    rows = [
        "| Technique | Diagnose | Lint | --try | TrainerConfig | Demo row | Page |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for t in TECHNIQUES:
        trainer = [f"`{name}`" for name in t.trainer] + (["always"] if t.trainer_always else [])
        page = f"[{t.page}](techniques/{t.page})" if t.page else ""
        cells = (
            t.title,
            ", ".join(t.diagnose),
            ", ".join(t.lint),
            ", ".join(f"`{name}`" for name in t.fixes),
            ", ".join(trainer),
            f"`{t.demo}`" if t.demo else "",
            page,
        )
        rows.append("| " + " | ".join(cells) + " |")
    return HEADER + "\n" + "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(render(), end="")
