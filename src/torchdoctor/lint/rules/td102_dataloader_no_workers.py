"""TD102: DataLoader that loads in the main process."""

from __future__ import annotations

import libcst as cst

from torchdoctor.lint.patterns import DATALOADER, argument, has_star_args, int_value
from torchdoctor.lint.rule import Rule

TENSOR_DATASET = "torch.utils.data.TensorDataset"


class DataLoaderNoWorkers(Rule):
    """
    ## What it does
    Flags `DataLoader(...)` without `num_workers`, or with `num_workers=0`. A loader over a
    `TensorDataset` (tensors already in memory, built in the same file) is left alone: indexing
    it is cheaper than sending batches between processes.

    ## Why is this bad
    With no worker processes every batch is loaded and collated in the training process,
    between steps, so the accelerator waits for data. Worker processes prepare the next
    batches while the current step runs.

    ## Example
    ```python
    loader = DataLoader(dataset, batch_size=64, shuffle=True)
    ```

    ## Use instead
    ```python
    loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4,
                        persistent_workers=True)
    ```

    ## Fix safety
    No automatic fix: the right number of workers depends on the machine, and workers need
    a picklable dataset and an `if __name__ == "__main__":` guard on some platforms.
    """

    code = "TD102"
    name = "dataloader-no-workers"

    def check(self, ctx):
        for call in ctx.calls_to(DATALOADER):
            if has_star_args(call) or _over_in_memory_tensors(ctx, argument(call, "dataset", 0)):
                continue
            workers = argument(call, "num_workers", 5)
            if workers is None:
                yield ctx.violation(
                    self,
                    call,
                    "`DataLoader` without `num_workers` loads every "
                    "batch in the training process; set `num_workers`",
                )
            elif int_value(workers) == 0:
                yield ctx.violation(
                    self,
                    workers,
                    "`num_workers=0` loads every batch in the "
                    "training process; use worker processes",
                )


def _over_in_memory_tensors(ctx, dataset) -> bool:
    """True when the dataset is a `TensorDataset(...)`, directly or through one assignment."""
    if dataset is None:
        return False
    if not isinstance(dataset, cst.Call):
        dataset = ctx.single_value(dataset)
    return isinstance(dataset, cst.Call) and ctx.call_name(dataset) == TENSOR_DATASET
