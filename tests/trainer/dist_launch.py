"""Start W real processes the way torchrun does (RANK/WORLD_SIZE/MASTER_* env vars, gloo on CPU).

Cheaper than torchrun's elastic agent, and it exercises `distributed.detect()` for real.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import dataclass


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class RankResult:
    rank: int
    returncode: int
    stdout: str
    stderr: str


def launch(
    args: list[str], world_size: int, timeout: float, extra_env: dict | None = None
) -> list[RankResult]:
    """Run `python args...` as `world_size` ranks; kill them all if any runs past `timeout`."""
    port = free_port()
    procs = []
    for rank in range(world_size):
        env = dict(os.environ)
        env.update(
            RANK=str(rank),
            LOCAL_RANK=str(rank),
            WORLD_SIZE=str(world_size),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
            OMP_NUM_THREADS="1",
        )
        env.update(extra_env or {})
        procs.append(
            subprocess.Popen(
                [sys.executable, *args],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    results = []
    try:
        for rank, proc in enumerate(procs):
            out, err = proc.communicate(timeout=timeout)
            results.append(RankResult(rank, proc.returncode, out, err))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return results
