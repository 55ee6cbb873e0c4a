"""Run the demo's rows interleaved, epoch by epoch: row 0 epoch 1, row 1 epoch 1, ..., row 0
epoch 2, ... so that a change in the machine's load over the run falls on every row alike
instead of on whichever rows happened to run last.

Each row's training code runs unmodified in its own thread and calls `EpochBaton.epoch_start()`
where an epoch begins; the baton blocks it there until the conductor hands it the next turn.
Exactly one row runs at any moment (the others wait on a semaphore), so rows never compete
with each other for the cores, and each row keeps its model, optimizer and DataLoader workers
across its epochs as a plain sequential run would.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import torch

from torchdoctor.demo.meters import RowMeter


class EpochBaton:
    """The row side: `epoch_start()` at each epoch start; `times` are the epochs' wall times."""

    def __init__(self, device: torch.device, threads: int):
        self.device, self.threads = device, threads
        self.times: list[float] = []
        self._go = threading.Semaphore(0)
        self._done = threading.Semaphore(0)
        self._started: float | None = None
        self.result: Any = None
        self.error: BaseException | None = None
        self.finished = False  # set before the last turn is handed back

    def epoch_start(self) -> None:
        if self._started is not None:  # the previous epoch ends here: hand the turn back
            self._end_epoch()
            self._done.release()
            self._go.acquire()
        self._started = time.perf_counter()

    def _end_epoch(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)  # the epoch's queued device work is its own
        self.times.append(time.perf_counter() - self._started)
        self._started = None

    def run(self, program: Callable[[EpochBaton], Any]) -> None:
        """Thread body: wait for the first turn, run the row, hand the last turn back."""
        self._go.acquire()
        # torch.set_num_threads is per thread for OpenMP: a new thread must set it again
        torch.set_num_threads(self.threads)
        try:
            self.result = program(self)
            if self._started is not None:
                self._end_epoch()
        except BaseException as exc:  # noqa: BLE001 - re-raised by the conductor, in its thread
            self.error = exc
        finally:
            self.finished = True
            self._done.release()


def run_interleaved(
    programs: list[Callable[[EpochBaton], Any]],
    device: torch.device,
    on_turn: Callable[[int, EpochBaton], None] | None = None,
):
    """Run the programs one epoch each in turn until all have returned. Returns, per program,
    (baton, wall_s, peak_memory_bytes): the baton holds .result and the epoch .times; wall and
    peak memory are measured over that program's turns only."""
    threads = torch.get_num_threads()
    batons = [EpochBaton(device, threads) for _ in programs]
    workers = [
        threading.Thread(target=baton.run, args=(program,), daemon=True, name=f"demo-row-{index}")
        for index, (baton, program) in enumerate(zip(batons, programs))
    ]
    for worker in workers:
        worker.start()
    walls = [0.0] * len(programs)
    peaks: list[int | None] = [None] * len(programs)
    while not all(baton.finished for baton in batons):
        for index, baton in enumerate(batons):
            if baton.finished:
                continue
            with RowMeter(device) as meter:
                baton._go.release()
                baton._done.acquire()
            walls[index] += meter.wall_s
            if meter.peak_memory_bytes is not None:
                peaks[index] = max(peaks[index] or 0, meter.peak_memory_bytes)
            if baton.error is not None:
                raise baton.error
            if on_turn is not None:
                on_turn(index, baton)
    for worker in workers:
        worker.join()
    return [(baton, wall, peak) for baton, wall, peak in zip(batons, walls, peaks)]
