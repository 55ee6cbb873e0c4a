"""`torchdoctor demo`: seed 001's naive loop, its diagnosis, and the treated loop measured one
technique at a time, as a before/after table. No arguments needed; torch is imported only when
the command runs."""

from __future__ import annotations

import click

RECIPES = ("shapes", "cifar-resnet")


@click.command()
@click.option(
    "--recipe",
    type=click.Choice(RECIPES),
    default="shapes",
    show_default=True,
    help="shapes: seed 000's MLP on generated shape images; cifar-resnet: seed 001's "
    "ResNet-18 on generated CIFAR-shaped data.",
)
@click.option("--quick", is_flag=True, help="Tiny data and one epoch (seconds; for tests).")
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, writable=True),
    help="Write the table as JSON (schema in docs/demo.md).",
)
@click.option("--device", default="auto", show_default=True, help="auto, cpu, cuda, cuda:N.")
@click.option("--no-diagnose", is_flag=True, help="Skip step 2 (diagnosing the naive loop).")
@click.option(
    "--diagnose-steps",
    type=click.IntRange(min=1),
    default=None,
    help="Training steps the diagnosis measures (default: the naive loop's whole epoch).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False),
    help="Where generated data is kept (default $TORCHDOCTOR_CACHE or ~/.cache/torchdoctor).",
)
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    help="Intra-op CPU threads for every row (default on CPU: 1, or $OMP_NUM_THREADS when set).",
)
@click.option("-q", "--quiet", is_flag=True, help="Print the table only.")
def demo(
    recipe, quick, json_path, device, no_diagnose, diagnose_steps, seed, cache_dir, threads, quiet
):
    """Show where a naive training loop's time goes and what each fix gains."""
    from torchdoctor.demo.run import run_demo

    run_demo(
        recipe,
        quick=quick,
        json_path=json_path,
        quiet=quiet,
        diagnose=not no_diagnose,
        diagnose_steps=diagnose_steps,
        device=device,
        seed=seed,
        cache_dir=cache_dir,
        threads=threads,
    )
