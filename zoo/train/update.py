"""One optimizer step, shared by the training loop and the benchmarks' `Stepper`.

    logs = optimizer_step(state, module, [MicroBatch.of(inputs, labels, device)], guard)

The step runs forward and backward over its micro-batches, takes the gradient norm, clips,
and steps the optimizer and the schedule, all without reading a value back to the host:
the logged losses stay device tensors, the FLOPs come from target counts taken where the
labels were made, and the non-finite guard skips the update on the device where the
optimizer can (`zoo.train.guard`). The loop reads everything back once per log step.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass

import torch
from torch import Tensor

from zoo.data.batches import IGNORE
from zoo.flops import train_step_flops
from zoo.train.guard import NonFiniteGuard
from zoo.train.optim import clip_grad_norm, grad_norm
from zoo.train.run import Stepping
from zoo.train.step import queries_of


@dataclass(frozen=True)
class MicroBatch:
    """A micro-batch on the device with its target counts, taken on the host where its
    labels were made: counting the step's FLOPs copies nothing back from the device."""

    inputs: Tensor  # (B, T)
    labels: Tensor  # (B, T), IGNORE where a position has no target
    selected: int  # positions with a target
    longest_row: int  # the most targets in one row

    @classmethod
    def of(cls, inputs: Tensor, labels: Tensor, device: torch.device) -> MicroBatch:
        """`inputs` and `labels` as made on the host (CPU tensors), moved to `device`."""
        selected = labels.numpy() != IGNORE  # (B, T); numpy: only a host tensor has one
        return cls(
            inputs.to(device),
            labels.to(device),
            int(selected.sum()),
            int(selected.sum(1).max()),
        )


def optimizer_step(
    state: Stepping,
    module: torch.nn.Module,
    batches: Iterable[MicroBatch],
    guard: NonFiniteGuard,
) -> dict[str, Tensor]:
    """One optimizer step over `batches`, the step's micro-batches. Returns the logged
    values (means over micro-batches; the loss is every rank's mean), as device tensors.
    A step whose loss or gradient norm is not finite updates nothing (`guard`)."""
    r, cfg = state.recipe, state.cfg
    state.optimizer.zero_grad(set_to_none=True)
    sums: dict[str, Tensor] = {}  # each logged value's sum over micro-batches, on the device
    for batch in batches:
        with torch.autocast(state.ctx.device.type, dtype=torch.bfloat16, enabled=cfg.bf16):
            result = module(batch.inputs, batch.labels)
        loss = result["loss"] / r.grad_accum
        loss.backward()  # even when not finite: every rank takes part in DDP's reduction
        for name, value in result.items():
            part = value.detach().float() / r.grad_accum
            sums[name] = sums[name] + part if name in sums else part
        _count_flops(state, batch)
    sums["loss"] = state.ctx.mean_over_ranks(sums["loss"])  # one decision on every rank
    norm = grad_norm(state.trainable)  # () on the device
    if r.grad_clip > 0:
        clip_grad_norm(state.trainable, r.grad_clip, norm)  # a non-finite norm: skipped below
    guard.step(state.counters.step + 1, state.optimizer, sums["loss"], norm)
    advance_schedule(state)
    return sums


def _count_flops(state: Stepping, batch: MicroBatch) -> None:
    r, cfg = state.recipe, state.cfg
    queries = queries_of(state.spec, r.micro_batch_size, batch.longest_row, cfg.prune_last_layer)
    state.counters.flops += state.ctx.world_size * train_step_flops(
        state.spec, state.objective, r.micro_batch_size, r.seq_len, batch.selected, queries
    )


def advance_schedule(state: Stepping) -> None:
    """The schedule moves on every step, a skipped one too: the learning rate stays a
    function of the step counter (and so of where a resumed run starts). Torch warns that a
    value of the schedule is lost when no optimizer step came yet, which is what is meant
    when a skipped first step never called the optimizer."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", r"Detected call of `lr_scheduler\.step\(\)`")
        state.scheduler.step()
