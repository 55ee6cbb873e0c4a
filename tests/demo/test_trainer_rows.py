"""The Trainer rows are clocked through Trainer.fit(on_epoch_end=...), one turn per epoch."""

import dataclasses

import torch

from torchdoctor.demo import rows
from torchdoctor.demo.stack import plan, uses_trainer
from torchdoctor.demo.workload import prepare

CPU = torch.device("cpu")


def test_a_trainer_row_interleaves_with_a_script_row_and_times_every_epoch(tmp_path):
    workload = prepare("shapes", quick=True, cache_dir=tmp_path)
    workload.size = dataclasses.replace(workload.size, epochs=3)
    steps = plan("cpu", model_has_conv=False)
    trainer_row = next(i for i in range(len(steps)) if uses_trainer(steps, i))
    chosen = [steps[0], *steps[1 : trainer_row + 1]]
    turns = []
    results = rows.run_rows(
        workload, chosen, CPU, on_turn=lambda index, baton: turns.append((index, len(baton.times)))
    )
    naive, trainer = results[0], results[-1]
    assert len(naive.epoch_times_s) == len(trainer.epoch_times_s) == 3  # no extra, none lost
    assert all(t > 0 for t in trainer.epoch_times_s)
    assert sum(trainer.epoch_times_s) <= trainer.wall_s
    # the rows take turns epoch by epoch: the Trainer row's epoch 2 starts after the others' 1st
    trainer_turns = [count for index, count in turns if index == len(chosen) - 1]
    assert trainer_turns == [1, 2, 3]
    first_round = [index for index, count in turns if count == 1]
    assert first_round == list(range(len(chosen)))
