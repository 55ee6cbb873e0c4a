"""Lint many files: discovery, per-file rule selection, optional process pool, writing fixes."""

from __future__ import annotations

import difflib
import io
import tokenize
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from torchdoctor.cores import usable_cores
from torchdoctor.errors import UsageError
from torchdoctor.lint.config import LintConfig, load_config
from torchdoctor.lint.discovery import discover
from torchdoctor.lint.engine import SYNTAX_ERROR_CODE, FileResult, lint_source
from torchdoctor.lint.model import Violation
from torchdoctor.lint.rules import all_rules, known_codes
from torchdoctor.lint.selection import matches, select_rules, validate_codes


@dataclass
class LintOptions:
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False  # compute fixes but write nothing
    jobs: int = 1


@dataclass
class RunResult:
    files: list[FileResult]
    notes: list[str] = field(default_factory=list)

    @property
    def violations(self) -> list[Violation]:
        return [v for f in self.files for v in f.violations]

    @property
    def changed_files(self) -> list[FileResult]:
        return [f for f in self.files if f.changed]

    def diff_text(self) -> str:
        chunks: list[str] = []
        for f in self.changed_files:
            chunks.extend(
                difflib.unified_diff(
                    f.source.splitlines(keepends=True),
                    (f.fixed_source or f.source).splitlines(keepends=True),
                    fromfile=f"a/{f.path}",
                    tofile=f"b/{f.path}",
                )
            )
        return "".join(chunks)


def source_encoding(raw: bytes) -> str:
    """The encoding Python itself would read the file with (BOM or PEP 263 `coding:` line)."""
    return tokenize.detect_encoding(io.BytesIO(raw).readline)[0]


def _read(path: Path) -> tuple[str | None, str | None]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or exc}"
    try:
        encoding = source_encoding(raw)
    except SyntaxError as exc:
        if "unknown encoding" in exc.msg:  # a coding line naming no codec
            return None, exc.msg
        encoding = "utf-8"  # no declaration and not UTF-8: say so below
    try:
        return raw.decode(encoding), None
    except UnicodeDecodeError as exc:
        name = "UTF-8" if encoding.startswith("utf-8") else encoding
        return None, f"not {name}: {exc.reason} at byte {exc.start}"


def _lint_file(args) -> FileResult:
    path, codes, fix, unsafe = args
    rules = [r for r in all_rules() if r.code in codes]
    text, problem = _read(Path(path))
    if text is None:
        return FileResult(
            path,
            "",
            [Violation(SYNTAX_ERROR_CODE, "syntax-error", problem or "", 1, 1, 1, 1, None, path)],
        )
    return lint_source(text, path, rules, fix=fix, unsafe=unsafe)


def run_lint(paths: list[str], options: LintOptions, config: LintConfig | None = None) -> RunResult:
    paths = paths or ["."]
    if config is None:
        config = load_config(Path(paths[0]))
    known = known_codes()
    validate_codes(options.select, known, "--select")
    validate_codes(options.ignore, known, "--ignore")
    validate_codes(config.select, known, "pyproject [tool.torchdoctor.lint] select")
    validate_codes(config.ignore, known, "pyproject [tool.torchdoctor.lint] ignore")
    select = options.select or config.select
    ignore = [*config.ignore, *options.ignore]
    selected = {r.code for r in select_rules(all_rules(), select, ignore)}
    selected.add(SYNTAX_ERROR_CODE)
    files = discover(paths, config.exclude_rules())
    if options.unsafe_fixes and not (options.fix or options.diff):
        raise UsageError("--unsafe-fixes needs --fix or --diff")
    want_fix = options.fix or options.diff
    jobs = []
    for path in files:
        off = config.ignored_for(path)
        codes = frozenset(c for c in selected if not matches(c, off))
        jobs.append((str(path), codes, want_fix, options.unsafe_fixes))
    workers = min(options.jobs if options.jobs > 0 else usable_cores(), len(jobs) or 1)
    if workers > 1 and len(jobs) > 8:
        with ProcessPoolExecutor(workers) as pool:
            results = list(pool.map(_lint_file, jobs, chunksize=max(1, len(jobs) // (workers * 8))))
    else:
        results = [_lint_file(job) for job in jobs]
    if options.fix and not options.diff:
        for result in results:
            if result.changed and result.fixed_source is not None:
                path = Path(result.path)  # written back in the encoding it was read with
                path.write_text(
                    result.fixed_source, encoding=source_encoding(path.read_bytes()), newline=""
                )
    notes = list(config.notes) + [note for r in results for note in dict.fromkeys(r.notes)]
    return RunResult(results, notes)
