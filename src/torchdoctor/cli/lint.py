"""`torchdoctor lint [PATHS...]`: static checks for PyTorch training code, with autofixes.

Never imports torch: it must run fast on machines without it (pre-commit, CI).
Exit codes: 0 clean, 1 findings remain (or `--diff` would change files), 2 usage error.
"""

from __future__ import annotations

import sys

import click

from torchdoctor.lint.formats import FORMATS


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--fix", is_flag=True, help="Apply safe fixes in place.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff, also apply unsafe fixes.")
@click.option(
    "--diff",
    is_flag=True,
    help="Print the unified diff of the fixes; change nothing. Exit 1 if there would be changes.",
)
@click.option(
    "--select",
    default=None,
    metavar="CODES",
    help="Comma-separated codes or prefixes to enable (e.g. TD1,TD115).",
)
@click.option(
    "--ignore", default=None, metavar="CODES", help="Comma-separated codes or prefixes to disable."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=0),
    default=0,
    help="Worker processes (default 0: one per CPU; runs of 8 files or fewer use one).",
)
@click.option("--quiet", "-q", is_flag=True, help="Print findings only, no summary.")
def lint(paths, fix, unsafe_fixes, diff, select, ignore, fmt, jobs, quiet):
    """Check PyTorch training code for slow or wrong patterns (default path: .)."""
    from torchdoctor.lint.formats import render
    from torchdoctor.lint.runner import LintOptions, run_lint
    from torchdoctor.lint.selection import split_codes

    options = LintOptions(
        select=split_codes(select),
        ignore=split_codes(ignore),
        fix=fix,
        unsafe_fixes=unsafe_fixes,
        diff=diff,
        jobs=jobs,
    )
    result = run_lint(list(paths), options)
    if not result.files:  # "All checks passed (0 files)" would pass a CI job that checked nothing
        from torchdoctor.errors import UsageError

        raise UsageError(f"no Python file to check in {', '.join(paths) or '.'}")
    if diff:
        sys.stdout.write(result.diff_text())
        if not quiet:
            n = len(result.changed_files)
            click.echo(
                f"Would fix {n} file{'s' * (n != 1)}." if n else "No fixes to apply.", err=True
            )
        sys.exit(1 if result.changed_files else 0)
    sys.stdout.write(render(fmt, result, show_fixes_unsafe=unsafe_fixes, quiet=quiet))
    sys.exit(1 if result.violations else 0)
