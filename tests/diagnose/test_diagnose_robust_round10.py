"""Programs that do unusual things (issue 11, round 10): threads left waiting after our stop, a
main thread blocked in C while its training thread is stopped, a reader that closes our pipe, a
program whose own sys.stderr fails. Each test is a bug found by running such a program."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from textwrap import dedent

import pytest
from diagnose_prelude import PRELUDE

from torchdoctor.diagnose import program_exit
from torchdoctor.diagnose.program_exit import WATCHER, exit_after_program

TRAIN = """
model = nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
def step(x):
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
"""


def test_threads_left_waiting_on_the_stopped_part_do_not_hang_diagnose(diagnose, tmp_path):
    # The training thread was stopped after the measured steps while the main thread waited in
    # `results.get()` (a lock in C: the asynchronous stop never reached it), and the non-daemon
    # prefetch thread stayed blocked on its full queue: Python waited for both forever. Plainly,
    # the program ends on its own.
    d = diagnose(
        TRAIN
        + """
import multiprocessing, os, queue, threading
def record(losses):  # a non-daemon child process reading until the training sends its end
    with open("child.pid", "w") as pid:
        pid.write(str(os.getpid()))
    while losses.get() is not None:
        pass
losses = multiprocessing.get_context("fork").Queue()
multiprocessing.get_context("fork").Process(target=record, args=(losses,), name="recorder").start()
batches, results = queue.Queue(maxsize=2), queue.Queue()
def prefetch(n):
    for _ in range(n):
        batches.put(torch.randn(16, 8))  # blocks on the full queue once training stops
    batches.put(None)
log = open("train.log", "w")  # never closed: Python's exit flushes it
def train():
    while (x := batches.get()) is not None:
        step(x)
        log.write("step\\n")
        losses.put(1.0)
    losses.put(None)
    results.put("trained")
threading.Thread(target=prefetch, args=(300,), name="prefetch").start()
threading.Thread(target=train, name="trainer").start()
print("main thread got", results.get())
""",
        "--steps", "5", "--warmup", "1",
    )  # fmt: skip
    assert d.returncode == 0, d.stderr[-3000:]
    assert d.report["status"] == "stopped", d.run.get("error")
    assert "main thread got" not in d.stdout  # the whole program stopped
    assert "Traceback" not in d.stderr and "Exception in thread" not in d.stderr, d.stderr
    assert "threads and processes 'prefetch', 'recorder' are still running" in d.stderr
    assert "exiting without it" in d.stderr
    with pytest.raises(ProcessLookupError):  # ended, not left orphaned on its queue
        os.kill(int((tmp_path / "child.pid").read_text()), 0)
    assert (tmp_path / "train.log").read_text().count("step") >= 5  # its open file flushed


def test_a_thread_still_running_after_the_program_ended_is_waited_for_with_a_note(
    capsys, monkeypatch
):
    # Python waits for non-daemon threads: the program alone would wait too, so we do, and say
    # why the command has not ended
    monkeypatch.setattr(program_exit, "GRACE_S", 0.2)
    release = threading.Event()
    consumer = threading.Thread(target=release.wait, name="consumer")
    consumer.start()
    try:
        with pytest.raises(SystemExit) as exited:
            exit_after_program(3, stopped=False)
        watcher = next(t for t in threading.enumerate() if t.name == WATCHER)
        watcher.join()  # it names what is still running a moment later
    finally:
        release.set()
        consumer.join()
    assert exited.value.code == 3
    note = capsys.readouterr().err
    assert "thread 'consumer' is still running after it ended: Python waits for it" in note


def test_a_reader_that_closes_the_pipe_keeps_the_report_files_and_the_exit_code(tmp_path):
    # `diagnose x.py | head -1`: rich exited 1 at the report's first line, before the JSON file
    # was written, and the program's exit code was lost
    script = tmp_path / "train.py"
    script.write_text(
        PRELUDE
        + dedent(TRAIN)
        + dedent(
            """
            import os
            print("first line", flush=True)
            while not os.path.exists("reader_gone"):  # the test closed its end of the pipe
                time.sleep(0.01)
            for _ in range(20):
                step(torch.randn(16, 8))
            sys.exit(3)
            """
        )
    )
    command = [sys.executable, "-m", "torchdoctor", "diagnose", "--json", "report.json"]
    with subprocess.Popen(
        [*command, "--steps", "0", "--warmup", "1", "train.py"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        assert process.stdout.readline() == "first line\n"
        process.stdout.close()  # head -1 is done
        (tmp_path / "reader_gone").touch()
        stderr = process.stderr.read()
        code = process.wait(timeout=120)
    assert code == 3, stderr[-3000:]
    assert "Traceback" not in stderr and "Broken pipe" not in stderr, stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["exit_code"] == 3 and report["steps"] > 10


def test_a_crash_behind_a_stderr_that_fails_is_still_shown_as_the_programs(diagnose_here, capfd):
    # a Tee logger whose log file the program closed: printing the program's traceback to its
    # sys.stderr raised inside our runner, which lost the report
    report = diagnose_here(
        TRAIN
        + """
class Tee:
    def __init__(self, *streams):
        self.streams = streams
    def write(self, text):
        for stream in self.streams:
            stream.write(text)
    def flush(self):
        for stream in self.streams:
            stream.flush()
import os
log = open(os.path.join(os.path.dirname(__file__), "train.log"), "w")
sys.stderr = Tee(sys.stderr, log)
for _ in range(10):
    step(torch.randn(16, 8))
log.close()
raise RuntimeError("diverged")
""",
        steps=0,
        warmup=1,
        whatif=False,
    )
    assert report.run.status == "crashed", report.run.error
    assert report.run.error == "RuntimeError: diverged"
    shown = capfd.readouterr().err
    assert shown.rstrip().endswith("RuntimeError: diverged"), shown
    assert "internal error" not in shown and "torchdoctor" not in shown, shown
    # round 11: shown once (it went out through the Tee, then again when the Tee raised), and
    # Python's exit code for a stream that fails when its exit flushes it
    assert shown.count("Traceback (most recent call last)") == 1, shown
    assert report.run.exit_code == 120


def test_a_program_that_closes_stdout_gets_no_report_in_its_own_file(diagnose, tmp_path):
    # os.close(1), then a file of its own opened (it gets descriptor 1): the report failed with
    # a traceback of ours (or would have been written into the program's file)
    d = diagnose(
        TRAIN
        + """
import os
for _ in range(20):
    step(torch.randn(16, 8))
print("trained", flush=True)
os.close(1)
results = open("results.txt", "w")
results.write("the program's results\\n")
results.flush()
""",
        "--steps", "0", "--warmup", "1",
    )  # fmt: skip
    assert d.returncode == 0, d.stderr[-3000:]
    assert d.stdout == "trained\n"
    assert (tmp_path / "results.txt").read_text() == "the program's results\n"
    assert "Traceback" not in d.stderr, d.stderr
    assert "closed or redirected standard output: no report printed" in d.stderr
    assert d.report["status"] == "completed" and d.report["steps"] > 10
