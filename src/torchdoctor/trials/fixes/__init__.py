"""The catalogue of run-time fixes that `torchdoctor diagnose --try` can apply and measure.

One module per fix. Each defines:

    NAME           stable name used on the command line (`--try workers,float32`)
    SUMMARY        one line
    TOLERANCE      largest relative per-step loss difference that still counts as "kept", with
                   the reason in TOLERANCE_REASON (pure-speed changes: 1e-6; precision: looser)
    FINDING_CODES  diagnose rule codes whose finding this fix answers (for `--try all`), read
                   from the technique registry (torchdoctor.techniques): a new fix is added there
    PERMANENT      the code change that makes the fix permanent in the user's script
    applies_to(run: RunObservation) -> bool   pure: does the diagnosed run have the problem?
    apply(hooks: Hooks) -> None          registers the run-time change

Changes that alter what the model learns are never applied by `all` or `auto`: a new learning
rate is only a suggestion (`SUGGESTIONS`, with the reason); a larger batch (`batch_size`:
`applies_to` is false and D202's finding changes semantics) is tried only when named, compared
per sample (`PER_SAMPLE`).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from torchdoctor.errors import UsageError

# Order = the order fixes are applied and listed (the seeds' stack: data loading, then numerics,
# then the compiler last so it traces the already-changed model).
FIX_NAMES = (
    "batch_size",  # before batched_fetch: it reads the loader's batch_size
    "batched_fetch",
    "workers",
    "persistent_workers",
    "pin_memory",
    "non_blocking",
    "float32",
    "autocast",
    "tf32",
    "cudnn_benchmark",
    "channels_last",
    "anomaly_off",
    "profiler_off",
    "set_to_none",
    "fused_optimizer",
    "eval_mode",
    "inference_mode",
    "compile",
)

SUGGESTIONS = {
    "learning_rate": "a new learning rate changes what the model learns; it is a training "
    "decision, not a speed fix",
}


def get_fix(name: str) -> ModuleType:
    if name not in FIX_NAMES:
        raise UsageError(unknown_fix_message(name))
    return importlib.import_module(f"torchdoctor.trials.fixes.{name}")


def all_fixes() -> list[ModuleType]:
    return [get_fix(name) for name in FIX_NAMES]


def unknown_fix_message(name: str) -> str:
    return f"unknown fix {name!r} for --try (known: all, auto, {', '.join(FIX_NAMES)})"


def parse_fix_names(spec: str) -> tuple[list[str], list[str], bool]:
    """`"workers,float32"` -> (fixes, suggestions, wants_all). UsageError on an unknown name."""
    names = [part.strip() for part in spec.split(",") if part.strip()]
    if not names:
        raise UsageError("--try needs at least one fix name (or 'all', or 'auto')")
    fixes, suggestions, wants_all = [], [], False
    for name in names:
        if name in ("all", "auto"):  # auto: all, then only what the phases can pay back
            wants_all = True
        elif name in SUGGESTIONS:
            suggestions.append(name)
        elif name in FIX_NAMES:
            fixes.append(name)
        else:
            raise UsageError(unknown_fix_message(name))
    ordered = [name for name in FIX_NAMES if name in fixes]
    return ordered, suggestions, wants_all


def fixes_for_findings(findings, run) -> list[str]:
    """Fixes the diagnosis recommends: those answering a finding's code, else those whose
    `applies_to(run)` holds (a finding with no mapped fix adds nothing)."""
    codes = {finding.id for finding in findings if not finding.changes_semantics}
    chosen = []
    for fix in all_fixes():
        if codes & set(fix.FINDING_CODES) or (run is not None and fix.applies_to(run)):
            chosen.append(fix.NAME)
    return chosen
