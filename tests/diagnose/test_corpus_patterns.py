"""Patterns seen in the real-programs corpus (bench/real_programs), each reproduced on a small
script of our own: what torchdoctor got wrong on a public program, and must not again."""

from __future__ import annotations

import os
import re
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest

from torchdoctor.diagnose.api import diagnose_script
from torchdoctor.diagnose.observations import (
    LinesObservation,
    LineStat,
    RunObservation,
    StepObservation,
)
from torchdoctor.diagnose.program_signals import ProgramSignals, _raise_terminated
from torchdoctor.diagnose.report.lines import finding_lines
from torchdoctor.diagnose.rules._common import typical_batch_size
from torchdoctor.diagnose.rules._lines import (
    acts_in_the_loop,
    evaluation_is_validation,
    hot_lines,
    kind_of,
)
from torchdoctor.diagnose.rules.d203_tiny_op_loop import forwards_per_backward
from torchdoctor.diagnose.rules.d801_hot_user_line import _how_often
from torchdoctor.diagnose.session import UNKNOWN_EPOCH_MAX_STEPS
from torchdoctor.diagnose.step_analysis import analyze, evaluation_is_acting, step_profile


def _line_of(path, marker: str) -> int:
    lines = path.read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if marker in line)


def _sampled_line(report, script, marker: str) -> tuple[int, list]:
    """The marked line of the script and its line stats, which must hold over 5% of the step
    (the line profile saw it)."""
    line = _line_of(script, marker)
    stats = [s for s in report.run.lines.lines if s.location.endswith(f"train.py:{line}")]
    assert stats and max(s.share for s in stats) > 0.05, report.run.lines.lines[:5]
    return line, stats


