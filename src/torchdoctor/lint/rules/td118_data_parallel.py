"""TD118: `nn.DataParallel`."""

from __future__ import annotations

from torchdoctor.lint.rule import Rule

# the function, as `torch.nn.parallel.data_parallel` and from its own module (canonicalized)
_FUNCTIONAL = ("torch.nn.parallel.data_parallel", "torch.nn.data_parallel")


class DataParallel(Rule):
    """
    ## What it does
    Flags `torch.nn.DataParallel(...)` and its functional form
    `torch.nn.parallel.data_parallel(module, inputs, ...)`, which does the same scatter,
    replicate and gather on every call.

    ## Why is this bad
    DataParallel runs one Python process that scatters each batch, replicates the model on
    every step and gathers outputs on GPU 0: the GIL and GPU 0 become bottlenecks and it is
    slower than DistributedDataParallel even on one machine. PyTorch recommends DDP instead.

    ## Example
    ```python
    model = nn.DataParallel(model)
    ```

    ## Use instead
    ```python
    # launched with `torchrun --nproc-per-node=N train.py`
    dist.init_process_group("nccl")
    model = nn.parallel.DistributedDataParallel(model.to(local_rank), device_ids=[local_rank])
    ```

    ## Fix safety
    No automatic fix: DDP needs one process per GPU, a launcher and a distributed sampler.
    """

    code = "TD118"
    name = "data-parallel"

    def check(self, ctx):
        for call in ctx.calls_to(*_FUNCTIONAL):
            yield ctx.violation(
                self,
                call,
                "`nn.parallel.data_parallel` replicates the module onto every GPU on each "
                "call and gathers on GPU 0; use DistributedDataParallel",
            )
        for call in ctx.calls_to("torch.nn.DataParallel"):
            yield ctx.violation(
                self,
                call,
                "`nn.DataParallel` is slower than DistributedDataParallel "
                "(one process, GPU 0 gathers everything); use DDP",
            )
