"""Learning-rate schedules with linear warm-up: triangular (linear decay to 0), cosine (down to
`floor` x the peak: Pythia ends at 10%), constant."""

from __future__ import annotations

import math

import torch
from torch.optim.lr_scheduler import LambdaLR


def lr_factor(step: int, schedule: str, warmup: int, total: int, floor: float = 0.0) -> float:
    """Multiplier of the peak learning rate at `step` (0-based)."""
    if warmup > 0 and step < warmup:
        return (step + 1) / warmup
    if schedule == "constant":
        return 1.0
    progress = (step - warmup) / max(1, total - warmup)
    progress = min(max(progress, 0.0), 1.0)
    if schedule == "triangular":
        return 1.0 - progress
    if schedule == "cosine":
        return floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))
    raise ValueError(f"unknown schedule {schedule!r}")


def make_scheduler(
    opt: torch.optim.Optimizer, schedule: str, warmup: int, total: int, floor: float = 0.0
) -> LambdaLR:
    return LambdaLR(opt, lambda s: lr_factor(s, schedule, warmup, total, floor))
