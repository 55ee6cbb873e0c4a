"""Planted scripts in styles unlike ours: is the planted problem found, and is its control quiet?

Runs `torchdoctor diagnose --json` (the default whole-cycle mode, as a user would) on each script
of tests/diagnose/rules/scripts/styles/ (`--set styles`, the default), styles2/ (`--set
styles2`, round 4's second set), styles3/ (`--set styles3`, round 5's third set), styles4/
(`--set styles4`, round 6's fourth set), styles5/ (`--set styles5`, round 7's fifth set),
styles6/ (`--set styles6`, round 8's sixth set), styles7/ (`--set styles7`, round 9's seventh
set), styles8/ (`--set styles8`, round 10's eighth set), styles9/ (`--set styles9`, round 11's ninth
set), styles10/ (`--set styles10`, round 12's tenth set), styles11/ (`--set styles11`,
round 13's eleventh set), styles12/ (`--set styles12`, round 14's twelfth set), styles13/
(`--set styles13`, round 15's thirteenth set) or styles14/ (`--set styles14`, round 16's
fourteenth set) and on its control (`--fixed`), in subprocesses, and
prints one row per script: the planted code, its rank in the planted run (1 = top finding; "-" =
not found), and the warnings/errors of the control run (false alarms); for a clean script, those
of its own run too ("run: ...").

    OMP_NUM_THREADS=1 .venv/bin/python bench/planted_styles.py [--budget 60] [--set styles2] [NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "diagnose" / "rules"))
from styles import (  # noqa: E402
    PLANTED,
    PLANTED2,
    PLANTED3,
    PLANTED4,
    PLANTED5,
    PLANTED6,
    PLANTED7,
    PLANTED8,
    PLANTED9,
    PLANTED10,
    PLANTED11,
    PLANTED12,
    PLANTED13,
    PLANTED14,
)

SETS = {
    "styles": PLANTED,
    "styles2": PLANTED2,
    "styles3": PLANTED3,
    "styles4": PLANTED4,
    "styles5": PLANTED5,
    "styles6": PLANTED6,
    "styles7": PLANTED7,
    "styles8": PLANTED8,
    "styles9": PLANTED9,
    "styles10": PLANTED10,
    "styles11": PLANTED11,
    "styles12": PLANTED12,
    "styles13": PLANTED13,
    "styles14": PLANTED14,
    "all": PLANTED
    + PLANTED2
    + PLANTED3
    + PLANTED4
    + PLANTED5
    + PLANTED6
    + PLANTED7
    + PLANTED8
    + PLANTED9
    + PLANTED10
    + PLANTED11
    + PLANTED12
    + PLANTED13
    + PLANTED14,
}


def diagnose(
    script: Path, args: list[str], budget: float, extra_env: dict[str, str] | None = None
) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        command = [
            sys.executable,
            "-m",
            "torchdoctor",
            "diagnose",
            "--quiet",
            "--budget",
            str(budget),
            "--json",
            str(out),
            str(script),
            *args,
        ]
        env = {**os.environ, "OMP_NUM_THREADS": "1", **(extra_env or {})}
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, cwd=tmp, timeout=budget * 4 + 60
        )
        if not out.exists():
            raise RuntimeError(f"{script.name}: {done.stderr.strip()[-400:]}")
        return json.loads(out.read_text())["findings"]


def rank_of(findings: list[dict], code: str) -> str:
    ids = [f["id"] for f in findings]
    return str(ids.index(code) + 1) if code in ids else "-"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--set", choices=sorted(SETS), default="styles")
    parser.add_argument("names", nargs="*")
    opts = parser.parse_args()
    rows = [p for p in SETS[opts.set] if not opts.names or p.script in opts.names]
    print(
        "| script | planted problem | expected | found (rank, severity) | control: false alarms |"
    )
    print("| --- | --- | --- | --- | --- |")
    for planted in rows:
        script = planted.path
        try:
            found = diagnose(script, [], opts.budget)
            control = diagnose(script, ["--fixed"], opts.budget)
        except RuntimeError as exc:  # the diagnosis itself failed: a row that says so
            print(
                f"| {planted.script} | {planted.problem} | {planted.code} {planted.kind} | "
                f"diagnose failed: {str(exc).splitlines()[-1][:80]} | |",
                flush=True,
            )
            continue
        rank = rank_of(found, planted.code)
        severity = next((f["severity"] for f in found if f["id"] == planted.code), "")
        alarms = [
            f"{f['id']}({f['severity']})"
            for f in control
            if f["severity"] != "info" or f["id"] == planted.code
        ]
        if planted.kind == "clean":  # a clean script's own run must be quiet too
            alarms += [f"run: {f['id']}({f['severity']})" for f in found if f["severity"] != "info"]
        others = ",".join(f["id"] for f in found[:3])
        print(
            f"| {planted.script} | {planted.problem} | {planted.code} {planted.kind} | "
            f"{rank} {severity} (top: {others}) | {' '.join(alarms) or 'none'} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
