"""Programs written by others (issue 11): our patches stay invisible to TorchScript, torch.jit.trace,
torch.fx and dynamo; training forwards are decided by autograd whatever the output's container; a
program that profiles itself or runs its own dispatch modes is not crashed; a user's error inside
a call we wrap is the user's, our own bugs stay ours."""

from __future__ import annotations

import pytest
import torch

from torchdoctor.intercept.patching import Patcher


def test_torchscript_fx_jit_trace_and_compile_see_torch_not_our_wrappers(diagnose):
    d = diagnose(
        """
        import torch.fx
        from torch.distributed.optim import DistributedOptimizer  # scripts torch.tensor calls

        @torch.jit.script
        def doubled(x: torch.Tensor) -> torch.Tensor:
            return x * torch.tensor(2.0)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b = nn.Linear(4, 8), nn.Linear(8, 2)

            def forward(self, x):
                return self.b(torch.relu(self.a(x)))

        def rescale(x):  # wrapped calls inside a compiled function, fullgraph: no graph break
            return x * torch.tensor([0.5]) + x.to(torch.float32)

        model = Net()
        traced = torch.fx.symbolic_trace(model)
        jit_traced = torch.jit.trace(model, torch.randn(2, 4))  # checks its trace: must match
        compiled = torch.compile(rescale, backend="eager", fullgraph=True)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(8):
            x = torch.randn(8, 4)
            loss = compiled(doubled(traced(x))).pow(2).mean() + jit_traced(x).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("program finished")
        """,
        "--steps",
        "3",
    )
    assert d.returncode == 0, d.stderr[-3000:]
    assert d.run["status"] == "stopped", d.run.get("error")
    assert any("torch.compile" in note for note in d.run["notes"]), d.run["notes"]


def test_torchscript_builtin_table_is_given_back_on_restore():
    from torch.jit import _builtins

    patcher = Patcher()
    patcher.replace(torch, "tensor", lambda original: lambda *a, **k: original(*a, **k))
    wrapper = torch.tensor
    assert _builtins._find_builtin(wrapper) == "aten::tensor"

    @torch.jit.script
    def made(x: torch.Tensor) -> torch.Tensor:
        return x + torch.tensor(1.0)

    patcher.restore()
    assert _builtins._find_builtin(torch.tensor) == "aten::tensor"
    assert _builtins._find_builtin(wrapper) is None
    assert made(torch.zeros(1)).item() == 1.0


HF_STYLE = """
from dataclasses import dataclass
from types import SimpleNamespace

@dataclass
class Output:
    loss: torch.Tensor
    logits: torch.Tensor

class Classifier(nn.Module):
    def __init__(self, container):
        super().__init__()
        self.drop, self.head, self.container = nn.Dropout(0.1), nn.Linear(16, 4), container

    def forward(self, x, labels):
        logits = self.head(self.drop(x))
        loss = nn.functional.cross_entropy(logits, labels)
        if self.container == "namespace":
            return SimpleNamespace(loss=loss, logits=logits)
        if self.container == "dataclass":
            return Output(loss=loss, logits=logits)
        return {"logits": logits, "loss": loss}  # ModelOutput is a dict subclass

model = Classifier(sys.argv[1])
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(10):
    out = model(torch.randn(32, 16), torch.randint(0, 4, (32,)))
    opt.zero_grad()
    out.loss.backward() if sys.argv[1] != "dict" else out["loss"].backward()
    opt.step()
"""

