"""Run torchdoctor on real public training programs, unmodified, and tabulate what happened.

The programs are not part of this repository (their code is never committed): `corpus.json` lists
each one (repository, commit, script, arguments, data stand-in), and `--src` points at a folder
holding the repositories' files as `OWNER+NAME/...` (e.g. `git archive` of each commit). For each
program this script copies its folder to a scratch directory, generates its data stand-in
(standins.py), runs it plainly (bounded by `plain_timeout`), runs `torchdoctor diagnose --json`,
and `torchdoctor lint`, then prints one row per program: both exit codes, the report's status,
its top findings, any torchdoctor internal error, and diagnose's overhead on the program's
steady-state step.

    python bench/real_programs/run.py --src /path/to/corpus [--only ID,ID] [--out results.md]
        [--overhead-repeats N] [--plain-cap SECONDS]

The overhead column compares like with like: both runs carry the same minimal clock
(step_clock/sitecustomize.py: one wall and one process-CPU reading per optimizer step), and the
ratio is of the median step interval over the same steps (from step max(2, n/5) to n, n being
the fewer steps of the two runs; diagnose stops a long program after its budget, so whole-run
wall times are not comparable). `--overhead-repeats N` runs plain and diagnosed N times,
alternating, and takes the median of each side's medians (the machine may be shared: the CPU
ratio is the steadier one under load). A program with no torch.optim optimizer (parameters
updated by hand) has no clock: its overhead reads "-".

Hugging Face programs run offline (HF_HUB_OFFLINE=1): the checkpoints and datasets they name
are local folders of the same name (standins.hf_model: a small model of the family built from its
config, random weights, a tokenizer trained here; standins.hf_dataset), and evaluate_standin/
computes the metrics `evaluate.load` would fetch.

A program launched with torchrun names its launcher options under `launch`; diagnose then runs
as `torchrun ... -m torchdoctor diagnose --rank-dir ...` (its `diagnose_args`).

A program pinned to a commit written for NumPy 1 (`np.Inf`) names `{numpy1_names}` on its
PYTHONPATH: that folder's sitecustomize puts back the NumPy 1 names NumPy 2 removed (the step
clock's sitecustomize, first on the path, runs it).

A program written for gym 0.26 names `{gym_standin}` on its PYTHONPATH: `gym` as gymnasium (the
API it kept), which is installed. A program evaluated in a MuJoCo task
with gym's API before 0.26 names `{gym_old_api_standin}`: the task's dimensions, a random
linear system for its physics (MuJoCo is not installed).

A program that imports at its top a package it does not use on the path it is run on (pytorch-
fm's `lmdb`, for data sets other than MovieLens) names `{import_stubs}`: a module of that name
that raises when used.

Some programs need packages torchdoctor does not: corpus.json lists them under `needs`; a row
whose needs are missing is skipped with a note.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import standins
import step_clock

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent


def _run(cmd: list[str], cwd: Path, timeout: float, env: dict) -> tuple[int | str, float, str]:
    start = time.perf_counter()
    try:
        done = subprocess.run(
            cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
        )
        code: int | str = done.returncode
        output = done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        code = "timeout"
        output = (
            (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else ""
        )
    return code, time.perf_counter() - start, output


def _setup(entry: dict, workdir: Path, env: dict) -> None:
    for step in entry.get("setup", []):
        if "standin" in step:
            options = {k: v for k, v in step.items() if k != "standin"}
            getattr(standins, step["standin"])(workdir, **options)
        else:
            cwd = workdir / step.get("cwd", ".")
            subprocess.run([sys.executable, *step["run"]], cwd=cwd, env=env, check=True,
                           capture_output=True)  # fmt: skip


def run_one(
    entry: dict, src: Path, scratch: Path, overhead_repeats: int = 1, plain_cap: float | None = None
) -> dict:
    missing = [m for m in entry.get("needs", []) if importlib.util.find_spec(m) is None]
    row: dict = {"id": entry["id"], "repo": entry["repo"], "script": entry["script"]}
    if missing:
        return {**row, "skipped": f"needs {', '.join(missing)}"}
    origin = src / entry["repo"].replace("/", "+") / entry.get("dir", "")
    workdir = scratch / entry["id"]
    shutil.copytree(origin, workdir)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1", "MPLBACKEND": "Agg"}
    places = {"workdir": str(workdir), "torchvision_standin": str(HERE / "torchvision_standin"),
              "torchaudio_standin": str(HERE / "torchaudio_standin"),
              "gym_standin": str(HERE / "gym_standin"),
              "gym_old_api_standin": str(HERE / "gym_old_api_standin"),
              "import_stubs": str(HERE / "import_stubs"),
              "evaluate_standin": str(HERE / "evaluate_standin"),
              "numpy1_names": str(HERE / "numpy1_names")}  # fmt: skip
    env.update({k: v.format(**places) for k, v in entry.get("env", {}).items()})
    _setup(entry, workdir, env)
    script, args = entry["script"], entry.get("args", [])
    cwd = workdir / entry.get("cwd", ".")
    launch = entry.get("launch", [])  # e.g. torchrun's `-m torch.distributed.run ...` options
    plain_cmd = [sys.executable, *launch, script, *args]
    report = workdir / "torchdoctor-report.json"
    diagnose_cmd = [sys.executable, *launch, "-m", "torchdoctor", "diagnose", "--json",
                    str(report), *entry.get("diagnose_args", []), script, *args]  # fmt: skip
    clocks: dict[str, list[list]] = {"plain": [], "diagnose": []}
    for repeat in range(overhead_repeats):
        with step_clock.clocked(env, workdir / f"clock-plain-{repeat}") as (clock_env, read):
            plain_s = min(entry.get("plain_timeout", 120), plain_cap or float("inf"))
            plain = _run(plain_cmd, cwd, plain_s, clock_env)
            clocks["plain"].append(read())
        with step_clock.clocked(env, workdir / f"clock-diagnose-{repeat}") as (clock_env, read):
            diag = _run(diagnose_cmd, cwd, entry.get("diagnose_timeout", 300), clock_env)
            clocks["diagnose"].append(read())
    row["overhead"] = step_clock.overhead(clocks["plain"], clocks["diagnose"])
    (workdir / "torchdoctor-diagnose.log").write_text(diag[2])
    lint = _run([str(BIN / "torchdoctor"), "lint", "--format", "json", script], cwd, 120, env)
    row.update(plain_rc=plain[0], plain_s=round(plain[1], 1), diagnose_rc=diag[0],
               diagnose_s=round(diag[1], 1))  # fmt: skip
    row["internal_error"] = "internal error" in diag[2]
    row["tail"] = diag[2][-600:]
    if report.exists():
        data = json.loads(report.read_text())
        run = data.get("run", data)
        row["status"] = run.get("status")
        row["verdict"] = data.get("verdict", "")
        row["findings"] = [f"{f['id']}[{f['severity'][0]}]" for f in data.get("findings", [])]
    try:
        found = json.loads(lint[2][lint[2].index("{") :])["findings"]
        row["lint"] = [f"{f['code']}:{f['line']}" for f in found]
    except (ValueError, KeyError):
        row["lint"] = ["(unparsed)"]
    return row


def table(rows: list[dict]) -> str:
    lines = [
        "| program | plain exit | diagnose exit | status | findings | lint | diag/plain wall "
        "| step overhead CPU (wall) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "skipped" in r:
            lines.append(f"| {r['id']} | skipped: {r['skipped']} | | | | | | |")
            continue
        ratio = (
            f"{r['diagnose_s'] / r['plain_s']:.2f}"
            if isinstance(r["plain_rc"], int) and r["plain_s"]
            else "-"
        )
        flag = " **internal error**" if r["internal_error"] else ""
        lines.append(
            f"| {r['id']} | {r['plain_rc']} | {r['diagnose_rc']}{flag} | {r.get('status', '-')} "
            f"| {' '.join(r.get('findings', [])) or '-'} | {' '.join(r.get('lint', [])) or '-'} "
            f"| {ratio} | {step_clock.describe(r.get('overhead'))} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, required=True)
    parser.add_argument("--only", default="")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--json-out", type=Path)
    parser.add_argument(
        "--overhead-repeats", type=int, default=1,
        help="plain and diagnosed runs per program, alternating, for the step-overhead column",
    )  # fmt: skip
    parser.add_argument(
        "--keep", type=Path, help="run in this folder and keep each program's copy and report"
    )
    parser.add_argument(
        "--plain-cap", type=float,
        help="cut every plain run at this many seconds (diagnose stops after its budget: the "
        "overhead column needs only the steps both runs made); its exit then reads 'timeout'",
    )  # fmt: skip
    args = parser.parse_args()
    corpus = json.loads((HERE / "corpus.json").read_text())
    wanted = list(filter(None, args.only.split(",")))
    if wanted:  # in the order given (a long run can put the programs it must reach first)
        by_id = {entry["id"]: entry for entry in corpus}
        corpus = [by_id[name] for name in wanted]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        if args.keep:
            scratch = args.keep
            scratch.mkdir(parents=True, exist_ok=True)
        for entry in corpus:
            shutil.rmtree(scratch / entry["id"], ignore_errors=True)
            row = run_one(entry, args.src, scratch, args.overhead_repeats, args.plain_cap)
            print(json.dumps({k: v for k, v in row.items() if k != "tail"}), flush=True)
            rows.append(row)
    text = table(rows)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    if args.json_out:
        args.json_out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
