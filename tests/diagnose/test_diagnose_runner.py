"""Running the program: argv, __main__, sys.path, output and exit codes pass through; crashes,
Ctrl-C and scripts without a training loop still give a report; bad input is one line, exit 2."""

import os
import subprocess
import sys
from textwrap import dedent

import pytest

# Updates by hand: creating a torch.optim optimizer imports torch._dynamo (seconds per process).
TRAIN_STEPS = """
model = nn.Linear(4, 2)
def train_step():
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= 0.1 * p.grad
            p.grad = None
"""


def test_program_semantics_pass_through_and_no_training_loop_is_reported(diagnose, tmp_path):
    d = diagnose(
        """
        import os
        print("argv", sys.argv[1:], "name", __name__)
        print("path0", sys.path[0])
        print("cwd", os.getcwd())
        print("to stderr", file=sys.stderr)
        sys.exit(3)
        """,
        "--steps", "0",
        args=("--lr", "0.5", "pos"),
    )  # fmt: skip
    assert d.returncode == 3, d.stderr
    assert "argv ['--lr', '0.5', 'pos'] name __main__" in d.stdout
    assert f"path0 {tmp_path}" in d.stdout
    assert f"cwd {tmp_path}" in d.stdout
    assert "to stderr" in d.stderr
    assert d.report["status"] == "no_training_loop"
    assert d.report["exit_code"] == 3
    assert "no training loop" in d.report["verdict"]
    assert "no training loop" in d.stdout  # the terminal report says it too


def test_training_only_in_child_processes_is_said_plainly_without_parent_advice(diagnose):
    # mnist_hogwild's pattern: workers train a shared model, the parent only evaluates it
    d = diagnose(
        """
        import torch.multiprocessing as mp

        def train(rank, model, data):
            opt = torch.optim.SGD(model.parameters(), lr=0.01)
            for _ in range(5):
                opt.zero_grad()
                model(data).pow(2).mean().backward()
                opt.step()

        if __name__ == "__main__":
            model = nn.Linear(8, 1)
            model.share_memory()
            data = torch.randn(32, 8)
            ctx = mp.get_context("fork")
            workers = [ctx.Process(target=train, args=(r, model, data)) for r in range(2)]
            for p in workers:
                p.start()
            for p in workers:
                p.join()
            mp.start_processes(train, args=(model, data), nprocs=1, start_method="fork")
            loader = DataLoader(TensorDataset(data), batch_size=8, num_workers=1)
            with torch.no_grad():
                for (x,) in loader:  # evaluation only; its DataLoader worker is not counted
                    model(x)
            sys.exit(3)
        """
    )
    assert d.returncode == 3, d.stderr
    assert d.run["status"] == "no_training_loop"
    assert d.run["child_processes"] == 3 and d.run["child_process_targets"] == ["train"]
    verdict = d.report["verdict"]
    assert "3 child process(es)" in verdict and "train" in verdict and "--rank-dir" in verdict
    assert d.report["findings"] == []  # no D303 drawn from the parent's evaluation forwards


