"""One diagnosis for a multi-rank run: every rank writes its RunObservation, rank 0 merges them.

Under `torchrun ... -m torchdoctor diagnose script.py` each rank observes only itself. A
straggler (one slow data pipeline, one throttled GPU) shows up only when the ranks are compared:
every other rank waits for it in each all-reduce, so their own step times look fine. So each rank
writes `rank-{r}.json` into a shared directory, and rank 0 folds the per-rank medians into its
own observation's `DistributedObservation` (per_rank_step_s, per_rank_batch,
per_rank_comm_s), which the rules read.

Files, not a collective: by the time the diagnosis ends, the user's script may have destroyed
the process group (or a rank may have crashed), and a collective would then hang.
This module only moves observations; judging them is the rules' job.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path

from torchdoctor.diagnose.observations import DistributedObservation, RunObservation


def rank_file(directory: str | os.PathLike, rank: int) -> Path:
    return Path(directory) / f"rank-{rank}.json"


def write_rank_observation(run: RunObservation, directory: str | os.PathLike, rank: int) -> Path:
    """Write this rank's observation atomically (rank 0 must never read half a file)."""
    path = rank_file(directory, rank)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(json.dumps(run.to_dict()))
    os.replace(temp, path)
    return path


def collect_rank_observations(
    directory: str | os.PathLike, world_size: int, timeout_s: float = 60.0, poll_s: float = 0.1
) -> list[dict | None]:
    """Every rank's observation as a dict, waiting up to `timeout_s` for the slowest; None for a
    rank that never wrote one (it crashed, or is still running)."""
    deadline = time.monotonic() + timeout_s
    found: list[dict | None] = [None] * world_size
    while True:
        for rank in range(world_size):
            if found[rank] is None and rank_file(directory, rank).is_file():
                found[rank] = json.loads(rank_file(directory, rank).read_text())
        if all(entry is not None for entry in found) or time.monotonic() >= deadline:
            return found
        time.sleep(poll_s)


def _median_step_s(run: dict) -> float | None:
    walls = [step["wall_s"] for step in run.get("steps", [])]
    return statistics.median(walls) if walls else None


def _median_batch(run: dict) -> int | None:
    sizes = [step["batch_size"] for step in run.get("steps", []) if step.get("batch_size")]
    return int(statistics.median(sizes)) if sizes else None


def _slower_shares(ranks: list[dict], comm_s: list) -> list[float]:
    """Per rank: the share of the steps every rank measured (paired by index) in which its busy
    time (step minus its mean communication) exceeded the median of the other ranks'."""
    busy = [
        {
            step["index"]: step["wall_s"] - (comm or 0.0)
            for step in run.get("steps", [])
            if step.get("index") is not None
        }
        for run, comm in zip(ranks, comm_s)
    ]
    common = set.intersection(*(set(steps) for steps in busy))
    if not common:
        return []
    shares = []
    for rank, own in enumerate(busy):
        others = [steps for other, steps in enumerate(busy) if other != rank]
        slower = sum(1 for i in common if own[i] > statistics.median(steps[i] for steps in others))
        shares.append(slower / len(common))
    return shares


def merge_rank_observations(main: RunObservation, ranks: list[dict | None]) -> RunObservation:
    """Rank 0's observation, with the per-rank facts of all ranks (`ranks[r]` is rank r's dict)."""
    world_size = len(ranks)
    if main.distributed is None:
        main.distributed = DistributedObservation(world_size=world_size)
    main.distributed.world_size = world_size
    missing = [rank for rank, run in enumerate(ranks) if run is None]
    for rank in missing:
        main.notes.append(
            f"rank {rank} wrote no observations (it crashed or did not finish in time)"
        )
    reported = [run for run in ranks if run is not None]
    step_s = [_median_step_s(run) for run in reported]
    batches = [_median_batch(run) for run in reported]
    # per-rank lists are indexed by rank: only fill them when every rank is known
    if not missing and all(value is not None for value in step_s):
        main.distributed.per_rank_step_s = step_s
    if not missing and all(value is not None for value in batches):
        main.distributed.per_rank_batch = batches
    comm_s = [(run.get("distributed") or {}).get("comm_s_per_step") for run in reported]
    if not missing and all(value is not None for value in comm_s):
        main.distributed.per_rank_comm_s = comm_s
    if not missing and all(value is not None for value in step_s):
        main.distributed.per_rank_slower_share = _slower_shares(reported, comm_s)
    for rank, run in enumerate(ranks):
        if (
            run is not None
            and rank != 0
            and run.get("status") == "crashed"
            and main.status != "crashed"
        ):
            main.status = "crashed"
            main.error = f"rank {rank}: {run.get('error') or 'crashed'}"
    main.notes.append(
        f"merged the observations of {world_size - len(missing)} of {world_size} ranks"
    )
    return main
