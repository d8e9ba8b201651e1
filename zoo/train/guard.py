"""Non-finite values never reach an optimizer step, a checkpoint or a result.

Before every optimizer step the guard checks the loss and the global gradient norm (the one
clipping uses; after DDP has averaged the gradients, so every rank decides alike, and not
finite when any gradient is not): a step with a non-finite loss or gradient is skipped (no update;
the schedule and the data move on), and after `max_nonfinite_skips` skipped steps in a row
the run stops with the step, the reason, the folder that really holds the last good
checkpoint and advice that fits the run. Before every save the parameters are checked: a
non-finite one is never written. A non-finite validation loss is never saved as a result.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
from torch.distributed.tensor import DTensor

from zoo.errors import TrainingDiverged
from zoo.train.distributed import DistContext
from zoo.train.layout import list_checkpoints


def parameters_finite(model: torch.nn.Module) -> bool:
    """Whether this process's parameters (its shards, under FSDP) are all finite."""
    return all(
        bool(torch.isfinite(p.to_local() if isinstance(p, DTensor) else p).all())
        for p in model.parameters()
    )


def last_good_checkpoint(out: Path) -> str:
    checkpoints = list_checkpoints(out)
    return str(checkpoints[-1]) if checkpoints else f"none under {out}/checkpoints (set save_every)"


def advice(lr: float, grad_clip: float) -> str:
    if grad_clip > 0:
        return f"lower the learning rate ({lr:g}; gradient clipping is already on at {grad_clip:g})"
    return f"lower the learning rate ({lr:g}) or turn gradient clipping on (grad_clip)"


class NonFiniteGuard:
    """Counts skipped steps and stops the run after too many in a row."""

    def __init__(self, out: Path, max_skips: int, lr: float, grad_clip: float) -> None:
        self.out, self.max_skips = out, max_skips
        self.lr, self.grad_clip = lr, grad_clip
        self.in_a_row = 0
        self.updates = 0  # steps of this process's run that updated the weights

    def check_some_update(self, steps_run: int) -> None:
        """A run (or resumed stretch) whose every step was skipped learned nothing: it ends
        with an error instead of writing `final/` as if it had trained."""
        if steps_run > 0 and self.updates == 0:
            raise TrainingDiverged(
                f"every one of the {steps_run} steps of this run was skipped (non-finite loss or "
                f"gradients): nothing was learned, no final checkpoint written; "
                f"{advice(self.lr, self.grad_clip)}"
            )

    def step_ok(self, step: int, loss: float, norm: float) -> bool:
        """True when the optimizer may step (finite loss and gradient norm); False to skip
        it; raises after too many skips in a row."""
        if math.isfinite(loss) and math.isfinite(norm):
            self.in_a_row = 0
            self.updates += 1
            return True
        self.in_a_row += 1
        if self.in_a_row > self.max_skips:
            what = f"loss {loss}" if not math.isfinite(loss) else "non-finite gradients"
            raise TrainingDiverged(
                f"step {step}: {what}, {self.in_a_row} steps in a row (max_nonfinite_skips "
                f"{self.max_skips}); the last good checkpoint is {last_good_checkpoint(self.out)}; "
                f"{advice(self.lr, self.grad_clip)}"
            )
        return False

    def check_parameters(
        self, model: torch.nn.Module, step: int, where: Path, ctx: DistContext
    ) -> None:
        """Refuse to save non-finite parameters (on every rank alike: any rank's shard)."""
        if not ctx.all_true(parameters_finite(model)):
            raise TrainingDiverged(
                f"step {step}: non-finite parameters, not saved to {where}; the last good "
                f"checkpoint is {last_good_checkpoint(self.out)}; {advice(self.lr, self.grad_clip)}"
            )