def test_a_read_inside_an_installed_package_is_blamed_on_the_programs_call(diagnose_here, tmp_path):
    """torchmetrics and Lightning read tensors (`.item()`) inside their own code: D401 named
    lines of site-packages/torchmetrics, which the user cannot change. The program's line that
    called into the package is the one to name."""
    package = tmp_path / "site-packages" / "metricpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            def update(value):
                return _as_float(value)

            def _as_float(value):
                return value.item()
            """
        )
    )
    report = diagnose_here(
        f"""
        import sys
        sys.path.insert(0, {str(package.parent)!r})
        import metricpkg

        model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for step in range(10):
            loss = model(torch.randn(16, 32)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            metricpkg.update(loss.detach())  # the program's call into the package
        """,
        steps=4,
        warmup=2,
    )
    assert report.run.status == "stopped", report.run.error
    line = _line_of(tmp_path / "train.py", "the program's call into the package")
    sites = [site.location for site in report.run.sync_sites]
    assert len(sites) == 1 and sites[0].endswith(f"train.py:{line}"), sites


def test_a_critic_output_is_not_a_graph_kept_across_steps_beside_a_tiny_loss(diagnose_here):
    """cleanrl's SAC backpropagates three losses per step: the critics', the actor's and a
    5-node temperature loss, last. Its critic output `q_values` (15 autograd nodes, part of the
    critics' loss) was compared with that last loss and called a graph kept for 3 steps (D503)."""
    report = diagnose_here(
        """
        critic = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                               nn.Linear(32, 1))
        actor = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
        log_alpha = torch.zeros(1, requires_grad=True)
        q_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
        actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
        alpha_opt = torch.optim.Adam([log_alpha], lr=1e-3)
        for step in range(40):
            obs, act, target = torch.randn(64, 4), torch.randn(64, 2), torch.randn(64)
            q_values = critic(torch.cat([obs, act], 1)).view(-1)
            q_loss = nn.functional.mse_loss(q_values, target)
            q_opt.zero_grad()
            q_loss.backward()
            q_opt.step()
            if step % 2 == 0:
                for _ in range(2):  # two delayed actor updates, as TD3 and SAC do
                    pi = torch.tanh(actor(obs))
                    actor_loss = -critic(torch.cat([obs, pi], 1)).mean()
                    actor_opt.zero_grad()
                    actor_loss.backward()
                    actor_opt.step()
                    with torch.no_grad():
                        log_pi = -pi.pow(2).sum(1)
                    alpha_loss = (-log_alpha.exp() * (log_pi - 2.0)).mean()
                    alpha_opt.zero_grad()
                    alpha_loss.backward()
                    alpha_opt.step()
                    alpha = log_alpha.exp().item()
        """,
        steps=8,
        warmup=2,
    )
    assert report.run.status in ("stopped", "completed"), report.run.error
    kinds = [r.kind for r in report.run.memory.retained]
    assert "graph" not in kinds, report.run.memory.retained


def test_a_sum_of_losses_kept_across_steps_is_still_found(diagnose_here):
    """The counterpart: `total = total + loss` keeps every step's graph, whatever else the step
    backpropagates."""
    report = diagnose_here(
        """
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        total = 0
        for step in range(40):
            loss = model(torch.randn(32, 8)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total = total + loss
        """,
        steps=8,
        warmup=2,
    )
    kinds = [r.kind for r in report.run.memory.retained]
    assert "graph" in kinds, report.run.memory.retained


def test_validating_a_full_batch_model_every_step_is_once_per_epoch(diagnose_here):
    """pytorch/examples' GAT (like pygcn and pyGAT) trains on its one graph, a step per epoch,
    and validates after every step on the same inputs (another mask; pyGAT with autograd on,
    which was not recognised as the training inputs either): D304 [warning] said
    "evaluation runs so often ... evaluating 10x less often saves 34%". Once per epoch is what
    D304 itself advises."""
    report = diagnose_here(
        """
        n = 800
        x, y = torch.randn(n, 64), torch.randint(0, 4, (n,))
        adj = (torch.rand(n, n) < 0.02).float() + torch.eye(n)
        train_mask, val_mask = torch.arange(n) < 200, torch.arange(n) >= 600
        test_mask = (torch.arange(n) >= 200) & (torch.arange(n) < 600)

        class GraphNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.one, self.two = nn.Linear(64, 64), nn.Linear(64, 4)

            def forward(self, x, adj):
                hidden = torch.relu(adj @ self.one(x))
                return torch.log_softmax(adj @ self.two(nn.functional.dropout(hidden, 0.5,
                                                                             self.training)), 1)

        def test(model, mask, autograd):  # pyGAT validates with autograd on, pygcn without
            model.eval()
            with torch.set_grad_enabled(autograd):
                out = model(x, adj)
                return nn.functional.nll_loss(out[mask], y[mask]).item()

        model = GraphNet()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for epoch in range(30):
            model.train()
            opt.zero_grad()
            loss = nn.functional.nll_loss(model(x, adj)[train_mask], y[train_mask])
            loss.backward()
            opt.step()
            losses = [test(model, train_mask, False), test(model, val_mask, True),
                      test(model, test_mask, True)]
        """,
        steps=8,
        warmup=2,
    )
    evaluation = report.run.evaluation
    assert evaluation.forwards and evaluation.on_training_batches == evaluation.forwards
    assert "D304" not in {f.id for f in report.findings}, report.findings


CORPUS_SCRIPTS = Path(__file__).parent / "corpus_scripts"


@pytest.mark.timing
def test_rl_acting_on_one_observation_is_not_a_loop_of_tiny_training_ops():
    """pytorch/examples actor-critic and cleanrl-style loops act on one observation per forward
    under no_grad: D203 counted the acting ops (cut out of the step's time) as the step's, and
    blamed a tiny-op loop in training; D801 told the action's `.item()` to be read every 10th
    step. Acting is evaluation, and its host read is the environment's input."""
    import torch

    torch.set_num_threads(1)
    report = diagnose_script(str(CORPUS_SCRIPTS / "rl_acting_one_observation.py"), steps=6)
    assert report.run.status == "stopped", report.run.error
    compute = report.run.compute
    # 64 acting forwards per update against one training forward: most ops are acting's
    assert compute.evaluation_ops_per_step > compute.ops_per_step / 2, compute
    assert compute.evaluation_python_calls_per_step > compute.python_calls_per_step / 2
    assert acts_in_the_loop(report.run)
    codes = [f.id for f in report.findings]
    assert "D203" not in codes, [(f.id, f.evidence) for f in report.findings]
    kinds = [(f.details["phase"], f.details["kind"]) for f in report.findings if f.id == "D801"]
    assert ("evaluation", "host") not in kinds, kinds
    # acting is the RL loop's training, and is called so: in the verdict, the notes and the
    # lines; and no inference_mode advice, since its outputs go into the rollout it trains on
    assert evaluation_is_acting(report.run)
    assert report.reason.evaluation_is_acting and "acting-heavy" in report.verdict
    assert "evaluation-heavy" not in report.verdict
    assert any(note.startswith("1472 acting forward(s)") or " acting forward(s)" in note
               for note in report.run.notes), report.run.notes  # fmt: skip
    shown = [row.phase for f in report.findings for row in finding_lines(report.run, f)]
    assert "evaluation" not in shown, shown
    assert "D303" not in codes


def test_a_trained_policy_acting_inside_an_iterable_dataset_stays_a_forward(diagnose_here):
    """Lightning's PPO example rolls out its policy inside an IterableDataset's generator (the
    loader's fetch): the policy is the trained model, so its acting forwards stay forwards
    even there, unlike a dataset's own transform modules (the test above)."""
    report = diagnose_here(
        """
        policy = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
        opt = torch.optim.Adam(policy.parameters(), lr=1e-3)

        class Rollouts(torch.utils.data.IterableDataset):
            def __iter__(self):
                while True:
                    obs = []
                    for _ in range(16):
                        o = torch.randn(1, 4)
                        with torch.no_grad():
                            policy(o)  # acting, one observation
                        obs.append(o)
                    yield torch.cat(obs)

        loader = torch.utils.data.DataLoader(Rollouts(), batch_size=None)
        for step, batch in enumerate(loader):
            loss = policy(batch).logsumexp(1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step == 20:
                break
        """,
        steps=8,
        warmup=3,
    )
    assert report.run.status in ("stopped", "completed"), report.run.error
    assert report.run.evaluation.forwards >= 8 * 16, report.run.evaluation


# its D301 lines come from the line sampler's samples: none were taken in a merged-suite run
# beside a second test worker, so it runs with the timing tests. Six measured steps held 5-23
# samples in all (one per 3 ms), 0-4 of them on the acting lines: at idle on a fast CPU the
# steps are shorter and some runs had none (rerun in two CI runs of round 12; reproduced with a
# sparser sampler). Twenty-four steps hold four times as many.
SAC_STEPS = 24


@pytest.mark.timing
def test_sac_acting_beside_its_updates_no_grad_forwards_is_named_acting():
    """cleanrl's SAC acts with autograd on (one observation) and, in each policy update, runs the
    actor under no_grad on the replay batch the actor loss just used (the entropy coefficient's
    target): 7 of its 24 no-grad forwards on a training batch made its acting "evaluation", and
    D301 said "Evaluation runs with autograd on" with inference_mode advice for the policy's
    actions. A few such forwards are the update's; the acting keeps its name, D301 its phase."""
    import torch

    torch.set_num_threads(1)
    report = diagnose_script(str(CORPUS_SCRIPTS / "sac_acting_with_targets.py"), steps=SAC_STEPS)
    assert report.run.status == "stopped", report.run.error
    evaluation = report.run.evaluation
    assert 0 < (evaluation.on_training_batches or 0) < evaluation.forwards / 2, evaluation
    assert acts_in_the_loop(report.run) and evaluation_is_acting(report.run)
    d301 = next(f for f in report.findings if f.id == "D301")
    assert d301.title.startswith("Acting forwards run with autograd on"), d301.title
    assert "acting forward(s) ran with autograd" in d301.evidence[0], d301.evidence
    assert "torch.no_grad()" in d301.fix and "inference_mode" not in d301.fix
    shown = [row.phase for row in finding_lines(report.run, d301)]
    assert shown and "evaluation" not in shown, shown
    # minimalRL's DQN: the note said its acting forwards ran with "no gradient" beside D301's
    # "ran with autograd enabled"; what it means is that no backward reached their outputs
    note = next(n for n in report.run.notes if "acting forward(s)" in n)
    assert "their outputs never got a gradient" in note, note


def test_a_module_run_by_the_datasets_transform_is_data_work_not_an_evaluation():
    """sthalles/SimCLR blurs each view with two Conv2d modules under no_grad inside its dataset's
    transform; with the loader in the main process every blur was a root forward without
    gradient: "1024 acting forward(s)" cut out of the steps (data 0% of a loader-bound step) and
    D302 [error] "Model evaluated in train mode", the trained ResNet's BatchNorm layers named for
    the blur's call. A module called while the loader fetches is the data's work."""
    import torch

    torch.set_num_threads(1)
    report = diagnose_script(str(CORPUS_SCRIPTS / "module_in_dataset_transform.py"), steps=6)
    assert report.run.status == "stopped", report.run.error
    assert report.run.evaluation.forwards == 0, report.run.evaluation
    assert not {"D301", "D302", "D303"} & {f.id for f in report.findings}, report.findings
    assert not any("acting forward(s)" in note for note in report.run.notes), report.run.notes
    profile = step_profile(report.run)
    assert profile.phase_s["data"] > 0.1 * profile.step_s, profile


def test_a_held_out_set_evaluated_in_train_mode_without_a_loader_stays_evaluation(diagnose_here):
    """The acting label needs the forwards to run on fewer rows than the training ones (one
    observation per environment): a held-out tensor scored in train mode without a loader is
    an evaluation, and keeps its name and D303's advice."""
    report = diagnose_here(
        """
        model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        x_test, y_test = torch.randn(256, 32), torch.randn(256, 1)
        for step in range(40):
            x, y = torch.randn(64, 32), torch.randn(64, 1)
            loss = (model(x) - y).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():  # scored every step, in train mode, on the whole held-out set
                test_loss = (model(x_test) - y_test).pow(2).mean().item()
        """,
        steps=10,
        warmup=2,
    )
    assert report.run.status == "stopped", report.run.error
    assert report.run.evaluation.forwards >= 10
    assert acts_in_the_loop(report.run)  # in train mode, no loader, on new data: like acting
    assert not evaluation_is_acting(report.run)
    assert not report.reason.evaluation_is_acting
    assert not any(" acting forward(s)" in note for note in report.run.notes), report.run.notes
    assert "D303" in [f.id for f in report.findings], report.findings


def test_whole_cycle_mode_stops_an_evaluation_that_outlasts_its_budget(diagnose_here):
    """ng-video-lecture's gpt.py estimates its loss over 400 batches before its first step: on
    a CPU that is many minutes, and whole-cycle mode, which judges the cycle at step ends, ran
    past its budget with no report. It stops at the next evaluation forward after the budget."""
    report = diagnose_here(
        """
        model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)

        @torch.no_grad()
        def estimate_loss(batches):
            return sum(model(torch.randn(4, 8)).mean().item() for _ in range(batches))

        for step in range(100):
            if step % 50 == 0:
                estimate_loss(1_000_000)  # minutes of evaluation, over any small budget
            loss = model(torch.randn(4, 8)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=None,
        budget_s=1.0,
        whatif=False,
    )
    assert report.run.status == "stopped", report.run.error
    assert report.reason.no_steps.why == "budget_in_evaluation", report.verdict
    assert 0 < report.run.forwards_seen < 1_000_000
    assert "--budget" in report.verdict


@pytest.mark.timing
def test_a_rollout_of_per_step_forwards_with_autograd_is_named_as_such():
    """pytorch/examples reinforce.py and actor_critic.py call the policy with autograd on for
    every environment step: D203's loop of tiny ops is real there, but its advice (batch a
    per-sample loss) did not say that the loop is the rollout's forwards."""
    import torch

    torch.set_num_threads(1)
    report = diagnose_script(str(CORPUS_SCRIPTS / "reinforce_per_step_forwards.py"), steps=6)
    assert report.run.status == "stopped", report.run.error
    assert forwards_per_backward(report.run) == 32  # one call per environment step
    found = [f for f in report.findings if f.id == "D203"]
    assert found, [(f.id, f.evidence) for f in report.findings]
    assert "32 times with autograd on per backward()" in found[0].evidence[0]
    assert "torch.stack(observations)" in found[0].fix


@pytest.mark.timing
def test_an_environment_step_is_the_programs_work_not_a_hot_line(
    diagnose_here, tmp_path, monkeypatch
):
    """cleanrl's PPO and DQN spend a tenth of each step in `envs.step(action.cpu().numpy())`:
    D801 called that line a host copy to read every 10th step; the time is the environment's
    simulation (gymnasium's code), which the program needs at every step."""
    package = tmp_path / "site-packages" / "gym"  # the name of a real environment library
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            import math

            class Env:
                def step(self, action):
                    total = 0.0
                    for i in range(40000):  # the simulation: pure Python, a few ms a step
                        total += math.sin(i * 0.001 + action)
                    return [total % 1.0] * 4, 1.0
            """
        )
    )
    monkeypatch.syspath_prepend(str(package.parent))  # an installed package, as in a venv
    report = diagnose_here(
        f"""
        import sys
        sys.path.insert(0, {str(package.parent)!r})
        import gym

        env = gym.Env()
        q_net = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
        opt = torch.optim.SGD(q_net.parameters(), lr=0.01)
        obs = [0.0] * 4
        for step in range(40):
            with torch.no_grad():
                action = q_net(torch.tensor(obs)).argmax().item()
            obs, reward = env.step(action)  # the environment's own step
            loss = q_net(torch.randn(32, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=12,
        warmup=3,
    )
    assert report.run.status == "stopped", report.run.error
    line, stepping = _sampled_line(report, tmp_path / "train.py", "the environment's own step")
    assert {kind_of(s).name for s in stepping} == {"environment"}
    flagged = [f.details["locations"] for f in report.findings if f.id == "D801"]
    assert not [loc for locs in flagged for loc in locs if loc.endswith(f":{line}")], flagged


def test_evaluation_with_autograd_names_only_the_forwards_that_had_it(diagnose_here, tmp_path):
    """cleanrl's SAC acts with autograd on and computes its targets under no_grad: D301 ("runs
    with autograd on") named the target networks' no_grad lines, the first in sorted order."""
    report = diagnose_here(
        """
        import copy

        critic = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 1))
        target = copy.deepcopy(critic)
        actor = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 4))
        opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
        for step in range(30):
            with torch.no_grad():
                next_q = target(torch.randn(16, 4))  # target network, autograd off
            action = actor(torch.randn(1, 4)).detach()  # acting with autograd on
            loss = (critic(torch.randn(16, 4) + action) - next_q).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=8,
        warmup=3,
    )
    assert report.run.status == "stopped", report.run.error
    acting = _line_of(tmp_path / "train.py", "acting with autograd on")
    evaluation = report.run.evaluation
    # the target network's no_grad forward computes the loss's targets: the step's forward work
    assert evaluation.with_grad and not evaluation.under_no_grad, evaluation
    assert [loc.rsplit(":", 1)[1] for loc in evaluation.with_grad_locations] == [str(acting)]
    for finding in (f for f in report.findings if f.id == "D301"):
        at = next(line for line in finding.evidence if line.startswith("At "))
        assert at == f"At train.py:{acting}." or at.endswith(f"/train.py:{acting}."), at


def test_a_whole_conv_model_saved_after_training_pickles_under_diagnose(diagnose_here, tmp_path):
    """pytorch/examples super_resolution saves the whole model (`torch.save(model, path)`) after
    each epoch: under diagnose it crashed ("Can't pickle local object watch_conv_layouts...")
    because the layout watch removed only the last Conv2d's hook, never the others'."""
    report = diagnose_here(
        f"""
        model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Conv2d(4, 4, 3), nn.Conv2d(4, 1, 3))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for step in range(8):
            loss = model(torch.randn(2, 1, 12, 12)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        torch.save(model, {str(tmp_path / "model.pth")!r})
        """,
        steps=0,
        warmup=2,
    )
    assert report.run.status == "completed", report.run.error
    assert (tmp_path / "model.pth").stat().st_size > 0


def test_torch_tensor_under_a_device_context_is_still_placed_by_it(diagnose_here):
    """Hugging Face `from_pretrained` builds the model under `with torch.device("meta")` and tells
    so by `torch.tensor([]).device`. torch lists the constructors such a block redirects once,
    lazily; listed after our `torch.tensor` wrapper went in, the builtin was missing, the block
    stopped applying to it, and a config-built BERT loaded under diagnose crashed on
    uninitialised `position_ids`. The list is cleared here as a fresh process has it."""
    import torch.utils._device

    torch.utils._device._device_constructors.cache_clear()
    report = diagnose_here(
        """
        placed = []
        model = nn.Linear(8, 8)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for step in range(6):
            with torch.device("meta"):
                placed.append(torch.tensor([]).device.type)
            loss = model(torch.randn(4, 8)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        assert placed == ["meta"] * 6, placed
        """,
        steps=0,
        warmup=2,
    )
    assert report.run.status == "completed", report.run.error


def test_checkpointing_switched_on_inside_a_package_is_fixed_through_its_option(
    diagnose_here, tmp_path
):
    """TRL's SFT and reward scripts train a transformers model whose layers call
    torch.utils.checkpoint because TRL's config turns gradient_checkpointing on by default: D213
    told the user to write `x = block(x)` in a model they never wrote. The package whose code
    made the calls is named, and the fix is its option."""
    from torchdoctor.diagnose.rules import d213_checkpointing_with_memory_to_spare as d213

    package = tmp_path / "site-packages" / "ckptpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            import torch.utils.checkpoint

            def run_blocks(blocks, x):
                for block in blocks:
                    x = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
                return x
            """
        )
    )
    report = diagnose_here(
        f"""
        import sys
        sys.path.insert(0, {str(package.parent)!r})
        import ckptpkg

        blocks = nn.ModuleList(nn.Sequential(nn.Linear(256, 256), nn.Tanh()) for _ in range(4))
        opt = torch.optim.SGD(blocks.parameters(), lr=0.01)
        for step in range(10):
            loss = ckptpkg.run_blocks(blocks, torch.randn(64, 256)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=4,
        warmup=2,
    )
    run = report.run
    assert run.habits.checkpoint_caller_packages == ["ckptpkg"]
    # the rule's text, whatever share the recompute got on a busy machine
    run.habits.checkpoint_recompute_s_per_step = 0.3 * d213.step_profile(run).step_s
    (found,) = d213.check(run)
    assert "ckptpkg's activation-checkpointing option" in found.fix
    assert "come from inside ckptpkg" in " ".join(found.evidence)
    assert "gradient_checkpointing=False" in d213._fix(["transformers"])
    assert "checkpoint(block, x)" in d213._fix([])


def test_checkpoint_sequential_in_the_programs_own_code_names_no_package(diagnose_here):
    """torch's checkpoint_sequential calls checkpoint from torch's own file: the call is still
    the program's, and D213 keeps the code fix."""
    report = diagnose_here(
        """
        from torch.utils.checkpoint import checkpoint_sequential

        model = nn.Sequential(*(nn.Sequential(nn.Linear(64, 64), nn.Tanh()) for _ in range(4)))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for step in range(8):
            out = checkpoint_sequential(model, 2, torch.randn(16, 64), use_reentrant=False)
            loss = out.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=3,
        warmup=2,
    )
    assert report.run.habits.checkpoint_recompute_s_per_step is not None
    assert report.run.habits.checkpoint_caller_packages == []


def test_an_adaptive_solvers_discarded_trial_forwards_are_training_not_evaluation(diagnose_here):
    """torchdiffeq's dopri5 calls the learned dynamics several times per solver step, with
    autograd on and in train mode, and throws away the calls of a rejected step (and its
    step-size probe): their outputs never get a gradient. They were booked as evaluation with
    autograd on (D301 "77 of 619 evaluation forwards", evaluation 25% of the run) on a program
    whose only evaluation runs under no_grad. A discarded forward between two forwards of the
    same model that build one loss is training work; the no_grad evaluation stays evaluation."""
    report = diagnose_here(
        """
        field = nn.Sequential(nn.Linear(2, 50), nn.Tanh(), nn.Linear(50, 2))
        opt = torch.optim.RMSprop(field.parameters(), lr=1e-3)
        y0, target = torch.randn(16, 2), torch.randn(16, 2)

        def solve(y, steps=4, dt=0.25):
            for i in range(steps):
                k1 = field(y)
                trial = field(y + dt * k1)
                if i == 1:  # its error estimate is too large: the step is redone, half as long
                    dt = dt / 2  # k1 and trial are thrown away
                    k1 = field(y)
                    trial = field(y + dt * k1)
                y = y + dt * trial
            return y

        for step in range(30):
            opt.zero_grad()
            loss = (solve(y0) - target).pow(2).mean()
            loss.backward()
            opt.step()
            if step % 5 == 0:
                with torch.no_grad():
                    solve(y0)  # the program's evaluation
        """,
        steps=12,
        warmup=2,
    )
    assert report.run.status == "stopped", report.run.error
    evaluation = report.run.evaluation
    assert evaluation.forwards and evaluation.under_no_grad == evaluation.forwards, evaluation
    assert evaluation.with_grad == 0, evaluation.with_grad_locations
    assert "D301" not in {f.id for f in report.findings}


def test_whole_cycle_mode_stops_when_every_step_leaves_a_forward_without_gradient(diagnose_here):
    """torchdiffeq's latent-ODE example calls its RNN cell's `forward` itself, once per timestep:
    the cell's output layer runs at every timestep and only the last output is used, so every
    step ended with forwards still waiting for a gradient. Whole-cycle mode put its stop off
    until a step had none, never came to it, and ran the program past its --budget (killed at
    the corpus's 300 s bound), and booked the unused outputs as evaluation with autograd on (D301).
    A stop found while a step waits is taken at the next step end; a forward without gradient
    between two that have one, with no backward between, is part of training."""
    report = diagnose_here(
        """
        cell = nn.Linear(8, 16)
        readout = nn.Linear(16, 2)
        opt = torch.optim.Adam([*cell.parameters(), *readout.parameters()], lr=1e-3)
        sequence = torch.randn(6, 4, 8)
        for step in range(1000):
            opt.zero_grad()
            h = torch.zeros(4, 16)
            for x in sequence:
                h = torch.tanh(cell(x) + h)
                out = readout(h)  # every timestep's output; only the last one is used
            loss = out.pow(2).mean()
            loss.backward()
            opt.step()
        """,
        steps=None,
        warmup=2,
        budget_s=2.0,
    )
    # stopped by the budget's share or the step cap for loops without epochs, whichever first;
    # a cap reached while the step's forwards wait for a gradient stops at the next step end
    assert report.run.status == "stopped", report.run.error
    assert len(report.run.steps) <= UNKNOWN_EPOCH_MAX_STEPS + 1, len(report.run.steps)
    # the unused outputs were part of building the loss: training, not evaluation with autograd
    assert report.run.evaluation.with_grad == 0, report.run.evaluation.with_grad_locations


@pytest.mark.parametrize(
    ("samples", "how_often"), [(90, "1 of the 3 measured steps"), (4, "every step")]
)
def test_a_line_sampled_often_in_one_of_few_slow_steps_runs_in_that_one(samples, how_often):
    """milesial/Pytorch-UNet logs weight histograms every 5th step: at load its 3 measured steps
    took 9 s each, and D801 said the loop "takes 10% of every step" for a line sampled 90 times
    in one of the 3 (too few steps to spread a count). A line sampled that often would have been
    seen in each step it ran in; 4 samples in one of 3 steps cannot tell."""
    run = RunObservation(target="train.py")
    run.lines.steps = 3
    line = LineStat("train.py:140", "other", samples=samples, self_samples=samples, steps_seen=1)
    assert _how_often(line, run) == how_often


@pytest.mark.parametrize(
    ("callees", "kind"),
    [
        (["wandb.sdk.data_types.histogram.Histogram.__init__", "numpy.histogram"], "package"),
        (["torch._tensor.Tensor.norm"], "parameter_loop"),
    ],
)
def test_a_packages_call_for_each_parameter_is_the_packages_work(callees, kind):
    """milesial/Pytorch-UNet logs a wandb.Histogram of every weight and gradient: D801 called the
    loop "a Python loop over the parameters (one small op per tensor)" and offered foreach ops.
    The time is the package's, which the program can call less often; torch's own op per
    parameter is still the parameter loop."""
    line = LineStat(
        "train.py:140",
        "other",
        code="histograms['Gradients/' + tag] = wandb.Histogram(value.grad.data.cpu())",
        loop="for tag, value in model.named_parameters():",
        callees=callees,
    )
    assert kind_of(line).name == kind


@pytest.mark.timing  # D801 fires on a sampled share (here ~10x its bar): with the timing tests
def test_a_line_that_runs_once_in_several_steps_is_not_said_to_take_every_step(diagnose_here):
    """accelerate's profiler example prints the profiler's key-averages table after each epoch:
    D801 said "by_feature/profiler.py:185 takes 85% of every step" for a line that ran in one of
    the 19 measured steps. The time is real and stays in the saving; the title says how often."""
    report = diagnose_here(
        """
        model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        x, y = torch.randn(64, 32), torch.randint(0, 10, (64,))
        for step in range(40):
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 8 == 7:
                table = sorted(str(i * 7 % 1000) for i in range(400_000))  # an epoch-end report
        """,
        steps=24,
        warmup=2,
    )
    assert report.run.status == "stopped", report.run.error
    hot = [f for f in report.findings if f.id == "D801"]
    assert hot, [(f.id, f.title) for f in report.findings]
    assert "every step" not in hot[0].title and "of the 24 measured steps" in hot[0].title, hot[0]
    # not "9/10 of it when run every 10th step": it already runs in some steps only
    assert hot[0].saving_basis == "estimated", hot[0].saving_how


_LOOKAHEAD = """
class Lookahead(torch.optim.Optimizer):
    # a wrapper around an inner optimizer: its step() calls the inner one's
    def __init__(self, inner, k=5, alpha=0.5):
        self.inner, self.k, self.alpha, self.count = inner, k, alpha, 0
        super().__init__(inner.param_groups, dict(lr=inner.defaults["lr"]))
        self.slow = [p.detach().clone() for g in inner.param_groups for p in g["params"]]

    @torch.no_grad()
    def step(self, closure=None):
        loss = self.inner.step(closure)
        self.count += 1
        if self.count % self.k == 0:
            fast = [p for g in self.inner.param_groups for p in g["params"]]
            for slow, p in zip(self.slow, fast):
                slow.add_(p - slow, alpha=self.alpha)
                p.copy_(slow)
        return loss

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
opts = [Lookahead(torch.optim.SGD(model.parameters(), lr=0.01))]
models = [model]
"""

_SUBCLASS = """
class WarmupAdamW(torch.optim.AdamW):
    # a subclass whose step() sets the learning rate and calls super().step()
    def step(self, closure=None):
        for group in self.param_groups:
            group["lr"] = min(1e-3, group["lr"] + 1e-5)
        return super().step(closure)

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
critic = nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 1))
# the plain AdamW beside it: torch hooks AdamW.step too, so super().step() is a hooked step
opts = [WarmupAdamW(model.parameters(), lr=1e-5), torch.optim.AdamW(critic.parameters())]
models = [model, critic]
"""


@pytest.mark.parametrize(
    ("optimizers", "models"), [(_LOOKAHEAD, 1), (_SUBCLASS, 2)], ids=["lookahead", "subclass"]
)
def test_an_optimizer_step_called_inside_another_is_one_step(diagnose_here, optimizers, models):
    """A Lookahead-style wrapper calls its inner optimizer's step(); a Lion-style subclass calls
    super().step(). Each hooked step() was counted as a step of its own: every other "step" had
    no forward, and per-step figures were halved. One step per outermost call."""
    report = diagnose_here(
        optimizers
        + """
        for step in range(40):
            x = torch.randn(16, 32)
            for net, opt in zip(models, opts):
                loss = net(x).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
        """.replace("\n        ", "\n"),
        steps=6,
        warmup=3,
    )
    assert report.run.status == "stopped", report.run.error
    forwards = [step.training_forwards for step in report.run.steps]
    assert forwards and all(count == models for count in forwards), forwards
    counts = {o.class_name: o.steps for o in report.run.optimizers}
    assert len(set(counts.values())) == 1, counts  # the wrapper's and its inner optimizer's


def test_forwards_an_autograd_function_runs_without_autograd_are_training(diagnose_here):
    """torchdiffeq's adjoint method (`ode_demo.py --adjoint`) integrates inside an
    autograd.Function: its forward calls the ODE's module under no_grad, and its backward calls
    it again to take the parameters' gradients itself. The report read "forward 0%", every
    forward booked as evaluation. The backward reaching the module (autograd) makes them the
    step's training forwards. torchdiffeq calls the user's module through a wrapper module made
    anew in each forward, and the backward calls the user's module: the backward reaching a
    submodule of the forwards' root module is enough."""
    report = diagnose_here(
        """
        class Wrapped(nn.Module):  # made anew in each forward, around the user's module
            def __init__(self, base):
                super().__init__()
                self.base = base

            def forward(self, y):
                return self.base(y)

        class Integrate(torch.autograd.Function):
            @staticmethod
            def forward(ctx, y0, func, *params):
                ctx.func = func
                ctx.save_for_backward(y0)
                wrapped = Wrapped(func)
                with torch.no_grad():
                    y = y0
                    for _ in range(4):
                        y = y + 0.1 * wrapped(y)
                return y

            @staticmethod
            def backward(ctx, grad_y):
                (y0,) = ctx.saved_tensors
                params = tuple(ctx.func.parameters())
                with torch.enable_grad():
                    start = y0.detach().requires_grad_()
                    y = start
                    for _ in range(4):
                        y = y + 0.1 * ctx.func(y)
                    grads = torch.autograd.grad(y, (start, *params), grad_y)
                return (grads[0], None, *grads[1:])

        func = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 16))
        opt = torch.optim.RMSprop(func.parameters(), lr=1e-3)
        for step in range(30):
            pred = Integrate.apply(torch.randn(32, 16), func, *func.parameters())
            loss = (pred - torch.randn(32, 16)).abs().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=6,
        warmup=3,
    )
    assert report.run.status == "stopped", report.run.error
    assert report.run.evaluation.forwards == 0, report.run.evaluation
    assert [step.training_forwards for step in report.run.steps] == [4] * 6
    assert report.breakdown["forward"] > 0 and "D303" not in [f.id for f in report.findings]


def test_target_networks_forwards_before_each_update_are_the_steps_work(diagnose_here):
    """cleanrl's TD3 computes its TD target under no_grad with target copies of the actor and
    the critics, then updates the critics, and the actor every other iteration: a step can hold
    two critic updates. The target forwards before the second were booked as evaluation (D303
    "no_grad instead of inference_mode" for values the critics' loss saves for backward)."""
    report = diagnose_here(
        """
        import copy

        critic = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 1))
        actor = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
        critic_target, actor_target = copy.deepcopy(critic), copy.deepcopy(actor)
        q_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
        actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
        for step in range(40):
            obs, act, next_obs = torch.randn(64, 4), torch.randn(64, 2), torch.randn(64, 4)
            with torch.no_grad():
                next_q = critic_target(torch.cat([next_obs, actor_target(next_obs)], 1))
            q_loss = (critic(torch.cat([obs, act], 1)) - next_q).pow(2).mean()
            q_opt.zero_grad()
            q_loss.backward()
            q_opt.step()
            if step % 2 == 0:  # delayed policy update
                actor_loss = -critic(torch.cat([obs, actor(obs)], 1)).mean()
                actor_opt.zero_grad()
                actor_loss.backward()
                actor_opt.step()
        """,
        steps=6,
        warmup=3,
    )
    assert report.run.status == "stopped", report.run.error
    assert report.run.evaluation.forwards == 0, report.run.evaluation
    assert "D303" not in [f.id for f in report.findings]


_HOLDS_ITS_GRAPH = """
class Net(nn.Module):  # holds its graph: called with no arguments (PyG's Graph U-Net)
    def __init__(self):
        super().__init__()
        self.x = torch.randn(2000, 64)
        self.net = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 7))

    def forward(self):
        return self.net(self.x)

model = Net()
params = model.parameters()
predict = lambda: model()
"""

_LAYERS_ON_ONE_GRAPH = """
lin1, lin2 = nn.Linear(64, 256), nn.Linear(256, 7)  # root layers: PyG's link_pred encode()
model = nn.ModuleList([lin1, lin2])
x = torch.randn(2000, 64)
params = model.parameters()
predict = lambda: lin2(lin1(x).relu())
"""


@pytest.mark.parametrize(
    "net", [_HOLDS_ITS_GRAPH, _LAYERS_ON_ONE_GRAPH], ids=["holds_its_graph", "layers_on_one_graph"]
)
def test_validating_every_step_of_full_batch_training_is_once_per_epoch(diagnose_here, net):
    """PyG's graph_unet.py (`model()`: the model holds its graph) and link_pred.py (its encoder's
    layers called one by one on the graph's features) validate after every full-batch step: once
    per epoch. D304 warned "evaluation ran in 20 of 20 steps": its full-batch test needed every
    evaluation forward on the training forward's input. The first training forward of every step
    running on the same tensor (or none) is full-batch training."""
    report = diagnose_here(
        net
        + """
        opt = torch.optim.Adam(params, lr=1e-2)
        y, train_mask = torch.randint(0, 7, (2000,)), torch.rand(2000) < 0.1
        for epoch in range(60):
            model.train()
            opt.zero_grad()
            nn.functional.cross_entropy(predict()[train_mask], y[train_mask]).backward()
            opt.step()
            model.eval()
            with torch.no_grad():
                accuracies = [(predict().argmax(1) == y).float().mean() for _ in range(3)]
        """.replace("\n        ", "\n"),
        steps=8,
        warmup=3,
    )
    assert report.run.status == "stopped", report.run.error
    assert report.run.habits.training_input_repeated == 1.0
    assert "D304" not in [f.id for f in report.findings], report.findings


_GAN_SAMPLING = """
G = nn.Sequential(nn.Linear(8, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 2))
D = nn.Sequential(nn.Linear(2, 64), nn.LeakyReLU(0.2), nn.Dropout(0.3), nn.Linear(64, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4)
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)
bce = nn.BCEWithLogitsLoss()
fixed_noise, real_data = torch.randn(64, 8), torch.randn(2048, 2)
ones, zeros = torch.ones(64, 1), torch.zeros(64, 1)
for it in range(60):
    real = real_data[torch.randint(0, 2048, (64,))]
    fake = G(torch.randn(64, 8))
    opt_d.zero_grad()
    (bce(D(real), ones) + bce(D(fake.detach()), zeros)).backward()
    opt_d.step()
    opt_g.zero_grad()
    bce(D(fake), ones).backward()
    opt_g.step()
    if it % 3 == 0:
        with torch.no_grad():  # still in train mode, as DCGAN samples
            SAMPLE
"""


@pytest.mark.parametrize(
    ("sample", "is_evaluation"),
    [
        ("samples.append(G(fixed_noise).cpu())", False),
        ("realism = torch.sigmoid(D(G(fixed_noise))).mean()", True),
    ],
    ids=["samples_kept", "samples_scored_by_a_model"],
)
def test_a_gans_samples_in_train_mode_are_no_evaluation_error(diagnose_here, sample, is_evaluation):
    """Fabric's and pytorch/examples' DCGAN sample the generator on a fixed noise in train mode
    and save the images: D302 [error] "evaluated in train mode". The generator learns through
    the discriminator (its training outputs are another model's input), and its samples feed no
    model: they are kept, not judged. Scored by a model in train mode, they are an evaluation."""
    report = diagnose_here(
        "samples = []\n" + _GAN_SAMPLING.replace("SAMPLE", sample), steps=8, warmup=3
    )
    assert report.run.status == "stopped", report.run.error
    evaluation = report.run.evaluation
    assert evaluation.forwards > 0
    assert (evaluation.generator_samples == 0) == is_evaluation, evaluation
    assert ("D302" in {f.id for f in report.findings}) == is_evaluation, report.findings
    # the samples are no validation either: D301 does not warn for their memory
    assert not evaluation_is_validation(report.run)


_AAE_SAMPLING = """
encoder = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))
decoder = nn.Sequential(nn.Linear(4, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 16))
critic = nn.Sequential(nn.Linear(4, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
opt_ae = torch.optim.Adam([*encoder.parameters(), *decoder.parameters()], lr=2e-4)
opt_c = torch.optim.Adam(critic.parameters(), lr=2e-4)
bce = nn.BCEWithLogitsLoss()
data, ones, zeros = torch.randn(2048, 16), torch.ones(64, 1), torch.zeros(64, 1)
for it in range(60):
    x = data[torch.randint(0, 2048, (64,))]
    z = encoder(x)
    loss = 0.999 * (decoder(z) - x).pow(2).mean() + 0.001 * bce(critic(z), ones)
    opt_ae.zero_grad()
    loss.backward()
    opt_ae.step()
    opt_c.zero_grad()
    (bce(critic(torch.randn(64, 4)), ones) + bce(critic(z.detach()), zeros)).backward()
    opt_c.step()
    if it % 3 == 0:
        with torch.no_grad():  # still in train mode, as PyTorch-GAN's aae.py samples
            SAMPLE
"""


@pytest.mark.parametrize(
    ("sample", "is_evaluation"),
    [
        ("samples.append(decoder(torch.randn(100, 4)).cpu())", False),
        ("error = (decoder(encoder(data[:256])) - data[:256]).pow(2).mean()", True),
    ],
    ids=["decoder_sampled_from_the_prior", "reconstruction_scored"],
)
def test_an_autoencoders_decoder_sampled_from_noise_is_no_evaluation_error(
    diagnose_here, sample, is_evaluation
):
    """PyTorch-GAN's adversarial autoencoder saves `decoder(z)` for z from the prior, in train mode:
    D302 [error] "evaluated in train mode". The decoder trains on the encoder's outputs, and a
    forward of it fed no model's output samples it. Fed the encoder's output in train mode and
    scored, it is an evaluation of the autoencoder, and D302 stands."""
    report = diagnose_here(
        "samples = []\n" + _AAE_SAMPLING.replace("SAMPLE", sample), steps=8, warmup=3
    )
    assert report.run.status == "stopped", report.run.error
    evaluation = report.run.evaluation
    assert evaluation.forwards > 0 and evaluation.train_mode_sensitive
    assert (evaluation.generator_samples == 0) == is_evaluation, evaluation
    assert ("D302" in {f.id for f in report.findings}) == is_evaluation, report.findings


@pytest.mark.parametrize("refresh", [True, False], ids=["statistics_refreshed", "left_in_train"])
def test_batchnorm_statistics_refreshed_by_hand_are_no_evaluation_error(diagnose_here, refresh):
    """Programs that recompute BatchNorm statistics by hand (for averaged or pruned weights) set
    a cumulative average (`momentum=None`, as torch's update_bn does), reset the statistics and
    run the model in train mode under no_grad over the data: on purpose, not D302's evaluation
    left in train mode. The same forwards without that setting still are."""
    setup = "for m in bns: m.reset_running_stats(); m.momentum = None" if refresh else "pass"
    report = diagnose_here(
        f"""
        model = nn.Sequential(nn.Linear(16, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 1))
        bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm1d)]
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        data = torch.randn(2048, 16)
        for it in range(60):
            loss = model(data[torch.randint(0, 2048, (64,))]).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            if it % 3 == 2:
                {setup}
                with torch.no_grad():  # train mode: the statistics are what is computed
                    for chunk in data.split(256):
                        model(chunk)
                for m in bns:
                    m.momentum = 0.1
        """,
        steps=8,
        warmup=3,
    )
    assert report.run.status == "stopped", report.run.error
    evaluation = report.run.evaluation
    assert evaluation.forwards > 0 and evaluation.train_mode_sensitive
    assert (evaluation.in_train_mode == 0) == refresh, evaluation
    assert ("D302" in {f.id for f in report.findings}) != refresh, report.findings


@pytest.mark.timing
def test_a_packages_host_work_inside_a_loss_is_named_as_the_packages(
    diagnose_here, tmp_path, monkeypatch
):
    """PyG's GAE `model.recon_loss(z, edges)` samples negative edges on the host inside
    torch_geometric: D801 [warning] said the program's line "copies tensors to the host ... for
    Python or NumPy work" and told it to compute its metric with torch ops. The time is the
    installed package's code, which the program only called."""
    package = tmp_path / "site-packages" / "graphpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            import numpy as np
            import torch

            class InnerProductDecoder(torch.nn.Module):  # no parameters, as PyG's
                def forward(self, z, edges):
                    return (z[edges[0]] * z[edges[1]]).sum(1).sigmoid()

            decoder = InnerProductDecoder()

            def recon_loss(z, edges):
                rng = np.random.default_rng(0)
                negative = [rng.integers(0, len(z), 2) for _ in range(3000)]  # on the host
                negative = torch.as_tensor(np.stack(negative)).t()
                pos, neg = decoder(z, edges), decoder(z, negative)
                return -(pos + 1e-9).log().mean() - (1 - neg + 1e-9).log().mean()
            """
        )
    )
    monkeypatch.syspath_prepend(str(package.parent))
    report = diagnose_here(
        f"""
        import sys
        sys.path.insert(0, {str(package.parent)!r})
        import graphpkg

        encoder = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
        opt = torch.optim.Adam(encoder.parameters(), lr=0.01)
        x, edges = torch.randn(500, 16), torch.randint(0, 500, (2, 2000))
        for epoch in range(60):
            z = encoder(x)
            loss = graphpkg.recon_loss(z, edges)  # the package's loss
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=12,
        warmup=3,
    )
    assert report.run.status == "stopped", report.run.error
    line, calling = _sampled_line(report, tmp_path / "train.py", "the package's loss")
    assert {kind_of(s).name for s in calling} == {"package"}, [s.callees for s in calling]
    named = [f.details["kind"] for f in report.findings if f.id == "D801"
             and f.details["location"].endswith(f"train.py:{line}")]  # fmt: skip
    assert set(named) <= {"package"}, named


_REPLAY_BUFFER_DQN = """
import numpy as np

class ReplayBuffer:  # the program's own NumPy buffer, as cleanrl's copy of SB3's
    def __init__(self, size, dim):
        self.obs = np.zeros((size, dim), dtype=np.float32)
        self.next_obs = np.zeros((size, dim), dtype=np.float32)
        self.rewards = np.zeros(size, dtype=np.float32)
        self.size, self.pos = size, 0

    def add(self, obs, next_obs, reward):
        self.obs[self.pos], self.next_obs[self.pos], self.rewards[self.pos] = obs, next_obs, reward
        self.pos = (self.pos + 1) % self.size

    def sample(self, n):
        idx = np.random.randint(0, self.size, size=n)
        obs, next_obs = np.take(self.obs, idx, axis=0), np.take(self.next_obs, idx, axis=0)
        return torch.from_numpy(obs), torch.from_numpy(next_obs), torch.from_numpy(self.rewards[idx])

q_net = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))
target = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))
opt = torch.optim.Adam(q_net.parameters(), lr=1e-3)
rb = ReplayBuffer(200_000, 64)
obs = np.random.rand(64).astype(np.float32)
for step in range(80):
    with torch.no_grad():
        action = q_net(torch.from_numpy(obs)).argmax().item()  # acting
    next_obs = np.random.rand(64).astype(np.float32)
    rb.add(obs, next_obs, float(action))
    obs = next_obs
    batch_obs, batch_next, rewards = rb.sample(20_000)  # replay
    with torch.no_grad():
        td_target = rewards + 0.99 * target(batch_next).max(1).values
    loss = nn.functional.mse_loss(q_net(batch_obs).max(1).values, td_target)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


@pytest.mark.timing
def test_sampling_a_numpy_replay_buffer_is_not_acting(diagnose_here, tmp_path):
    """cleanrl's TD3 samples its own NumPy ReplayBuffer between acting and training: D801 said
    those lines "turn the policy's output into an action for the environment". The buffer's
    NumPy indexing is replay work on the host, not a read of the policy's output."""
    # 24 steps: the sampler caught the replay call 8-25 times in 12 steps at load 3-15, and in
    # a CI's timing stage none over 1% once (the kind of the lines is the question here, not
    # whether a short run caught them)
    report = diagnose_here(_REPLAY_BUFFER_DQN, steps=24, warmup=3)
    assert report.run.status == "stopped", report.run.error
    assert acts_in_the_loop(report.run)
    script = tmp_path / "train.py"
    first, last = _line_of(script, "def sample"), _line_of(script, "q_net = nn")
    replay = {_line_of(script, "# replay"), *range(first, last)}
    spots = []
    for hot in hot_lines(report.run, 0.01):
        file, _, number = hot.line.location.rpartition(":")
        if file.endswith("train.py") and int(number) in replay:
            spots.append(hot)
    assert spots, [(h.line.location, h.kind.name) for h in hot_lines(report.run, 0.01)]
    assert {h.kind.name for h in spots} <= {"numpy", "python"}, [
        (h.line.location, h.line.code, h.kind.name) for h in spots
    ]


def test_batches_copied_into_one_fixed_buffer_are_not_full_batch_training(diagnose_here):
    """D304's full-batch test (each step's first training forward on the very tensor of the
    step before) also took a program that copies each mini-batch into one preallocated input
    buffer: its validation after every step would have been called once per epoch. The same
    tensor with new data (its version counter moved) is a new batch."""
    report = diagnose_here(
        """
        model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 4))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        data, labels = torch.randn(4096, 64), torch.randint(0, 4, (4096,))
        x_buffer, y_buffer = torch.empty(128, 64), torch.empty(128, dtype=torch.long)
        val_x, val_y = torch.randn(2048, 64), torch.randint(0, 4, (2048,))
        for step in range(40):
            idx = torch.randint(0, 4096, (128,))
            x_buffer.copy_(data[idx])  # the batch, into the one input buffer
            y_buffer.copy_(labels[idx])
            loss = nn.functional.cross_entropy(model(x_buffer), y_buffer)
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():  # validation after every step
                val_loss = sum(nn.functional.cross_entropy(model(val_x[i:i + 256]),
                                                           val_y[i:i + 256]) for i in range(0, 2048, 256))
        """,
        steps=8,
        warmup=2,
    )
    assert report.run.status == "stopped", report.run.error
    assert report.run.habits.training_input_repeated == 0.0


@pytest.mark.timing  # the pause must land in "other", not "optimizer": 0.1 s against a
# tiny SGD step, which a preemption on a busy machine does not reach
@pytest.mark.parametrize("as_keyword", [False, True], ids=["positional", "keyword"])
def test_a_closures_own_code_is_the_steps_other_work_not_the_optimizers(diagnose_here, as_keyword):
    """Lightning hands its whole training step to `optimizer.step(closure=...)`: the closure's
    own code between the forward and the backward (hooks, logging) was booked as the optimizer
    phase: "optimizer 45%" on Lightning's autoencoder example, whose Adam step was 2 ms of 13.
    The closure's own code is the step's other work, and its time is not the optimizer step's."""
    call = "opt.step(closure=closure)" if as_keyword else "opt.step(closure)"
    report = diagnose_here(
        f"""
        model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for step in range(30):
            x, y = torch.randn(32, 16), torch.randn(32, 1)

            def closure():
                opt.zero_grad()
                loss = nn.functional.mse_loss(model(x), y)
                time.sleep(0.1)  # the framework's hooks and logging between them
                loss.backward()
                return loss

            {call}
        """,
        steps=4,
        warmup=2,
    )
    assert report.run.status == "stopped", report.run.error
    for step in report.run.steps:  # the 0.1 s pause is other work, in every step
        assert step.phases["other"] >= 0.1 > step.phases["optimizer"], step.phases
    (optimizer,) = report.run.optimizers
    assert optimizer.step_s is not None and optimizer.step_s < 0.1, optimizer


@pytest.mark.timing
def test_a_progress_bar_redrawn_every_step_is_named_as_such(diagnose_here, tmp_path, monkeypatch):
    """tiny-diffusion's `progress_bar.set_postfix(**logs)` took 10-20% of its small steps: D801
    read a line like it (`set_postfix(loss=loss.item())`) as a host copy for Python or NumPy work
    and told it to compute the metric with torch ops. The time is tqdm redrawing the bar, which
    set_postfix does at every call by default; refresh=False leaves it to update()'s throttle."""
    package = tmp_path / "site-packages" / "tqdm"  # the layout of the real package
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from .std import tqdm\n")
    (package / "std.py").write_text(
        textwrap.dedent(
            """
            import sys

            class tqdm:
                def __init__(self, total=None):
                    self.n, self.postfix = 0, ""

                def update(self, n=1):
                    self.n += n

                def set_postfix(self, refresh=True, **values):
                    self.postfix = ", ".join(f"{k}={v}" for k, v in values.items())
                    if refresh:
                        self.refresh()

                def refresh(self):
                    self.display()

                def display(self):
                    bar = ""
                    for i in range(600):  # the bar's meter, formatted in Python
                        bar = f"{self.n:>6} {'#' * (i % 40):<40} [{self.postfix}]"
                    sys.stderr.write("\\r" + bar[:20])
            """
        )
    )
    monkeypatch.syspath_prepend(str(package.parent))
    for name in [m for m in sys.modules if m == "tqdm" or m.startswith("tqdm.")]:
        monkeypatch.delitem(sys.modules, name)  # an installed tqdm, imported earlier
    report = diagnose_here(
        f"""
        import sys
        sys.path.insert(0, {str(package.parent)!r})
        from tqdm import tqdm

        model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        bar = tqdm(total=400)
        for step in range(400):
            loss = model(torch.randn(16, 8)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            bar.update(1)
            bar.set_postfix(loss=loss.item())  # the bar redrawn
        """,
        steps=200,
        warmup=3,
    )
    assert report.run.status == "stopped", report.run.error
    line, stats = _sampled_line(report, tmp_path / "train.py", "the bar redrawn")
    assert {kind_of(s).name for s in stats} == {"progress_bar"}
    found = [f for f in report.findings if f.id == "D801" and f.details["kind"] == "progress_bar"]
    assert found and "refresh=False" in found[0].fix, [(f.id, f.details) for f in report.findings]
    assert found[0].details["locations"][0].endswith(f"train.py:{line}")


@pytest.mark.timing
def test_a_batch_waited_for_from_a_prefetch_queue_is_named_as_a_data_wait(diagnose_here, tmp_path):
    """A program whose batches come from its own prefetch thread through a queue.Queue: D801
    [warning] said `item = q.get()` "runs the program's own code" and told it to run it less
    often or vectorise it. The step waits there for a producer slower than itself: on any
    machine, by its read (a sleep), not only by its compute (on a 16-core machine with more torch
    threads the producer's matmuls alone kept ahead of the step and nothing was waited for)."""
    report = diagnose_here(
        """
        import queue
        import threading

        def produce(q, n):
            for _ in range(n):
                time.sleep(0.01)  # the batch's read from disk
                x = torch.randn(64, 128)
                for _ in range(20):  # the batch's preparation
                    x = torch.tanh(x @ torch.eye(128))
                q.put((x, torch.randint(0, 10, (64,))))
            q.put(None)

        model = nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        q = queue.Queue(maxsize=4)
        threading.Thread(target=produce, args=(q, 200), daemon=True).start()
        while (item := q.get()) is not None:  # the batch waited for
            loss = nn.functional.cross_entropy(model(item[0]), item[1])
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=60,
        warmup=3,
        whatif=False,
    )
    assert report.run.status == "stopped", report.run.error
    _, stats = _sampled_line(report, tmp_path / "train.py", "the batch waited for")
    # the wait itself is data (the queue probe); the line's own Python around it stays "other"
    assert {kind_of(s).name for s in stats if s.phase == "data"} == {"queue_wait"}
    found = [f for f in report.findings if f.id == "D801" and f.details["kind"] == "queue_wait"]
    assert found and "DataLoader" in found[0].fix, [(f.id, f.details) for f in report.findings]


def test_a_forked_worker_ended_by_sigterm_dies_of_it_not_through_our_handler():
    """milesial/Pytorch-UNet scans its masks in a `with Pool() as p:` block: the pool's exit ends
    its forked workers with SIGTERM, and under diagnose each worker had inherited our SIGTERM
    handler and printed a `Terminated` traceback through program_signals.py. A forked child
    dies of SIGTERM as it would without us."""
    signals = ProgramSignals()
    try:
        assert signal.getsignal(signal.SIGTERM) is _raise_terminated  # ours in the program
        pid = os.fork()
        if pid == 0:  # the worker, ended by its parent
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
            finally:
                os._exit(3)  # reached only when the signal raised instead of killing
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM, status
    finally:
        signals.restore()


def test_host_reads_per_step_are_counted_as_a_reader_counts(diagnose_here):
    """cure-lab/LTSF-Linear reads its loss every step and prints every 100th: D401 said
    "1.00784 host-device sync(s) per step" and "item 0.00784314 per step"; the seq2seq tutorial's
    EOS check read "item 2.34228 per step". Means per step are shown to 2-3 digits."""
    report = diagnose_here(
        """
        model = nn.Linear(8, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for step in range(24):
            loss = model(torch.randn(32, 8)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            value = loss.item()  # every step
            if step % 3 == 0:
                print(loss.item())  # every third step
        """,
        steps=12,
        warmup=3,
    )
    d401 = next(f for f in report.findings if f.id == "D401")
    counts = [
        m.group(1)
        for line in d401.evidence
        for m in [re.search(r"([\d.]+) (?:host-device sync\(s\) per step:$|per step \()", line)]
        if m
    ]
    assert len(counts) == 3, d401.evidence  # the total and the two lines
    assert all(len(count.replace(".", "")) <= 3 for count in counts), d401.evidence


def test_a_models_method_called_directly_is_its_forward():
    """A tagger trained through `model.nll(tokens, tags)` (styles8/e26; CRFs, VAEs'
    `loss_function`, Lightning-style `training_step` run by hand, an agent's
    `get_action_and_value`): each submodule the method called was a root forward of its own
    (three "models", three training forwards a step) and the forward algorithm between and after
    them was booked "other". The method's later calls are root forwards of the model."""
    import torch

    torch.set_num_threads(1)
    report = diagnose_script(str(CORPUS_SCRIPTS / "model_method_called_directly.py"), steps=6)
    assert report.run.status == "stopped", report.run.error
    assert [m.class_name for m in report.run.models] == ["Tagger"], report.run.models
    assert report.run.precision.forwards == 6, report.run.precision  # one per measured step
    assert report.run.evaluation.forwards == 0, report.run.evaluation
    loop = _line_of(CORPUS_SCRIPTS / "model_method_called_directly.py", "alpha = torch.logsumexp")
    phases = {s.phase for s in report.run.lines.lines if s.location.endswith(f".py:{loop}")}
    assert phases <= {"forward", "backward"}, report.run.lines.lines[:6]


def test_a_method_that_runs_its_own_backward_stays_outside_the_forward(diagnose_here):
    """A model whose `train_step` method runs the whole step (forward, backward, the optimizer)
    and returns a float is no forward: wrapped as one, its output (no grad_fn) would make every
    step an evaluation. Its submodules stay the root forwards."""
    report = diagnose_here(
        """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))

            def train_step(self, x, optimizer):
                loss = self.body(x).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                return loss.item()

        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for step in range(20):
            model.train_step(torch.randn(32, 16), opt)
        """,
        steps=8,
        warmup=2,
    )
    assert report.run.status == "stopped", report.run.error
    assert report.run.evaluation.forwards == 0, report.run.evaluation
    assert report.run.precision.forwards == 8, report.run.precision
    assert not {"D301", "D302", "D303"} & {f.id for f in report.findings}, report.findings


@pytest.mark.timing
def test_a_prefetch_threads_queue_wait_is_data():
    """A program whose own thread makes the batches and hands them over through a queue.Queue:
    the training thread's blocking `get()` was booked "other" (data 0% of a step that mostly
    waits for data). It is the step's data time, and D801 still names the wait."""
    import torch

    torch.set_num_threads(1)
    script = CORPUS_SCRIPTS / "prefetch_thread_queue.py"
    report = diagnose_script(str(script), steps=8)
    assert report.run.status == "stopped", report.run.error
    assert report.run.queue_waits >= 8, report.run.queue_waits
    profile = step_profile(report.run)
    assert profile.phase_s["data"] > 0.5 * profile.step_s, profile
    assert profile.phase_s["other"] < 0.25 * profile.step_s, profile
    line = _line_of(script, "the wait for data")
    d801 = [f for f in report.findings if f.id == "D801"]
    assert d801 and d801[0].details["location"].endswith(f".py:{line}"), report.findings
    assert d801[0].details["kind"] == "queue_wait", d801[0].details
    assert not any("data wait is not separated" in note for note in report.run.notes)


def test_a_queue_read_by_another_thread_is_not_the_training_threads_data(diagnose_here):
    """Only the training thread's gets are its data wait: a logging thread of the program
    blocking on its own queue is that thread's business, not the steps'."""
    report = diagnose_here(
        """
        import queue, threading

        logs = queue.Queue()

        def write_logs():
            while logs.get() is not None:
                pass

        writer = threading.Thread(target=write_logs, daemon=True)
        writer.start()
        model = nn.Linear(16, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for step in range(20):
            loss = model(torch.randn(32, 16)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            logs.put(step)
        logs.put(None)
        writer.join()
        """,
        steps=8,
        warmup=2,
    )
    assert report.run.status == "stopped", report.run.error
    assert report.run.queue_waits == 0, report.run.queue_waits


def test_hundreds_of_host_reads_per_step_are_a_whole_number():
    """shangzhihao/toylora fine-tunes on an MNIST dataset read in the main process: its
    `int(target)` and `.numpy()` per sample made D401 say "1.06e+03 host-device sync(s) per
    step" (the 2-3 digit format of round 11 on a count in the thousands)."""
    from torchdoctor.diagnose.rules.d401_host_syncs import _how_often

    assert [_how_often(n) for n in (1058.3, 529.0, 100.0, 99.5, 2.342, 0.00784)] == [
        "1058",
        "529",
        "100",
        "99.5",
        "2.34",
        "0.0078",
    ]


def test_one_prediction_after_the_training_loop_is_no_acting(diagnose_here):
    """A script that predicts once after its loop (the PyTorch BiLSTM-CRF tutorial prints
    `model(precheck_sent)` after training; others check a scripted copy) on fewer rows than
    a training batch, with autograd on: D301 called it "Acting forwards run with autograd on" and
    the notes "1 acting forward(s) (the policy picking actions in the environment loop)". Acting
    runs between updates, inside the loop; this forward ran in no step: evaluation."""
    report = diagnose_here(
        """
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for step in range(12):
            loss = model(torch.randn(32, 8)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(model(torch.randn(2, 8)))  # one prediction after training, autograd on
        """,
        steps=20,
        warmup=2,
    )
    assert report.run.evaluation.forwards == 1, report.run.evaluation
    assert not evaluation_is_acting(report.run)
    assert not any("acting" in note for note in report.run.notes), report.run.notes
    d301 = [f for f in report.findings if f.id == "D301"]
    assert d301 and "Acting" not in d301[0].title, report.findings


def test_a_shape_probe_in_a_models_constructor_is_no_evaluation(diagnose_here):
    """ThuanNaN/Captcha-OCR sizes its Linear layer by running its conv stack (with Dropout) on
    a zero image under no_grad inside the model's `__init__`: that call was an evaluation forward
    in train mode, "D302 [error] Model evaluated in train mode (Dropout/BatchNorm active)", and a
    note about "1 acting forward(s)". A module called while a model is built is no forward."""
    report = diagnose_here(
        """
        class Reader(nn.Module):
            def __init__(self):
                super().__init__()
                self.cnn = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Dropout(0.2))
                with torch.no_grad():
                    features = self._features(torch.zeros(1, 1, 12, 12)).shape[1]
                self.head = nn.Linear(features, 3)

            def _features(self, x):
                return self.cnn(x).flatten(1)

            def forward(self, x):
                return self.head(self._features(x))

        model = Reader()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for step in range(16):
            loss = model(torch.randn(8, 1, 12, 12)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=8,
        warmup=2,
    )
    assert report.run.status == "stopped", report.run.error
    assert report.run.evaluation.forwards == 0, report.run.evaluation
    assert not {"D301", "D302", "D303"} & {f.id for f in report.findings}, report.findings
    assert [m.class_name for m in report.run.models] == ["Reader"], report.run.models


def test_a_model_called_beside_its_wrapper_is_counted_once(diagnose_here):
    """rosinality/glow-pytorch wraps Glow in nn.DataParallel and runs `model.module(x)` once
    (ActNorm's data-dependent initialisation) before training through the wrapper: the report
    listed two models, Glow and Glow, whose parameters the memory rules added up twice.
    Where CUDA is available, DataParallel moves the model to the first GPU: its inputs go there
    (as glow-pytorch's do), or the program itself fails on a machine with a GPU."""
    report = diagnose_here(
        """
        net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
        model = nn.DataParallel(net)
        device = next(net.parameters()).device
        with torch.no_grad():
            model.module(torch.randn(64, 16, device=device))  # initialise from a first batch
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for step in range(16):
            loss = model(torch.randn(32, 16, device=device)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=8,
        warmup=2,
    )
    assert report.run.status == "stopped", report.run.error
    assert [m.wrapper for m in report.run.models] == ["DataParallel"], report.run.models


def test_a_rollout_outside_the_measured_updates_is_still_acting(diagnose_here):
    """Lightning's fabric PPO collects a rollout (128 steps of 2 environments, no_grad, train
    mode) and then runs its updates: the measured steps can all fall inside the updates, with
    the rollouts before and after them. That is acting, not an evaluation (D303 told it to act
    under inference_mode, whose tensors the update cannot save for backward)."""
    report = diagnose_here(
        """
        policy = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
        opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
        for update in range(3):
            observations = []
            with torch.no_grad():
                obs = torch.randn(1, 4)
                for t in range(64):  # the rollout: one observation a step
                    action = policy(obs).argmax(1)
                    observations.append(obs)
                    obs = torch.randn(1, 4) + action
            batch = torch.cat(observations)
            for epoch in range(12):  # the updates, on the rollout's batch
                loss = policy(batch).logsumexp(1).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
        """,
        steps=8,
        warmup=2,
    )
    assert report.run.evaluation.forwards >= 64, report.run.evaluation
    assert evaluation_is_acting(report.run)
    assert "D303" not in {f.id for f in report.findings}, report.findings


def test_a_method_wrapped_as_a_forward_can_still_be_scripted(diagnose_here):
    """A model whose method is called directly in the loop (so it is wrapped as a root forward)
    and called again by its forward, scripted after training: TorchScript compiled our wrapper
    (its closure, not the method's names) and the program crashed under diagnose only."""
    report = diagnose_here(
        """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(8, 16)
                self.head = nn.Linear(16, 1)

            def features(self, x):
                return torch.relu(self.body(x)) * 2.0

            def forward(self, x):
                return self.head(self.features(x))

        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for step in range(12):
            loss = model.head(model.features(torch.randn(32, 8))).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        scripted = torch.jit.script(model)
        assert scripted(torch.randn(2, 8)).shape == (2, 1)
        """,
        steps=20,
        warmup=2,
    )
    assert report.run.status == "completed", report.run.error


def test_a_programs_error_inside_a_wrapped_method_is_the_programs(diagnose_here):
    """The program's own error raised inside a method wrapped as a root forward is shown as
    the program's crash, and the what-if replays call the method, not the model's missing
    `forward` ("NotImplementedError: Module [Net] is missing the required forward function":
    the training call kept for them when the method raised was the model's own)."""
    report = diagnose_here(
        """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(8, 16)
                self.head = nn.Linear(16, 1)

            def loss(self, x, y, step):
                h = torch.relu(self.body(x))
                if step == 9:
                    h = h[:, :3]  # the program's own shape error
                return (self.head(h) - y).pow(2).mean()

        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for step in range(20):
            loss = model.loss(torch.randn(32, 8), torch.randn(32, 1), step)
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=20,
        warmup=2,
    )
    assert report.run.status == "crashed", report.run.status
    assert "mat1 and mat2 shapes cannot be multiplied" in (report.run.error or "")
    assert not any("missing the required" in note for note in report.run.notes), report.run.notes


def test_a_models_functional_method_on_weights_passed_in_is_its_forward():
    """MAML (Jayhwan/maml-pytorch-sine): the model is only ever run as
    `model.adapted(x, fast_weights)`, F.linear on clones of its parameters moved by inner
    gradient steps, no submodule called. It was no forward at all (no model, forward 0%, D203's
    evidence "a model with 0 parameter tensors"); the method found calling torch functions
    outside every phase, on a model never trained through `model(x)`, is its forward."""
    import torch

    torch.set_num_threads(1)
    report = diagnose_script(str(CORPUS_SCRIPTS / "functional_forward_method.py"), steps=6)
    assert report.run.status == "stopped", report.run.error
    assert [(m.class_name, m.parameter_tensors) for m in report.run.models] == [("Regressor", 6)]
    assert report.run.precision.forwards == 6 * 16, report.run.precision  # 8 tasks, 2 calls each
    assert report.run.evaluation.forwards == 0, report.run.evaluation
    assert analyze(report.run).breakdown["forward"] > 0.05


def test_a_models_loss_method_beside_its_training_call_is_not_its_forward(diagnose_here):
    """`out = model(x)` then `model.loss(out, y)` (capsnet's margin loss, no submodule): the
    model's forward stays `model(x)`; the loss method is not made a second forward, whose call
    the what-if replays would take for the model's (they replay the latest training call)."""
    report = diagnose_here(
        """
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))

            def forward(self, x):
                return self.body(x)

            def loss(self, out, y):
                return torch.relu(0.9 - out.gather(1, y[:, None])).pow(2).mean() + out.pow(2).mean()

        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for step in range(40):
            x, y = torch.randn(32, 16), torch.randint(0, 4, (32,))
            loss = model.loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=6,
    )
    assert report.run.status == "stopped", report.run.error
    assert report.run.precision.forwards == 6, report.run.precision  # model(x) only


@pytest.mark.timing  # D203 fires only when the ops measure as trivial against the dispatch floor
def test_d203_counts_the_optimizers_tensors_when_the_forward_is_written_with_weights(
    diagnose_here,
):
    """No nn.Module at all: weights held as tensors, the forward written with F.linear on them,
    a per-sample Python loop. D203's evidence said "a model with 0 parameter tensors"; the model
    is the tensors the optimizer steps."""
    report = diagnose_here(
        """
        w1 = torch.randn(8, 16, requires_grad=True)
        b1 = torch.zeros(16, requires_grad=True)
        w2 = torch.randn(16, 1, requires_grad=True)
        opt = torch.optim.SGD([w1, b1, w2], lr=0.01)
        for step in range(60):
            x, y = torch.randn(64, 8), torch.randn(64, 1)
            loss = 0
            for i in range(64):  # one sample at a time
                h = torch.tanh(x[i : i + 1] @ w1 + b1)
                loss = loss + (h @ w2 - y[i]).pow(2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=4,
    )
    d203 = [f for f in report.findings if f.id == "D203"]
    assert d203, [f.id for f in report.findings]
    assert "a model with 3 parameter tensors" in d203[0].evidence[0], d203[0].evidence


def test_an_averaged_copys_update_method_is_not_made_its_forward(diagnose_here):
    """A model's own method that runs torch calls outside every phase but records no gradient (an
    exponential moving average's `update(model)` under no_grad, with Dropout in the average, BYOL
    and mean-teacher style) is no functional forward: made one, each update was an evaluation of
    a Dropout model in train mode (D302 [error])."""
    report = diagnose_here(
        """
        class Average(nn.Module):
            def __init__(self, model):
                super().__init__()
                self.copy = copy.deepcopy(model)

            def update(self, model, decay=0.99):
                with torch.no_grad():
                    for mine, theirs in zip(self.copy.parameters(), model.parameters()):
                        mine.mul_(decay).add_(theirs, alpha=1 - decay)

        import copy
        model = nn.Sequential(nn.Linear(16, 32), nn.Dropout(0.1), nn.Linear(32, 1))
        average = Average(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for step in range(40):
            loss = model(torch.randn(32, 16)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            average.update(model)
        """,
        steps=6,
    )
    assert report.run.status == "stopped", report.run.error
    assert report.run.evaluation.forwards == 0, report.run.evaluation
    assert "D302" not in [f.id for f in report.findings]


@pytest.mark.timing
def test_a_budget_that_runs_out_at_a_target_networks_forward_is_not_said_in_evaluation(
    diagnose_here,
):
    """BYOL (sthalles/PyTorch-BYOL): the target network's forwards under no_grad run inside every
    step; whole-cycle mode's budget ran out at one, and the note said "the --budget ran out in
    evaluation" of a program that never evaluates (no evaluation forward was counted)."""
    report = diagnose_here(
        """
        import time
        online = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
        target = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
        opt = torch.optim.SGD(online.parameters(), lr=0.01)
        for step in range(100):
            x = torch.randn(32, 8)
            prediction = online(x)
            time.sleep(0.7)  # a slow step: the budget runs out inside one
            with torch.no_grad():
                goal = target(x)
            loss = (prediction - goal).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=None,
        warmup=1,
        budget_s=1.0,
        whatif=False,
    )
    assert report.run.status == "stopped", report.run.error
    assert report.run.evaluation.forwards == 0, report.run.evaluation
    stops = [note for note in report.run.notes if "--budget" in note]
    assert stops and not any("in evaluation" in note for note in stops), report.run.notes


@pytest.mark.timing
def test_a_hot_line_of_the_acting_loop_is_said_to_run_in_acting(diagnose):
    """seungeunrho/minimalRL's ppo-lstm: D801 named its `prob[a].item()` line "in evaluation",
    where the report's line table, the verdict and D301 call those forwards acting. In its own
    process: in pytest's, the acting forwards were called evaluation in 2 of 4 runs at idle
    (D304, no D801; 9 of 9 right in a process of their own; not explained)."""
    script = (CORPUS_SCRIPTS / "acting_host_read.py").read_text()
    d = diagnose(script, "--steps", "40", prelude=False)
    assert d.report["run"]["status"] == "stopped", d.stderr[-2000:]
    d801 = [f for f in d.report["findings"] if f["id"] == "D801"]
    assert d801, [f["id"] for f in d.report["findings"]]
    assert "in acting:" in d801[0]["evidence"][0], d801[0]["evidence"]


@pytest.mark.timing
def test_the_frames_that_called_an_in_process_diagnosis_are_not_the_programs():
    """The acting-loop test above, diagnosed in pytest's process, called the acting forwards
    evaluation in 2 of 4 runs (D304, no D801; right 9 of 9 in a process of its own): the line
    sampler walked past the program's entry into this file (a user file), so every sampled line's
    chain ended in a function named `test_...`, which made the acting "called as validation"
    whenever enough of its samples were taken. The walk ends at diagnose_script's callers."""
    import torch

    torch.set_num_threads(1)
    report = diagnose_script(str(CORPUS_SCRIPTS / "acting_host_read.py"), steps=20)
    assert report.run.status == "stopped", report.run.error
    here = Path(__file__).name
    lines = report.run.lines.lines
    assert lines, report.run.lines
    ours = [s for s in lines if here in s.location or any(here in c for c in s.chain)]
    assert not ours, ours[:3]
    assert evaluation_is_acting(report.run)
    assert "D304" not in {f.id for f in report.findings}, report.findings


def test_an_updates_no_grad_targets_from_the_agents_own_methods_are_not_acting():
    """minimalRL's V-trace: `pi` was found from the acting loop, but `v` and the targets method
    were never (method spans started from a submodule's first root call, and their chain ends in
    `train_net`, which runs the step: nothing was wrapped); the update's no_grad `v(s_next)` ran as
    root forwards of the submodules, sharing no tensor with a training forward: counted as acting
    (D301's count; the acting span took in the batch's preparation). The methods below the one
    that runs the step are forwards now, the targets linked to training by their input."""
    import torch

    torch.set_num_threads(1)
    report = diagnose_script(str(CORPUS_SCRIPTS / "agent_methods_update.py"), steps=12)
    assert report.run.status == "stopped", report.run.error
    evaluation = report.run.evaluation
    # the warm-up step that finds `targets` still runs it unwrapped: its two submodule calls
    assert evaluation.under_no_grad <= 2, evaluation
    assert report.run.precision.forwards == 24, report.run.precision  # pi(s) and v(s) a step


def test_a_model_with_the_deprecated_weight_norm_is_copied_for_the_what_ifs():
    """locuslab/TCN (four rows): its convolutions use the deprecated `torch.nn.utils.weight_norm`,
    which keeps `weight` as a plain attribute computed by autograd before every forward; deep
    copying the trained model raised RuntimeError, and every what-if said "the model could not
    be copied". The copy gets that attribute detached and recomputes it from its own
    parameters."""
    import warnings

    import torch
    from torch.nn.utils import weight_norm

    from torchdoctor.diagnose.whatif.replay import make_replay

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # weight_norm's deprecation
        conv = weight_norm(torch.nn.Conv1d(3, 4, 3))
    model = torch.nn.Sequential(conv, torch.nn.ReLU())
    x = torch.randn(2, 3, 10)
    model(x).sum().backward()

    replay, why = make_replay({id(model): (model, (x,), {})})
    assert replay is not None, why
    replay.forward_backward()
    copied = replay.model[0]
    assert copied.weight_v is not conv.weight_v and conv.weight_v.grad is not None
    with torch.no_grad():
        copied.weight_g.mul_(2)
    # the copy's weight is its own parameters', recomputed at its call; the program's untouched
    assert torch.allclose(
        replay.model(x), torch.relu(conv._conv_forward(x, 2 * conv.weight, conv.bias))
    )
    assert torch.allclose(model(x), torch.relu(conv._conv_forward(x, conv.weight, conv.bias)))


def test_a_critic_replayed_on_the_policys_action_does_not_backward_into_the_programs_graph():
    """seungeunrho/minimalRL's SAC: its critic is trained on `q(s, a)` where `a` came from the
    policy with autograd on; the replay of the critic kept that input, whose graph the program's
    backward had freed, and the larger-batch and autocast what-ifs said "not measured:
    RuntimeError: Trying to backward through the graph a second time". The replay's backward
    goes to the copy's parameters only."""
    import torch

    from torchdoctor.diagnose.whatif.replay import make_replay, resized

    policy, critic = torch.nn.Linear(3, 1), torch.nn.Linear(4, 1)
    s = torch.randn(8, 3)
    a = torch.tanh(policy(s))
    x = torch.cat([s, a], dim=1)
    critic(x).mean().backward()  # frees the policy's part of the graph too

    replay, why = make_replay({id(critic): (critic, (x,), {})})
    assert replay is not None, why
    replay.forward_backward()
    resized(replay, 8, 16).forward_backward()


_EVALUATION_AT_ITERATION_0 = """
model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Dropout(0.1), nn.Linear(512, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
held_out = torch.randn(4096, 256)
for it in range(ITERATIONS):
    if it % 500 == 0:  # minGPT's evaluation, a GAN's sampler: at iteration 0, then rarely
        model.eval()
        for chunk in held_out.split(256):
            model(chunk).sum().item()  # autograd on
        model.train()
    loss = model(torch.randn(64, 256)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_an_evaluation_seen_only_before_the_measured_steps_of_a_stopped_run_states_no_share(
    diagnose_here,
):
    """PyTorch-GAN's samplers at batch 0 and minGPT's evaluation at iteration 0 ran in the
    warm-up of a run the budget stopped: D301 compared all that evaluation with the few measured
    steps' training time (CycleGAN: "18% ... 46 s per epoch" for one sampling per epoch). How
    often it runs is unknown there: no share and no saving are stated."""
    report = diagnose_here(
        _EVALUATION_AT_ITERATION_0.replace("ITERATIONS", "200"), steps=4, warmup=2, whatif=False
    )
    assert report.run.status == "stopped"
    assert not any(s.evaluation_s > 0 for s in report.run.steps)
    d301 = next(f for f in report.findings if f.id == "D301")
    assert d301.saving < 0.005, d301
    assert d301.details["evaluation_share"] == 0.0
    assert any("how often it runs is unknown" in line for line in d301.evidence), d301.evidence


def test_an_evaluation_seen_once_early_in_the_measured_steps_of_a_stopped_run_states_no_share(
    diagnose_here,
):
    """PyTorch-GAN's CycleGAN samples at batch 0, after the first iteration's three optimizer
    steps: its sampling fell in the first measured step, and four steps of a once-per-100-batches
    sampling read as "10% ... saves ~2%, 21.6 s per epoch". An evaluation seen once, early in the
    measured steps, has no known period either (once late in them, the window ended soon after
    it: whole-cycle mode's per-epoch evaluation, test_whatif.py)."""
    report = diagnose_here(
        _EVALUATION_AT_ITERATION_0.replace("ITERATIONS", "200").replace("it % 500 == 0", "it == 2"),
        steps=5,
        warmup=1,
        whatif=False,
    )
    seen = [i for i, s in enumerate(report.run.steps) if s.evaluation_s > 0]
    assert seen == [0], seen  # iteration 2's, in the first of the 5 measured steps
    d301 = next(f for f in report.findings if f.id == "D301")
    assert d301.saving < 0.005 and d301.details["evaluation_share"] == 0.0, d301
    assert any("in 1 of the 5 measured steps, early in them" in e for e in d301.evidence)


def test_an_evaluation_before_the_measured_steps_of_a_completed_run_counts_the_warmup_training(
    diagnose_here,
):
    """Of a run that completed, all the evaluation seen is compared with all the training seen,
    warm-up steps included, not with the measured steps' alone."""
    report = diagnose_here(
        _EVALUATION_AT_ITERATION_0.replace("ITERATIONS", "12"), steps=0, warmup=4, whatif=False
    )
    run = report.run
    assert run.status == "completed"
    measured_s = sum(s.wall_s for s in run.steps)
    assert run.training_s_seen > measured_s
    share = next(f for f in report.findings if f.id == "D301").details["evaluation_share"]
    seen = run.evaluation.seconds
    assert share == pytest.approx(seen / (seen + run.training_s_seen))
    assert share < seen / (seen + measured_s)


def test_an_acting_graph_of_constant_size_beside_a_tiny_last_loss_is_no_graph_kept(diagnose_here):
    """minimalRL's SAC: the policy's `train_net` backpropagates `loss.mean()` (a temporary) and
    then a 5-node temperature loss, the only loss alive at the check; its action `a` (the
    policy's forward through `rsample` and `tanh`, 17 nodes, made anew at every call) was called
    a variable keeping "the autograd graphs of about 3 steps" (D503). Its graph does not grow."""
    report = diagnose_here(
        """
        class Policy(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 64)
                self.mu, self.std = nn.Linear(64, 1), nn.Linear(64, 1)
                self.log_alpha = torch.tensor(0.0, requires_grad=True)
                self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)
                self.alpha_optimizer = torch.optim.Adam([self.log_alpha], lr=1e-3)

            def forward(self, x):
                h = torch.relu(self.fc(x))
                dist = torch.distributions.Normal(self.mu(h), nn.functional.softplus(self.std(h)))
                action = dist.rsample()
                real_action = torch.tanh(action)
                log_prob = dist.log_prob(action) - torch.log(1 - real_action.pow(2) + 1e-7)
                return real_action, log_prob

            def train_net(self, critic, s):
                a, log_prob = self.forward(s)
                entropy = -self.log_alpha.exp() * log_prob
                loss = -critic(torch.cat([s, a], 1)) - entropy
                self.optimizer.zero_grad()
                loss.mean().backward()
                self.optimizer.step()
                self.alpha_optimizer.zero_grad()
                alpha_loss = -(self.log_alpha.exp() * (log_prob - 1.0).detach()).mean()
                alpha_loss.backward()
                self.alpha_optimizer.step()

        pi = Policy()
        critic = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 1))
        for step in range(60):
            pi.train_net(critic, torch.randn(32, 3))
        """,
        steps=8,
        warmup=2,
        whatif=False,
    )
    assert report.run.status == "stopped", report.run.error
    assert "graph" not in [r.kind for r in report.run.memory.retained], report.run.memory.retained


def test_a_numpy_augmentation_of_the_loaders_batch_is_no_device_sync(diagnose_here):
    """PointNet (yanx27) turns the loader's batch into NumPy for its augmentation, before
    `.cuda()`: `points = points.data.numpy()`. D401 listed that line with "on a GPU each read is a
    sync that stalls the queue", false of a tensor that never was on the device. A read of the
    model's output stays listed."""
    report = diagnose_here(
        """
        import numpy as np
        data = TensorDataset(torch.randn(512, 64, 3), torch.randint(0, 10, (512,)))
        loader = DataLoader(data, batch_size=16, shuffle=True)
        model = nn.Sequential(nn.Flatten(), nn.Linear(192, 64), nn.ReLU(), nn.Linear(64, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for epoch in range(3):
            for points, target in loader:
                points = points.data.numpy()  # the loader's batch, on the host
                points = points * np.random.uniform(0.8, 1.25, (points.shape[0], 1, 1))
                points = torch.Tensor(points)
                pred = model(points)
                loss = nn.functional.cross_entropy(pred, target)
                opt.zero_grad()
                loss.backward()
                opt.step()
                correct = (pred.argmax(1) == target).numpy().sum()  # the model's output
        """,
        steps=6,
        warmup=2,
        whatif=False,
    )
    assert report.run.status == "stopped", report.run.error
    script = Path(report.run.target)
    batch_line = _line_of(script, "the loader's batch, on the host")
    output_line = _line_of(script, "the model's output")
    d401 = next(f for f in report.findings if f.id == "D401")
    text = " ".join(d401.evidence)
    assert f"train.py:{output_line}" in text and f"train.py:{batch_line}" not in text, text
    sites = {site.location.rsplit(":", 1)[1]: site for site in report.run.sync_sites}
    assert sites[str(batch_line)].loader_batch and not sites[str(output_line)].loader_batch


def test_modules_of_two_root_models_alike_are_named_with_their_models(diagnose_here):
    """MUNIT and UNIT call several root models of one layout (two encoders, two decoders, each
    holding a `model` Sequential): the memory lines read "model (Sequential) 59.1 MiB, model
    (Sequential) 59.1 MiB" and D505's fix named "model, model". Each name now starts with the
    program's name for its root model."""
    report = diagnose_here(
        """
        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.model = nn.Sequential(nn.Linear(64, 256), nn.Tanh(), nn.Sigmoid(), nn.Tanh(),
                                           nn.Sigmoid(), nn.Tanh(), nn.Sigmoid())

            def forward(self, x):
                return self.model(x)

        Enc1, Enc2 = Encoder(), Encoder()
        opt = torch.optim.SGD([*Enc1.parameters(), *Enc2.parameters()], lr=0.01)
        for step in range(8):
            x = torch.randn(2048, 64)
            loss = Enc1(x).pow(2).mean() + Enc2(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=4,
        warmup=2,
        whatif=False,
    )
    assert report.run.status == "stopped", report.run.error
    blocks = [m.name for m in report.run.memory.activations_by_module if m.depth == 1]
    assert sorted(blocks) == ["Enc1.model", "Enc2.model"], blocks
    d505 = next(f for f in report.findings if f.id == "D505")
    assert sorted(d505.details["modules"]) == ["Enc1.model", "Enc2.model"]
    assert "Enc1.get_submodule('model')" in d505.fix, d505.fix


def test_a_budget_stop_judged_a_step_later_does_not_contradict_the_steps_measured(diagnose_here):
    """StarGAN (its generator's forward in each critic step is judged one step later): the report
    said "measured 4 step(s)" and "the --budget of 60 s ran out after 3 steps", the count taken
    when the budget ran out, the stop made at the next step's end."""
    report = diagnose_here(
        """
        model = nn.Linear(64, 64)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for step in range(400):
            x = torch.randn(256, 64)
            side = model(x)  # autograd on, never backpropagated: judged one step later
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            time.sleep(0.05)
        """,
        steps=None,
        warmup=1,
        budget_s=0.3,
        whatif=False,
    )
    stop = next(n for n in report.run.notes if "--budget" in n)
    said = re.search(r"after (\d+) steps", stop)
    assert said is None or int(said.group(1)) == len(report.run.steps), stop
    assert f"measured {len(report.run.steps)} step(s)" in " ".join(report.run.notes)


def _hand_updated_run(manual_updates: bool) -> RunObservation:
    """A DP-SGD step (per-sample gradients by `vmap(grad)`, clipped, noised and applied by hand):
    its per-sample norm line is 30% of the step, in "other" (no optimizer phase to book it in)."""
    line = LineStat(
        "train.py:27",
        "other",
        samples=80,
        self_samples=80,
        share=0.3,
        self_share=0.3,
        function="<module>",
        code="norms = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads.values()))",
        steps_seen=8,
    )
    phases = {"data": 0.0005, "forward": 0.002, "backward": 0.004, "other": 0.01}
    steps = [StepObservation(index=i, wall_s=0.0165, phases=dict(phases)) for i in range(8)]
    return RunObservation(
        target="train.py",
        status="stopped",
        warmup_steps=3,
        steps=steps,
        manual_updates=manual_updates,
        lines=LinesObservation(samples=400, steps=8, seconds_per_sample=0.003, lines=[line]),
    )


def test_unrecognised_code_of_a_hand_written_update_claims_no_saving():
    """planted's clean DP-SGD control (styles12 n02: per-sample gradients by `vmap(grad)`, each
    clipped, noised and applied by hand) got D801 [warning] "takes 19% of every step ... saves ~19%
    of run time" on its per-sample norm: with no torch.optim optimizer the update is booked as
    "other", and unrecognised code there may be that update, work every step needs. Named, as
    information, with no saving; with an optimizer the same line keeps its estimate."""
    from torchdoctor.diagnose.rules import d801_hot_user_line as d801

    (by_hand,) = d801.check(_hand_updated_run(manual_updates=True))
    assert by_hand.saving == 0.0 and by_hand.severity == "info", by_hand
    assert any("updates its parameters by hand" in line for line in by_hand.evidence)
    (with_optimizer,) = d801.check(_hand_updated_run(manual_updates=False))
    assert with_optimizer.saving > 0.2 and with_optimizer.severity == "warning"


@pytest.mark.parametrize("target_grad", ["autograd_on", "no_grad"])
def test_a_frozen_networks_forward_on_the_loss_target_is_training(diagnose_here, target_grad):
    """pytorch/examples' fast neural style runs a frozen VGG on the transformed batch (its
    gradient flows through the VGG) and on the loader's batch normalised in place, for the content
    target (`features_x = vgg(x)`, a namedtuple). The second forward was booked as evaluation
    (D301 "Evaluation took 107 s, 18%", or D303's inference_mode, which the loss's backward
    refuses) and the line sampler gave `loss.backward()` to evaluation: the VGG, whose forward
    on the trained output got a gradient, was taken for a model that trains in the step. The
    style target computed once before the loop (`features_style = vgg(...)`, autograd on, no
    graph: nothing in it takes a gradient) stays an evaluation forward, but no D301's."""
    target = (
        "fx = features(x)"
        if target_grad == "autograd_on"
        else "with torch.no_grad():\n                fx = features(x)"
    )
    report = diagnose_here(
        f"""
        import collections

        class Features(nn.Module):  # frozen, two stages, a namedtuple out (a VGG's slices)
            def __init__(self):
                super().__init__()
                self.stage1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
                self.stage2 = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
                for p in self.parameters():
                    p.requires_grad = False

            def forward(self, x):
                h1 = self.stage1(x)
                return collections.namedtuple("Out", ["a", "b"])(h1, self.stage2(h1))

        def normalize(batch):
            batch = batch.div_(255.0)
            return (batch - 0.45) / 0.22

        transformer = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(3, 8, 3), nn.ReLU(),
                                    nn.Conv2d(8, 3, 3, padding=1))
        features = Features()
        opt = torch.optim.Adam(transformer.parameters(), 1e-3)
        loader = DataLoader(TensorDataset(torch.rand(96, 3, 16, 16) * 255), batch_size=4)
        style = features(normalize(torch.rand(4, 3, 16, 16) * 255)).a.mean()
        for (x,) in loader:
            opt.zero_grad()
            y = normalize(transformer(x))
            x = normalize(x)
            fy = features(y)
            {target}
            loss = (fy.b - fx.b).pow(2).mean() + 1e-3 * (fy.a.mean() - style).pow(2)
            loss.backward()
            opt.step()
        """,
        steps=6,
        warmup=2,
    )
    assert report.run.status in ("stopped", "completed"), report.run.error
    evaluation = report.run.evaluation
    assert evaluation.forwards == 1 and evaluation.with_grad == 0, evaluation
    assert not {"D301", "D303"} & {f.id for f in report.findings}


def test_memory_kept_by_the_program_beside_no_tensor_found_shows_in_the_heap(diagnose_here):
    """D503 on a CPU run without a kept tensor found asks the C heap's bytes in use, read at a few
    steps (resident memory alone follows the allocator's high-water mark: torchdiffeq's CNF got
    a false "Memory grows with every step"; the rule's decisions: test_memory_rules.py). Memory a
    program keeps in a list of its own, which the retention probe does not look at, shows there
    whatever the process's history (in a reused test process the resident memory may not grow:
    the kept tensors take memory the allocator already holds)."""
    report = diagnose_here(
        """
        model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        kept = []
        for step in range(40):
            loss = model(torch.randn(64, 32)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            kept.append(torch.full((1 << 20,), float(step)))  # 4 MiB a step, never freed
        """,
        steps=12,
        warmup=3,
    )
    readings = report.run.memory.heap_in_use
    assert len(readings) >= 2, readings
    (first, heap0), (last, heap1) = readings[0], readings[-1]
    assert heap1 - heap0 >= (last - first - 1) * 4 * 2**20, readings  # 4 MiB a step


def test_the_next_epochs_loader_start_after_a_validation_is_not_in_its_window():
    """pytorch-fm's main.py validates at each epoch's end; the next epoch's training loader then
    starts its 8 workers before the first training forward. The evaluation window (where the
    line sampler and the host-read probe book to evaluation) ran to that forward, and the
    sampler booked the training loop's `for ... in enumerate(tk0)` to evaluation (28% of its
    evaluation samples). The window ends at the training loader's wait."""
    from torchdoctor.diagnose.steps import ForwardRecord, StepTracker

    now = [0.0]
    tracker = StepTracker(lambda: now[0])

    def wait(seconds):
        started = now[0]
        now[0] += seconds
        tracker.data_wait(started, now[0], False)

    def forward(seconds, got_grad):
        record = ForwardRecord(now[0], got_grad, False, got_grad, "t.py:1", 4)
        tracker.forward_started(record)
        now[0] += seconds
        record.t1, record.got_grad = now[0], got_grad

    for _ in range(2):  # the validation loader's batches, forwards under no_grad
        wait(1.0)
        forward(1.0, got_grad=False)
    training_loader_start = now[0]
    wait(3.0)  # the next epoch's training loader starting its workers
    forward(1.0, got_grad=True)
    tracker.backward_finished(None)
    record = tracker.end_step()
    assert record.eval_windows == [(0.0, training_loader_start)], record.eval_windows
    assert record.eval_seconds == 4.0 and record.phases.get("other") == 4.0, record


def test_a_frozen_encoders_latents_of_a_batchs_frames_are_the_steps_work(diagnose_here):
    """World Models' MDN-RNN trainer encodes the observations and the next observations of a
    batch of sequences with its loaded VAE under no_grad, the frames flattened (16 x 32 rows),
    then trains an LSTM on the latents (32-step sequences first). The two VAE forwards, at a
    multiple of the training batch and two for the LSTM's one, were booked as evaluation (D303
    'no_grad instead of inference_mode', 116 s of 'evaluation' at load 30)."""
    report = diagnose_here(
        """
        B, T = 4, 8
        encoder = nn.Sequential(nn.Conv2d(3, 8, 4, 2), nn.ReLU(), nn.Flatten(),
                                nn.Linear(8 * 7 * 7, 16))  # a trained VAE's, loaded

        class MemoryModel(nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn, self.head = nn.LSTM(16 + 3, 32), nn.Linear(32, 16)

            def forward(self, action, z):
                return self.head(self.rnn(torch.cat([action, z], -1))[0])

        model = MemoryModel()
        opt = torch.optim.Adam(model.parameters(), 1e-3)
        data = TensorDataset(torch.rand(48, T, 3, 16, 16), torch.rand(48, T, 3),
                             torch.rand(48, T, 3, 16, 16))
        loader = DataLoader(data, batch_size=B, drop_last=True)

        def to_latent(obs, next_obs):
            with torch.no_grad():
                return [encoder(x.view(-1, 3, 16, 16)).view(B, T, 16) for x in (obs, next_obs)]

        for epoch in range(2):
            for obs, action, next_obs in loader:
                z, z_next = to_latent(obs, next_obs)
                action, z, z_next = [a.transpose(1, 0) for a in (action, z, z_next)]
                loss = (model(action, z) - z_next).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
        """,
        steps=6,
        warmup=2,
    )
    assert report.run.status in ("stopped", "completed"), report.run.error
    assert report.run.evaluation.forwards == 0, report.run.evaluation
    assert "D303" not in {f.id for f in report.findings}


def test_the_batch_printed_is_the_loaders_not_a_mean_a_short_last_batch_pulls_down(
    diagnose_here,
):
    """pytorch-fm trains on 186 batches of 256 and one of 128 an epoch (drop_last=False): D202
    printed "Batch size: 255" and proposed batch_size=1020, the steps' mean. The batch a rule
    prints or scales is the typical one: here 16 (3 of 16 and one of 4 an epoch); a loader
    built with a batch_sampler of varying sizes hands over its typical batch too, 8, not the
    mean 6.5 of 8, 8, 8, 2."""
    report = diagnose_here(
        """
        from torch.utils.data import DataLoader, TensorDataset

        class Buckets(torch.utils.data.Sampler):
            def __iter__(self):
                yield from ([0, 1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15],
                            [16, 17, 18, 19, 20, 21, 22, 23], [24, 25])

            def __len__(self):
                return 4

        data = TensorDataset(torch.randn(52, 8), torch.randn(52, 1))
        train = DataLoader(data, batch_size=16, shuffle=True)  # 3 x 16 and one of 4 an epoch
        buckets = DataLoader(data, batch_sampler=Buckets())
        model = nn.Linear(8, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for epoch in range(4):
            for x, y in train:
                loss = (model(x) - y).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
        with torch.no_grad():
            for x, y in buckets:
                model(x)
        """,
    )
    sizes = [s.batch_size for s in report.run.steps if s.batch_size]
    assert 4 in sizes and typical_batch_size(report.run) == 16, sizes
    assert report.samples_per_s == pytest.approx(16 / report.step_time_s)
    fetched = {ld.batch_size: ld.samples_per_batch for ld in report.run.loaders}
    assert fetched == {16: 16, None: 8}, fetched
