"""mypy with a baseline that only shrinks.

`python tools/mypy_baseline.py` runs mypy (configured in pyproject.toml) and compares its errors,
counted per (file, error code), with `.mypy-baseline.txt`. It fails when a file gains an error
of a code it did not have that many of; it says when the baseline can shrink
(`--update` rewrites it, which is how fixed errors leave it). Line numbers are not part of the key,
so unrelated edits do not churn the baseline.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / ".mypy-baseline.txt"
ERROR = re.compile(r"^(?P<file>[^:]+):\d+(?::\d+)?: error: .*\[(?P<code>[a-z0-9-]+)\]$")


def current_errors() -> Counter[str]:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--no-pretty"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    counts: Counter[str] = Counter()
    for line in done.stdout.splitlines():
        match = ERROR.match(line.strip())
        if match:
            counts[f"{match['file']} [{match['code']}]"] += 1
    if done.returncode not in (0, 1):  # 2: mypy itself failed (bad config, crash)
        sys.exit(f"mypy failed:\n{done.stdout}{done.stderr}")
    return counts


def read_baseline() -> Counter[str]:
    counts: Counter[str] = Counter()
    if BASELINE.exists():
        for line in BASELINE.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                count, key = line.split(" ", 1)
                counts[key] = int(count)
    return counts


def write_baseline(counts: Counter[str]) -> None:
    lines = ["# mypy errors per (file, code) that are tolerated; this list may only shrink"]
    lines += [f"{n} {key}" for key, n in sorted(counts.items())]
    BASELINE.write_text("\n".join(lines) + "\n")


def main() -> int:
    now, allowed = current_errors(), read_baseline()
    if "--update" in sys.argv:
        write_baseline(now)
        print(f"mypy baseline: {sum(now.values())} errors recorded")
        return 0
    new = {key: n - allowed[key] for key, n in now.items() if n > allowed[key]}
    if new:
        print("mypy: new errors beyond the baseline (fix them; the baseline only shrinks):")
        for key, extra in sorted(new.items()):
            print(f"  +{extra} {key}")
        subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT)
        return 1
    fixed = sum(allowed.values()) - sum(now.values())
    note = f"; {fixed} fewer than the baseline: run with --update" if fixed > 0 else ""
    print(f"mypy: {sum(now.values())} errors, none new{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
