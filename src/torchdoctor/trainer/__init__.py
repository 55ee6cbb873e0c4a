"""The reference training loop: `Trainer` applies every technique of docs/techniques/ correctly,
with each switch in `TrainerConfig` (see docs/trainer.md)."""

from torchdoctor.trainer.config import TrainerConfig
from torchdoctor.trainer.history import EpochRecord
from torchdoctor.trainer.loop import Trainer

__all__ = ["Trainer", "TrainerConfig", "EpochRecord"]
