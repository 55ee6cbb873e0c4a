"""Child processes the program starts through multiprocessing (torch.multiprocessing.Process,
mp.spawn, start_processes, a Pool): diagnose does not follow them, so a program that trains only
there must be told so, not given advice drawn from the parent's few forwards. DataLoader workers
are not counted (their own note covers them)."""

from __future__ import annotations

import multiprocessing.process

from torchdoctor.diagnose.probes.base import Probe

_DATALOADER_WORKER = "torch.utils.data._utils.worker"
_SPAWN_WRAPPER = "torch.multiprocessing.spawn"  # mp.spawn's target wraps the user's function


def _target_name(process) -> str | None:
    """The function a child runs (for mp.spawn, the function handed to spawn), or None for a
    DataLoader worker."""
    target = getattr(process, "_target", None)
    module = getattr(target, "__module__", "") or ""
    if module == _DATALOADER_WORKER:
        return None
    if module == _SPAWN_WRAPPER:
        args = getattr(process, "_args", ())
        target = args[0] if args and callable(args[0]) else target
    return getattr(target, "__qualname__", None) or type(process).__name__


class ChildProcessProbe(Probe):
    def install(self, patcher) -> None:
        self.started = 0
        self.targets: list[str] = []  # distinct target names, in order of first start
        probe = self

        def wrap(original):
            def start(process, *args, **kwargs):
                name = _target_name(process)
                if name is not None:
                    probe.started += 1
                    if name not in probe.targets:
                        probe.targets.append(name)
                return original(process, *args, **kwargs)

            return start

        patcher.replace(multiprocessing.process.BaseProcess, "start", wrap)

    def contribute(self, run, measured) -> None:
        run.child_processes = self.started
        run.child_process_targets = list(self.targets)
