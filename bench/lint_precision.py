"""Precision of `torchdoctor lint` on public training code, from the labelled findings.

bench/lint_corpus/labels.tsv holds one row per finding that lint gave on the corpus listed in
bench/lint_corpus/files.tsv (public repositories at fixed commits; the code is not
committed), each read against the surrounding code and labelled `right`, `wrong` or
`negligible` (true but not worth a change), with the fix lint offered (`safe`, `unsafe`,
`none`) and whether applying it would break the program.

Prints precision overall and per rule from the table. With the corpus present locally
(bench/lint_corpus_fetch.py rebuilds it), it also re-lints the files and lists findings that
are not labelled yet and labels whose finding is gone, so the table stays the truth.

Usage: python bench/lint_precision.py [--corpus /tmp/corpus] [--no-relint] [--jobs 2]
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).parent / "lint_corpus"
LABELS = ("right", "wrong", "negligible")


def read_tsv(path: Path) -> list[dict[str, str]]:
    with path.open() as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def finding_key(repository: str, location: str, rule: str) -> tuple[str, str, str]:
    return (repository, location, rule)


def summarize(labels: list[dict[str, str]]) -> int:
    bad = [row for row in labels if row["label"] not in LABELS]
    if bad:
        print(f"unknown labels: {[row['label'] for row in bad]}", file=sys.stderr)
        return 1
    total = Counter(row["label"] for row in labels)
    n = len(labels)
    right = total["right"]
    print(
        f"{n} findings labelled: {right} right, {total['wrong']} wrong, "
        f"{total['negligible']} negligible; precision {right / n:.1%}"
        if n
        else "no labels"
    )
    by_rule: dict[str, Counter] = defaultdict(Counter)
    for row in labels:
        by_rule[row["rule"]][row["label"]] += 1
    print(f"\n{'rule':6} {'n':>4} {'right':>6} {'wrong':>6} {'neglig.':>8} {'precision':>10}")
    for rule in sorted(by_rule):
        c = by_rule[rule]
        count = sum(c.values())
        print(
            f"{rule:6} {count:4d} {c['right']:6d} {c['wrong']:6d} {c['negligible']:8d} "
            f"{c['right'] / count:10.0%}"
        )
    offered = Counter(row["fix"] for row in labels)
    breaking = Counter(row["fix"] for row in labels if row["fix_breaks"] == "yes")
    print(
        f"\nfixes offered: {offered['safe']} safe ({breaking['safe']} would break the "
        f"program), {offered['unsafe']} unsafe ({breaking['unsafe']} would break it)"
    )
    return 0


def relint(corpus: Path, files: list[dict[str, str]], labels, jobs: int) -> int:
    from torchdoctor.lint.runner import LintOptions, run_lint

    paths = [corpus / row["repository"].replace("/", "+", 1) / row["path"] for row in files]
    present = [p for p in paths if p.is_file()]
    if not present:
        print(f"\ncorpus not found under {corpus}: run bench/lint_corpus_fetch.py to re-lint")
        return 0
    print(f"\nre-linting {len(present)} of {len(paths)} corpus files under {corpus} ...")
    result = run_lint([str(p) for p in present], LintOptions(jobs=jobs))
    found = {}
    for violation in result.violations:
        relative = Path(violation.path).resolve().relative_to(corpus.resolve())
        repo_dir, _, path = str(relative).partition("/")
        repository = repo_dir.replace("+", "/", 1)
        location = f"{path}:{violation.line}:{violation.column}"
        found[finding_key(repository, location, violation.code)] = violation
    labelled = {finding_key(r["repository"], r["location"], r["rule"]) for r in labels}
    unlabelled = sorted(set(found) - labelled)
    gone = sorted(labelled - set(found))
    for key in unlabelled:
        print(f"  not labelled: {key[0]} {key[1]} {key[2]} {found[key].message}")
    for key in gone:
        print(f"  labelled but no longer found: {key[0]} {key[1]} {key[2]}")
    print(f"{len(found)} findings now; {len(unlabelled)} not labelled, {len(gone)} gone")
    return 1 if unlabelled else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("/tmp/corpus"))
    parser.add_argument("--no-relint", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    labels = read_tsv(HERE / "labels.tsv")
    files = read_tsv(HERE / "files.tsv")
    repos = {row["repository"] for row in files}
    print(f"corpus: {len(files)} files from {len(repos)} repositories")
    status = summarize(labels)
    if not args.no_relint:
        status |= relint(args.corpus, files, labels, args.jobs)
    return status


if __name__ == "__main__":
    sys.exit(main())
