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
torch.manual_seed(0)
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
    # round 10
    "thread_main_blocked": (
        "training thread stopped while the main thread waits in queue.get()",
        """
import threading, queue
results = queue.Queue()
def worker():
    train(300)
    results.put("trained")
threading.Thread(target=worker).start()
print(results.get())
""",
        ("--steps", "5"),
    ),
    "prefetch_full_queue": (
        "non-daemon prefetch thread blocked on a full queue after our stop",
        """
import threading, queue
batches = queue.Queue(maxsize=2)
def prefetch(n):
    for _ in range(n):
        batches.put(torch.randn(16, 8))
    batches.put(None)
threading.Thread(target=prefetch, args=(300,)).start()
while (x := batches.get()) is not None:
    opt.zero_grad(); model(x).pow(2).mean().backward(); opt.step()
""",
        ("--steps", "5"),
    ),
    "multiprocessing_consumer": (
        "non-daemon multiprocessing child reading a queue until the training ends (stopped)",
        """
import multiprocessing as mp
def consume(losses):
    while losses.get() is not None:
        pass
if __name__ == "__main__":
    losses = mp.get_context("fork").Queue()
    child = mp.get_context("fork").Process(target=consume, args=(losses,))
    child.start()
    for _ in range(300):
        train(1)
        losses.put(1.0)
    losses.put(None)
    child.join()
""",
        ("--steps", "5"),
    ),
    "main_sleeps_thread_trains": (
        "training in a daemon thread, main thread in time.sleep(60)",
        """
import threading, time
threading.Thread(target=train, args=(300,), daemon=True).start()
time.sleep(60)
""",
        ("--steps", "5"),
    ),
    "tee_stderr_crash": (
        "sys.stderr replaced by a Tee whose log file is closed, then a crash",
        """
class Tee:
    def __init__(self, *streams): self.streams = streams
    def write(self, text):
        for stream in self.streams: stream.write(text)
    def flush(self):
        for stream in self.streams: stream.flush()
log = open("train.log", "w")
sys.stderr = Tee(sys.stderr, log)
train(30)
log.close()
raise RuntimeError("diverged")
""",
        ("--steps", "0"),
    ),
    "lbfgs_item_in_closure": (
        "LBFGS with .item() in its closure",
        """
opt = torch.optim.LBFGS(model.parameters(), lr=0.1, max_iter=5)
x, y = torch.randn(64, 8), torch.randn(64, 1)
calls = 0
def closure():
    global calls
    calls += 1
    opt.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    loss.item()
    return loss
for _ in range(30):
    opt.step(closure)
print("closure calls", calls)
""",
        ("--steps", "0"),
    ),
    "save_load_main_class": (
        "torch.save of a __main__ class, torch.load, deepcopy, state_dict keys",
        """
import copy, os
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.fc = torch.nn.Linear(8, 1)
    def forward(self, x): return self.fc(x)
net = Net(); o = torch.optim.SGD(net.parameters(), lr=0.01)
for _ in range(30):
    o.zero_grad(); net(torch.randn(16, 8)).pow(2).mean().backward(); o.step()
torch.save(net, "net.pt")
loaded = torch.load("net.pt", weights_only=False)
print(type(loaded).__module__, sorted(net.state_dict()), torch.equal(copy.deepcopy(net).fc.weight, loaded.fc.weight))
""",
        ("--steps", "0"),
    ),
    "spawn_process_gets_model": (
        "a spawn Process given the model (pickled __main__ class)",
        """
import torch.multiprocessing as mp
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.fc = torch.nn.Linear(8, 1)
    def forward(self, x): return self.fc(x)
def evaluate(net, q):
    q.put(float(net(torch.ones(1, 8)).sum()))
if __name__ == "__main__":
    net = Net(); o = torch.optim.SGD(net.parameters(), lr=0.01)
    for _ in range(30):
        o.zero_grad(); net(torch.randn(16, 8)).pow(2).mean().backward(); o.step()
    ctx = mp.get_context("spawn"); q = ctx.Queue()
    p = ctx.Process(target=evaluate, args=(net, q)); p.start()
    print("child", round(q.get(), 4)); p.join(); print("exit", p.exitcode)
""",
        ("--steps", "0"),
    ),
    "torch_state_switches": (
        "float64 default, default device, deterministic algorithms, manual_seed every step",
        """
import os
os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
torch.set_default_dtype(torch.float64)
torch.set_default_device("cpu")
torch.backends.cudnn.benchmark = True
torch.use_deterministic_algorithms(True)
m = torch.nn.Linear(8, 1); o = torch.optim.Adam(m.parameters())
for i in range(30):
    torch.manual_seed(i)
    o.zero_grad(); m(torch.randn(16, 8)).pow(2).mean().backward(); o.step()
print(m.weight.dtype, round(float(m.weight.sum()), 6))
""",
        ("--steps", "0"),
    ),
    "own_autograd_hooks": (
        "its own saved_tensors_hooks, save_on_cpu, register_multi_grad_hook, parametrize",
        """
import torch.nn.utils.parametrize as P
class Symmetric(torch.nn.Module):
    def forward(self, X): return X.triu() + X.triu(1).transpose(-1, -2)
m = torch.nn.Linear(8, 8); P.register_parametrization(m, "weight", Symmetric())
o = torch.optim.SGD(m.parameters(), lr=0.01); seen = []
for i in range(30):
    x = torch.randn(16, 8, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        h = m(x)
    torch.autograd.graph.register_multi_grad_hook((x, h), lambda grads: seen.append(1))
    with torch.autograd.graph.save_on_cpu():
        loss = h.pow(2).mean()
    o.zero_grad(); loss.backward(); o.step()
print(len(seen), torch.allclose(m.weight, m.weight.T))
""",
        ("--steps", "0"),
    ),
    "process_group_filestore": (
        "init_process_group with a FileStore, world size 1, DDP, no torchrun",
        """
import tempfile, torch.distributed as dist
dist.init_process_group("gloo", store=dist.FileStore(tempfile.mktemp(), 1), rank=0, world_size=1)
ddp = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1))
o = torch.optim.SGD(ddp.parameters(), lr=0.01)
for i in range(30):
    o.zero_grad(); ddp(torch.randn(16, 8)).pow(2).mean().backward(); o.step()
dist.destroy_process_group()
print("distributed done")
""",
        ("--steps", "0"),
    ),
    "evaluation_only": (
        "evaluates only (0 training steps)",
        """
model.eval()
with torch.no_grad():
    for _ in range(30):
        model(torch.randn(16, 8))
print("evaluated")
""",
        ("--steps", "0"),
    ),
    "one_step": ("trains 1 step", "train(1)\nprint('one step')\n", ("--steps", "0")),
    "inference_benchmark": (
        "never calls backward (inference benchmark)",
        """
for _ in range(50):
    with torch.inference_mode():
        model(torch.randn(256, 8))
print("benchmarked")
""",
        ("--steps", "0"),
    ),
    "step_without_backward": (
        "optimizer.step() without backward",
        """
for _ in range(30):
    opt.zero_grad(); model(torch.randn(16, 8)); opt.step()
print("stepped")
""",
        ("--steps", "0"),
    ),
    "two_loops_two_models": (
        "two training loops in sequence, then two models trained alternately",
        """
train(30)
m2 = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Linear(32, 1))
o2 = torch.optim.Adam(m2.parameters())
for _ in range(30):
    o2.zero_grad(); m2(torch.randn(16, 8)).pow(2).mean().backward(); o2.step()
    train(1)
print("both")
""",
        ("--steps", "0"),
    ),
    "own_progress_and_logging": (
        "tqdm and rich progress, logging.basicConfig at DEBUG, binary stdout",
        """
import logging
from tqdm import tqdm
from rich.progress import track
logging.basicConfig(level=logging.DEBUG, format="%(levelname)s %(message)s")
for i in tqdm(range(20)):
    train(1)
    if i % 10 == 0: logging.info("step %d", i)
for i in track(range(10)):
    train(1)
sys.stdout.flush(); sys.stdout.buffer.write(b"bytes \\x01\\x02\\n"); sys.stdout.flush()
print("done")
""",
        ("--steps", "0"),
    ),
    "imports_torchdoctor": (
        "imports torchdoctor itself and trains with its Trainer",
        """
from torchdoctor import Trainer, TrainerConfig
print(Trainer.__name__, TrainerConfig.__name__)
train(30)
""",
        ("--steps", "0"),
    ),
}


HANG_S = 240  # a run still going after this long: a hang (the programs take seconds)


def _run(command: list[str], cwd: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(
            command,
            cwd=cwd,
            capture_output=True,
            text=True,
            errors="replace",  # a program may print bytes
            timeout=HANG_S,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(command, "hang", "", "")


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _shell_code(code: int) -> int:
    """Killed by signal N (Python's own end on Ctrl-C re-raises SIGINT): the shell's 128 + N."""
    return code if code >= 0 else 128 - code


def compare(plain: subprocess.CompletedProcess, diagnosed, stopped: bool) -> str:
    """What differs between the plain and the diagnosed run, "ok" when nothing does."""
    if diagnosed.returncode == "hang":
        return f"hung (killed after {HANG_S} s)"
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
