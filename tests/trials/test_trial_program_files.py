"""A trial leaves the program's files as it found them: `--try` runs the program again and again
in its own folder, and every trial appended to its log, overwrote its checkpoints and left new
files where the program's outputs go."""

from __future__ import annotations

from textwrap import dedent

from torchdoctor.program import Program
from torchdoctor.trials.runner import TrialPlan, run_one


def test_a_trial_puts_back_the_files_the_program_wrote_and_removes_what_it_made(tmp_path):
    folder = tmp_path / "project"
    (folder / "runs").mkdir(parents=True)
    (folder / "runs" / "log.txt").write_text("the diagnosed run's lines\n")
    (folder / "runs" / "last.pt").write_bytes(b"the diagnosed run's checkpoint")
    (folder / "stale.txt").write_text("removed by the program")
    (folder / "train.py").write_text(
        dedent(
            """
            import os, torch
            torch.set_num_threads(1)
            model = torch.nn.Linear(4, 1)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            os.remove("stale.txt")
            os.makedirs("runs/extra", exist_ok=True)
            with open("runs/log.txt", "a") as log, open("runs/extra/metrics.csv", "w") as csv:
                for step in range(6):
                    opt.zero_grad()
                    loss = model(torch.randn(8, 4)).pow(2).mean()
                    loss.backward()
                    opt.step()
                    log.write(f"{step} {loss.item()}\\n")
                    csv.write(f"{step}\\n")
                    torch.save(model.state_dict(), "runs/last.pt")  # C++ writes it: no event
                    torch.save(model.state_dict(), "runs/next.tmp")
                    os.replace("runs/next.tmp", "runs/best.pt")  # an atomic save
            """
        )
    )
    plan = TrialPlan(Program("train.py", cwd=str(folder)), {"baseline": []}, 3, 1, timeout_s=60)
    (tmp_path / "out").mkdir()
    outcome = run_one(plan, "baseline", str(tmp_path / "out"))
    assert outcome.returncode == 0, outcome.stderr_tail
    assert outcome.result is not None and outcome.result["files_not_restored"] == []
    assert len(outcome.result["steps"]) == 3  # it ran: the files were written, then put back
    assert (folder / "runs" / "log.txt").read_text() == "the diagnosed run's lines\n"
    assert (folder / "runs" / "last.pt").read_bytes() == b"the diagnosed run's checkpoint"
    assert (folder / "stale.txt").read_text() == "removed by the program"
    assert sorted(path.name for path in folder.rglob("*")) == [
        "last.pt", "log.txt", "runs", "stale.txt", "train.py"
    ]  # fmt: skip


def test_a_trial_puts_back_what_the_programs_child_processes_wrote(tmp_path):
    # the tracking lived in the trial's process only: a forked child (a DataLoader worker, a
    # multiprocessing logger) appended to the program's log and replaced its checkpoint for good,
    # and a file a `subprocess` made stayed for the next trial to find
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "log.txt").write_text("the diagnosed run's lines\n")
    (folder / "last.pt").write_bytes(b"the diagnosed run's checkpoint")
    (folder / "notes.txt").write_text("before")
    (folder / "train.py").write_text(
        dedent(
            """
            import multiprocessing, os, subprocess, sys, torch
            torch.set_num_threads(1)
            def record(step):
                with open("log.txt", "a") as log:
                    log.write(f"child {step}\\n")
                torch.save({"step": step}, "last.pt")
                os.makedirs("child_runs", exist_ok=True)
                open("child_runs/metrics.csv", "w").write("1\\n")
            subprocess.run([sys.executable, "-c", "open('made_by_subprocess.txt', 'w').write('x'); "
                            "open('notes.txt', 'a').write(' after')"], check=True)
            model = torch.nn.Linear(4, 1)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for step in range(6):
                opt.zero_grad(); model(torch.randn(8, 4)).pow(2).mean().backward(); opt.step()
                child = multiprocessing.get_context("fork").Process(target=record, args=(step,))
                child.start(); child.join()
            """
        )
    )
    plan = TrialPlan(Program("train.py", cwd=str(folder)), {"baseline": []}, 3, 1, timeout_s=60)
    (tmp_path / "out").mkdir()
    outcome = run_one(plan, "baseline", str(tmp_path / "out"))
    assert outcome.returncode == 0, outcome.stderr_tail
    assert outcome.result is not None
    assert (folder / "log.txt").read_text() == "the diagnosed run's lines\n"
    assert (folder / "last.pt").read_bytes() == b"the diagnosed run's checkpoint"
    # a process started afresh is not tracked: what it made is removed, what it changed is named
    assert outcome.result["files_not_restored"] == [str((folder / "notes.txt").resolve())]
    assert sorted(path.name for path in folder.rglob("*")) == [
        "last.pt", "log.txt", "notes.txt", "train.py"
    ]  # fmt: skip
