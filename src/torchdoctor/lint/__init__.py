"""`torchdoctor lint`: static rules for PyTorch training code, with libcst autofixes.

Entry points:
    run_lint(paths, LintOptions(...)) -> RunResult    files and folders, config, fixes
    lint_source(source, path, rules, fix, unsafe)     one source text
    all_rules()                                       the rule catalogue (lint/rules/td*.py)

Nothing in this package imports torch.
"""

from torchdoctor.lint.engine import FileResult, lint_source
from torchdoctor.lint.rules import all_rules
from torchdoctor.lint.runner import LintOptions, RunResult, run_lint

__all__ = ["FileResult", "LintOptions", "RunResult", "all_rules", "lint_source", "run_lint"]
