"""Programs that do unusual things (issue 11, round 11): each test is a difference between a
program's plain run and its run under diagnose, found by bench/robust_programs.py's round 11 rows
(a program's exit handlers, a writer of its own that fails at the exit, a crash inside torch's
own Python code, module hooks of its own, torchrun's ranks writing one report file)."""

from __future__ import annotations

import re

from diagnose_prelude import PRELUDE
from robust_programs_helper import TRAIN_LOOP as TRAIN
from robust_programs_helper import run_python


def test_the_programs_end_reads_as_in_its_plain_run(diagnose, tmp_path):
    # Three differences at a program's end: its atexit summary printed after our report (plainly
    # it is its last line); its own sys.stdout writer, failing when Python's exit flushes it,
    # gave exit 1 where Python exits 120; and its crash inside torch's own Python code (a
    # Linear given the wrong width) lost torch's frames from its traceback.
    body = (
        TRAIN
        + """
import atexit
atexit.register(lambda: print("summary: trained"))
def dropped():
    print("unregistered: never runs")
atexit.register(dropped)
atexit.unregister(dropped)
class Flaky:
    def __init__(self, stream): self.stream, self.broken = stream, False
    def write(self, text): return self.stream.write(text)
    def flush(self):
        if self.broken:
            raise OSError("log server gone")
        self.stream.flush()
train(30)
sys.stdout = Flaky(sys.stdout)
sys.stdout.broken = True
nn.Linear(4, 1)(torch.randn(2, 8))
"""
    )
    (tmp_path / "plain.py").write_text(PRELUDE + body)
    plain = run_python(tmp_path, "plain.py", timeout=60)
    d = diagnose(body, "--steps", "0", name="plain.py")
    assert plain.returncode == 120, plain.stderr[-2000:]
    assert d.returncode == 120, d.stderr[-2000:]
    assert d.stdout.startswith("summary: trained\n"), d.stdout[:300]  # before the report
    assert d.stdout.count("summary: trained") == 1
    assert "never runs" not in d.stdout
    crash = plain.stderr[plain.stderr.index("Traceback") :]
    assert "torch/nn/modules/linear.py" in crash  # torch's frames, as Python prints them
    assert _no_addresses(crash) in _no_addresses(d.stderr), d.stderr[-3000:]


def _no_addresses(text: str) -> str:
    return re.sub("0x[0-9a-f]+", "0x", text)


def test_the_programs_module_hooks_run_for_its_own_calls_only(diagnose, tmp_path, monkeypatch):
    # The what-if probes' copies of the model kept the program's hooks: a forward hook logging
    # to a file wrote 24 lines more than the program's 30 forwards. A full backward hook's torch
    # warning (stacklevel=5) named torch/_tensor.py instead of the program's backward() line,
    # our backward wrappers being counted among its frames.
    # And rank 1 of 2 under torchrun without --rank-dir wrote the --json file given: the ranks
    # overwrote one another's report; each writes its own name now.
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    d = diagnose(
        TRAIN
        + """
def log_output(module, args, output):
    with open("activations.log", "a") as log:
        log.write(f"{output.mean().item():.3f}\\n")
def keep_grads(module, grad_input, grad_output):
    return None
model.register_forward_hook(log_output)
model.register_full_backward_hook(keep_grads)
train(30)
print("trained")
""",
        "--steps", "0",
    )  # fmt: skip
    assert d.returncode == 0, d.stderr[-2000:]
    assert (tmp_path / "activations.log").read_text().count("\n") == 30
    assert "train.py:13: UserWarning: Full backward hook" in d.stderr, d.stderr
    assert "_tensor.py" not in d.stderr and "torchdoctor" not in d.stderr
    assert not (tmp_path / "report.json").exists()  # rank 0's name
    assert (tmp_path / "report.rank1.json").exists()
