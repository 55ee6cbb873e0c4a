"""What the loop does when training goes wrong in ways that are not bugs in our code.

- A non-finite loss (NaN/inf): `NonFiniteGuard` reports the epoch, step and batch index that
  produced it and applies the policy: "stop" (raise, the default: a NaN usually means the run is
  lost and every further step wastes compute), "skip" (drop this optimizer step and its
  gradients, keep going: for the rare bad batch), "continue" (warn and step anyway).
  Under DDP the decision is reduced over ranks (any rank non-finite -> every rank acts), because
  ranks that disagree on whether to step would drift apart or deadlock in the next all-reduce.
- A DataLoader worker process that dies (usually the kernel OOM killer): PyTorch raises
  "DataLoader worker (pid N) is killed by signal: Killed"; `translate_worker_death` turns it
  into one line that says what probably happened and what to change.
"""

from __future__ import annotations

import contextlib
import math
import re
import signal
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import torch

from torchdoctor.errors import TorchdoctorError, UsageError

NanPolicy = Literal["stop", "skip", "continue"]
POLICIES = ("stop", "skip", "continue")


class NonFiniteLossError(TorchdoctorError):
    """The loss became NaN or infinite and the policy is "stop"."""


class NonFiniteLossWarning(UserWarning):
    """The loss became NaN or infinite and the policy is "skip" or "continue"."""


@dataclass(frozen=True)
class NonFiniteEvent:
    epoch: int  # 0-based, like the loop's counters (messages say epoch + 1)
    step: int  # optimizer steps completed before this batch
    batch: int  # index of the micro-batch within its epoch
    value: float
    action: str


@dataclass
class _Window:
    """The micro-batch losses of one optimizer step, checked together."""

    epoch: int
    step: int
    first_batch: int
    losses: list[torch.Tensor]
    bad: torch.Tensor | None = None  # per micro-batch 0/1 flags, on the device, reduced over ranks


# With "stop" and "continue", the flags of this many optimizer steps are read in one transfer:
# one host-device sync per CHECK_EVERY steps instead of one per step (the per-step read was what
# `torchdoctor diagnose` flagged in the Trainer itself). A NaN still names its exact step.
CHECK_EVERY = 16


class NonFiniteGuard:
    """Per optimizer step: `observe` each micro-batch loss, then `step_ok()` before stepping.

    The check costs no pipeline stall where it can avoid one: with "stop" and "continue" the
    flags are kept on the device and read CHECK_EVERY steps at a time, the newest step left
    queued (the GPU has long finished the older ones), so only "skip", which must decide before
    stepping, syncs every step. "stop" may thus raise up to CHECK_EVERY steps after the bad one.
    Call `flush()` before writing a checkpoint so a checkpoint never holds weights a pending NaN
    already spoiled.
    """

    def __init__(self, policy: NanPolicy = "stop", env=None):
        if policy not in POLICIES:
            raise UsageError(f"nan policy must be one of {', '.join(POLICIES)}, got {policy!r}")
        self.policy = policy
        self.env = env
        self.events: list[NonFiniteEvent] = []
        self._window: _Window | None = None
        self._pending: list[_Window] = []  # checked on the device, not yet read

    def observe(self, loss: torch.Tensor, *, epoch: int, step: int, batch: int) -> None:
        """Record one micro-batch loss (no sync); `batch` is its index within the epoch."""
        if self._window is None:
            self._window = _Window(epoch, step, batch, [])
        self._window.losses.append(loss.detach())

    def step_ok(self) -> bool:
        """False when the policy is "skip" and this step's loss was not finite on some rank."""
        window, self._window = self._window, None
        if window is None:
            return True
        distributed = self.env is not None and self.env.is_distributed
        if self.policy != "skip" and not distributed:
            # checked when read, with the other pending steps' losses: no op in this step (six
            # small ops a step were 10-18% of a small model's step in the Trainer's own
            # diagnosis, its D801)
            self._pending.append(window)
            if len(self._pending) > CHECK_EVERY:
                self._resolve_pending(keep_newest=True)
            return True
        window.bad = _non_finite(window.losses)
        if distributed:
            import torch.distributed as dist

            dist.all_reduce(window.bad, op=dist.ReduceOp.SUM)  # async on NCCL: no stall here
        if self.policy == "skip":
            return not self._resolve(window)
        self._pending.append(window)
        if len(self._pending) > CHECK_EVERY:  # read all but the newest, in one transfer
            self._resolve_pending(keep_newest=True)
        return True

    def flush(self) -> None:
        """Check the steps still pending (before a checkpoint, at the end of an epoch)."""
        if self._window is not None:
            self.step_ok()
        self._resolve_pending(keep_newest=False)

    def _resolve_pending(self, keep_newest: bool) -> None:
        windows = self._pending[:-1] if keep_newest else self._pending
        self._pending = self._pending[-1:] if keep_newest else []
        if not windows:
            return
        unchecked = [w for w in windows if w.bad is None]
        if unchecked:  # one check over all their losses, split back per step
            checked = _non_finite([loss for w in unchecked for loss in w.losses])
            for window, part in zip(unchecked, checked.split([len(w.losses) for w in unchecked])):
                window.bad = part
        # one read for all the windows
        flags = torch.cat([w.bad for w in windows if w.bad is not None]).tolist()
        start = 0
        for window in windows:
            end = start + len(window.losses)
            if any(flags[start:end]):
                self._resolve(window)  # raises on "stop": later windows are moot
            start = end

    def _resolve(self, window: _Window) -> bool:
        """Apply the policy to a checked window; True when it held a non-finite loss."""
        bad = window.bad.cpu().tolist()
        if not any(bad):
            return False
        offset = next(i for i, flag in enumerate(bad) if flag)
        loss = window.losses[offset]
        value = float(loss.float().cpu()) if loss.numel() == 1 else float("nan")
        where = f"epoch {window.epoch + 1}, step {window.step + 1}, batch index {window.first_batch + offset}"
        if math.isfinite(value):  # flagged by another rank; this rank's own loss was fine
            value, where = float("nan"), where + " (on another rank)"
        self.events.append(
            NonFiniteEvent(
                window.epoch, window.step, window.first_batch + offset, value, self.policy
            )
        )
        if self.policy == "stop":
            raise NonFiniteLossError(
                f"loss is {value} at {where}; lower the learning rate, check the inputs of that "
                "batch, or use nan_policy 'skip' to drop such steps"
            )
        action = (
            "skipping this optimizer step"
            if self.policy == "skip"
            else "continuing (nan policy: continue)"
        )
        warnings.warn(f"loss is {value} at {where}; {action}", NonFiniteLossWarning, stacklevel=3)
        return True


