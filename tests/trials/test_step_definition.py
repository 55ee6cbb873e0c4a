"""A trial counts steps as the diagnosis does (one step tracker): a GAN's iteration with two
optimizer steps is one step in both, and the trial worker runs the script as diagnose does."""

import json
import os
import subprocess
import sys
import textwrap

from torchdoctor.diagnose.api import diagnose_script

GAN = textwrap.dedent(
    """
    import os, sys
    import torch
    from torch import nn

    torch.manual_seed(0)
    G, D = nn.Linear(4, 8), nn.Linear(8, 1)
    opt_g = torch.optim.SGD(G.parameters(), lr=0.01)
    opt_d = torch.optim.SGD(D.parameters(), lr=0.01)
    log = open(os.environ["ITERATIONS_LOG"], "a")
    for iteration in range(200):
        log.write(f"{iteration}\\n"); log.flush()
        real, z = torch.randn(16, 8), torch.randn(16, 4)
        fake = G(z)
        d_loss = D(real).mean() - D(fake.detach()).mean()
        opt_d.zero_grad(); d_loss.backward(); opt_d.step()
        g_loss = -D(fake).mean()
        opt_g.zero_grad(); g_loss.backward(); opt_g.step()
    """
)


def _iterations(log) -> int:
    return len(log.read_text().split())


def test_a_gan_iteration_is_one_step_in_the_diagnosis_and_in_its_trial(tmp_path, monkeypatch):
    script = tmp_path / "gan.py"
    script.write_text(GAN)
    log = tmp_path / "iterations.txt"
    monkeypatch.setenv("ITERATIONS_LOG", str(log))
    run = diagnose_script(str(script), steps=6, warmup=2).run
    diagnosed = _iterations(log)
    assert len(run.steps) == 6

    log.write_text("")
    out = tmp_path / "trial.json"
    command = [sys.executable, "-m", "torchdoctor.trials.worker", "--out", str(out)]
    env = {**os.environ, "ITERATIONS_LOG": str(log), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([*command, "--steps", "8", str(script)], env=env, timeout=120)
    assert done.returncode == 0
    result = json.loads(out.read_text())
    assert result["status"] == "stopped" and len(result["steps"]) == 8
    # 2 warm-up + 6 measured steps are the iterations the diagnosis ran for them (it may run one
    # more to settle the last step's generator forward); counting every optimizer step as a
    # step would have stopped the trial after 4 iterations. Until the first iteration ended the
    # cycle of optimizers is unknown and each of them closes a step, in both (warm-up).
    trial = _iterations(log)
    assert trial in (diagnosed, diagnosed - 1) and trial >= 7, (trial, diagnosed)
    # each step's loss sums both optimizers' losses (the semantics check sees the whole iteration)
    assert all(step["loss"] is not None for step in result["steps"])
    # and its phases, as the diagnosis books them: a fix's own phase is read on them alone
    # (trials.stats.phase_speedups)
    assert all(step["phases"].get("optimizer", 0.0) > 0 for step in result["steps"][2:])


def test_the_trial_worker_runs_the_script_with_its_own_directory_first_on_sys_path(tmp_path):
    (tmp_path / "helper.py").write_text("VALUE = 3\n")
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys, torch
            import helper
            assert sys.path.count(sys.path[0]) == 1 and helper.VALUE == 3
            model = torch.nn.Linear(2, 1)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            while True:
                try:  # a bare except must not keep the trial from stopping
                    loss = model(torch.randn(4, 2)).pow(2).mean()
                    opt.zero_grad(); loss.backward(); opt.step()
                except:  # noqa: E722
                    pass
            """
        )
    )
    out = tmp_path / "trial.json"
    command = [sys.executable, "-m", "torchdoctor.trials.worker", "--out", str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([*command, "--steps", "3", str(script)], env=env, timeout=120)
    assert done.returncode == 0
    result = json.loads(out.read_text())
    assert result["status"] == "stopped" and len(result["steps"]) == 3


def test_a_trials_session_runs_only_the_probes_its_steps_and_fixes_need():
    """The trial worker's steps carry the hooks of the probes that define them, call the fixes'
    hook points and time the phases, not those of a whole diagnosis (syncs, I/O, memory,
    habits...), which ran in every measured step of the baseline and the variant alike."""
    from torchdoctor.diagnose.probes import PROBE_TYPES
    from torchdoctor.diagnose.session import Session
    from torchdoctor.trials.worker import TRIAL_PROBES, trial_config

    assert TRIAL_PROBES <= {t.__name__ for t in PROBE_TYPES}  # a renamed probe is not lost
    kept = {type(p).__name__ for p in Session(trial_config()).probes}
    assert kept == TRIAL_PROBES
