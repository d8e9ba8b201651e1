"""Non-finite values never reach an optimizer step, a checkpoint or a result.

At every optimizer step the guard checks the loss and the global gradient norm (the one
clipping uses; after DDP has averaged the gradients, so every rank decides alike, and not
finite when any gradient is not): a step with a non-finite loss or gradient is skipped (no
update; the schedule and the data move on). The check runs on the device where the
optimizer can skip there; the loop reads its flags back at log steps and saves, and after
`max_nonfinite_skips` skipped steps in a row the run stops with the step, the reason, the
folder that really holds the last good checkpoint and advice that fits the run. Before every
save the parameters are checked: a non-finite one is never written. A non-finite validation
loss is never saved as a result.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
from torch import Tensor
from torch.distributed.tensor import DTensor

from zoo.errors import TrainingDiverged
from zoo.train.distributed import DistContext
from zoo.train.layout import list_checkpoints
from zoo.train.optim import optimizers_of
from zoo.train.run import Counters


def parameters_finite(model: torch.nn.Module) -> bool:
    """Whether this process's parameters (its shards, under FSDP) are all finite."""
    return all(
        bool(torch.isfinite(p.to_local() if isinstance(p, DTensor) else p).all())
        for p in model.parameters()
    )


def last_good_checkpoint(out: Path) -> str:
    checkpoints = list_checkpoints(out)
    return str(checkpoints[-1]) if checkpoints else f"none under {out}/checkpoints (set save_every)"


def skips_on_device(optimizer: torch.optim.Optimizer) -> bool:
    """Whether `optimizer` skips an update on the device when told to (fused AdamW reads
    `found_inf` in its kernel); FSDP's sharded parameters take the host's decision."""
    return (
        isinstance(optimizer, torch.optim.AdamW)
        and all(g["fused"] for g in optimizer.param_groups)
        and not any(isinstance(p, DTensor) for g in optimizer.param_groups for p in g["params"])
    )


def advice(lr: float, grad_clip: float) -> str:
    if grad_clip > 0:
        return f"lower the learning rate ({lr:g}; gradient clipping is already on at {grad_clip:g})"
    return f"lower the learning rate ({lr:g}) or turn gradient clipping on (grad_clip)"


class NonFiniteGuard:
    """Skips the update of a step whose loss or gradient norm is not finite, counts the
    skips, and stops the run after too many in a row.

    The decision stays on the device where the optimizer can take it there (fused AdamW's
    `found_inf`: the kernel leaves weights and moments as they were); the guard reads the
    steps' flags back at `settle`, once per log step and before every save. Elsewhere
    (SparseAdam, FSDP's sharded parameters, an unfused AdamW) the step reads its flag at once."""

    def __init__(
        self, out: Path, counters: Counters, max_skips: int, lr: float, grad_clip: float
    ) -> None:
        self.out, self.counters, self.max_skips = out, counters, max_skips
        self.lr, self.grad_clip = lr, grad_clip
        self.in_a_row = 0
        self.updates = 0  # steps of this process's run that updated the weights
        self.pending: list[tuple[int, Tensor]] = []  # (step, (2,): skipped, loss) not read yet
        self.last_skipped = False  # the last step read
        self.on_device: bool | None = None  # whether the run's optimizer skips there, once known

    def step(self, step: int, optimizer: torch.optim.Optimizer, loss: Tensor, norm: Tensor) -> None:
        """Step `optimizer` unless `loss` (every rank's mean) or the gradient `norm` is not
        finite. The step's flag waits for `settle`, unless the optimizer cannot skip on the
        device: then the guard reads it at once (one host sync)."""
        skip = (~(torch.isfinite(loss) & torch.isfinite(norm))).float()  # (), 0. or 1.
        self.pending.append((step, torch.stack([skip, loss.detach().float()])))
        parts = optimizers_of(optimizer)
        if self.on_device is None:  # fixed when the optimizer is made: found once, not per step
            self.on_device = all(skips_on_device(o) for o in parts)
        if self.on_device:
            for o in parts:
                o.found_inf = skip  # type: ignore[attr-defined]  # fused AdamW's kernel reads it
            optimizer.step()
            for o in parts:
                del o.found_inf  # type: ignore[attr-defined]
        else:
            self.settle()
            if not self.last_skipped:
                optimizer.step()

    def settle(self, extra: Tensor | None = None) -> list[float]:
        """Read the pending steps' flags, and `extra` (1-d) with them, in one host copy;
        count the updates and skips (`Counters.skipped_steps`); raise after more than
        `max_skips` skips in a row. Returns `extra`'s values."""
        parts = [f for _, f in self.pending] + ([] if extra is None else [extra])
        host = torch.cat(parts).tolist() if parts else []  # (2 n + e,)
        steps, self.pending = [s for s, _ in self.pending], []
        for i, step in enumerate(steps):
            self._count(step, bool(host[2 * i]), host[2 * i + 1])
        return host[2 * len(steps) :]

    def _count(self, step: int, skipped: bool, loss: float) -> None:
        self.last_skipped = skipped
        if not skipped:
            self.in_a_row, self.updates = 0, self.updates + 1
            return
        self.in_a_row += 1
        self.counters.skipped_steps += 1
        if self.in_a_row > self.max_skips:
            raise self._diverged(step, loss)

    def _diverged(self, step: int, loss: float) -> TrainingDiverged:
        what = f"loss {loss}" if not math.isfinite(loss) else "non-finite gradients"
        return TrainingDiverged(
            f"step {step}: {what}, {self.in_a_row} steps in a row (max_nonfinite_skips "
            f"{self.max_skips}); the last good checkpoint is {last_good_checkpoint(self.out)}; "
            f"{advice(self.lr, self.grad_clip)}"
        )

    def check_some_update(self, steps_run: int) -> None:
        """A run (or resumed stretch) whose every step was skipped learned nothing: it ends
        with an error instead of writing `final/` as if it had trained."""
        self.settle()
        if steps_run > 0 and self.updates == 0:
            raise TrainingDiverged(
                f"every one of the {steps_run} steps of this run was skipped (non-finite loss or "
                f"gradients): nothing was learned, no final checkpoint written; "
                f"{advice(self.lr, self.grad_clip)}"
            )

    def check_parameters(
        self, model: torch.nn.Module, step: int, where: Path, ctx: DistContext
    ) -> None:
        """Refuse to save non-finite parameters (on every rank alike: any rank's shard)."""
        if not ctx.all_true(parameters_finite(model)):
            raise TrainingDiverged(
                f"step {step}: non-finite parameters, not saved to {where}; the last good "
                f"checkpoint is {last_good_checkpoint(self.out)}; {advice(self.lr, self.grad_clip)}"
            )
