"""Which optimizer step closes a training step when several optimizers step in one iteration.

A GAN steps the discriminator's and the generator's optimizers once each per batch; a model split
over two optimizers (encoder/decoder, sparse/dense parameters) does the same. Closing a step at
every optimizer step would make "steps" half-iterations and double samples/s. Instead the cycle
of distinct optimizers stepped in one iteration is learned and a step closes when the LAST
optimizer of the cycle steps.

An iteration ends at a data fetch (a DataLoader `next()`) or, in loops without a DataLoader,
when an optimizer that already stepped in this iteration steps again. Until a first iteration
has ended the cycle is unknown and every optimizer step closes a step (the warm-up absorbs
those). When the cycle changes (an optimizer stops stepping), the optimizer steps that closed no
step are closed at the iteration's end, and the new cycle is learned from it.
"""

from __future__ import annotations


class OptimizerCycle:
    def __init__(self) -> None:
        self.cycle: tuple[int, ...] | None = None
        self.iteration: list[int] = []  # distinct optimizers stepped since the iteration began
        self.open = False  # optimizer steps since the last close that closed no step

    def iteration_ended(self) -> bool:
        """A data fetch starts. True: close the step now (its optimizer steps closed none)."""
        if not self.iteration:
            return False
        self.cycle = tuple(self.iteration)
        self.iteration = []
        close, self.open = self.open, False
        return close

    def stepped(self, optimizer_id: int) -> bool:
        """An optimizer stepped; True: this step closes the training step."""
        if optimizer_id in self.iteration:  # repeated without a data fetch: a new iteration
            if self.iteration_ended():
                self.iteration.append(optimizer_id)
                return True  # closed at once, with this optimizer's step in it
        self.iteration.append(optimizer_id)
        if self.cycle is None or self.cycle[-1] == optimizer_id:
            self.open = False
            return True
        self.open = True
        return False