def _non_finite(losses: list[torch.Tensor]) -> torch.Tensor:
    """0/1 int32 flags, one per loss: 1 where it holds a NaN or an infinity (few ops for many
    scalar losses: one check over them stacked)."""
    if all(loss.dim() == 0 for loss in losses) and len({loss.device for loss in losses}) == 1:
        return (~torch.isfinite(torch.stack(losses).float())).to(torch.int32)
    return torch.stack([~torch.isfinite(loss.float()).all() for loss in losses]).to(torch.int32)


_WORKER_DEATH = re.compile(
    r"DataLoader worker \(pid(?:\(s\))?\s*([\d, ]+)\) (is killed by signal: ?([^.\n]+)|exited unexpectedly)"
)


def describe_worker_death(error: BaseException) -> str | None:
    """A one-line explanation when `error` is PyTorch's "DataLoader worker died" error, else None."""
    # "exited unexpectedly" is raised *from* the signal handler's "killed by signal: Killed"
    matches, seen = [], error
    for _ in range(8):  # a bounded walk down the exception chain
        if seen is None:
            break
        found = _WORKER_DEATH.search(str(seen))
        if found:
            matches.append(found)
        seen = seen.__cause__ or seen.__context__
    if not matches:
        return None
    match = next((m for m in matches if m.group(3)), matches[0])  # prefer the one naming a signal
    pids = match.group(1).strip().rstrip(",")
    signal_name = match.group(3) or _signal_of_failed_workers(error)
    if signal_name and "kill" in signal_name.lower():
        cause = "was killed (signal 9, most often the out-of-memory killer)"
        advice = "lower --workers, --prefetch-factor or the batch size, or free host memory"
    elif signal_name:
        cause = f"was killed by signal {signal_name.strip()}"
        advice = "run with --workers 0 to see the error in the main process"
    else:
        cause = "exited unexpectedly"
        advice = "run with --workers 0 to see the error in the main process"
    return f"a DataLoader worker (pid {pids}) {cause}; {advice}"


def _signal_of_failed_workers(error: BaseException) -> str | None:
    """The signal that ended a worker, read from the loader's own record of the dead workers.

    PyTorch names the signal only when its SIGCHLD handler ran before the loader's timeout check
    noticed the dead worker; on a busy machine the check can come first, and its message says only
    "exited unexpectedly". That check keeps the dead `Process` objects in a local
    (`failed_workers`), whose `exitcode` is minus the signal number.
    """
    traceback = error.__traceback__
    while traceback is not None:
        for worker in traceback.tb_frame.f_locals.get("failed_workers") or ():
            code = getattr(worker, "exitcode", None)
            if isinstance(code, int) and code < 0:
                try:
                    return "Killed" if -code == signal.SIGKILL else signal.Signals(-code).name
                except ValueError:
                    return f"signal {-code}"
        traceback = traceback.tb_next
    return None


@contextlib.contextmanager
def translate_worker_death() -> Iterator[None]:
    """Wrap iteration over a DataLoader: a dead worker becomes a TorchdoctorError, nothing else changes."""
    try:
        yield
    except RuntimeError as error:
        message = describe_worker_death(error)
        if message is None:
            raise
        raise TorchdoctorError(message) from error
