"""D106: tensors are built with `torch.tensor` from NumPy arrays or rows of Python numbers.

## What it does
Flags `torch.tensor(ndarray)`, `torch.tensor([ndarray, ...])` and `torch.tensor([[x, ...], ...])`
(rows of Python numbers, e.g. records kept as lists) calls in the training loop or the training
process's data loading when they take 2% or more of the step.

## Why is this bad
`torch.tensor` always copies, and from a list of arrays it walks the list element by element in
Python (PyTorch itself warns that this is extremely slow); from rows of Python numbers it reads
every number as a Python object, each batch again. `torch.from_numpy` shares the array's
memory without a copy, and `np.stack` turns a list of arrays into one array in a single
vectorised copy. Rows of numbers converted once, to one tensor, are indexed per batch instead.

Estimated saving: nine tenths of the measured creation time (what remains is at most one
contiguous copy).

## Example
```python
x = torch.tensor([sample["image"] for sample in batch])
y = torch.tensor(labels_array)
x = torch.tensor([rows[i] for i in batch_indices])  # rows: lists of floats
```

## Use instead
```python
x = torch.from_numpy(np.stack([sample["image"] for sample in batch]))
y = torch.from_numpy(labels_array)  # or torch.as_tensor(labels_array)
table = torch.tensor(rows)  # once, before the loop; then per batch:
x = table[batch_indices]
```

## Fix safety
Safe for the values. `torch.from_numpy` shares memory with the array: writing to one changes the
other, and the dtype stays the array's (float64 arrays give float64 tensors: add `.float()`).
"""

from __future__ import annotations

from torchdoctor.diagnose.findings import Finding
from torchdoctor.diagnose.observations import RunObservation
from torchdoctor.diagnose.rules._common import clamp, pct, secs, severity_for, step_profile

CODE = "D106"
TITLE = "Slow tensor creation: torch.tensor on NumPy arrays or rows of numbers"
MIN_SHARE = 0.02
REMAINING_COPY = 0.1


def check(run: RunObservation) -> list[Finding]:
    profile = step_profile(run)
    created = run.tensor_creation
    calls = created.from_ndarray + created.from_ndarray_list + created.from_nested_list
    if profile is None or calls <= 0:
        return []
    share = clamp(created.seconds_per_step / profile.step_s)
    if share < MIN_SHARE:
        return []
    saving = clamp(share * (1 - REMAINING_COPY))
    arrays = created.from_ndarray + created.from_ndarray_list
    made = []
    if arrays:
        made.append(
            f"from NumPy arrays {arrays:g} time(s) ({created.from_ndarray_list:g} from lists "
            "of arrays)"
        )
    if created.from_nested_list:
        made.append(f"from rows of Python numbers {created.from_nested_list:g} time(s)")
    evidence = [
        f"torch.tensor built tensors {' and '.join(made)} per step, taking "
        f"{secs(created.seconds_per_step)}: {pct(share)} of the step.",
    ]
    locations = created.locations + created.row_locations
    if locations:
        evidence.append("Called at " + ", ".join(locations[:3]) + ".")
    fix = (
        "torch.from_numpy(np.stack(list_of_arrays))  # instead of torch.tensor(list_of_arrays)\n"
        "torch.from_numpy(array)                     # instead of torch.tensor(array)"
    )
    if created.from_nested_list:
        fix += (
            "\ntable = torch.tensor(rows)  # rows of numbers: once, before the loop\n"
            "x = table[batch_indices]    # instead of torch.tensor([rows[i] for i in ...])"
        )
    return [
        Finding(
            id=CODE,
            title=TITLE,
            severity=severity_for(saving),
            saving=saving,
            evidence=evidence,
            fix=fix,
            source="docs/techniques/tensor-creation.md; PyTorch docs: torch.from_numpy",
            explanation="torch.tensor copies, element by element for a list of arrays or rows "
            "of numbers; torch.from_numpy shares the array's memory.",
            details={
                "calls_per_step": calls,
                "seconds_per_step": created.seconds_per_step,
                "locations": locations,
            },
        )
    ]
