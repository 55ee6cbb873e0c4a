"""Precision of `torchdoctor lint` on public training code, from the labelled findings.

bench/lint_corpus/labels.tsv holds one row per finding that lint gave on the corpus listed in
bench/lint_corpus/files.tsv (public repositories at fixed commits; the code is not
committed), each read against the surrounding code and labelled `right`, `wrong` or
`negligible` (true but not worth a change), with the fix lint offered (`safe`, `unsafe`,
`none`) and whether applying it would break the program. A label is keyed by its repository,
file, rule and the text of the finding's line (`source`, whitespace collapsed; the n-th finding
of a rule on lines of the same text in a file gets the n-th such label), not by line number, so
a rule change that moves a finding within its line or a label written against another commit's
line numbers still match; `location` is kept for the reader.

Prints precision overall and per rule from the table. With the corpus present locally
(bench/lint_corpus_fetch.py rebuilds it), it also re-lints the files and lists findings that
are not labelled yet and labels whose finding is gone, so the table stays the truth.

Usage: python bench/lint_precision.py [--corpus /tmp/corpus] [--no-relint] [--jobs 2]
                                     [--unlabelled rows.tsv]

`--unlabelled` writes the findings that have no label yet as rows of labels.tsv with the label,
fix and reason left for the reader to fill in.
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


FIELDS = ("repository", "commit", "location", "rule", "label", "fix", "fix_breaks", "why", "source")


def source_line(corpus: Path, repository: str, location: str) -> str:
    """The corpus file's line at `location` (`path:line:column`), whitespace collapsed."""
    path, line, _ = location.rsplit(":", 2)
    file = corpus / repository.replace("/", "+", 1) / path
    lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
    number = int(line)
    return " ".join(lines[number - 1].split()) if 0 < number <= len(lines) else ""


def keyed(rows) -> dict[tuple[str, str, str, str, int], object]:
    """{(repository, path, rule, source, n): row}, n counting rows of equal text in order."""
    seen: Counter = Counter()
    out = {}
    for repository, location, rule, source, row in rows:
        path = location.rsplit(":", 2)[0]
        base = (repository, path, rule, source)
        out[(*base, seen[base])] = row
        seen[base] += 1
    return out


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


def relint(
    corpus: Path, files: list[dict[str, str]], labels, jobs: int, unlabelled_out: Path | None
) -> int:
    from torchdoctor.lint.runner import LintOptions, run_lint

    paths = [corpus / row["repository"].replace("/", "+", 1) / row["path"] for row in files]
    present = [p for p in paths if p.is_file()]
    if not present:
        print(f"\ncorpus not found under {corpus}: run bench/lint_corpus_fetch.py to re-lint")
        return 0
    print(f"\nre-linting {len(present)} of {len(paths)} corpus files under {corpus} ...")
    result = run_lint([str(p) for p in present], LintOptions(jobs=jobs))
    commits = {row["repository"]: row["commit"] for row in files}
    rows = []
    for violation in sorted(result.violations, key=lambda v: (v.path, v.line, v.column, v.code)):
        relative = Path(violation.path).resolve().relative_to(corpus.resolve())
        repo_dir, _, path = str(relative).partition("/")
        repository = repo_dir.replace("+", "/", 1)
        location = f"{path}:{violation.line}:{violation.column}"
        source = source_line(corpus, repository, location)
        rows.append((repository, location, violation.code, source, violation))
    found = keyed(rows)
    known = keyed(
        (r["repository"], r["location"], r["rule"], r["source"], r)
        for r in sorted(labels, key=lambda r: (r["repository"], _line_order(r["location"])))
    )
    unlabelled = sorted(set(found) - set(known))
    gone = sorted(set(known) - set(found))
    for key in unlabelled:
        violation = found[key]
        print(f"  not labelled: {key[0]} {key[1]}:{violation.line} {key[2]} {violation.message}")
    for key in gone:
        print(f"  labelled but no longer found: {key[0]} {known[key]['location']} {key[2]}")
    print(f"{len(found)} findings now; {len(unlabelled)} not labelled, {len(gone)} gone")
    if unlabelled_out is not None and unlabelled:
        with unlabelled_out.open("w", newline="") as handle:
            writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
            for key in unlabelled:
                v = found[key]
                fix = v.fix.safety if v.fix is not None else "none"
                location = f"{key[1]}:{v.line}:{v.column}"
                writer.writerow(
                    [key[0], commits[key[0]], location, key[2], "", fix, "", "", key[3]]
                )
        print(f"unlabelled findings written to {unlabelled_out}")
    return 1 if unlabelled else 0


def _line_order(location: str) -> tuple[str, int, int]:
    path, line, column = location.rsplit(":", 2)
    return (path, int(line), int(column))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("/tmp/corpus"))
    parser.add_argument("--no-relint", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--unlabelled", type=Path, help="write unlabelled findings as rows here")
    args = parser.parse_args()
    labels = read_tsv(HERE / "labels.tsv")
    files = read_tsv(HERE / "files.tsv")
    repos = {row["repository"] for row in files}
    print(f"corpus: {len(files)} files from {len(repos)} repositories")
    status = summarize(labels)
    if not args.no_relint:
        status |= relint(args.corpus, files, labels, args.jobs, args.unlabelled)
    return status


if __name__ == "__main__":
    sys.exit(main())
