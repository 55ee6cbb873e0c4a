"""Unusual programs under diagnose: each runs once plainly (`python script.py`) and once under
`torchdoctor diagnose`, and the two are compared the way a user would: the same exit code, the
program's own output kept (in order, before the report), one report, and a stderr with no frame
or message of ours (no "Exception in thread", no "internal error", no torchdoctor file in a
traceback), the program's own traceback kept (the same frames and lines; process ids and
addresses aside). A row named in SCRIPT_FORMS gives Python its program in another form (a zip
app, a symlink, CRLF line endings with a shebang, a latin-1 file with a coding cookie).

With `--baseline SRC` (a source folder of another version, e.g. `git archive dc163b9 src | tar
-x -C /tmp/base`), every program is also diagnosed by that version, and the table shows both.
Prints one row per program: `ok`, or what differs.

    OMP_NUM_THREADS=1 .venv/bin/python bench/robust_programs.py [--baseline /tmp/base/src] [NAME ...]

With `--try`, each program instead runs under `diagnose --steps 5 --try auto --repeats 1` (exit 0,
a trials table, nothing of ours on stderr, and the same file names left in its folder as a
`diagnose --steps 5` run leaves).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import zipfile

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
        "tqdm (where installed) and rich progress, logging.basicConfig at DEBUG, binary stdout",
        """
import logging
try:
    from tqdm import tqdm
