"""Programs that do unusual things (issue 11, round 9): diagnose runs them as `python script.py`
would, gives their own exit code and output, shows their errors as theirs, and steps aside where
one of its probes cannot run beside what the program does. Each test is a bug found by running
such a program under diagnose."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from textwrap import dedent

import pytest
from diagnose_prelude import PRELUDE
from robust_programs_helper import TRAIN_LOOP as TRAIN

THREAD_TRAINING = """
import threading

def train():
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(200):
        loss = model(torch.randn(64, 256)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("thread finished its training")

worker = threading.Thread(target=train)
worker.start(); worker.join()  # the main thread waits here
print("main thread after join")
"""


@pytest.mark.timing  # the line samples it reads come from a sampler thread's timing
def test_training_in_a_thread_of_its_own_is_measured_and_stopped_quietly(diagnose):
    # The activation counter's saved-tensor hooks were pushed on the main thread and popped on
    # the training thread (an INTERNAL ASSERT in torch killed the thread); our stop printed
    # "Exception in thread" with our frames and the main thread ran on; the line sampler read
    # the main thread, blaming `worker.join()` for the training's time.
    d = diagnose(THREAD_TRAINING, "--steps", "40", "--warmup", "1")
    assert d.returncode == 0, d.stderr[-3000:]
    assert "Exception in thread" not in d.stderr and "Traceback" not in d.stderr, d.stderr
    assert d.report["status"] == "stopped", d.run.get("error")
    assert d.report["steps"] == 40
    assert "thread finished its training" not in d.stdout  # stopped after the measured steps
    assert "main thread after join" not in d.stdout  # the whole program stops, as without threads
    sampled = [line for lines in d.report["lines"]["phases"].values() for line in lines]
    assert sampled, json.dumps(d.report["lines"])
    assert all("join" not in line["code"] for line in sampled), sampled
    assert any("model(" in line["code"] or "backward" in line["code"] for line in sampled)


def test_file_is_absolute_argv0_as_typed_and_a_raised_keyboard_interrupt_shows_where(tmp_path):
    # runpy.run_path("train.py") left __file__ relative (Python gives an absolute one): a script
    # that changed directory lost its own files
    (tmp_path / "settings.txt").write_text("lr=0.1\n")
    (tmp_path / "elsewhere").mkdir()
    script = PRELUDE + dedent(
        """
        import os
        print("argv0", sys.argv[0], "absolute file", os.path.isabs(__file__))
        here = os.path.dirname(__file__)
        os.chdir("elsewhere")  # then reads its own files through __file__, as many scripts do
        print(open(os.path.join(here, "settings.txt")).read().strip())
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(40):
            opt.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            opt.step()
            if step == 20:
                raise KeyboardInterrupt  # the program's own way out: Python prints where
        """
    )
    (tmp_path / "train.py").write_text(script)
    command = [sys.executable, "-m", "torchdoctor", "diagnose", "--steps", "0", "train.py"]
    d = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert d.returncode == 130, d.stderr[-3000:]
    assert "argv0 train.py absolute file True" in d.stdout
    assert "lr=0.1" in d.stdout
    assert "interrupted" in d.stdout
    assert "Traceback (most recent call last)" in d.stderr, d.stderr
    assert "raise KeyboardInterrupt" in d.stderr and "torchdoctor" not in d.stderr, d.stderr


def test_a_forked_child_writes_no_report_and_the_programs_excepthook_shows_its_crash(diagnose):
    # the child of os.fork() ran on through our end of the run and printed (and wrote) a second
    # report; a crash was printed as our traceback though the program had set sys.excepthook
    d = diagnose(
        TRAIN
        + """
import os
def hook(kind, error, tb):
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    print("program's hook:", kind.__name__, error, "frames", len(frames), file=sys.stderr)
sys.excepthook = hook
child = os.fork()
train(25)
if child == 0:
    print("child trained")
    sys.exit(0)
os.waitpid(child, 0)
raise RuntimeError("parent failed")
""",
        "--steps", "0",
    )  # fmt: skip
    assert d.returncode == 1, d.stderr[-3000:]
    assert d.stdout.count("torchdoctor diagnose ") == 1, d.stdout
    assert "child trained" in d.stdout
    assert d.report["status"] == "crashed" and d.report["exit_code"] == 1
    # the program's hook got the traceback of its own frame only (ours and runpy's taken out)
    assert "program's hook: RuntimeError parent failed frames 1" in d.stderr, d.stderr
    assert "Traceback" not in d.stderr, d.stderr


def test_os_exit_from_a_watchdog_thread_still_writes_the_report(diagnose):
    # the report's cleanup put back our SIGTERM handler, which only the main thread may do:
    # "no report at os._exit"
    d = diagnose(
        TRAIN
        + """
import os, threading
def watchdog():
    done.wait()
    os._exit(4)
done = threading.Event()
threading.Thread(target=watchdog, daemon=True).start()
train(30)
done.set()
while True:
    train(1)
""",
        "--steps", "0",
    )  # fmt: skip
    assert d.returncode == 4, d.stderr[-3000:]
    assert "no report" not in d.stderr, d.stderr
    assert d.report["exit_code"] == 4
    assert d.report["steps"] > 10
    # the what-ifs copy objects the still-running main thread changes: not run (they crashed it)
    assert any(n.startswith("what-if probes not run") for n in d.run["notes"]), d.run["notes"]


def test_the_programs_watchdog_timer_and_handlers_end_with_it(diagnose_here):
    # a watchdog re-armed every step, still armed when we stopped the program, fired into our
    # report with the program's TimeoutError (a bare traceback from torchdoctor, exit 1)
    handlers = {number: signal.getsignal(number) for number in (signal.SIGALRM, signal.SIGUSR1)}
    report = diagnose_here(
        TRAIN
        + """
import signal
def too_slow(signum, frame):
    raise TimeoutError("a step took over a second")
signal.signal(signal.SIGALRM, too_slow)
signal.signal(signal.SIGUSR1, lambda signum, frame: print("checkpoint saved"))
for _ in range(100):
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    train(1)
""",
        steps=5,
        warmup=1,
        whatif=False,
    )
    assert report.run.status == "stopped", report.run.error
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    time.sleep(1.2)  # the watchdog's second, had it stayed armed
    assert {n: signal.getsignal(n) for n in handlers} == handlers


def test_registering_a_parametrization_is_not_an_evaluation(diagnose_here):
    # register_parametrization calls the parametrization module once on the weight it takes
    # over, with autograd on and no gradient: it was booked as an evaluation forward (D301)
    report = diagnose_here(
        """
        from torch.nn.utils import parametrizations
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
        parametrizations.weight_norm(model[0])
        parametrizations.spectral_norm(model[2])
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        for _ in range(10):
            loss = model(torch.randn(16, 8)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=4,
        warmup=2,
        whatif=False,
    )
    assert report.run.status == "stopped", report.run.error
    assert report.run.evaluation.forwards == 0, report.run.evaluation
    assert "D301" not in {finding.id for finding in report.findings}


def test_a_program_that_replaces_itself_with_exec_is_diagnosed_again(diagnose):
    # os.execv of the same Python on the same script: the new process runs under diagnose with
    # the same options, and its one report says what the replaced process ran
    d = diagnose(
        """
        import os
        model = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(6):
            opt.zero_grad(); model(torch.randn(8, 4)).sum().backward(); opt.step()
        if os.environ.get("RELAUNCHED") != "1":
            os.environ["RELAUNCHED"] = "1"  # e.g. to set a thread count before torch loads
            os.execv(sys.executable, [sys.executable, *sys.argv])
        print("relaunched", sys.argv[1:], "TORCHDOCTOR_REPLACED_AFTER_STEPS" in os.environ)
        """,
        "--steps", "0",
        args=("--lr", "0.1"),
    )  # fmt: skip
    assert d.returncode == 0, d.stderr[-3000:]
    assert "relaunched ['--lr', '0.1'] False" in d.stdout
    assert d.stdout.count("torchdoctor diagnose ") == 1, d.stdout
    assert "replaced itself (os.exec*) after 6 training step(s)" in d.stdout, d.stdout
    assert "torchdoctor" not in d.stderr, d.stderr


def test_a_program_that_execs_another_command_says_why_no_report_follows(diagnose):
    # another command replaces the process, torchdoctor with it: the program runs on unwatched
    d = diagnose(
        """
        import os
        os.execv(sys.executable, [sys.executable, "-c", "print('another program')"])
        """,
        "--steps", "0",
    )  # fmt: skip
    assert d.returncode == 0, d.stderr[-3000:]
    assert "another program" in d.stdout
    assert "replaced itself with another (os.exec*): no report" in d.stderr, d.stderr


def test_a_script_that_does_not_compile_is_the_programs_error(diagnose):
    d = diagnose("import torch\ndef broken(:\n    pass\n", "--steps", "0", prelude=False)
    assert d.returncode == 1, d.stderr[-3000:]
    assert "internal error" not in d.stderr, d.stderr
    assert d.stderr.rstrip().endswith("SyntaxError: invalid syntax"), d.stderr
    assert "line 2" in d.stderr and "torchdoctor" not in d.stderr, d.stderr
