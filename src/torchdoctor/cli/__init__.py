"""The `torchdoctor` command. Each subcommand lives in its own module and is imported only when
it runs, so `torchdoctor lint` never pays for importing torch.

Errors: a `TorchdoctorError` raised anywhere below becomes one line on stderr and its exit code
(2 for usage errors, 1 otherwise); click's own usage errors also exit 2.
"""

from __future__ import annotations

import importlib
import sys
import warnings

import click

from torchdoctor import __version__
from torchdoctor.errors import TorchdoctorError

# name -> "module:attribute" of a click.Command
SUBCOMMANDS = {
    "train": "torchdoctor.cli.train:train",
    "demo": "torchdoctor.cli.demo:demo",
    "diagnose": "torchdoctor.cli.diagnose:diagnose",
    "lint": "torchdoctor.cli.lint:lint",
    "tune": "torchdoctor.cli.tune:tune",
}


class _OneLineError(click.ClickException):
    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code

    def show(self, file=None) -> None:
        click.echo(f"torchdoctor: error: {self.format_message()}", err=True)


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(SUBCOMMANDS)

    def get_command(self, ctx, name):
        target = SUBCOMMANDS.get(name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        return getattr(importlib.import_module(module_name), attr)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except TorchdoctorError as exc:
            raise _OneLineError(str(exc), exc.exit_code) from exc
        except click.UsageError as exc:
            # A subcommand's bad option or value: one line and exit 2, like our own usage errors.
            if isinstance(exc, _OneLineError):
                raise
            raise _OneLineError(exc.format_message(), 2) from exc


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="torchdoctor")
def cli() -> None:
    """Find where each PyTorch training step's time goes, fix it, and prove the gain."""


def _one_line_warning(message, category, filename, lineno, line=None):
    """Our own warnings read like our errors: one line, no source excerpt from our code."""
    if category.__module__.startswith("torchdoctor"):
        return f"torchdoctor: warning: {message}\n"
    return _default_formatwarning(message, category, filename, lineno, line)


_default_formatwarning = warnings.formatwarning


def main(argv: list[str] | None = None) -> None:
    warnings.formatwarning = _one_line_warning
    try:
        cli.main(args=argv, prog_name="torchdoctor")
    except KeyboardInterrupt:
        click.echo("torchdoctor: interrupted", err=True)
        sys.exit(130)
