"""The reference training loop. Reads top to bottom: every TrainerConfig switch is applied where
it acts, and each technique is a named function in setup/data/modelprep/steps/history.

    trainer = Trainer(model, lambda p: torch.optim.AdamW(p, lr=1e-3), nn.CrossEntropyLoss(),
                      TrainerConfig(epochs=3, precision="bf16", clip_norm=1.0, accumulate=4))
    history = trainer.fit(train_dataset, val_dataset)
"""

from __future__ import annotations

import time
from itertools import islice

import torch
from torch import nn

from torchdoctor.errors import TorchdoctorError
from torchdoctor.seeding import seed_everything
from torchdoctor.trainer import state as ckpt_state
from torchdoctor.trainer.config import TrainerConfig
from torchdoctor.trainer.data import (
    LoaderHandle,
    batch_size_of,
    build_loader,
    split_batch,
    to_device,
)
from torchdoctor.trainer.evaluation import evaluate_loader, predict_loader
from torchdoctor.trainer.faults import NonFiniteGuard, translate_worker_death
from torchdoctor.trainer.history import (
    EpochMeter,
    EpochRecord,
    peak_memory_bytes,
    reset_peak_memory,
)
from torchdoctor.trainer.modelprep import checkpoint_submodules, compile_model, place_model
from torchdoctor.trainer.progress import EpochProgress
from torchdoctor.trainer.ranks import RankCoordinator
from torchdoctor.trainer.setup import (
    apply_backend_flags,
    check_optimizer_params,
    check_trainer_arguments,
    make_grad_scaler,
    resolve_setup,
)
from torchdoctor.trainer.steps import StepParts, backward, forward_loss, optimizer_step