def test_module_mode_runs_as_main_with_its_argv(tmp_path):
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "train.py").write_text(
        "import sys\nprint('module', __name__, sys.argv[0].endswith('train.py'), sys.argv[1:])\n"
    )
    # Launched like the console script (sys.path[0] is its own folder, not the current
    # directory): `python -m torchdoctor` would put the cwd on sys.path and hide a lookup bug.
    launcher = tmp_path / "bin" / "torchdoctor_launcher.py"
    launcher.parent.mkdir()
    launcher.write_text("import sys\nfrom torchdoctor.cli import main\nsys.exit(main())\n")
    result = subprocess.run(
        [sys.executable, str(launcher), "diagnose", "-q", "-m", "mypkg.train", "x", "-v"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "module __main__ True ['x', '-v']" in result.stdout
    assert result.stdout.strip().splitlines()[-1].startswith("verdict: no training loop")


def test_crash_prints_user_traceback_report_and_exits_1(diagnose):
    d = diagnose(
        TRAIN_STEPS
        + dedent(
            """
        def broken(step):
            raise ValueError(f"bad batch at step {step}")
        for step in range(10):
            train_step()
            if step == 5:
                broken(step)
        """
        ),
        "--warmup", "2",
    )  # fmt: skip
    assert d.returncode == 1
    assert "Traceback (most recent call last)" in d.stderr
    assert "ValueError: bad batch at step 5" in d.stderr
    assert 'train.py", line' in d.stderr and "in broken" in d.stderr
    assert "torchdoctor" not in d.stderr  # none of our frames in the user's traceback
    assert d.report["status"] == "crashed"
    assert d.report["run"]["error"] == "ValueError: bad batch at step 5"
    assert d.report["steps"] == 4  # steps 2..5 were measured before the crash
    assert "crashed" in d.stdout


@pytest.mark.parametrize(
    "signal_name, exit_code, how", [("SIGINT", 130, "Ctrl-C"), ("SIGTERM", 143, "SIGTERM")]
)
def test_ctrl_c_or_sigterm_gives_report_and_exit_128_plus_signal(
    diagnose, signal_name, exit_code, how
):
    d = diagnose(
        TRAIN_STEPS
        + dedent(
            f"""
        import os, signal
        for step in range(100):
            train_step()
            if step == 4:
                os.kill(os.getpid(), signal.{signal_name})
        """
        ),
        "--warmup", "2",
    )  # fmt: skip
    assert d.returncode == exit_code, d.stderr
    assert d.report["status"] == "interrupted"
    assert d.report["steps"] == 3
    assert f"interrupted ({how}): the report covers the steps before it" in d.run["notes"]


def test_missing_script_is_one_line_exit_2(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "torchdoctor", "diagnose", str(tmp_path / "nope.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"torchdoctor: error: script not found: {tmp_path / 'nope.py'}"
    ]


def test_bad_option_is_one_line_exit_2(tmp_path):
    script = tmp_path / "t.py"
    script.write_text("print('never runs')\n")
    for bad in (["--steps", "-3"], ["--no-such-flag"], ["--warmup", "many"]):
        result = subprocess.run(
            [sys.executable, "-m", "torchdoctor", "diagnose", *bad, str(script)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 2, bad
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("torchdoctor: error:"), lines
        assert "never runs" not in result.stdout


def test_relative_report_paths_survive_a_script_that_changes_directory(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "elsewhere" / "out").mkdir(parents=True)  # where a late relative write would go
    script = tmp_path / "train.py"
    script.write_text(
        "import os, torch\nfrom torch import nn\n"
        + TRAIN_STEPS
        + "os.chdir('elsewhere')\nfor _ in range(4):\n    train_step()\n"
    )
    command = [sys.executable, "-m", "torchdoctor", "diagnose", "-q", "--steps", "0"]
    result = subprocess.run(
        [*command, "--json", "out/r.json", "--html", "r.html", "train.py"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "r.json").is_file() and (tmp_path / "r.html").is_file()
    assert not list((tmp_path / "elsewhere").rglob("r.*"))


def test_report_reaches_the_terminal_when_the_script_redirects_stdout(diagnose, tmp_path):
    d = diagnose(
        'sys.stdout = open("training.log", "w")\n'
        + TRAIN_STEPS
        + "for _ in range(8):\n    train_step()\nprint('epoch done')\n",
        "--steps", "3", "--warmup", "2",
    )  # fmt: skip
    assert d.returncode == 0, d.stderr
    assert any(line.startswith("verdict: ") for line in d.stdout.splitlines()), d.stdout
    assert "verdict" not in (tmp_path / "training.log").read_text()


def test_training_in_spawned_children_is_named_in_the_verdict(diagnose_here):
    report = diagnose_here(
        """
        import torch.multiprocessing as mp
        def worker(rank):
            model = nn.Linear(4, 2)
            model(torch.randn(2, 4)).sum().backward()
        if __name__ == "__main__":
            mp.start_processes(worker, nprocs=1, start_method="fork")
        """,
        steps=3,
    )
    assert report.run.status == "no_training_loop"
    assert report.run.child_processes == 1 and report.run.child_process_targets == ["worker"]
    verdict = report.verdict  # why no step was measured is the verdict, not a note
    assert verdict.startswith("no training loop seen in this process: it started 1 child"), verdict
    assert "(running worker)" in verdict and "--rank-dir" in verdict
    assert not report.findings


def test_non_zero_rank_with_rank_dir_prints_one_line_and_writes_no_report(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        "import torch\nfrom torch import nn\n"
        + TRAIN_STEPS
        + "for _ in range(6):\n    train_step()\n"
    )
    env = {**os.environ, "RANK": "1", "WORLD_SIZE": "2"}
    command = [
        sys.executable,
        "-m",
        "torchdoctor",
        "diagnose",
        "--steps",
        "2",
        "--rank-dir",
        "ranks",
        "--json",
        "report.json",
        "train.py",
    ]
    result = subprocess.run(
        command, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines() == [
        f"torchdoctor diagnose: rank 1: observation written to {tmp_path / 'ranks'}; "
        "rank 0 prints the report"
    ]
    assert not (tmp_path / "report.json").exists()  # rank 0's file, not overwritten by rank 1
    assert list((tmp_path / "ranks").iterdir())


def test_os_exit_at_the_end_still_writes_the_report_and_exits_with_its_code(diagnose):
    # the DataLoader's forked worker also ends with os._exit: it must just exit, no second report
    d = diagnose(
        TRAIN_STEPS
        + dedent(
            """
        import os
        loader = DataLoader(TensorDataset(torch.zeros(5, 1)), batch_size=1, num_workers=1)
        for _ in loader:
            train_step()
        del loader
        print("done, hard exit", flush=True)
        os._exit(3)
        print("not reached")
        """
        ),
        "--steps", "0", "--warmup", "2",
    )  # fmt: skip
    assert d.returncode == 3, d.stderr
    assert "done, hard exit" in d.stdout and "not reached" not in d.stdout
    assert d.report is not None, "os._exit ended the run without a report"
    assert d.report["status"] == "completed" and d.report["exit_code"] == 3
    assert d.report["steps"] == 3
    assert d.stdout.count(d.report["verdict"]) == 1, d.stdout


def test_a_bug_in_a_probe_hook_is_not_blamed_on_the_program(diagnose_here, monkeypatch, capsys):
    # the state QA2 saw during a concurrent edit: the session calls a tracker method that is gone
    from torchdoctor.diagnose.steps import StepTracker

    monkeypatch.delattr(StepTracker, "parameters_updated")
    report = diagnose_here(
        """
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(10):
            model(torch.randn(8, 4)).sum().backward()
            opt.step()
        """
    )
    run = report.run
    assert run.status == "crashed" and run.exit_code == 1
    assert run.error.startswith("torchdoctor internal error at diagnose/session.py:"), run.error
    assert "AttributeError" in run.error
    err = capsys.readouterr().err
    assert "a torchdoctor bug, not your program's" in err
    assert "session.py" in err  # our frames are shown: they are where the bug is


def test_report_starts_on_a_new_line_after_a_progress_line(diagnose):
    # a progress line printed with end="" is open when the program is stopped
    d = diagnose(
        TRAIN_STEPS
        + dedent(
            """
        for step in range(50):
            train_step()
            print(f"\\r{step}/50", end="", flush=True)
        """
        ),
        "--steps", "3", "--warmup", "2",
    )  # fmt: skip
    assert d.returncode == 0, d.stderr
    assert "\ntorchdoctor diagnose " in d.stdout and "/50torchdoctor" not in d.stdout, d.stdout
