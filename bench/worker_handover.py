"""What the training process pays to receive a batch from a DataLoader worker (rule D101's
HANDOVER_BATCH_S and HANDOVER_BYTE_S).

    OMP_NUM_THREADS=1 .venv/bin/python bench/worker_handover.py [--rounds 3] [--batches 40]

For batches of one tensor of 4 kB to 12.6 MB (64 samples a batch, each a copy of one stored
sample: no per-sample work to speak of), the training process's CPU time per batch is read while
it takes `--batches` batches from a loader with no worker and with one worker (after the workers'
head start). With no worker that time is the whole fetch; with one worker the fetch runs in the
worker and what is left in the training process is the hand-over: the queue, unpickling, mapping
the batch's shared memory. CPU time of this process, not wall time: other jobs on a shared
machine do not stretch it much. Rounds alternate the two settings; the median per setting is
printed, with the hand-over per batch and a least-squares fit `a + b * MB` over the sizes.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch.utils.data import DataLoader, Dataset

SAMPLE_SIZES = (16, 3 * 32 * 32, 3 * 64 * 64, 3 * 128 * 128)  # float32 elements per sample
BATCH = 64


class Copies(Dataset):
    def __init__(self, elements: int) -> None:
        self.sample = torch.randn(elements)

    def __len__(self) -> int:
        return 1 << 16

    def __getitem__(self, index: int) -> torch.Tensor:
        return self.sample.clone()


def cpu_per_batch(elements: int, workers: int, batches: int) -> float:
    settings = {"num_workers": workers, "persistent_workers": True} if workers else {}
    iterator = iter(DataLoader(Copies(elements), batch_size=BATCH, **settings))
    for _ in range(1 + 2 * workers):  # the first batch and the workers' head start
        next(iterator)
    started = time.process_time()
    for _ in range(batches):
        next(iterator)
    spent = time.process_time() - started
    del iterator
    return spent / batches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batches", type=int, default=40)
    options = parser.parse_args()
    sizes_mb, handovers = [], []
    print("| batch | no worker: CPU ms a batch | one worker: CPU ms a batch (the hand-over) |")
    print("|---|---|---|")
    for elements in SAMPLE_SIZES:
        alone, handed = [], []
        for round_number in range(options.rounds):
            order = (0, 1) if round_number % 2 == 0 else (1, 0)
            for workers in order:
                seconds = cpu_per_batch(elements, workers, options.batches)
                (handed if workers else alone).append(seconds)
        megabytes = 4 * BATCH * elements / 1e6
        sizes_mb.append(megabytes)
        handovers.append(statistics.median(handed))
        print(
            f"| {megabytes:.3f} MB | {1e3 * statistics.median(alone):.3f} | "
            f"{1e3 * statistics.median(handed):.3f} |"
        )
    slope, intercept = statistics.linear_regression(sizes_mb, handovers)
    print(f"hand-over fit: {1e3 * intercept:.3f} ms a batch + {1e3 * slope:.3f} ms per MB")


if __name__ == "__main__":
    main()
