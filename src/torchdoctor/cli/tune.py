"""`torchdoctor tune RECIPE`: find the largest batch that fits, the best DataLoader worker
count, and which parts of the performance stack pay off, measured with the reference Trainer."""

from __future__ import annotations

import json

import click

from torchdoctor.errors import UsageError

# = torchdoctor.trials.tuning.ablation.STAGES (repeated here: no torch import at module level)
STAGE_NAMES = ("data", "amp", "channels_last", "compile", "checkpointing")


def _parse_stages(value: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in value.split(",") if part.strip())
    unknown = [name for name in names if name not in STAGE_NAMES]
    if unknown:
        raise UsageError(
            f"unknown stage(s) for --stages: {', '.join(unknown)} (known: {', '.join(STAGE_NAMES)})"
        )
    return names


@click.command()
@click.argument("recipe")
@click.option(
    "--option",
    "-o",
    "options",
    multiple=True,
    metavar="KEY=VALUE",
    help="Recipe option (repeatable), e.g. -o n_train=50.",
)
@click.option("--config", "config_file", metavar="FILE.json", help="Start from these settings.")
@click.option(
    "--steps",
    type=click.IntRange(1),
    default=8,
    show_default=True,
    help="Measured optimizer steps per probe (after warm-up).",
)
@click.option("--warmup", type=click.IntRange(1), default=2, show_default=True)
@click.option(
    "--max-batch",
    type=click.IntRange(1),
    default=None,
    help="Largest batch size to try (default: the training set's size).",
)
@click.option(
    "--margin",
    type=click.FloatRange(0.1, 1.0),
    default=0.9,
    show_default=True,
    help="Recommended batch = largest fit x margin.",
)
@click.option(
    "--memory-cap",
    type=click.IntRange(1),
    default=None,
    metavar="BYTES",
    help="Synthetic limit on one forward pass's activation bytes (raises OOM above).",
)
@click.option(
    "--stages",
    default=",".join(STAGE_NAMES),
    show_default=True,
    help="Stack stages to ablate, in this order.",
)
@click.option("--no-batch-search", is_flag=True, help="Skip the batch-size search.")
@click.option("--no-worker-sweep", is_flag=True, help="Skip the DataLoader worker sweep.")
@click.option("--json", "json_path", metavar="FILE", help="Write the full report as JSON.")
@click.option(
    "--write-config",
    "config_out",
    metavar="FILE",
    help="Write the chosen TrainerConfig (for `torchdoctor train RECIPE --config`).",
)
@click.option("--quiet", "-q", is_flag=True)
def tune(
    recipe,
    options,
    config_file,
    steps,
    warmup,
    max_batch,
    margin,
    memory_cap,
    stages,
    no_batch_search,
    no_worker_sweep,
    json_path,
    config_out,
    quiet,
):
    """Tune RECIPE (a built-in name or a .py file defining recipe(**options))."""
    from torchdoctor.cli.train import parse_options, read_config_file, seed_recipe_build
    from torchdoctor.console import make_console
    from torchdoctor.recipes.loading import load_recipe
    from torchdoctor.trainer import TrainerConfig
    from torchdoctor.trials.tuning.render import render_json, render_terminal
    from torchdoctor.trials.tuning.tune import TuneOptions
    from torchdoctor.trials.tuning.tune import tune as run_tune

    wanted = _parse_stages(stages)
    from torchdoctor.outputs import check_writable

    for path, flag in ((json_path, "--json"), (config_out, "--write-config")):
        if path:
            check_writable(path, flag)  # before the tuning run, not after it
    file_settings = read_config_file(config_file) if config_file else {}
    seed_recipe_build(file_settings)
    loaded = load_recipe(recipe, **parse_options(options))
    settings = {**loaded.defaults, **file_settings}
    base = TrainerConfig.from_dict(settings)
    report = run_tune(
        loaded,
        base,
        TuneOptions(
            steps=steps,
            warmup=warmup,
            max_batch=max_batch,
            margin=margin,
            memory_cap=memory_cap,
            stages=wanted,
            search_batch=not no_batch_search,
            sweep=not no_worker_sweep,
        ),
    )
    render_terminal(report, make_console(quiet))
    if json_path:
        _write(json_path, render_json(report))
    if config_out:
        _write(config_out, json.dumps(report.config, indent=2))


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
