"""Rebuild the lint precision corpus (public training code, never committed) from the list.

The files named in bench/lint_corpus/files.tsv are extracted, at the recorded commits, from
bare git mirrors (one per repository, `<mirrors>/<owner>+<name>/repo[/.git]`, as the project's
`fetch` tool leaves them) into `<corpus>/<owner>+<name>/<path>`, together with each
repository's project files (`pyproject.toml`, `setup.cfg`, `requirements*.txt`), which the
rules read for the declared torch version. Not needed by the tests.

Usage: python bench/lint_corpus_fetch.py [--mirrors /work/.mirror] [--corpus /tmp/corpus]
"""

from __future__ import annotations

import argparse
import csv
import re
import subprocess
import sys
from pathlib import Path

LIST = Path(__file__).parent / "lint_corpus" / "files.tsv"
_PROJECT_FILE_RE = re.compile(r"(^|/)(pyproject\.toml|setup\.cfg|requirements[^/]*\.txt)$")


def git_dir(mirrors: Path, repo: str) -> Path:
    base = mirrors / repo.replace("/", "+", 1) / "repo"
    return base / ".git" if (base / ".git").is_dir() else base


def git(gdir: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={gdir}", *args], capture_output=True, check=True
    ).stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--corpus", type=Path, default=Path("/tmp/corpus"))
    args = parser.parse_args()
    with LIST.open() as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    by_repo: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        by_repo.setdefault((row["repository"], row["commit"]), []).append(row["path"])
    missing = 0
    for (repo, commit), paths in sorted(by_repo.items()):
        gdir = git_dir(args.mirrors, repo)
        if not gdir.exists():
            print(f"missing mirror for {repo} (fetch github:{repo} first)", file=sys.stderr)
            missing += len(paths)
            continue
        tree = git(gdir, "ls-tree", "-r", "--name-only", commit).decode().splitlines()
        wanted = set(paths) | {p for p in tree if _PROJECT_FILE_RE.search(p)}
        for path in sorted(wanted):
            target = args.corpus / repo.replace("/", "+", 1) / path
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                target.write_bytes(git(gdir, "show", f"{commit}:{path}"))
            except subprocess.CalledProcessError:
                print(f"{repo}@{commit[:10]}: {path} not in the mirror", file=sys.stderr)
                missing += path in paths
    print(f"{len(rows) - missing} of {len(rows)} files under {args.corpus}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
