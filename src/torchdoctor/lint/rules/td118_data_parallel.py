"""TD118: `nn.DataParallel`."""

from __future__ import annotations

from torchdoctor.lint.rule import Rule


class DataParallel(Rule):
    """
    ## What it does
    Flags `torch.nn.DataParallel(...)`.

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
        for call in ctx.calls_to("torch.nn.DataParallel"):
            yield ctx.violation(
                self,
                call,
                "`nn.DataParallel` is slower than DistributedDataParallel "
                "(one process, GPU 0 gathers everything); use DDP",
            )