except ImportError:  # not installed in every environment: the row would only test the crash
    tqdm = iter
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
    # round 11
    "asyncio_training": (
        "asyncio.run around training; data from run_in_executor; a coroutine per step",
        """
import asyncio
async def batch():
    return await asyncio.get_running_loop().run_in_executor(None, torch.randn, 16, 8)
async def main():
    for _ in range(30):
        x = await batch()
        opt.zero_grad(); model(x).pow(2).mean().backward(); opt.step()
        await asyncio.sleep(0)
    return "async done"
print(asyncio.run(main()))
""",
        ("--steps", "0"),
    ),
    "forkserver_pool_in_step": (
        "a forkserver multiprocessing Pool mapped inside every step",
        """
import multiprocessing as mp
def scale(value):
    return value * 2
if __name__ == "__main__":
    with mp.get_context("forkserver").Pool(2) as pool:
        for _ in range(25):
            weights = pool.map(scale, [1.0, 2.0, 3.0])
            opt.zero_grad(); (model(torch.randn(16, 8)).pow(2).mean() * weights[0]).backward(); opt.step()
    print("pool done", weights)
""",
        ("--steps", "0"),
    ),
    "spawn_loader_no_main_guard": (
        "DataLoader spawn workers without the __main__ guard (crashes plainly too)",
        """
from torch.utils.data import DataLoader, TensorDataset
loader = DataLoader(TensorDataset(torch.randn(64, 8)), batch_size=16, num_workers=1,
                    multiprocessing_context="spawn")
for (x,) in loader:
    opt.zero_grad(); model(x).pow(2).mean().backward(); opt.step()
print("trained")
""",
        ("--steps", "0"),
    ),
    "chdir_relative_paths": (
        "os.chdir into a run folder, then relative paths for data, checkpoints and logs",
        """
import os
os.makedirs("run/data", exist_ok=True)
os.chdir("run")
torch.save(torch.randn(64, 8), "data/x.pt")
x = torch.load("data/x.pt")
for i in range(30):
    opt.zero_grad(); model(x).pow(2).mean().backward(); opt.step()
    if i % 10 == 0:
        torch.save(model.state_dict(), f"ckpt_{i}.pt")
print(sorted(os.listdir(".")), os.path.basename(os.getcwd()))
""",
        ("--steps", "0"),
    ),
    "sibling_import_and_sys_path": (
        "imports a sibling module and one from a folder put on sys.path by hand",
        """
import os
here = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(here, "lib"), exist_ok=True)
with open(os.path.join(here, "sibling_helpers.py"), "w") as f:
    f.write("def make(torch):\n    return torch.nn.Linear(8, 1)\n")
with open(os.path.join(here, "lib", "libhelpers.py"), "w") as f:
    f.write("LR = 0.05\n")
sys.path.insert(0, os.path.join(here, "lib"))
import sibling_helpers, libhelpers
net = sibling_helpers.make(torch); o = torch.optim.SGD(net.parameters(), lr=libhelpers.LR)
for _ in range(30):
    o.zero_grad(); net(torch.randn(16, 8)).pow(2).mean().backward(); o.step()
print(sibling_helpers.__name__, libhelpers.LR, sys.path[1].endswith("lib"))
""",
        ("--steps", "0"),
    ),
    "exec_config_crash": (
        "exec(compile(...)) of a config file whose function crashes mid-training",
        """
with open("config_file.py", "w") as f:
    f.write("lr = 0.01\ndef schedule(step):\n    if step == 20:\n        raise ValueError('bad schedule step %d' % step)\n    return lr\n")
config = {}
exec(compile(open("config_file.py").read(), "config_file.py", "exec"), config)
for i in range(30):
    for group in opt.param_groups:
        group["lr"] = config["schedule"](i)
    train(1)
""",
        ("--steps", "0"),
    ),
    "argparse_subcommand_exit_code": (
        "argparse subcommands, sys.exit(main()) returning 5",
        """
import argparse
def main(argv=None):
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    fit = commands.add_parser("fit"); fit.add_argument("--steps", type=int, default=30)
    args = parser.parse_args(argv if argv is not None else (sys.argv[1:] or ["fit"]))
    train(args.steps)
    print("fitted", args.command, args.steps)
    return 5
if __name__ == "__main__":
    sys.exit(main())
""",
        ("--steps", "0"),
    ),
    "click_group_standalone": (
        "a click group with a subcommand, standalone mode (click calls sys.exit)",
        """
import click
@click.group()
def cli():
    pass
@cli.command()
@click.option("--steps", default=30)
def fit(steps):
    train(steps)
    click.echo(f"fitted {steps}")
if __name__ == "__main__":
    cli(sys.argv[1:] or ["fit"])
""",
        ("--steps", "0"),
    ),
    "warnings_as_errors": (
        "warnings.simplefilter('error') at its top, a DataLoader and evaluation",
        """
import warnings
warnings.simplefilter("error")
from torch.utils.data import DataLoader, TensorDataset
loader = DataLoader(TensorDataset(torch.randn(96, 8)), batch_size=16, shuffle=True)
for epoch in range(3):
    model.train()
    for (x,) in loader:
        opt.zero_grad(); model(x).pow(2).mean().backward(); opt.step()
    model.eval()
    with torch.no_grad():
        print("epoch", epoch, round(float(model(torch.ones(1, 8)).sum()), 4))
""",
        ("--steps", "0"),
    ),
    "grad_off_globally": (
        "torch.set_grad_enabled(False) at its top, enable_grad in the step, a no_grad decorator",
        """
torch.set_grad_enabled(False)
@torch.no_grad()
def evaluate():
    return float(model(torch.ones(1, 8)).sum())
for i in range(30):
    with torch.enable_grad():
        opt.zero_grad(); model(torch.randn(16, 8)).pow(2).mean().backward()
    opt.step()
    if i % 10 == 9:
        print("eval", round(evaluate(), 4))
print("grad enabled at the end:", torch.is_grad_enabled())
""",
        ("--steps", "0"),
    ),
    "jit_script_and_trace": (
        "torch.jit.script of a function calling torch.tensor, a traced model trained",
        """
@torch.jit.script
def scaled(x: torch.Tensor) -> torch.Tensor:
    return x * torch.tensor(2.0) + torch.zeros(1)
traced = torch.jit.trace(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()), torch.randn(2, 8))
head = torch.nn.Linear(8, 1)
o = torch.optim.SGD(list(traced.parameters()) + list(head.parameters()), lr=0.01)
for _ in range(30):
    o.zero_grad(); head(scaled(traced(torch.randn(16, 8)))).pow(2).mean().backward(); o.step()
print("jit done", type(traced).__name__)
""",
        ("--steps", "0"),
    ),
    "compile_whole_model": (
        "torch.compile of the whole model (aot_eager backend) and of the loss function",
        """
net = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
compiled = torch.compile(net, backend="aot_eager")
loss_fn = torch.compile(lambda out: out.pow(2).mean(), backend="aot_eager")
o = torch.optim.Adam(net.parameters())
for _ in range(30):
    o.zero_grad(); loss_fn(compiled(torch.randn(16, 8))).backward(); o.step()
print("compiled done", round(float(net(torch.ones(1, 8)).sum()), 3) == round(float(compiled(torch.ones(1, 8)).sum()), 3))
""",
        ("--steps", "0"),
    ),
    "custom_function_gradient_penalty": (
        "a custom autograd.Function (save_for_backward) and a double-backward gradient penalty",
        """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x
    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad
for _ in range(30):
    x = torch.randn(16, 8, requires_grad=True)
    out = Square.apply(model(x)).mean()
    (grad_x,) = torch.autograd.grad(out, x, create_graph=True)
    loss = out + grad_x.pow(2).sum()
    opt.zero_grad(); loss.backward(); opt.step()
print("penalty done", round(float(loss), 4) >= 0)
""",
        ("--steps", "0"),
    ),
    "own_module_hooks": (
        "its own forward, forward-pre (with kwargs) and full backward hooks that change values",
        """
seen = {"pre": 0, "fwd": 0, "bwd": 0}
def pre(module, args, kwargs):
    seen["pre"] += 1
    return (args[0] * 1.0,), kwargs
def fwd(module, args, output):
    seen["fwd"] += 1
    return output * 0.5
def bwd(module, grad_input, grad_output):
    seen["bwd"] += 1
    return tuple(g * 2 if g is not None else g for g in grad_input)
model.register_forward_pre_hook(pre, with_kwargs=True)
model.register_forward_hook(fwd)
model.register_full_backward_hook(bwd)
train(30)
print(seen)
""",
        ("--steps", "0"),
    ),
    "sparse_complex_nested": (
        "sparse COO and CSR matmuls, complex FFT features, a nested tensor in the step",
        """
adjacency = torch.eye(16).to_sparse()
for i in range(30):
    x = torch.randn(16, 8)
    spectrum = torch.fft.rfft(x, dim=1).abs()[:, :4]
    features = torch.sparse.mm(adjacency, torch.cat([x[:, :4], spectrum], dim=1))
    features = adjacency.to_sparse_csr() @ features
    nested = torch.nested.nested_tensor([torch.randn(3, 8), torch.randn(5, 8)])
    extra = sum(t.sum() for t in nested.unbind())
    opt.zero_grad(); (model(features).pow(2).mean() + 0 * extra).backward(); opt.step()
print("odd tensors done", features.dtype, torch.is_complex(torch.fft.fft(x)))
""",
        ("--steps", "0"),
    ),
    "atexit_summary": (
        "atexit handlers that write a summary file and print it",
        """
import atexit, json
losses = []
def summary():
    with open("summary.json", "w") as f:
        json.dump({"steps": len(losses)}, f)
    print("summary written", len(losses))
atexit.register(summary)
for _ in range(30):
    opt.zero_grad(); loss = model(torch.randn(16, 8)).pow(2).mean(); loss.backward(); opt.step()
    losses.append(float(loss))
print("trained")
""",
        ("--steps", "0"),
    ),
    "faulthandler_and_rlimits": (
        "faulthandler with a watchdog dump, a low open-files limit",
        """
import faulthandler, os, resource
faulthandler.enable()
faulthandler.dump_traceback_later(600, exit=True)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 16, hard))
train(30)
faulthandler.cancel_dump_traceback_later()
print("limited done")
""",
        ("--steps", "0"),
    ),
    "fork_every_step": (
        "os.fork() in every step: the child writes a number to a pipe and os._exit(0)",
        """
import os
total = 0
for _ in range(20):
    train(1)
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read_end); os.write(write_end, b"1"); os._exit(0)
    os.close(write_end); total += int(os.read(read_end, 1)); os.close(read_end)
    os.waitpid(child, 0)
print("children", total)
""",
        ("--steps", "0"),
    ),
    "rotating_log_progress_line": (
        "a RotatingFileHandler log, captured warnings, a carriage-return progress line on stdout",
        """
import logging, logging.handlers, os, warnings
log = logging.getLogger("train")
log.setLevel(logging.INFO)
log.addHandler(logging.handlers.RotatingFileHandler("train.log", maxBytes=200, backupCount=2))
logging.captureWarnings(True)
for i in range(30):  # what tqdm(file=sys.stdout) writes (tqdm is not installed here)
    train(1)
    log.info("step %d loss ok", i)
    sys.stdout.write(f"\\r{i + 1}/30 steps"); sys.stdout.flush()
print()
warnings.warn("a warning of its own")
print("logs", sorted(name for name in os.listdir(".") if name.startswith("train.log")))
""",
        ("--steps", "0"),
    ),
    "generator_loop_resume": (
        "a generator-based training loop, checkpointed and resumed from the checkpoint mid-run",
        """
import io
def trainer(start):
    for step in range(start, 40):
        opt.zero_grad(); loss = model(torch.randn(16, 8)).pow(2).mean(); loss.backward(); opt.step()
        yield step, float(loss)
run = trainer(0)
for step, loss in run:
    if step == 19:
        buffer = io.BytesIO()
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, buffer)
        run.close()
        break
buffer.seek(0)
state = torch.load(buffer)
model.load_state_dict(state["model"]); opt.load_state_dict(state["opt"])
print("resumed at", state["step"] + 1, "last", max(step for step, _ in trainer(state["step"] + 1)))
""",
        ("--steps", "0"),
    ),
    "sigint_handled": (
        "SIGINT mid-training caught as KeyboardInterrupt by the program, which saves and exits 0",
        """
import os, signal
try:
    for i in range(300):
        train(1)
        if i == 25:
            os.kill(os.getpid(), signal.SIGINT)
except KeyboardInterrupt:
    torch.save(model.state_dict(), "interrupted.pt")
    print("interrupted at", i, "saved")
""",
        ("--steps", "0"),
    ),
    "alarm_time_budget": (
        "signal.alarm as a time budget: a handler sets a flag, the loop ends on it",
        """
import signal
out_of_time = False
def times_up(signum, frame):
    global out_of_time
    out_of_time = True
signal.signal(signal.SIGALRM, times_up)
signal.alarm(2)
steps = 0
while not out_of_time:
    train(1); steps += 1
print("budget spent", steps > 0, signal.getsignal(signal.SIGALRM) is times_up)
""",
        ("--steps", "0"),
    ),
    "own_profiler_with_stack": (
        "its own torch.profiler (record_shapes, with_stack, profile_memory) around training",
        """
from torch.profiler import ProfilerActivity, profile, schedule
with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_stack=True,
             profile_memory=True, schedule=schedule(wait=1, warmup=1, active=3)) as prof:
    for _ in range(30):
        train(1)
        prof.step()
print("profiled", len(prof.key_averages()) > 0)
""",
        ("--steps", "0"),
    ),
    "own_dispatch_mode_and_vmap": (
        "its own TorchDispatchMode counting ops, per-sample grads with torch.func vmap(grad)",
        """
from torch.utils._python_dispatch import TorchDispatchMode
from torch.func import functional_call, grad, vmap
class Count(TorchDispatchMode):
    calls = 0
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        Count.calls += 1
        return func(*args, **(kwargs or {}))
params = {k: v.detach() for k, v in model.named_parameters()}
def sample_loss(p, x):
    return functional_call(model, p, (x.unsqueeze(0),)).pow(2).mean()
for _ in range(30):
    x = torch.randn(16, 8)
    with Count():
        opt.zero_grad(); model(x).pow(2).mean().backward(); opt.step()
    per_sample = vmap(grad(sample_loss), in_dims=(None, 0))(params, x)
print("dispatch", Count.calls > 0, tuple(per_sample["weight"].shape))
""",
        ("--steps", "0"),
    ),
    "stream_fails_at_exit": (
        "sys.stdout replaced by a writer whose flush fails once the program is done (Python exits 120)",
        """
class Flaky:
    def __init__(self, stream): self.stream, self.done = stream, False
    def write(self, text): return self.stream.write(text)
    def flush(self):
        if self.done:
            raise OSError("log server gone")
        self.stream.flush()
train(30)
sys.stdout = Flaky(sys.stdout)
print("trained")
sys.stdout.done = True
""",
        ("--steps", "0"),
    ),
    # round 12
    "stdout_write_only": (
        "sys.stdout replaced by a class with write() only (no flush, no fileno)",
        """
class Lines:
    def __init__(self): self.lines = []
    def write(self, text): self.lines.append(text)
real, sys.stdout = sys.stdout, Lines()
train(30)
print("captured while training")
captured, sys.stdout = sys.stdout, real
print("".join(captured.lines).strip(), len(captured.lines))
sys.stdout = Lines()
print("left in place at its end")
""",
        ("--steps", "0"),
    ),
    "interop_threads_at_top": (
        "torch.set_num_interop_threads(1) at its top, set_num_threads(2) mid-run",
        """
torch.set_num_interop_threads(1)
train(15)
torch.set_num_threads(2)
train(15)
print("threads", torch.get_num_threads(), torch.get_num_interop_threads())
""",
        ("--steps", "0"),
    ),
    "own_threading_excepthook": (
        "threading.excepthook of its own; a helper thread crashes mid-training",
        """
import threading
crashed = []
threading.excepthook = lambda args: crashed.append(f"{args.thread.name}: {args.exc_value}")
def helper():
    raise ValueError("helper failed")
train(15)
worker = threading.Thread(target=helper, name="helper"); worker.start(); worker.join()
train(15)
print("handled by its hook:", crashed)
""",
        ("--steps", "0"),
    ),
    "recursion_limit_low": (
        "sys.setrecursionlimit(120) and a recursive tree model 80 calls deep",
        """
sys.setrecursionlimit(120)
class Tree(torch.nn.Module):
    def __init__(self, depth):
        super().__init__()
        self.leaf = torch.nn.Linear(8, 8)
        self.child = Tree(depth - 1) if depth else None
    def forward(self, x):
        return self.leaf(x) if self.child is None else self.child(x) + 0.01 * x
tree = Tree(25)
o = torch.optim.SGD(tree.parameters(), lr=0.01)
def down(n):
    return 0 if n == 0 else 1 + down(n - 1)
for _ in range(10):
    o.zero_grad(); tree(torch.randn(4, 8)).pow(2).mean().backward(); o.step()
print("deep", down(80))
""",
        ("--steps", "0"),
    ),
    "deletes_own_script": (
        "deletes its own script file at its start, then crashes mid-training",
        """
import os
os.remove(__file__)
train(20)
raise RuntimeError("no source to show")
""",
        ("--steps", "0"),
    ),
    "runpy_run_path_crash": (
        "runs a generated script with runpy.run_path (python -c style); it crashes",
        """
import runpy
with open("step_script.py", "w") as f:
    f.write("import torch\\nx = torch.ones(3)\\nx.view(2, 2)\\n")
train(20)
runpy.run_path("step_script.py", init_globals={"lr": 0.1})
""",
        ("--steps", "0"),
    ),
    "importlib_reload_model_module": (
        "importlib.reload of its model module after rewriting it mid-run",
        """
import importlib, os
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "netdef.py"), "w") as f:
    f.write("import torch\\nWIDTH = 16\\ndef make():\\n    return torch.nn.Linear(8, WIDTH)\\n")
import netdef
net = netdef.make(); o = torch.optim.SGD(net.parameters(), lr=0.01)
for _ in range(15):
    o.zero_grad(); net(torch.randn(4, 8)).pow(2).mean().backward(); o.step()
with open(os.path.join(here, "netdef.py"), "w") as f:
    f.write("import torch\\nWIDTH = 4\\ndef make():\\n    return torch.nn.Linear(8, WIDTH)\\n")
os.utime(os.path.join(here, "netdef.py"), (0, 1))  # a new mtime: the cached bytecode is stale
netdef = importlib.reload(netdef)
net = netdef.make(); o = torch.optim.SGD(net.parameters(), lr=0.01)
for _ in range(15):
    o.zero_grad(); net(torch.randn(4, 8)).pow(2).mean().backward(); o.step()
print("reloaded width", netdef.WIDTH, net.out_features)
""",
        ("--steps", "0"),
    ),
    "thread_pool_losses": (
        "losses computed in a ThreadPoolExecutor, summed and backpropagated on the main thread",
        """
from concurrent.futures import ThreadPoolExecutor
heads = [torch.nn.Linear(8, 1) for _ in range(3)]
o = torch.optim.SGD([p for h in heads for p in h.parameters()], lr=0.01)
with ThreadPoolExecutor(3) as pool:
    for _ in range(25):
        x = torch.randn(16, 8)
        losses = list(pool.map(lambda head: head(x).pow(2).mean(), heads))
        o.zero_grad(); sum(losses).backward(); o.step()
print("pool losses", len(losses), all(h.weight.grad is not None for h in heads))
""",
        ("--steps", "0"),
    ),
    "anomaly_toggled_per_step": (
        "torch.autograd.set_detect_anomaly switched on every third step, off after it",
        """
for i in range(30):
    torch.autograd.set_detect_anomaly(i % 3 == 0)
    train(1)
torch.autograd.set_detect_anomaly(False)
with torch.autograd.detect_anomaly(check_nan=False):
    train(2)
print("anomaly at the end:", torch.is_anomaly_enabled())
""",
        ("--steps", "0"),
    ),
    "backends_flags_at_import": (
        "torch.backends flags set at its top (mkldnn off, opt_einsum, flags context, matmul precision)",
        """
torch.backends.mkldnn.enabled = False
torch.backends.opt_einsum.strategy = "greedy"
torch.set_float32_matmul_precision("medium")
conv = torch.nn.Conv1d(2, 2, 3)
o = torch.optim.SGD(conv.parameters(), lr=0.01)
with torch.backends.mkldnn.flags(enabled=True):
    for _ in range(20):
        o.zero_grad(); torch.einsum("bci,bci->b", conv(torch.randn(4, 2, 16)), torch.ones(4, 2, 14)).mean().backward(); o.step()
train(10)
print(torch.backends.mkldnn.enabled, torch.get_float32_matmul_precision(), torch.backends.opt_einsum.strategy)
""",
        ("--steps", "0"),
    ),
    "own_setprofile": (
        "sys.setprofile and threading.setprofile of its own (a call counter, coverage-like)",
        """
import threading
calls = {"n": 0}
def count(frame, event, arg):
    if event == "call":
        calls["n"] += 1
sys.setprofile(count); threading.setprofile(count)
train(20)
sys.setprofile(None)
print("profiled calls", calls["n"] > 0, sys.getprofile() is None)
""",
        ("--steps", "0"),
    ),
    "gc_callbacks_and_freeze": (
        "gc.disable(), a gc.callbacks logger, gc.freeze() and a manual gc.collect() per 10 steps",
        """
import gc
gc.disable(); gc.freeze()
collections = []
gc.callbacks.append(lambda phase, info: collections.append(phase) if phase == "stop" else None)
for i in range(30):
    train(1)
    if i % 10 == 9:
        gc.collect()
print("collections", collections.count("stop") >= 3, gc.isenabled())
""",
        ("--steps", "0"),
    ),
    "pickled_model_loaded_in_subprocess": (
        "pickles its trained model and optimizer, and a plain python subprocess unpickles them",
        """
import pickle, subprocess
net = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
o = torch.optim.Adam(net.parameters())
for _ in range(20):
    o.zero_grad(); net(torch.randn(16, 8)).pow(2).mean().backward(); o.step()
with open("model.pkl", "wb") as f:
    pickle.dump({"net": net, "opt": o.state_dict()}, f)
check = ("import pickle, torch; d = pickle.load(open('model.pkl', 'rb')); "
         "print(type(d['net']).__name__, len(d['opt']['state']), d['net'](torch.ones(1, 8)).shape)")
child = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
print(child.returncode, child.stdout.strip(), child.stderr.strip()[-200:])
""",
        ("--steps", "0"),
    ),
    "sigterm_from_child_saves_checkpoint": (
        "a child process sends SIGTERM mid-training; its handler saves a checkpoint and exits 0",
        """
import os, signal, subprocess
def on_term(signum, frame):
    torch.save(model.state_dict(), "last.pt")
    print("checkpoint saved on SIGTERM")
    sys.exit(0)
signal.signal(signal.SIGTERM, on_term)
train(10)
subprocess.run([sys.executable, "-c", f"import os, signal; os.kill({os.getpid()}, signal.SIGTERM)"])
for _ in range(1000):
    train(1)
print("not reached")
""",
        ("--steps", "0"),
    ),
    "del_logs_at_interpreter_exit": (
        "a module-level object whose __del__ prints at the interpreter's exit",
        """
class Run:
    def __init__(self): self.steps = 0
    def __del__(self): print("run closed after", self.steps, "steps")
run = Run()
for _ in range(20):
    train(1); run.steps += 1
print("trained")
""",
        ("--steps", "0"),
    ),
    "exits_before_training": (
        "builds its model and optimizer, then sys.exit(0) before any forward (a --dry-run)",
        """
print("parameters", sum(p.numel() for p in model.parameters()))
sys.exit(0)
""",
        ("--steps", "0"),
    ),
    "spawn_loader_lambda_collate": (
        "DataLoader spawn workers with a lambda collate_fn (cannot be pickled: the program's error)",
        """
from torch.utils.data import DataLoader, TensorDataset
if __name__ == "__main__":
    train(5)
    loader = DataLoader(TensorDataset(torch.randn(32, 8)), batch_size=8, num_workers=1,
                        multiprocessing_context="spawn", collate_fn=lambda batch: batch)
    for batch in loader:
        pass
""",
        ("--steps", "0"),
    ),
    "set_start_method_spawn": (
        "multiprocessing.set_start_method('spawn') under the __main__ guard, a Pool after training",
        """
import multiprocessing as mp
def square(v):
    return v * v
if __name__ == "__main__":
    mp.set_start_method("spawn")
    train(20)
    with mp.Pool(2) as pool:
        print("pool", pool.map(square, [1, 2, 3]), mp.get_start_method())
""",
        ("--steps", "0"),
    ),
    "exit_builtin": (
        "the site builtin exit(4) mid-run (it closes sys.stdin first)",
        """
train(20)
print("stdin closed before:", sys.stdin.closed)
exit(4)
""",
        ("--steps", "0"),
    ),
    "exception_group_with_notes": (
        "an ExceptionGroup of two errors, one with add_note, raised after training",
        """
train(20)
first = ValueError("loss diverged"); first.add_note("at step 20")
raise ExceptionGroup("two checks failed", [first, KeyError("val_loss")])
""",
        ("--steps", "0"),
    ),
    "reprs_and_source": (
        "prints its model, optimizer and a loss with grad_fn, and inspect.getsource of its class",
        """
import inspect
class Head(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.fc = torch.nn.Linear(8, 1)
    def forward(self, x):
        return self.fc(x)
head = Head(); o = torch.optim.AdamW(head.parameters())
for _ in range(20):
    o.zero_grad(); loss = head(torch.randn(4, 8)).pow(2).mean(); loss.backward(); o.step()
print(head); print(o); print(loss.grad_fn.name(), type(loss).__name__, repr(head.fc.weight)[:30])
print(inspect.getsource(Head).splitlines()[0], Head.forward.__qualname__, Head.__module__)
""",
        ("--steps", "0"),
    ),
    # round 13
    "reads_config_from_stdin": (
        "reads its config from sys.stdin (empty: no pipe), then trains",
        """
text = sys.stdin.read()
steps = int(text) if text.strip() else 25
train(steps)
print("trained", steps, "steps from stdin", repr(text))
""",
        ("--steps", "0"),
    ),
    "input_without_tty": (
        "input() with no terminal: EOFError caught, a default taken, then training",
        """
try:
    answer = input("resume from checkpoint? [y/N] ")
except EOFError:
    answer = "n"
print("answer", answer)
train(25)
""",
        ("--steps", "0"),
    ),
    "multiprocessing_spawn_ddp": (
        "torch.multiprocessing.spawn of 2 processes, gloo over TCP, DDP, a barrier at the end",
        """
import socket
import torch.distributed as dist, torch.multiprocessing as tmp
def worker(rank, port):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    ddp = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1))
    o = torch.optim.SGD(ddp.parameters(), lr=0.01)
    for _ in range(15):
        o.zero_grad(); ddp(torch.randn(16, 8)).pow(2).mean().backward(); o.step()
    dist.barrier()  # a file store without it: rank 0 waited for rank 1, gone, for good
    dist.destroy_process_group()
if __name__ == "__main__":
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0)); port = free.getsockname()[1]
    tmp.spawn(worker, args=(port,), nprocs=2, join=True)
    print("spawned training done")
""",
        ("--steps", "0"),
    ),
    "deterministic_algorithms": (
        "torch.use_deterministic_algorithms(True) at its top, index_add_ and scatter in the step",
        """
torch.use_deterministic_algorithms(True)
emb = torch.nn.Embedding(50, 8)
o = torch.optim.SGD(emb.parameters(), lr=0.1)
for _ in range(25):
    ids = torch.randint(0, 50, (32,))
    out = torch.zeros(10, 8).index_add_(0, ids % 10, emb(ids))
    o.zero_grad(); out.pow(2).mean().backward(); o.step()
print("deterministic", torch.are_deterministic_algorithms_enabled())
""",
        ("--steps", "0"),
    ),
    "default_dtype_float64": (
        "torch.set_default_dtype(torch.float64) before building its model; prints its last loss",
        """
torch.set_default_dtype(torch.float64)
torch.manual_seed(1)
net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
o = torch.optim.Adam(net.parameters(), lr=0.01)
for _ in range(25):
    o.zero_grad(); loss = net(torch.randn(16, 8)).pow(2).mean(); loss.backward(); o.step()
print("float64 loss", loss.dtype, f"{loss.item():.17g}")
""",
        ("--steps", "0"),
    ),
    "default_device_set": (
        "torch.set_default_device('cpu') (a device mode on torch's function stack), then training",
        """
torch.set_default_device("cpu")
net = torch.nn.Linear(8, 1)
o = torch.optim.SGD(net.parameters(), lr=0.01)
for _ in range(25):
    o.zero_grad(); net(torch.randn(16, 8)).pow(2).mean().backward(); o.step()
torch.set_default_device(None)
with torch.device("cpu"):
    train(5)
print("default device", torch.tensor(1.0).device)
""",
        ("--steps", "0"),
    ),
    "steps_from_a_generator_in_list": (
        "a training loop written as a generator, run to its end by list()",
        """
def steps(n):
    for _ in range(n):
        opt.zero_grad()
        loss = model(torch.randn(16, 8)).pow(2).mean()
        loss.backward(); opt.step()
        yield loss.item()
losses = list(steps(30))
print("losses", len(losses))
""",
        ("--steps", "0"),
    ),
    "sys_exit_in_finally": (
        "a crash mid-training replaced by sys.exit(2) in a finally block",
        """
try:
    train(20)
    raise RuntimeError("diverged")
finally:
    print("cleaning up")
    sys.exit(2)
""",
        ("--steps", "0"),
    ),
    "environ_changed_mid_run": (
        "os.environ changed mid-run (OMP_NUM_THREADS, a new variable), then a subprocess reads it",
        """
import os, subprocess
train(10)
os.environ["OMP_NUM_THREADS"] = "2"
os.environ["RUN_PHASE"] = "second"
train(10)
child = subprocess.run([sys.executable, "-c", "import os; print(os.environ['RUN_PHASE'], os.environ['OMP_NUM_THREADS'])"],
                       capture_output=True, text=True)
print("child sees", child.stdout.strip())
""",
        ("--steps", "0"),
    ),
    "numpy_reseeded_every_step": (
        "numpy and torch reseeded every step, data from numpy; prints its exact losses",
        """
import numpy as np
losses = []
for step in range(25):
    np.random.seed(step); torch.manual_seed(step)
    x = torch.from_numpy(np.random.randn(16, 8).astype("float32"))
    opt.zero_grad(); loss = model(x + 0.01 * torch.randn(16, 8)).pow(2).mean(); loss.backward(); opt.step()
    losses.append(loss.item())
print("losses", " ".join(f"{v:.9g}" for v in losses[-3:]), np.random.rand())
""",
        ("--steps", "0"),
    ),
    "compiled_whole_step": (
        "torch.compile (eager backend) of a whole step: forward, backward and the optimizer's step",
        """
net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
o = torch.optim.SGD(net.parameters(), lr=0.01)
@torch.compile(backend="eager")
def step(x):
    o.zero_grad()
    loss = net(x).pow(2).mean()
    loss.backward()
    o.step()
    return loss
for _ in range(25):
    loss = step(torch.randn(16, 8))
print("compiled step", loss.shape)
""",
        ("--steps", "0"),
    ),
    "warning_as_error_caught": (
        "a torch UserWarning made an error and caught around the torch call that warns",
        """
import warnings
warnings.filterwarnings("error", category=UserWarning)
train(20)
try:
    torch.tensor(torch.ones(2))  # torch warns: use clone().detach()
except UserWarning as warning:
    print("caught:", str(warning)[:40])
train(5)
""",
        ("--steps", "0"),
    ),
    "redirect_stdout_around_loop": (
        "contextlib.redirect_stdout into a StringIO around the loop (stopped inside it)",
        """
import contextlib, io
captured = io.StringIO()
with contextlib.redirect_stdout(captured):
    for i in range(300):
        train(1)
        print("step", i)
print("captured", len(captured.getvalue().splitlines()), "lines")
""",
        ("--steps", "5"),
    ),
    "exit_with_message": (
        "sys.exit('a message') after training (Python prints it, exit 1)",
        "train(20)\nsys.exit('stopping: validation loss did not improve')\n",
        ("--steps", "0"),
    ),
    "relative_imports_in_package": (
        "imports a package of its own whose modules import each other relatively",
        """
import os
os.makedirs("mypkg", exist_ok=True)
with open("mypkg/__init__.py", "w") as f:
    f.write("from .model import make\\n")
with open("mypkg/model.py", "w") as f:
    f.write("import torch\\nfrom . import layers\\ndef make():\\n    return torch.nn.Sequential(layers.block(), torch.nn.Linear(4, 1))\\n")
with open("mypkg/layers.py", "w") as f:
    f.write("import torch\\ndef block():\\n    return torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU())\\n")
import mypkg
net = mypkg.make(); o = torch.optim.SGD(net.parameters(), lr=0.01)
for _ in range(25):
    o.zero_grad(); net(torch.randn(16, 8)).pow(2).mean().backward(); o.step()
print("package model", type(net[0]).__name__, mypkg.model.__name__)
""",
        ("--steps", "0"),
    ),
    "saved_tensors_hooks_offload": (
        "torch.autograd.graph.saved_tensors_hooks packing saved activations (an offload pattern)",
        """
packed = {"n": 0}
def pack(t):
    packed["n"] += 1
    return t.clone()
def unpack(t):
    return t
net = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.GELU(), torch.nn.Linear(32, 1))
o = torch.optim.SGD(net.parameters(), lr=0.01)
for _ in range(25):
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        loss = net(torch.randn(16, 8)).pow(2).mean()
    o.zero_grad(); loss.backward(); o.step()
print("packed per step", packed["n"] // 25)
""",
        ("--steps", "0"),
    ),
    "weakref_finalize_at_exit": (
        "weakref.finalize callbacks (one on its model) that print at the interpreter's exit",
        """
import weakref
class Logger:
    pass
log = Logger()
weakref.finalize(log, print, "logger finalized")
weakref.finalize(model, print, "model finalized")
train(25)
print("trained")
""",
        ("--steps", "0"),
    ),
    "settrace_line_counter": (
        "sys.settrace of its own (a line counter, as coverage.py or a debugger sets one)",
        """
lines = {"n": 0}
def tracer(frame, event, arg):
    if event == "line":
        lines["n"] += 1
    return tracer
sys.settrace(tracer)
train(20)
sys.settrace(None)
print("traced lines", lines["n"] > 0, sys.gettrace() is None)
""",
        ("--steps", "0"),
    ),
    "breakpoint_disabled_by_env": (
        "breakpoint() in its loop, disabled through PYTHONBREAKPOINT=0 set by the program",
        """
import os
os.environ["PYTHONBREAKPOINT"] = "0"
for i in range(25):
    train(1)
    if i == 10:
        breakpoint()
print("no debugger")
""",
        ("--steps", "0"),
    ),
    "checkpointed_blocks": (
        "activation checkpointing (torch.utils.checkpoint, non-reentrant and reentrant) in its model",
        """
from torch.utils.checkpoint import checkpoint
blocks = torch.nn.ModuleList(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()) for _ in range(3))
o = torch.optim.SGD(blocks.parameters(), lr=0.01)
for i in range(25):
    x = torch.randn(16, 8, requires_grad=True)
    for block in blocks:
        x = checkpoint(block, x, use_reentrant=bool(i % 2))
    o.zero_grad(); x.pow(2).mean().backward(); o.step()
print("checkpointed", blocks[0][0].weight.grad is not None)
""",
        ("--steps", "0"),
    ),
    # round 14
    "persistent_fork_workers_stopped": (
        "4 persistent forked DataLoader workers over 3 epochs, diagnose --steps cutting epoch 1",
        """
from torch.utils.data import DataLoader, TensorDataset
loader = DataLoader(TensorDataset(torch.randn(512, 8)), batch_size=8, num_workers=4,
                    persistent_workers=True, multiprocessing_context="fork")
for epoch in range(3):
    for (x,) in loader:
        opt.zero_grad(); model(x).pow(2).mean().backward(); opt.step()
print("three epochs")
""",
        ("--steps", "5"),
    ),
    "persistent_spawn_workers_stopped": (
        "4 persistent spawn DataLoader workers (__main__ guard), diagnose --steps cutting epoch 1",
        """
from torch.utils.data import DataLoader, TensorDataset
if __name__ == "__main__":
    loader = DataLoader(TensorDataset(torch.randn(512, 8)), batch_size=8, num_workers=4,
                        persistent_workers=True, multiprocessing_context="spawn")
    for epoch in range(3):
        for (x,) in loader:
            opt.zero_grad(); model(x).pow(2).mean().backward(); opt.step()
    print("three epochs")
""",
        ("--steps", "5"),
    ),
    "compiled_optimizer_step_recipe": (
        "the 'compile the optimizer step' recipe: @torch.compile(fullgraph=False) around opt.step()",
        """
net = torch.nn.Linear(8, 4)
o = torch.optim.Adam(net.parameters(), lr=torch.tensor(0.01))
@torch.compile(fullgraph=False, backend="eager")
def optimizer_step():
    o.step()
for _ in range(25):
    o.zero_grad(); net(torch.randn(16, 8)).pow(2).mean().backward(); optimizer_step()
print("compiled optimizer step", net.weight.shape)
""",
        ("--steps", "0"),
    ),
    "compiled_fullgraph_model": (
        "torch.compile(model, fullgraph=True, backend='aot_eager'), trained and evaluated",
        """
net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 1))
o = torch.optim.AdamW(net.parameters(), lr=0.01)
fast = torch.compile(net, fullgraph=True, backend="aot_eager")
for _ in range(25):
    o.zero_grad(); fast(torch.randn(16, 8)).pow(2).mean().backward(); o.step()
with torch.no_grad():
    print("eval", fast(torch.ones(4, 8)).shape)
""",
        ("--steps", "0"),
    ),
    "compiled_dynamic_shapes": (
        "torch.compile(dynamic=True) fed batches of a new size every step",
        """
net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
o = torch.optim.SGD(net.parameters(), lr=0.01)
fast = torch.compile(net, dynamic=True, backend="eager")
for step in range(25):
    o.zero_grad(); fast(torch.randn(4 + step, 8)).pow(2).mean().backward(); o.step()
print("dynamic", step)
""",
        ("--steps", "0"),
    ),
    "compiled_reduce_overhead_inductor": (
        "torch.compile(mode='reduce-overhead') with inductor on the CPU (C++ code built at its start)",
        """
net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
o = torch.optim.SGD(net.parameters(), lr=0.01)
fast = torch.compile(net, mode="reduce-overhead")
for _ in range(20):
    o.zero_grad(); fast(torch.randn(16, 8)).pow(2).mean().backward(); o.step()
print("inductor", fast(torch.ones(2, 8)).shape)
""",
        ("--steps", "0"),
    ),
    "exported_then_trained": (
        "torch.export.export of its model before training, the exported module run after it",
        """
net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
o = torch.optim.SGD(net.parameters(), lr=0.01)
exported = torch.export.export(net, (torch.randn(4, 8),))
for _ in range(25):
    o.zero_grad(); net(torch.randn(16, 8)).pow(2).mean().backward(); o.step()
print("exported graph nodes", len(exported.graph.nodes))
print("exported out", exported.module()(torch.ones(4, 8)).shape)
""",
        ("--steps", "0"),
    ),
    "jit_trace_inside_loop": (
        "torch.jit.trace of the whole model every 10 steps inside the loop, the traced copy evaluated",
        """
net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
o = torch.optim.SGD(net.parameters(), lr=0.01)
for step in range(30):
    o.zero_grad(); net(torch.randn(16, 8)).pow(2).mean().backward(); o.step()
    if step % 10 == 9:
        traced = torch.jit.trace(net, torch.randn(2, 8), check_trace=False)
        with torch.no_grad():
            print("traced", step, traced(torch.ones(1, 8)).shape)
""",
        ("--steps", "0"),
    ),
    "inference_tensor_in_training": (
        "features made under torch.inference_mode reused in training (the program's own error)",
        """
with torch.inference_mode():
    features = torch.randn(16, 8) * 2
train(20)
opt.zero_grad()
loss = (model(torch.randn(16, 8)) * features.sum(1, keepdim=True)).mean()
features.requires_grad_()  # RuntimeError: the program's, shown as in its plain run
""",
        ("--steps", "0"),
    ),
    "address_space_rlimit": (
        "resource.setrlimit(RLIMIT_AS) to its own size plus 3 GiB at its top, then training",
        """
import resource
with open("/proc/self/status") as status:
    size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize"))
resource.setrlimit(resource.RLIMIT_AS, (size + (3 << 30), resource.RLIM_INFINITY))
train(30)
print("within its address space")
""",
        ("--steps", "0"),
    ),
    "tempdir_cleaned_at_exit": (
        "a module-level TemporaryDirectory for checkpoints, left for Python's exit to remove",
        """
import atexit, os, tempfile
scratch = tempfile.TemporaryDirectory(prefix="ckpt-")
with open("where.txt", "w") as where:
    where.write(scratch.name)
atexit.register(lambda: print("at exit the folder exists:", os.path.isdir(scratch.name)))
train(25)
torch.save(model.state_dict(), os.path.join(scratch.name, "model.pt"))
print("saved", sorted(os.listdir(scratch.name)))
""",
        ("--steps", "0"),
    ),
    "process_pool_batches": (
        "concurrent.futures.ProcessPoolExecutor building batches, trained on in the main process",
        """
from concurrent.futures import ProcessPoolExecutor
def make_batch(seed):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(16, 8, generator=generator)
if __name__ == "__main__":
    with ProcessPoolExecutor(max_workers=2) as pool:
        for x in pool.map(make_batch, range(30)):
            opt.zero_grad(); model(x).pow(2).mean().backward(); opt.step()
    print("pool done")
""",
        ("--steps", "0"),
    ),
    "threads_printing_to_stdout": (
        "8 threads printing to stdout while the main thread trains",
        """
import threading, time
def chatter():
    for _ in range(40):
        print("tick\\n", end="", flush=True)  # one write a line: the lines stay whole
        time.sleep(0.002)
threads = [threading.Thread(target=chatter) for _ in range(8)]
for thread in threads: thread.start()
train(30)
for thread in threads: thread.join()
print("joined")
""",
        ("--steps", "0"),
    ),
    "stdout_closed_then_print": (
        "sys.stdout.close() after training, then print(..., flush=True) (the program's ValueError)",
        """
train(25)
print("about to close", flush=True)
sys.stdout.close()
print("after close", flush=True)
""",
        ("--steps", "0"),
    ),
    "nested_grad_modes_in_evaluation": (
        "an FGSM attack in evaluation: enable_grad inside no_grad inside inference_mode(False)",
        """
train(20)
model.eval()
with torch.inference_mode(False), torch.no_grad():
    x = torch.randn(16, 8)
    with torch.enable_grad():
        x.requires_grad_()
        model(x).pow(2).mean().backward()
    adversarial = x + 0.1 * x.grad.sign()
    print("robust loss", model(adversarial).shape, torch.is_grad_enabled())
model.train()
train(5)
""",
        ("--steps", "0"),
    ),
    "zip_app": (
        "run as a zip app (`python app.zip`, its __main__.py inside), crashing after training",
        "train(25)\nraise RuntimeError('zip app failed')\n",
        ("--steps", "0"),
    ),
    "symlinked_script": (
        "started through a symlink in another folder; imports a module beside the real file",
        """
import os
from helper import SCALE  # beside the real file: Python puts the resolved folder on sys.path
print(os.path.basename(__file__), SCALE)
train(25)
raise ValueError("through the link")
""",
        ("--steps", "0"),
    ),
    "shebang_crlf": (
        "a shebang line and CRLF line endings, crashing after training",
        "train(25)\nprint('crlf ok')\nraise KeyError('crlf')\n",
        ("--steps", "0"),
    ),
    "latin1_coding_cookie": (
        "a latin-1 file declared by a coding cookie, non-ASCII text in its output and traceback",
        "train(25)\nprint('caf\u00e9 na\u00efve')\nraise RuntimeError('d\u00e9j\u00e0 vu')  # \u00e9t\u00e9\n",
        ("--steps", "0"),
    ),  # round 15
    "compiled_fullgraph_custom_optimizer": (
        "a custom optimizer's step under torch.compile(fullgraph=True) (no graph break: it trains)",
        """
class PlainSGD(torch.optim.Optimizer):
    def __init__(self, params, lr):
        super().__init__(params, dict(lr=lr))
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.data.add_(p.grad, alpha=-group["lr"])
custom = PlainSGD(model.parameters(), lr=0.01)
@torch.compile(fullgraph=True, backend="eager")
def custom_step():
    custom.step()
for _ in range(30):
    custom.zero_grad()
    loss = model(torch.randn(16, 8)).pow(2).mean()
    loss.backward()
    custom_step()
print("custom optimizer trained", round(loss.item(), 4))
""",
        ("--steps", "0"),
    ),
    "compiled_fullgraph_zero_grad_crash": (
        "zero_grad, forward, backward and step under torch.compile(fullgraph=True) (dynamo's error)",
        """
train(10)
@torch.compile(fullgraph=True, backend="eager")
def whole_step(x):
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
whole_step(torch.randn(16, 8))
""",
        ("--steps", "0"),
    ),
    "func_grad_functional_call": (
        "torch.func.grad of a torch.func.functional_call loss, parameters updated by hand (no backward)",
        """
from torch.func import functional_call, grad
params = {name: p.detach() for name, p in model.named_parameters()}
def loss_of(params, x):
    return functional_call(model, params, (x,)).pow(2).mean()
for step in range(40):
    grads = grad(loss_of)(params, torch.randn(16, 8))
    params = {name: p - 0.01 * grads[name] for name, p in params.items()}
print("functional loss", round(loss_of(params, torch.ones(4, 8)).item(), 4))
""",
        ("--steps", "0"),
    ),
    "maml_stateless_inner_loop": (
        "MAML: stateless.functional_call inner steps with autograd.grad(create_graph=True), an outer Adam",
        """
from torch.nn.utils.stateless import functional_call
meta = torch.optim.Adam(model.parameters(), lr=0.01)
for task in range(30):
    fast = dict(model.named_parameters())
    for _ in range(2):
        inner = functional_call(model, fast, (torch.randn(8, 8),)).pow(2).mean()
        grads = torch.autograd.grad(inner, list(fast.values()), create_graph=True)
        fast = {name: p - 0.1 * g for (name, p), g in zip(fast.items(), grads)}
    outer = functional_call(model, fast, (torch.randn(8, 8),)).pow(2).mean()
    meta.zero_grad()
    outer.backward()
    meta.step()
print("meta-trained", round(outer.item(), 4))
""",
        ("--steps", "0"),
    ),
    "sys_exit_in_worker_thread": (
        "sys.exit(3) inside a worker thread (Python ends the thread quietly; the program goes on)",
        """
import threading
def checker():
    train(5)
    sys.exit(3)
worker = threading.Thread(target=checker)
worker.start(); worker.join()
train(20)
print("main thread went on after the thread's sys.exit")
""",
        ("--steps", "0"),
    ),
    "reexec_itself": (
        "os.execv of itself with a flag after a first training phase (the second phase trains again)",
        """
import os
train(20)
if "--second" not in sys.argv:
    print("first phase done", flush=True)
    os.execv(sys.executable, [sys.executable, os.path.abspath(__file__), "--second"])
train(10)
print("second phase done")
""",
        ("--steps", "0"),
    ),
    "optimizer_in_backward": (
        "an optimizer per parameter stepped in register_post_accumulate_grad_hook (no step() in the loop)",
        """
net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
per_param = {p: torch.optim.SGD([p], lr=0.01) for p in net.parameters()}
def step_now(p):
    per_param[p].step()
    per_param[p].zero_grad()
for p in net.parameters():
    p.register_post_accumulate_grad_hook(step_now)
for _ in range(40):
    loss = net(torch.randn(16, 8)).pow(2).mean()
    loss.backward()
print("stepped in backward", round(loss.item(), 4))
""",
        ("--steps", "0"),
    ),
    "own_torch_function_mode": (
        "its own TorchFunctionMode counting torch calls around training",
        """
from torch.overrides import TorchFunctionMode
class Counting(TorchFunctionMode):
    def __init__(self):
        super().__init__(); self.calls = 0
    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))
with Counting() as counting:
    train(30)
print("torch calls seen", counting.calls > 0)
""",
        ("--steps", "0"),
    ),
    "global_module_hooks": (
        "global module hooks of its own (register_module_forward_hook, ..._full_backward_hook)",
        """
from torch.nn.modules import module as module_api
seen = {"forward": 0, "backward": 0}
def on_forward(module, args, output):
    seen["forward"] += 1
def on_backward(module, grad_input, grad_output):
    seen["backward"] += 1
handles = [module_api.register_module_forward_hook(on_forward),
           module_api.register_module_full_backward_hook(on_backward)]
train(30)
for handle in handles:
    handle.remove()
train(5)
print("hooks saw", seen)
""",
        ("--steps", "0"),
    ),
    "library_custom_op": (
        "a torch.library.custom_op with register_autograd inside its model",
        """
@torch.library.custom_op("robust15::scaled_tanh", mutates_args=())
def scaled_tanh(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.tanh(x) * scale
@scaled_tanh.register_fake
def _(x, scale):
    return torch.empty_like(x)
def backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * ctx.scale * (1 - torch.tanh(x) ** 2), None
def setup_context(ctx, inputs, output):
    ctx.save_for_backward(inputs[0]); ctx.scale = inputs[1]
scaled_tanh.register_autograd(backward, setup_context=setup_context)
for _ in range(30):
    opt.zero_grad()
    loss = scaled_tanh(model(torch.randn(16, 8)), 2.0).pow(2).mean()
    loss.backward()
    opt.step()
print("custom op trained", round(loss.item(), 4))
""",
        ("--steps", "0"),
    ),
    "sigchld_reaper": (
        "a SIGCHLD handler reaping every child (os.waitpid(-1)), a subprocess per epoch, a loader",
        """
import os, signal, subprocess
reaped = []
def reap(signum, frame):
    try:
        while True:
            pid, _ = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            reaped.append(pid)
    except ChildProcessError:
        pass
signal.signal(signal.SIGCHLD, reap)
data = torch.utils.data.TensorDataset(torch.randn(256, 8))
loader = torch.utils.data.DataLoader(data, batch_size=16, shuffle=True)
for epoch in range(2):
    for (x,) in loader:
        opt.zero_grad(); model(x).pow(2).mean().backward(); opt.step()
    try:
        subprocess.run(["true"])
    except ChildProcessError:  # reaped by the handler before subprocess's own wait
        pass
print("epochs done")
""",
        ("--steps", "0"),
    ),
    "own_sigprof_sampler": (
        "its own sampling profiler: signal.setitimer(ITIMER_PROF) with a SIGPROF handler",
        """
import signal, collections
samples = collections.Counter()
def sample(signum, frame):
    samples[frame.f_code.co_name] += 1
signal.signal(signal.SIGPROF, sample)
signal.setitimer(signal.ITIMER_PROF, 0.005, 0.005)
train(200)
signal.setitimer(signal.ITIMER_PROF, 0, 0)
print("profiled", sum(samples.values()) >= 0)
""",
        ("--steps", "0"),
    ),
    "shuffled_loader_exact_losses": (
        "a shuffled DataLoader over the global RNG for 3 epochs; prints exact losses and the RNGs' next draws",
        """
import random
import numpy as np
random.seed(0); np.random.seed(0)
data = torch.utils.data.TensorDataset(torch.randn(128, 8), torch.randn(128, 1))
loader = torch.utils.data.DataLoader(data, batch_size=16, shuffle=True)
model.eval()
for epoch in range(3):
    model.train()
    for x, y in loader:
        opt.zero_grad()
        loss = (model(x) - y).pow(2).mean()
        loss.backward(); opt.step()
    model.eval()
    with torch.no_grad():
        print("epoch", epoch, "%.8f" % loss.item(), "%.8f" % model(data.tensors[0]).sum().item())
print("next draws", torch.rand(1).item(), random.random(), np.random.rand())
""",
        ("--steps", "0"),
    ),
    "tensor_subclass_inputs": (
        "a torch.Tensor subclass (__torch_function__ of its own) fed to the model; .item() and .to() on it",
        """
class Tagged(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})
for _ in range(30):
    x = torch.randn(16, 8).as_subclass(Tagged).to(torch.float32)
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward(); opt.step()
print("subclass trained", type(loss).__name__, round(loss.item(), 4))
""",
        ("--steps", "0"),
    ),
    "interrupt_main_time_budget": (
        "a threading.Timer calling _thread.interrupt_main() as a time budget; KeyboardInterrupt caught",
        """
import _thread, signal, threading
signal.signal(signal.SIGINT, signal.default_int_handler)  # started in the background: ignored
timer = threading.Timer(1.0, _thread.interrupt_main)
timer.start()
steps = 0
try:
    while True:
        train(1); steps += 1
except KeyboardInterrupt:
    print("budget reached, saving", steps > 0)
torch.save(model.state_dict(), "last.pt")
print("saved")
""",
        ("--steps", "0"),
    ),
    "reinvokes_itself_in_subprocess": (
        "re-runs itself with subprocess ([sys.executable, __file__, '--eval']) for evaluation",
        """
import subprocess
if "--eval" in sys.argv:
    print("evaluating in the child"); sys.exit(0)
train(20)
child = subprocess.run([sys.executable, __file__, "--eval"], capture_output=True, text=True)
print("child said:", child.stdout.strip(), child.returncode)
""",
        ("--steps", "0"),
    ),
    # round 16
    "print_replaced_by_program": (
        "builtins.print replaced by the program (a step-stamped print of its own) before training",
        """
import builtins
plain_print = builtins.print
def stamped(*args, **kwargs):
    plain_print("[log]", *args, **kwargs)
builtins.print = stamped
for epoch in range(3):
    train(10)
    print("epoch", epoch, "done")
""",
        ("--steps", "0"),
    ),
    "stdout_reconfigured_ascii": (
        "sys.stdout.reconfigure(encoding='ascii', errors='strict') at its top (a legacy terminal)",
        """
sys.stdout.reconfigure(encoding="ascii", errors="strict")
train(30)
print("trained on an ascii stdout")
""",
        ("--steps", "0"),
    ),
    "stdout_stringio_read_back": (
        "sys.stdout replaced by an io.StringIO for the whole run, read back and summed up at its end",
        """
import io
captured = io.StringIO()
sys.stdout = captured
for step in range(30):
    train(1)
    print("step", step)
sys.stdout = sys.__stdout__
print("captured", len(captured.getvalue().splitlines()), "lines; last:", captured.getvalue().splitlines()[-1])
""",
        ("--steps", "0"),
    ),
    "contextvars_run_in_thread": (
        "a contextvars.ContextVar step counter; training run through copy_context().run in a thread",
        """
import contextvars, threading
step_var = contextvars.ContextVar("step", default=0)
def counted(n):
    for _ in range(n):
        train(1)
        step_var.set(step_var.get() + 1)
    print("steps in context", step_var.get())
context = contextvars.copy_context()
worker = threading.Thread(target=context.run, args=(counted, 30))
worker.start(); worker.join()
print("outside the context", step_var.get(), "inside", context[step_var])
""",
        ("--steps", "0"),
    ),
    "numpy_errors_raise": (
        "numpy.seterr(all='raise') at its top; numpy metrics every step",
        """
import numpy as np
np.seterr(all="raise")
history = []
for step in range(30):
    train(1)
    history.append(float(model.weight.detach().norm()))
print("mean norm", round(float(np.mean(history)), 4), "std", round(float(np.std(history)), 4))
""",
        ("--steps", "0"),
    ),
    "signals_blocked_in_main": (
        "signal.pthread_sigmask blocking SIGINT, SIGTERM, SIGALRM, SIGUSR1 and SIGPROF (stopped by diagnose)",
        """
import signal
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGALRM,
                                          signal.SIGUSR1, signal.SIGPROF})
train(200)
print("trained with signals blocked")
""",
        ("--steps", "5"),
    ),
    "fd_level_stdout_capture": (
        "os.dup2 of a log file over descriptor 1 around its training (C-level capture), put back after",
        """
import os, tempfile
saved = os.dup(1)
with tempfile.TemporaryFile() as log:
    sys.stdout.flush()
    os.dup2(log.fileno(), 1)
    try:
        for step in range(30):
            train(1)
            print("step", step, flush=True)
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
    log.seek(0)
    print("captured", len(log.read().splitlines()), "lines at descriptor level")
""",
        ("--steps", "0"),
    ),
    "program_patches_torch_methods": (
        "monkeypatches Optimizer.zero_grad, Optimizer.step and Tensor.backward with counting wrappers of its own",
        """
import functools
counts = {"zero_grad": 0, "step": 0, "backward": 0}
def counting(name, original):
    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        counts[name] += 1
        return original(*args, **kwargs)
    return wrapper
torch.optim.Optimizer.zero_grad = counting("zero_grad", torch.optim.Optimizer.zero_grad)
torch.optim.SGD.step = counting("step", torch.optim.SGD.step)
torch.Tensor.backward = counting("backward", torch.Tensor.backward)
train(30)
print("counted", counts)
""",
        ("--steps", "0"),
    ),
    "program_wraps_torch_functions_in_own_mode": (
        "wraps Tensor.sum (a C method), Tensor.backward, F.relu and torch.autograd.grad with counting wrappers, every 4th forward inside its own TorchFunctionMode",
        """
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode
counts = {}
def counting(name, original):
    def wrapper(*args, **kwargs):
        counts[name] = counts.get(name, 0) + 1
        return original(*args, **kwargs)
    return wrapper
class PassThrough(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))
torch.Tensor.sum = counting("Tensor.sum", torch.Tensor.sum)
torch.Tensor.backward = counting("Tensor.backward", torch.Tensor.backward)
F.relu = counting("F.relu", F.relu)
torch.autograd.grad = counting("autograd.grad", torch.autograd.grad)
for step in range(40):
    opt.zero_grad()
    x = torch.randn(16, 8, requires_grad=True)
    if step % 4 == 0:
        with PassThrough():  # its own mode relays the wrappers a second time, plainly too
            loss = F.relu(model(x)).sum()
    else:
        loss = F.relu(model(x)).sum()
    (gx,) = torch.autograd.grad(loss, x, retain_graph=True)
    (loss + gx.pow(2).sum()).backward()
    opt.step()
print("counted", sorted(counts.items()))
""",
        ("--steps", "0"),
    ),
    "own_optimizer_step_hooks": (
        "its own global optimizer step post hook (an EMA of the weights) and a per-optimizer pre hook",
        """
from torch.optim.optimizer import register_optimizer_step_post_hook
ema = {id(p): p.detach().clone() for p in model.parameters()}
calls = []
def update_ema(optimizer, args, kwargs):
    for group in optimizer.param_groups:
        for p in group["params"]:
            ema[id(p)].mul_(0.9).add_(p.detach(), alpha=0.1)
handle = register_optimizer_step_post_hook(update_ema)
opt.register_step_pre_hook(lambda optimizer, args, kwargs: calls.append(1))
train(30)
handle.remove()
print("pre hook calls", len(calls), "ema norm", round(sum(float(t.norm()) for t in ema.values()), 4))
""",
        ("--steps", "0"),
    ),
    "autocast_bf16_cpu": (
        "torch.autocast('cpu', bfloat16) around its forward, a disabled GradScaler on the CPU",
        """
scaler = torch.amp.GradScaler("cpu", enabled=False)
for step in range(30):
    opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(torch.randn(16, 8))
    loss = out.float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
print("output dtype under autocast", out.dtype)
""",
        ("--steps", "0"),
    ),
    "clip_grad_nonfinite_error": (
        "clip_grad_norm_(error_if_nonfinite=True) on a gradient made infinite mid-training (the program's error)",
        """
train(10)
for step in range(10):
    opt.zero_grad()
    scale = float("inf") if step == 5 else 1.0
    (model(torch.randn(16, 8)).pow(2).mean() * scale).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
    opt.step()
""",
        ("--steps", "0"),
    ),
    "own_tracemalloc": (
        "tracemalloc.start() at its top; reads its own traced peak and tracing state at the end",
        """
import tracemalloc
tracemalloc.start()
data = [torch.randn(16, 8) for _ in range(30)]
for x in data:
    opt.zero_grad(); model(x).pow(2).mean().backward(); opt.step()
current, peak = tracemalloc.get_traced_memory()
print("tracing", tracemalloc.is_tracing(), "peak positive", peak > 0)
tracemalloc.stop()
""",
        ("--steps", "0"),
    ),
    "forward_ad_jvp_penalty": (
        "a forward-mode AD penalty (torch.autograd.forward_ad dual tensors) added to each step's loss",
        """
import torch.autograd.forward_ad as fwAD
for step in range(30):
    opt.zero_grad()
    x = torch.randn(16, 8)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, torch.ones_like(x))
        tangent = fwAD.unpack_dual(model(dual)).tangent
    loss = model(x).pow(2).mean() + 0.01 * tangent.pow(2).mean()
    loss.backward()
    opt.step()
print("jvp penalty", round(float(tangent.pow(2).mean()), 4))
""",
        ("--steps", "0"),
    ),
    "grads_assigned_by_hand": (
        "gradients from torch.autograd.grad assigned to .grad by hand, then opt.step() (no .backward())",
        """
params = list(model.parameters())
for step in range(30):
    loss = model(torch.randn(16, 8)).pow(2).mean()
    for p, g in zip(params, torch.autograd.grad(loss, params)):
        p.grad = g
    opt.step()
print("trained by autograd.grad", round(loss.item(), 4) >= 0)
""",
        ("--steps", "0"),
    ),
    "swa_averaged_model": (
        "torch.optim.swa_utils: AveragedModel updated every step, SWALR, update_bn over a BatchNorm model",
        """
from torch.optim.swa_utils import SWALR, AveragedModel, update_bn
net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.BatchNorm1d(16), torch.nn.Linear(16, 1))
sgd = torch.optim.SGD(net.parameters(), lr=0.05)
swa = AveragedModel(net)
schedule = SWALR(sgd, swa_lr=0.01)
batches = [torch.randn(16, 8) for _ in range(30)]
for x in batches:
    sgd.zero_grad(); net(x).pow(2).mean().backward(); sgd.step()
    swa.update_parameters(net); schedule.step()
update_bn(batches, swa)
print("averaged", int(swa.n_averaged))
""",
        ("--steps", "0"),
    ),
}