class Trainer:
    def __init__(
        self,
        model: nn.Module,
        optimizer,  # an Optimizer, or a factory params -> Optimizer (built after placement)
        loss_fn,
        config: TrainerConfig | None = None,
        scheduler=None,  # an LR scheduler, or a factory optimizer -> scheduler
        classification: bool = True,
    ):
        check_trainer_arguments(model, optimizer, loss_fn, config)
        self.config = config = config if config is not None else TrainerConfig()
        self.classification = classification
        # "auto" switches -> concrete choices for this device (see setup.py for each rule)
        self.setup = setup = resolve_setup(config, model)
        # under torchrun: join the process group, check all ranks have the same settings,
        # train on cuda:LOCAL_RANK (a no-op in a single process)
        self.ranks = RankCoordinator(config, setup)
        self.dist, self.setup = self.ranks.env, self.ranks.setup
        setup = self.setup
        apply_backend_flags(setup)  # cudnn.benchmark, TF32 (CUDA only)

        checkpoint_submodules(model, config.activation_checkpointing)
        self.model = place_model(model, setup.device, setup.channels_last)
        # SyncBatchNorm + DDP under torchrun; self.model stays the unwrapped module
        self.model, wrapped = self.ranks.wrap_model(self.model)
        self.forward_model = compile_model(wrapped, config.compile, config.compile_mode)

        # Module.to() keeps Parameter identity, so an optimizer built before placement still
        # points at the right tensors; a factory is simply built now.
        if isinstance(optimizer, torch.optim.Optimizer):
            check_optimizer_params(optimizer, self.model)
            self.optimizer = optimizer
        else:
            self.optimizer = optimizer(self.model.parameters())
        if scheduler is not None and not hasattr(scheduler, "state_dict"):
            scheduler = scheduler(self.optimizer)
        self.scheduler = scheduler
        self.scaler = make_grad_scaler(setup)  # fp16 only

        self.parts = StepParts(
            model=self.forward_model,
            optimizer=self.optimizer,
            loss_fn=loss_fn,
            parameters=[p for p in self.model.parameters() if p.requires_grad],
            device_type=setup.device.type,
            autocast_dtype=setup.autocast_dtype,
            scaler=self.scaler,
            clip_norm=config.clip_norm,
            scheduler=self.scheduler,
        )
        self.history: list[EpochRecord] = []
        self.global_step = 0
        self.recipe = None
        # (checkpoint path, epoch index, global step) fit() continued from with config.resume
        self.resumed_from: tuple | None = None

    @classmethod
    def from_recipe(cls, recipe, config: TrainerConfig | None = None) -> Trainer:
        """A Trainer for a Recipe. With no config, recipe.defaults override TrainerConfig's."""
        if config is None:
            config = TrainerConfig.from_dict(dict(recipe.defaults))
        trainer = cls(
            recipe.model,
            recipe.optimizer,
            recipe.loss_fn,
            config,
            scheduler=recipe.scheduler,
            classification=recipe.classification,
        )
        trainer.recipe = recipe
        return trainer

    # ------------------------------------------------------------------ training
    def fit(self, train_data=None, val_data=None, on_epoch_end=None) -> list[EpochRecord]:
        """Train; `on_epoch_end(record)`, if given, is called with each EpochRecord as it is
        added to the history (after the epoch's validation and checkpoint)."""
        cfg, setup = self.config, self.setup
        if train_data is None and self.recipe is not None:
            train_data, val_data = self.recipe.train_data, self.recipe.val_data
        if train_data is None:
            raise TorchdoctorError("fit() needs training data")
        train = build_loader(
            train_data,
            setup,
            cfg.batch_size,
            shuffle=True,
            drop_last=cfg.drop_last,
            seed=cfg.seed,
            rank=self.dist.rank,
            world_size=self.dist.world_size,  # this rank's share
        )
        self.guard = NonFiniteGuard(cfg.nan_policy, self.dist)  # NaN/inf loss policy
        val = self._eval_loader(val_data, "validation") if val_data is not None else None

        # Dropout/augmentation RNG; the data order has its own generator (data.py)
        seed_everything(cfg.seed)  # Python, NumPy and torch RNGs: a run is a function of its seed
        self.global_step, self.history, self.resumed_from = 0, [], None
        # gradients left by code that ran before fit() must not leak into the first window
        self.optimizer.zero_grad(set_to_none=True)
        start_epoch, skip_batches, meter_state = 0, 0, None
        if cfg.checkpoint_dir:  # rank 0 probes; every rank learns the outcome
            from torchdoctor.trainer.checkpoint import CheckpointManager

            self.ranks.save(CheckpointManager(cfg.checkpoint_dir, cfg.keep_last).check_writable)
        if cfg.resume:
            start_epoch, skip_batches, meter_state = self._resume()

        # progress on rank 0 only; a dead DataLoader worker becomes one clear line
        with (
            EpochProgress(cfg.quiet or not self.dist.is_main, cfg.epochs) as bar,
            translate_worker_death(),
        ):
            for epoch in range(start_epoch, cfg.epochs):
                record, finished = self._train_epoch(
                    train, val, epoch, skip_batches, meter_state, bar
                )
                skip_batches, meter_state = 0, None
                # an epoch ends when its batches run out or max_steps stops it: a partial
                # epoch is reported too (and was already checkpointed where it stopped)
                self.history.append(record)
                if finished:
                    self._save(epoch + 1, 0, None)
                if on_epoch_end is not None:
                    on_epoch_end(record)
                if self._max_steps_reached():
                    break
        return self.history

    def _train_epoch(self, train: LoaderHandle, val, epoch, skip_batches, meter_state, bar):
        cfg, setup, parts = self.config, self.setup, self.parts
        device, non_blocking, channels_last = setup.device, setup.non_blocking, setup.channels_last
        self.model.train()
        meter = EpochMeter(device, self.classification)
        if meter_state is not None:  # resumed mid-epoch: the epoch's sums so far
            meter.load_state(meter_state)
        samples_before = meter.samples
        reset_peak_memory(device)
        total_batches = len(train)
        bar.start_epoch(epoch, total_batches, skip_batches)
        started = time.perf_counter()

        batches = train.epoch_batches(epoch, skip_batches)
        done = skip_batches
        while True:
            # One optimizer step = one window of up to `accumulate` micro-batches; the last
            # window of an epoch may be shorter. Its sample count weights each micro-loss.
            window = list(islice(batches, cfg.accumulate))
            if not window:
                break
            split = [split_batch(batch) for batch in window]
            n_window = sum(batch_size_of(inputs) for inputs, _ in split)
            measured = []
            for micro, (inputs, targets) in enumerate(split):
                n = batch_size_of(inputs)
                inputs = to_device(inputs, device, non_blocking, channels_last)
                targets = to_device(targets, device, non_blocking, False)
                # DDP all-reduces gradients on the window's last micro-batch only
                with self.ranks.gradient_sync(micro == len(split) - 1):
                    loss, outputs = forward_loss(parts, inputs, targets)
                    self.guard.observe(loss, epoch=epoch, step=self.global_step, batch=done + micro)
                    backward(parts, loss, n / n_window)
                measured.append((loss, outputs, targets, n))
            if self.guard.step_ok():  # False only for nan_policy "skip" on a NaN/inf loss
                norm = optimizer_step(parts)  # unscale -> clip -> step -> zero_grad(None) -> sched
                for loss, outputs, targets, n in measured:
                    meter.add(loss, outputs, targets, n)
                if norm is not None:
                    meter.add_grad_norm(norm)
            else:
                parts.optimizer.zero_grad(set_to_none=True)
            self.global_step += 1
            done += len(window)
            bar.advance(len(window), meter)
            if self._max_steps_reached():
                break
            if self.ranks.checkpoint_due(self.global_step):  # every N steps or N seconds
                if done < total_batches:  # the end-of-epoch save covers the last step
                    self._save(epoch, done, meter.state())

        self.guard.flush()  # the last step's NaN check
        totals = self.ranks.global_meter(meter)  # sums over all ranks (meter keeps this rank's)
        train_loss, train_accuracy, grad_norm = totals.summary()  # one device sync per epoch
        epoch_s = time.perf_counter() - started
        finished = done >= total_batches
        if not finished:
            self._save(epoch, done, meter.state())  # stopped by max_steps: resumable here
        val_metrics = self._evaluate_loader(val) if val is not None else {}
        record = EpochRecord(
            epoch=epoch + 1,
            train_loss=train_loss,
            train_accuracy=train_accuracy,
            val_loss=val_metrics.get("loss"),
            val_accuracy=val_metrics.get("accuracy"),
            samples_per_s=(totals.samples - self.ranks.global_count(samples_before))
            / max(epoch_s, 1e-9),
            epoch_s=epoch_s,
            peak_memory_bytes=peak_memory_bytes(device),
            grad_norm=grad_norm,
            steps=self.global_step,
        )
        return record, finished

    def _max_steps_reached(self) -> bool:
        return self.config.max_steps is not None and self.global_step >= self.config.max_steps

    # ------------------------------------------------------------------ checkpoints
    def _save(self, epoch: int, batches_done: int, meter_state: dict | None) -> None:
        """epoch = the epoch to continue with; batches_done = its micro-batches already done."""
        if not self.config.checkpoint_dir:
            return
        from torchdoctor.trainer.checkpoint import CheckpointManager

        # never checkpoint weights a pending NaN already spoiled; store all ranks' sums;
        # rank 0 writes, and every rank learns whether that worked before going on
        self.guard.flush()
        meter_state = self.ranks.checkpoint_meter_state(meter_state)

        def write():
            state = ckpt_state.build_state(self, epoch, batches_done, meter_state)
            state["world_size"] = self.dist.world_size
            CheckpointManager(self.config.checkpoint_dir, self.config.keep_last).save(
                state, self.global_step
            )

        self.ranks.save(write)

    def _resume(self) -> tuple[int, int, dict | None]:
        """Load the newest good checkpoint, if any (none: start from scratch, so the same
        command can simply be rerun after an interruption)."""
        cfg = self.config
        loaded = ckpt_state.load_latest(cfg.checkpoint_dir, cfg.keep_last, self.setup.device)
        if loaded is None:
            return 0, 0, None
        state, path = loaded
        ckpt_state.check_compatible(state.get("config", {}), cfg.to_dict(), path)
        self.ranks.check_resume(state.get("world_size"), path)
        ckpt_state.restore_state(self, state, path)
        self.resumed_from = (path, state["epoch"], state["step"])
        self.history = [EpochRecord(**record) for record in state.get("history", [])]
        # rank 0 holds the sums
        meter_state = self.ranks.resumed_meter_state(state.get("epoch_meter"))
        return state["epoch"], state["batches_done"], meter_state

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, data) -> dict:
        """{"loss", "accuracy"} over `data` (accuracy None unless classification)."""
        return self._evaluate_loader(self._eval_loader(data, "evaluation"))

    def predict(self, data) -> torch.Tensor:
        """Model outputs for every sample of `data`, in order, concatenated along dim 0."""
        return predict_loader(
            self.model, self.parts, self._eval_loader(data, "prediction"), self.setup
        )

    def _eval_loader(self, data, role: str) -> LoaderHandle:
        if isinstance(data, LoaderHandle):
            return data
        # No activations are kept for backward, so twice the training batch usually fits.
        size = self.config.eval_batch_size or 2 * self.config.batch_size
        return build_loader(
            data, self.setup, size, shuffle=False, drop_last=False, seed=0, role=role
        )

    def _evaluate_loader(self, loader: LoaderHandle) -> dict:
        # under inference_mode with model.eval(); every module's mode restored (evaluation.py)
        return evaluate_loader(self.model, self.parts, loader, self.setup, self.classification)
