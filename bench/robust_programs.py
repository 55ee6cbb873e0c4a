"""Unusual programs under diagnose: each runs once plainly (`python script.py`) and once under
`torchdoctor diagnose`, and the two are compared the way a user would: the same exit code, the
program's own output kept (in order, before the report), one report, and a stderr with no frame
or message of ours (no "Exception in thread", no "internal error", no torchdoctor file in a
traceback), the program's own traceback's last line kept.

With `--baseline SRC` (a source folder of another version, e.g. `git archive dc163b9 src | tar
-x -C /tmp/base`), every program is also diagnosed by that version, and the table shows both.
Prints one row per program: `ok`, or what differs.

    OMP_NUM_THREADS=1 .venv/bin/python bench/robust_programs.py [--baseline /tmp/base/src] [NAME ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap

TRAIN = """
import sys, torch
torch.set_num_threads(1)
model = torch.nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
def train(steps):
    for _ in range(steps):
        opt.zero_grad()
        model(torch.randn(16, 8)).pow(2).mean().backward()
        opt.step()
"""

# name -> (feature, program body after TRAIN, diagnose options); "--steps 0" lets it finish,
# so that its output and exit code compare with the plain run's
PROGRAMS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "thread_stopped": (
        "training in a threading.Thread, stopped after the measured steps",
        """
import threading
worker = threading.Thread(target=train, args=(100,))
worker.start(); worker.join()
""",
        ("--steps", "5"),
    ),
    "thread_to_the_end": (
        "training in a threading.Thread, run to its end",
        """
import threading
worker = threading.Thread(target=train, args=(40,))
worker.start(); worker.join()
print("trained in a thread")
""",
        ("--steps", "0"),
    ),
    "file_after_chdir": (
        "os.chdir, then its own files through os.path.dirname(__file__)",
        """
import os
here = os.path.dirname(__file__)
os.chdir("/")
print(os.path.exists(os.path.join(here, "program.py")))
train(30)
""",
        ("--steps", "0"),
    ),
    "keyboard_interrupt": (
        "raise KeyboardInterrupt mid-training",
        "train(30)\nraise KeyboardInterrupt\n",
        ("--steps", "0"),
    ),
    "fork_child": (
        "os.fork(): the child trains and exits",
        """
import os
child = os.fork()
train(30)
if child == 0:
    print("child done"); sys.exit(0)
os.waitpid(child, 0)
print("parent done")
""",
        ("--steps", "0"),
    ),
    "own_excepthook": (
        "sys.excepthook of its own, then a crash",
        """
sys.excepthook = lambda kind, error, tb: print("program's hook:", error, file=sys.stderr)
train(30)
raise RuntimeError("boom")
""",
        ("--steps", "0"),
    ),
    "os_exit_in_thread": (
        "os._exit from a watchdog thread",
        """
import os, threading
done = threading.Event()
threading.Thread(target=lambda: (done.wait(), os._exit(4)), daemon=True).start()
train(30)
done.set()
while True:
    train(1)
""",
        ("--steps", "0"),
    ),
    "watchdog_alarm": (
        "SIGALRM watchdog re-armed every step (stopped by diagnose)",
        """
import signal, time
def too_slow(signum, frame):
    raise TimeoutError("a step took too long")
signal.signal(signal.SIGALRM, too_slow)
for _ in range(300):
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    train(1)
signal.setitimer(signal.ITIMER_REAL, 0)
""",
        ("--steps", "5"),
    ),
    "sys_exit_3": ("sys.exit(3) mid-training", "train(30)\nsys.exit(3)\n", ("--steps", "0")),
    "cause_chain": (
        "an exception with a __cause__ chain",
        """
train(30)
try:
    {}["key"]
except KeyError as error:
    raise ValueError("no such key") from error
""",
        ("--steps", "0"),
    ),
    "spawn_loader": (
        "DataLoader workers with the spawn start method, __main__ guard",
        """
from torch.utils.data import DataLoader, TensorDataset
if __name__ == "__main__":
    loader = DataLoader(TensorDataset(torch.randn(128, 8)), batch_size=16, num_workers=2,
                        multiprocessing_context="spawn")
    for (x,) in loader:
        opt.zero_grad(); model(x).pow(2).mean().backward(); opt.step()
    print("spawn done")
""",
        ("--steps", "0"),
    ),
}


def _run(command: list[str], cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
    )


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _shell_code(code: int) -> int:
    """Killed by signal N (Python's own end on Ctrl-C re-raises SIGINT): the shell's 128 + N."""
    return code if code >= 0 else 128 - code


def compare(plain: subprocess.CompletedProcess, diagnosed, stopped: bool) -> str:
    """What differs between the plain and the diagnosed run, "ok" when nothing does."""
    problems = []
    if not stopped and diagnosed.returncode != _shell_code(plain.returncode):
        problems.append(f"exit {diagnosed.returncode} (plain {plain.returncode})")
    if stopped and diagnosed.returncode != 0:
        problems.append(f"exit {diagnosed.returncode} after our stop")
    if not stopped and not diagnosed.stdout.startswith(plain.stdout):
        problems.append("program output changed")
    if diagnosed.stdout.count("torchdoctor diagnose ") != 1:
        problems.append(f"{diagnosed.stdout.count('torchdoctor diagnose ')} reports")
    err = diagnosed.stderr
    if "Exception in thread" in err or "internal error" in err or "no report" in err:
        problems.append("our error: " + _last_line(err)[:60])
    elif "/torchdoctor/" in err:
        problems.append("our frames in stderr: " + _last_line(err)[:60])
    elif not stopped and _last_line(err) != _last_line(plain.stderr):
        problems.append(f"stderr ends {_last_line(err)[:50]!r}")
    return "; ".join(problems) or "ok"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="source folder of another version to compare")
    parser.add_argument("names", nargs="*", help="programs to run (default: all)")
    options = parser.parse_args()
    names = options.names or list(PROGRAMS)
    versions = {"now": os.environ.get("PYTHONPATH", "")}
    if options.baseline:
        versions = {"baseline": os.path.abspath(options.baseline), **versions}
    print(f"load {os.getloadavg()[0]:.1f}")
    print("| feature | " + " | ".join(versions) + " |")
    print("|---|" + "---|" * len(versions))
    for name in names:
        feature, body, diagnose_options = PROGRAMS[name]
        with tempfile.TemporaryDirectory(prefix="robust-") as folder:
            with open(os.path.join(folder, "program.py"), "w") as script:
                script.write(TRAIN + textwrap.dedent(body))
            plain = _run([sys.executable, "program.py"], folder)
            cells = []
            for source in versions.values():
                os.environ["PYTHONPATH"] = source
                command = [sys.executable, "-m", "torchdoctor", "diagnose", *diagnose_options]
                diagnosed = _run([*command, "program.py"], folder)
                cells.append(compare(plain, diagnosed, "0" not in diagnose_options))
        print(f"| {feature} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