HANG_S = 240  # a run still going after this long: a hang (the programs take seconds)
TRY_HANG_S = 900  # with --try: the trials run the program several times (3 min each at load 18)


def _run(command: list[str], cwd: str, hang_s: float = HANG_S) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(
            command,
            cwd=cwd,
            capture_output=True,
            text=True,
            errors="replace",  # a program may print bytes
            timeout=hang_s,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(command, "hang", "", "")


# rows whose program is not a plain `program.py` (how Python is given it, or its bytes)
SCRIPT_FORMS = {
    "zip_app": "zip",
    "symlinked_script": "symlink",
    "shebang_crlf": "crlf",
    "latin1_coding_cookie": "latin-1",
}


def _write_program(folder: str, body: str, form: str | None = None) -> str:
    """Writes the program in its form; returns what to hand to Python (and to diagnose)."""
    text = TRAIN + textwrap.dedent(body)
    if form == "zip":
        with zipfile.ZipFile(os.path.join(folder, "app.zip"), "w") as app:
            app.writestr("__main__.py", text)
        return "app.zip"
    if form == "symlink":  # bin/train.py -> ../real/program.py, helper.py beside the real file
        for name in ("real", "bin"):
            os.makedirs(os.path.join(folder, name), exist_ok=True)
        with open(os.path.join(folder, "real", "helper.py"), "w") as helper:
            helper.write("SCALE = 3\n")
        with open(os.path.join(folder, "real", "program.py"), "w") as script:
            script.write(text)
        link = os.path.join(folder, "bin", "train.py")
        if not os.path.islink(link):
            os.symlink(os.path.join("..", "real", "program.py"), link)
        return os.path.join("bin", "train.py")
    data = text.encode()
    if form == "crlf":
        data = b"#!/usr/bin/env python3\r\n" + text.replace("\n", "\r\n").encode()
    elif form == "latin-1":
        data = b"# -*- coding: latin-1 -*-\n" + text.encode("latin-1")
    with open(os.path.join(folder, "program.py"), "wb") as script:
        script.write(data)
    return "program.py"


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return _same_run(lines[-1]) if lines else ""


def _same_run(text: str) -> str:
    """What two runs of one program share: process ids, addresses, times and timings differ
    from run to run."""
    return re.sub(r"0x[0-9a-f]+|\d+", "N", text)


def _traceback(text: str) -> str:
    """The program's traceback (from its first line to the end), without our own notes."""
    at = text.find("Traceback (most recent call last):")
    if at < 0:
        return ""
    lines = text[at:].splitlines()
    return _same_run("\n".join(line for line in lines if not line.startswith("torchdoctor:")))


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
    reports = len(re.findall(r"^torchdoctor diagnose ", diagnosed.stdout, re.MULTILINE))
    if reports != 1:  # a report's first line (a verdict may quote the command further on)
        problems.append(f"{reports} reports")
    err = diagnosed.stderr
    if "Exception in thread" in err or "internal error" in err or "no report" in err:
        problems.append("our error: " + _last_line(err)[:60])
    elif "/torchdoctor/" in err:
        problems.append("our frames in stderr: " + _last_line(err)[:60])
    elif not stopped and _last_line(err) != _last_line(plain.stderr):
        problems.append(f"stderr ends {_last_line(err)[:50]!r}")
    elif not stopped and _traceback(err) != _traceback(plain.stderr):
        problems.append("traceback differs")
    return "; ".join(problems) or "ok"


def _files(folder: str) -> list[str]:
    """The names under `folder` (what a run left there), sizes aside."""
    return sorted(
        os.path.relpath(os.path.join(root, name), folder)
        for root, folders, files in os.walk(folder)
        for name in files + folders
        if "__pycache__" not in root and name != "__pycache__"
    )


def try_auto(body: str, form: str | None = None) -> str:
    """`diagnose --steps 5 --try auto --repeats 1`: exit 0, one diagnosis, a trials table or the
    note why none, nothing of ours on stderr, and the program's folder left with the names a
    `diagnose --steps 5` run leaves (the trials put back what they changed)."""
    left = []
    for options in ((), ("--try", "auto", "--repeats", "1")):
        with tempfile.TemporaryDirectory(prefix="robust-") as folder:
            script = _write_program(folder, body, form)
            command = [sys.executable, "-m", "torchdoctor", "diagnose", "--steps", "5", *options]
            run = _run([*command, script], folder, TRY_HANG_S)
            left.append(_files(folder))
    if run.returncode == "hang":
        return f"hung (killed after {TRY_HANG_S} s)"
    problems = []
    if run.returncode not in (0,):
        problems.append(f"exit {run.returncode}")
    if "Exception in thread" in run.stderr or "internal error" in run.stderr:
        problems.append("our error: " + _last_line(run.stderr)[:60])
    if "--try" not in run.stdout and "trial" not in run.stdout.lower():
        problems.append("no trials table")
    if left[0] != left[1]:
        extra = sorted(set(left[1]) ^ set(left[0]))
        problems.append("files differ: " + ", ".join(extra[:3]))
    return "; ".join(problems) or "ok"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="source folder of another version to compare")
    parser.add_argument(
        "--try", dest="try_auto", action="store_true",
        help="instead: each program under `diagnose --steps 5 --try auto` (the version on PYTHONPATH)",
    )  # fmt: skip
    parser.add_argument("names", nargs="*", help="programs to run (default: all)")
    options = parser.parse_args()
    if options.try_auto:
        print(f"load {os.getloadavg()[0]:.1f}\n| feature | --try auto |\n|---|---|")
        for name in options.names or list(PROGRAMS):
            feature, body, _ = PROGRAMS[name]
            print(f"| {feature} | {try_auto(body, SCRIPT_FORMS.get(name))} |", flush=True)
        return
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
            form = SCRIPT_FORMS.get(name)
            script = _write_program(folder, body, form)
            plain = _run([sys.executable, script], folder)
            cells = []
            for source in versions.values():
                _write_program(folder, body, form)  # the run before may have changed or removed it
                os.environ["PYTHONPATH"] = source
                command = [sys.executable, "-m", "torchdoctor", "diagnose", *diagnose_options]
                diagnosed = _run([*command, script], folder)
                cells.append(compare(plain, diagnosed, "0" not in diagnose_options))
        print(f"| {feature} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
