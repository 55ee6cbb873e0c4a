"""How fast is `torchdoctor lint` compared with byte-compiling the same files?

Generates a corpus of realistic training scripts (dataset, model, train/eval loops, AMP,
checkpointing; names and numbers vary per file) in a temporary folder, then measures in one run:

  * `torchdoctor lint` in-process, one process (`--jobs 1`) and a process pool (`--jobs N`);
  * `python -m py_compile` over the same files (a subprocess; its interpreter start-up is
    included, about 20 ms, which is noise next to thousands of files).

Both wall-clock and CPU seconds are printed: on a shared, oversubscribed machine the wall
clock mostly measures the neighbours, while CPU time (this process plus its children) measures
the work done.

Usage: .venv/bin/python bench/lint_speed.py [--files 2000] [--jobs 2]
"""

from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEADER = '''"""Training script {n}."""
import argparse
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
'''

DATASET = """

class {name}Dataset(Dataset):
    def __init__(self, root, size={size}):
        self.items = np.random.normal(size=[size, {features}])
        self.labels = np.random.randint(0, {classes}, size=size)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        x = torch.tensor(self.items[index], dtype=torch.float32)
        return x, int(self.labels[index])
"""

MODEL = """

class {name}Net(nn.Module):
    def __init__(self, hidden={hidden}):
        super().__init__()
        self.conv = nn.Conv2d(3, hidden, 3, padding=1)
        self.bn = nn.BatchNorm2d(hidden)
        self.head = nn.Linear(hidden, {classes})
        self.dropout = nn.Dropout({dropout})

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        x = x.mean(dim=(2, 3))
        return self.head(self.dropout(x))
"""

TRAIN = """

def train_one_epoch(model, loader, optimizer, scaler, accumulation_steps={accum}):
    model.train()
    losses = []
    for step, (images, labels) in enumerate(loader):
        images = images.to(device)
        labels = labels.to(device)
        with torch.cuda.amp.autocast():
            logits = model(images)
            loss = F.cross_entropy(logits, labels)
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), {clip})
        if (step + 1) % accumulation_steps == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=False)
        losses.append(loss.item())
    return float(np.mean(losses))
"""

EVALUATE = """

def evaluate(model, val_loader):
    correct, total = 0, 0
    with torch.no_grad():
        for images, labels in val_loader:
            images, labels = images.to(device), labels.to(device)
            predictions = torch.log(F.softmax(model(images), dim=1)).argmax(dim=1)
            correct += (predictions == labels).sum().item()
            total += labels.numel()
    return correct / max(total, 1)
"""

MAIN = """

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default={epochs})
    parser.add_argument("--lr", type=float, default={lr})
    args = parser.parse_args()
    dataset = {name}Dataset("./data")
    train_loader = DataLoader(dataset, batch_size={batch}, shuffle=True)
    val_loader = DataLoader(dataset, batch_size={batch}, num_workers=2, pin_memory=True)
    model = {name}Net().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(args.epochs):
        train_loss = train_one_epoch(model, train_loader, optimizer, scaler)
        accuracy = evaluate(model, val_loader)
        print(f"epoch {{epoch}} loss {{train_loss:.4f}} accuracy {{accuracy:.3f}}")
    torch.save(model.state_dict(), "{name}.pt")
    state = torch.load("{name}.pt")
    model.load_state_dict(state)


if __name__ == "__main__":
    main()
"""

NAMES = ["Shapes", "Cifar", "Texture", "Digits", "Scenes", "Audio", "Spectra", "Cells", "Roads"]


def make_corpus(folder: Path, count: int, seed: int = 0) -> list[Path]:
    rng = random.Random(seed)
    paths = []
    for n in range(count):
        values = {
            "n": n,
            "name": rng.choice(NAMES) + str(n),
            "size": rng.randint(100, 5000),
            "features": rng.choice([16, 32, 64]),
            "classes": rng.randint(2, 100),
            "hidden": rng.choice([32, 64, 128]),
            "dropout": rng.choice([0.1, 0.2, 0.5]),
            "accum": rng.randint(1, 8),
            "clip": rng.choice([0.5, 1.0, 5.0]),
            "epochs": rng.randint(1, 50),
            "lr": rng.choice([1e-3, 3e-4, 1e-4]),
            "batch": rng.choice([32, 64, 128]),
        }
        parts = [HEADER, DATASET, MODEL, TRAIN, EVALUATE, MAIN]
        body = "".join(p.format(**values) for p in parts)
        path = folder / f"pkg{n // 100}" / f"train_{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
        paths.append(path)
    return paths


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (pool workers, subprocesses)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(action) -> tuple[float, float, object]:
    """(wall seconds, CPU seconds, result) of `action()`."""
    wall, cpu = time.perf_counter(), _cpu_seconds()
    result = action()
    return time.perf_counter() - wall, _cpu_seconds() - cpu, result


def lint_folder(folder: Path, jobs: int) -> int:
    from torchdoctor.lint.runner import LintOptions, run_lint

    return len(run_lint([str(folder)], LintOptions(jobs=jobs)).violations)


def py_compile_all(paths: list[Path]) -> None:
    subprocess.run([sys.executable, "-m", "py_compile", *map(str, paths)], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "corpus"
        paths = make_corpus(folder, args.files)
        lines = sum(p.read_text().count("\n") for p in paths)
        (folder / "pyproject.toml").write_text("[project]\nname = 'corpus'\n")
        rows = [("python -m py_compile", *measure(lambda: py_compile_all(paths)))]
        rows.append(("torchdoctor lint -j 1", *measure(lambda: lint_folder(folder, 1))))
        rows.append(
            (f"torchdoctor lint -j {args.jobs}", *measure(lambda: lint_folder(folder, args.jobs)))
        )
    n = args.files
    findings = rows[1][3]
    assert findings == rows[2][3], "serial and parallel runs disagree"
    base_wall, base_cpu = rows[0][1], rows[0][2]
    print(f"corpus: {n} files, {lines} lines, {findings} findings")
    print(
        f"{'':24}{'wall s':>9}{'files/s':>10}{'x compile':>11}{'CPU s':>9}{'ms/file':>9}{'x compile':>11}"
    )
    for name, wall, cpu, _ in rows:
        print(
            f"{name:24}{wall:9.2f}{n / wall:10.1f}{wall / base_wall:11.1f}{cpu:9.2f}"
            f"{1000 * cpu / n:9.1f}{cpu / base_cpu:11.1f}"
        )


if __name__ == "__main__":
    main()
