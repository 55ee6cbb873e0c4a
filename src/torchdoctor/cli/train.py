"""`torchdoctor train RECIPE`: run the reference loop on a built-in or user recipe.

Settings are layered, later wins: TrainerConfig defaults < recipe.defaults < --config FILE.json
< command-line flags. Only flags typed on the command line override anything.
torch is imported inside the command, never at module level (keeps `torchdoctor --help` fast).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import warnings
from pathlib import Path

import click

from torchdoctor.errors import UsageError

HISTORY_SCHEMA = "torchdoctor.train.history/1"
# flag (click parameter name) -> TrainerConfig field
FLAG_FIELDS = {
    "epochs": "epochs",
    "batch_size": "batch_size",
    "precision": "precision",
    "workers": "workers",
    "pin_memory": "pin_memory",
    "compile": "compile",
    "compile_mode": "compile_mode",
    "accumulate": "accumulate",
    "clip": "clip_norm",
    "channels_last": "channels_last",
    "checkpoint_dir": "checkpoint_dir",
    "resume": "resume",
    "checkpoint_every": "checkpoint_every_steps",
    "checkpoint_every_seconds": "checkpoint_every_seconds",
    "keep_last": "keep_last",
    "nan_policy": "nan_policy",
    "max_steps": "max_steps",
    "seed": "seed",
    "device": "device",
    "quiet": "quiet",
}


def parse_workers(value: str | None):
    if value is None or value == "auto":
        return value
    try:
        workers = int(value)
    except ValueError:
        raise UsageError(f"--workers must be 'auto' or an integer >= 0, got {value!r}") from None
    if workers < 0:
        raise UsageError(f"--workers must be 'auto' or an integer >= 0, got {value!r}")
    return workers


def parse_options(pairs: tuple[str, ...]) -> dict[str, str]:
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--option expects KEY=VALUE, got {pair!r}")
        options[key.replace("-", "_")] = value
    return options


def read_config_file(path: str) -> dict:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise UsageError(f"config file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read config file {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"config file {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"config file {path} must hold a JSON object of TrainerConfig fields")
    return data


def given_flags(ctx: click.Context, flags: dict) -> dict:
    """TrainerConfig fields of the flags typed on the command line (not click's defaults)."""
    from click.core import ParameterSource

    return {
        FLAG_FIELDS[name]: value
        for name, value in flags.items()
        if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE
    }


def seed_recipe_build(settings: dict) -> None:
    """Seed the RNGs before recipe() runs: a user recipe that builds its model without seeding
    would otherwise start from different weights every run (same seed, different results).
    recipe.defaults are not known yet, so this is the file/flag seed or TrainerConfig's 0; a
    non-integer seed is left for TrainerConfig's one-line error."""
    from torchdoctor.seeding import seed_everything  # imports torch

    seed = settings.get("seed", 0)
    if isinstance(seed, int) and not isinstance(seed, bool):
        seed_everything(seed)


def merge_settings(recipe_defaults: dict, config_file: dict, flags: dict) -> dict:
    """TrainerConfig fields; later layers win."""
    return {**recipe_defaults, **config_file, **flags}


@click.command()
@click.argument("recipe")
@click.option(
    "-o",
    "--option",
    "options",
    multiple=True,
    metavar="KEY=VALUE",
    help="Recipe option, e.g. -o n_train=512 (repeatable).",
)
@click.option(
    "--config",
    "config_file",
    metavar="FILE.json",
    help="TrainerConfig fields as JSON (e.g. from `torchdoctor tune`); flags override.",
)
@click.option("--epochs", type=click.IntRange(min=1))
@click.option("--batch-size", type=click.IntRange(min=1))
@click.option("--precision", type=click.Choice(["auto", "fp32", "bf16", "fp16"]))
@click.option("--workers", metavar="N|auto", help="DataLoader worker processes.")
@click.option("--pin-memory/--no-pin-memory", default=None)
@click.option("--compile", is_flag=True, default=None, help="torch.compile the model.")
@click.option("--compile-mode", type=click.Choice(["default", "reduce-overhead", "max-autotune"]))
@click.option("--accumulate", type=click.IntRange(min=1), help="Micro-batches per optimizer step.")
@click.option("--clip", type=click.FloatRange(min=0, min_open=True), help="Clip grad norm to this.")
@click.option("--channels-last/--no-channels-last", default=None)
@click.option("--checkpoint-dir", type=click.Path(file_okay=False))
@click.option("--resume", is_flag=True, default=None, help="Continue from the newest checkpoint.")
@click.option("--checkpoint-every", type=click.IntRange(min=1), metavar="STEPS")
@click.option("--checkpoint-every-seconds", type=click.FloatRange(min=0, min_open=True))
@click.option("--keep-last", type=click.IntRange(min=1), help="Checkpoints to keep.")
@click.option(
    "--nan-policy",
    type=click.Choice(["stop", "skip", "continue"]),
    help="What a NaN/inf loss does.",
)
@click.option("--max-steps", type=click.IntRange(min=1))
@click.option("--seed", type=int)
@click.option("--device", help="auto, cpu, cuda, cuda:1 ...")
@click.option("--quiet", is_flag=True, default=None, help="No progress bar and no table.")
@click.option("--json", "json_path", metavar="FILE", help="Write the per-epoch history as JSON.")
def train(recipe, options, config_file, json_path, **flags):
    """Train RECIPE (a built-in name or a .py file defining recipe(**options)) with the
    reference loop and print a per-epoch table."""
    flags["workers"] = parse_workers(flags["workers"])
    flags = given_flags(click.get_current_context(), flags)
    file_settings = read_config_file(config_file) if config_file else {}
    recipe_options = parse_options(options)
    if json_path:
        from torchdoctor.outputs import check_writable

        check_writable(json_path)  # before training, not after it

    from torchdoctor.recipes import REGISTRY
    from torchdoctor.recipes.loading import load_recipe  # imports torch
    from torchdoctor.trainer import Trainer, TrainerConfig

    seed_recipe_build({**file_settings, **flags})
    loaded = load_recipe(recipe, **recipe_options)
    config = TrainerConfig.from_dict(merge_settings(loaded.defaults, file_settings, flags))
    warn_loader_settings(loaded.train_data, {**file_settings, **flags})
    user_file = None if recipe in REGISTRY else Path(recipe)
    with user_code_errors(user_file, "building the Trainer for"):
        trainer = Trainer.from_recipe(loaded, config)
    try:
        with user_code_errors(user_file, "training"):
            history = trainer.fit()
    except KeyboardInterrupt:
        click.echo(interrupted_message(trainer), err=True)
        raise click.exceptions.Exit(130) from None  # 128 + SIGINT, not click's "Aborted!" (1)

    if trainer.dist.is_main:  # under torchrun rank 0 reports for all ranks
        if config.resume and not config.quiet:
            click.echo(resume_message(trainer), err=True)
        if json_path:
            write_history(json_path, loaded.name, config, trainer.setup, history, loaded.train_data)
        if not config.quiet:
            print_history(history)
    if trainer.dist.is_distributed:
        exit_rank(trainer.dist)


def exit_rank(env) -> None:
    """End a torchrun worker once its work is written. gloo's threads can outlive the
    interpreter's finalization and abort the process ("terminate called without an active
    exception", exit -6) after a successful run, so leave the group and skip finalization."""
    from torchdoctor.trainer.distributed import teardown

    teardown(env)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@contextlib.contextmanager
def user_code_errors(user_file: Path | None, doing: str):
    """An error in the user's recipe code (optimizer factory, model forward, loss) is shown like
    one inside recipe(): their traceback without our frames, then one line (exit 1)."""
    from torchdoctor.recipes.loading import user_code_failure

    try:
        yield
    except Exception as exc:
        failure = user_code_failure(exc, user_file, doing) if user_file is not None else None
        if failure is None:
            raise
        raise failure from None


def resume_message(trainer) -> str:
    """Whether --resume found something, so a fresh start is never mistaken for a resume, and
    a resume with nothing left to do does not look like a run."""
    if trainer.resumed_from is None:
        return (
            f"torchdoctor: no checkpoint in {trainer.config.checkpoint_dir}: started from scratch"
        )
    path, _, step = trainer.resumed_from
    message = f"torchdoctor: resumed from {path} at step {step}"
    if trainer.global_step == step:
        message += ": nothing left to train (it already reached --epochs/--max-steps)"
    return message


def interrupted_message(trainer) -> str:
    """What survived a Ctrl-C, so the user knows whether `--resume` has something to go on."""
    from torchdoctor.trainer.checkpoint import CheckpointManager

    message = f"torchdoctor: interrupted at step {trainer.global_step}"
    directory = trainer.config.checkpoint_dir
    if not directory:
        return message + " (no --checkpoint-dir: nothing was saved)"
    latest = CheckpointManager(directory, trainer.config.keep_last).latest()
    if latest is None:
        return message + f"; no checkpoint in {directory} yet"
    return message + f"; newest checkpoint {latest}; rerun with --resume to continue from it"


class IgnoredSettingWarning(UserWarning):
    """A setting was given that the run could not apply."""


# TrainerConfig fields that only shape the DataLoader the Trainer builds from a Dataset
LOADER_FIELDS = (
    "batch_size",
    "workers",
    "pin_memory",
    "persistent_workers",
    "prefetch_factor",
    "drop_last",
)


def warn_loader_settings(train_data, settings: dict) -> None:
    """A recipe's ready DataLoader is used as given: say so when loader settings were asked for
    (from --config or flags) instead of letting the run look as if they applied."""
    from torch.utils.data import DataLoader

    ignored = [name for name in LOADER_FIELDS if name in settings]
    if isinstance(train_data, DataLoader) and ignored:
        warnings.warn(
            f"the recipe's train_data is a ready DataLoader, used as given: {', '.join(ignored)} "
            f"{'does' if len(ignored) == 1 else 'do'} not apply to it (return a Dataset to let "
            "torchdoctor build the loader)",
            IgnoredSettingWarning,
            stacklevel=2,
        )


def write_history(path: str, recipe_name: str, config, setup, history, train_data=None) -> None:
    from torch.utils.data import DataLoader

    resolved = setup.to_dict()
    if isinstance(train_data, DataLoader):  # what the recipe's own loader really uses
        resolved.update(workers=train_data.num_workers, pin_memory=train_data.pin_memory)
    payload = {
        "schema": HISTORY_SCHEMA,
        "recipe": recipe_name,
        "config": config.to_dict(),
        "resolved": resolved,
        "epochs": [record.to_dict() for record in history],
    }
    try:
        Path(path).write_text(json.dumps(payload, indent=2) + "\n")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def print_history(history) -> None:
    from rich import box
    from rich.table import Table

    from torchdoctor.console import make_console

    table = Table(
        title="training history",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        pad_edge=False,
        collapse_padding=True,
    )
    columns = (
        "epoch",
        "train\nloss",
        "train\nacc",
        "val\nloss",
        "val\nacc",
        "samples\n/s",
        "epoch\ns",
        "peak\nMiB",
        "grad\nnorm",
        "steps",
    )
    for name in columns:
        table.add_column(name, justify="right")
    for r in history:
        table.add_row(
            str(r.epoch),
            _fmt(r.train_loss),
            _fmt(r.train_accuracy),
            _fmt(r.val_loss),
            _fmt(r.val_accuracy),
            f"{r.samples_per_s:,.0f}",
            f"{r.epoch_s:.2f}",
            f"{r.peak_memory_bytes / 2**20:,.0f}",
            _fmt(r.grad_norm),
            str(r.steps),
        )
    make_console().print(table)


def _fmt(value) -> str:
    return "-" if value is None else f"{value:.4f}"