PPO_AGENT = """
from torch.distributions import Categorical

class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 4))
        self.critic = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, obs, action=None):
        dist = Categorical(logits=self.actor(obs))
        if action is None:
            action = dist.sample()  # never gets a gradient: the first output says nothing
        return action, dist.log_prob(action), dist.entropy(), self.critic(obs)

agent = Agent()
opt = torch.optim.Adam(agent.parameters(), lr=1e-3)
for _ in range(6):
    obs = torch.randn(64, 8)
    with torch.no_grad():
        actions, old_logp, _, _ = agent(obs)
    advantages = torch.randn(64)
    for _ in range(2):
        _, logp, entropy, value = agent(obs, actions)
        ratio = (logp - old_logp).exp()
        loss = -(ratio * advantages).mean() - 0.01 * entropy.mean() + value.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


@pytest.mark.parametrize("trains", ["model", "traced"])
def test_tracing_the_model_once_is_not_an_evaluation(diagnose_here, trains):
    """torch.jit.trace checks its trace by running the model again under no_grad: that forward
    is torch's, not an evaluation of the program's (it gave a false D303)."""
    report = diagnose_here(
        """
        model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
        traced = torch.jit.trace(model, torch.randn(16, 32))  # for export, or the one trained
        trained = traced if sys.argv[1] == "traced" else model
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        for _ in range(10):
            loss = nn.functional.cross_entropy(trained(torch.randn(16, 32)),
                                               torch.randint(0, 10, (16,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        args=(trains,),
        steps=4,
        warmup=2,
    )
    run = report.run
    assert run.status == "stopped", run.error
    assert run.evaluation.forwards == 0, run.evaluation
    assert all(step.phases["forward"] > 0 for step in run.steps)
    assert not {"D301", "D302", "D303", "D304"} & {f.id for f in report.findings}


@pytest.mark.parametrize("container", ["namespace", "dataclass", "dict"])
def test_loss_returned_in_an_object_is_a_training_forward(diagnose_here, container, monkeypatch):
    monkeypatch.setattr("sys.argv", ["train.py", container])
    report = diagnose_here(HF_STYLE, steps=4, warmup=2)
    run = report.run
    assert run.evaluation.forwards == 0, run.evaluation
    assert all(step.phases["forward"] > 0 for step in run.steps)
    assert not {"D301", "D302"} & {f.id for f in report.findings}


def test_ppo_agent_whose_first_output_has_no_gradient_is_trained(diagnose_here):
    report = diagnose_here(PPO_AGENT, steps=4, warmup=2)
    run = report.run
    assert run.precision.forwards >= 4  # the training forwards of the measured steps
    assert all(step.phases["forward"] > 0 for step in run.steps)
    assert "D301" not in {f.id for f in report.findings}


def test_program_that_profiles_itself_with_stacks_is_not_crashed(diagnose):
    d = diagnose(
        """
        from torch.profiler import ProfilerActivity, profile
        from torch.utils._python_dispatch import TorchDispatchMode

        class CountOps(TorchDispatchMode):  # the program's own dispatch mode, around ours
            ops = 0

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                CountOps.ops += 1
                return func(*args, **(kwargs or {}))

        model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_stack=True,
                     profile_memory=True) as prof, torch.autograd.detect_anomaly(), CountOps():
            for _ in range(8):
                loss = model(torch.randn(8, 16)).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
        assert CountOps.ops > 0  # (prof.key_averages() with stacks takes seconds: not read)
        print("program finished")
        """,
        "--profile",
        "--steps",
        "0",
    )
    assert d.returncode == 0, d.stderr[-3000:]
    assert "program finished" in d.stdout
    assert d.run["status"] == "completed"
    assert any("its own torch.profiler" in note for note in d.run["notes"]), d.run["notes"]


USER_ERRORS = {
    "item": "out.item()",
    "numpy": "out.numpy()",
    "to": 'out.to("nonsense")',
    "tensor": 'torch.tensor(__import__("numpy").array(["a", "b"]))',
}


@pytest.mark.parametrize("mistake", sorted(USER_ERRORS))
def test_user_error_inside_a_wrapped_call_is_the_programs(diagnose_here, mistake, capsys):
    report = diagnose_here(
        f"""
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(5):
            out = model(torch.randn(8, 4))
            opt.zero_grad()
            out.pow(2).mean().backward()
            opt.step()
        {USER_ERRORS[mistake]}
        """,
        steps=0,
    )
    run = report.run
    assert run.status == "crashed" and run.exit_code == 1
    assert "internal error" not in run.error, run.error
    err = capsys.readouterr().err
    assert "torchdoctor bug" not in err
    assert 'train.py", line 15' in err  # the program's own frame, where the mistake is
    assert "torchdoctor" not in err.split("Traceback", 1)[-1]  # none of our frames


def test_a_bug_in_a_wrapper_of_ours_stays_ours(diagnose_here, monkeypatch, capsys):
    monkeypatch.setattr("torchdoctor.diagnose.probes.syncs.user_location", None)
    report = diagnose_here(
        """
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(5):
            loss = model(torch.randn(8, 4)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(loss.item())
        """,
        steps=0,
    )
    assert report.run.error.startswith("torchdoctor internal error at diagnose/probes/syncs.py")
    assert "a torchdoctor bug, not your program's" in capsys.readouterr().err


def test_reads_inside_the_programs_own_torch_modes_are_blamed_on_their_caller(diagnose_here):
    """A TorchFunctionMode / TorchDispatchMode of the program's relays every call: AdamW's own
    reads of its step counts were blamed on the mode's `return func(...)` line (D401 on the
    program), while the program's own `.item()` made inside the mode must still be found."""
    report = diagnose_here(
        """
        from torch.overrides import TorchFunctionMode
        from torch.utils._python_dispatch import TorchDispatchMode

        class CountCalls(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))

        class CountOps(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))

        model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        losses = []
        for step in range(10):
            with CountCalls(), CountOps():
                loss = model(torch.randn(16, 32)).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
        """,
        steps=4,
        warmup=2,
    )
    assert report.run.status == "stopped", report.run.error
    sites = {site.location.rsplit(":", 1)[-1]: site.per_step for site in report.run.sync_sites}
    assert sites == {"28": 1.0}, report.run.sync_sites  # losses.append(loss.item()), only


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
def test_anomaly_mode_set_by_the_program_is_blamed_not_its_extra_ops(diagnose_here):
    """Anomaly mode's cost is D211's, not a Python loop of tiny ops (D203 said "saves 85%").
    Its checks add ops the counter sees: a bare `TorchDispatchMode` counts 79 ops for this step
    and 109 with anomaly mode (an `isnan`, `_is_any_true` and `.item()` per gradient); a round-3
    branch counted ~2400, its own probes' ops included."""
    report = diagnose_here(
        """
        torch.autograd.set_detect_anomaly(True)
        model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        for step in range(10):
            loss = nn.functional.cross_entropy(model(torch.randn(64, 32)),
                                               torch.randint(0, 10, (64,)))
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
        steps=4,
        warmup=2,
    )
    ids = {f.id for f in report.findings}
    # whether anomaly mode's checks are counted as ops or not, they are D211's cost
    assert "D211" in ids and "D203" not in ids, (ids, report.run.compute.ops_per_step)
    counted = {op.op for op in report.run.compute.top_ops}
    assert "aten.isnan" in counted, counted  # the op counter saw anomaly mode's checks
    assert 90 <= report.run.compute.ops_per_step <= 130, report.run.compute.top_ops


def test_full_batch_evaluation_on_the_training_inputs_is_evaluation(diagnose_here):
    """Full-batch GNN training (pygcn, pyGAT, PyG's examples): each epoch trains on `data.x`,
    then switches the same model to eval mode and runs it on the same `data.x` under no_grad.
    That forward shared its input with a training forward and was booked as training (PyG's
    gcn.py: forward 89% of the step, no evaluation at all)."""
    run = diagnose_here(
        """
        x, y = torch.randn(300, 64), torch.randint(0, 4, (300,))
        adj = (torch.rand(300, 300) < 0.02).float().to_sparse()

        class GCN(nn.Module):
            def __init__(self):
                super().__init__()
                self.l1, self.l2 = nn.Linear(64, 16), nn.Linear(16, 4)

            def forward(self, x, adj):
                x = torch.sparse.mm(adj, self.l1(nn.functional.dropout(x, 0.5, self.training)))
                return torch.sparse.mm(adj, self.l2(x.relu()))

        model = GCN()
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        for epoch in range(10):
            model.train()
            opt.zero_grad()
            nn.functional.cross_entropy(model(x, adj)[:100], y[:100]).backward()
            opt.step()
            model.eval()
            with torch.no_grad():
                accuracy = (model(x, adj).argmax(1) == y).float().mean()
        """,
        steps=4,
        warmup=2,
    ).run
    assert run.evaluation.forwards >= 4 and run.evaluation.in_train_mode == 0, run.evaluation
    assert run.evaluation.locations[0].endswith("train.py:29")
    assert run.precision.forwards == 4  # one training forward per measured step


def test_validation_once_per_epoch_of_a_small_data_set_is_not_too_frequent(diagnose_here):
    """PyG's mutag_gin: 188 graphs, 2 training batches per epoch, then the train and test sets
    evaluated once per epoch: D304 said "evaluation runs so often" (a warning) about the very
    once-per-epoch validation its own fix recommends."""
    report = diagnose_here(
        """
        train = DataLoader(TensorDataset(torch.randn(170, 64), torch.randint(0, 2, (170,))),
                           batch_size=128, shuffle=True)
        test = DataLoader(TensorDataset(torch.randn(512, 64), torch.randint(0, 2, (512,))),
                          batch_size=128)
        model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Dropout(0.1), nn.Linear(256, 2))
        opt = torch.optim.Adam(model.parameters(), lr=0.01)

        @torch.no_grad()
        def accuracy(loader):
            model.eval()
            hits = sum(int((model(x).argmax(1) == y).sum()) for x, y in loader)
            model.train()
            return hits / len(loader.dataset)

        for epoch in range(6):
            for x, y in train:
                opt.zero_grad()
                nn.functional.cross_entropy(model(x), y).backward()
                opt.step()
            accuracy(train), accuracy(test)
        """,
        steps=6,
        warmup=2,
    )
    assert report.run.evaluation.forwards >= 10, report.run.evaluation
    assert "D304" not in {f.id for f in report.findings}


DQN_STYLE = """
import copy
q_net = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 4))
target_net = copy.deepcopy(q_net)
opt = torch.optim.Adam(q_net.parameters(), lr=1e-3)
obs_buffer, next_buffer = torch.randn(512, 8), torch.randn(512, 8)
for step in range(12):
    with torch.no_grad():
        action = q_net(torch.randn(1, 8)).argmax(1)  # acting on a fresh observation
    idx = torch.randint(0, 512, (64,))
    obs, next_obs = obs_buffer[idx], next_buffer[idx]
    with torch.no_grad():
        target = target_net(next_obs).max(1).values  # the TD target
    q = q_net(obs)[torch.arange(64), torch.randint(0, 4, (64,))]
    loss = nn.functional.mse_loss(q, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if sys.argv[1] == "metric":
        with torch.no_grad():
            q_net(obs).argmax(1)  # a second forward of the batch it trained on
"""


@pytest.mark.parametrize("pattern", ["dqn", "metric"])
def test_forwards_on_the_batch_just_trained_on_are_told_from_acting_and_targets(
    diagnose_here, pattern
):
    """cleanrl's DQN got D801 [warning] "calls the model again in every step ... reuse the
    training forward" for its target network's and acting forwards: neither saw the batch the
    trained model had just seen, unlike a second forward for a metric."""
    run = diagnose_here(DQN_STYLE, args=(pattern,), steps=4, warmup=2).run
    evaluation = run.evaluation
    # acting (and the metric) only: the target network's forward is the step's work (its loss)
    assert evaluation.forwards >= 4, evaluation
    if pattern == "metric":  # one per step at least (the stop may fall after one more)
        assert evaluation.on_training_batches >= 4, evaluation
    else:
        assert evaluation.on_training_batches == 0, evaluation
