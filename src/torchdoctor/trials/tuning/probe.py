"""One measured Trainer run of a recipe under a TrainerConfig, surviving out-of-memory.

Every probe trains a fresh copy of the recipe's initial model (so configurations start from the
same weights and one probe's memory format or compilation cannot leak into the next) for a fixed
number of optimizer steps, then optionally evaluates it.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass

from torchdoctor.trainer import Trainer, TrainerConfig
from torchdoctor.trials.tuning.clock import StepClock
from torchdoctor.trials.tuning.oom import MemoryCap, is_oom, preserved_state, release


@dataclass
class ProbeResult:
    ok: bool
    samples_per_s: float | None = None
    data_wait_share: float | None = None
    peak_memory_bytes: int | None = None
    train_loss: float | None = None
    val_accuracy: float | None = None
    val_loss: float | None = None
    seconds: float | None = None  # measured (post warm-up) training time
    error: str | None = None  # "out of memory: ..." or another one-line failure


class RecipeProber:
    def __init__(
        self,
        recipe,
        base: TrainerConfig,
        steps: int,
        warmup: int = 2,
        memory_cap: int | None = None,
    ):
        self.recipe, self.base, self.steps, self.warmup = recipe, base, steps, warmup
        self.memory_cap = memory_cap
        self.pristine = copy.deepcopy(recipe.model)  # the initial weights every probe starts from

    def run(self, evaluate: bool = False, **overrides) -> ProbeResult:
        config = self.base.replace(
            max_steps=self.steps,
            epochs=10**6,
            quiet=True,
            checkpoint_dir=None,
            resume=False,
            **overrides,
        )
        recipe = dataclasses.replace(self.recipe, model=copy.deepcopy(self.pristine))
        return self._measure(recipe, config, evaluate)

    def fits(self, batch_size: int) -> bool:
        """Batch-size probe on the recipe's own model, restored afterwards (OOM or not)."""
        config = self.base.replace(
            batch_size=batch_size,
            max_steps=self.warmup + 1,
            epochs=10**6,
            quiet=True,
            checkpoint_dir=None,
            resume=False,
        )
        with preserved_state(self.recipe.model):
            return self._measure(self.recipe, config, evaluate=False).ok

    def _measure(self, recipe, config: TrainerConfig, evaluate: bool) -> ProbeResult:
        trainer = None
        try:
            trainer = Trainer.from_recipe(recipe, config)
            with StepClock() as clock, _capped(trainer.model, self.memory_cap):
                history = trainer.fit(recipe.train_data)
            result = ProbeResult(
                ok=True,
                samples_per_s=_rate(clock, self.warmup, config.batch_size),
                data_wait_share=clock.data_wait_share(self.warmup),
                peak_memory_bytes=history[-1].peak_memory_bytes if history else None,
                train_loss=history[-1].train_loss if history else None,
                seconds=clock.measured_seconds(self.warmup),
            )
            if evaluate and recipe.val_data is not None:
                metrics = trainer.evaluate(recipe.val_data)
                result.val_loss, result.val_accuracy = metrics["loss"], metrics.get("accuracy")
            return result
        except Exception as exc:  # noqa: BLE001 - an OOM, or a config this model cannot run
            if not is_oom(exc):
                raise
            message = f"out of memory: {str(exc).splitlines()[0]}"
            release(exc)
            return ProbeResult(ok=False, error=message)
        finally:
            del trainer
            release()


def _rate(clock: StepClock, warmup: int, batch_size: int) -> float | None:
    steps_per_s = clock.steps_per_s(warmup)
    return None if steps_per_s is None else steps_per_s * batch_size


class _capped:
    def __init__(self, model, cap):
        self.cap = MemoryCap(model, cap) if cap else None

    def __enter__(self):
        return self.cap.__enter__() if self.cap else None

    def __exit__(self, *exc):
        if self.cap:
            self.cap.__exit__(*exc)
