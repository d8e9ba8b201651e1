"""The optimisation and schedule sections of a run config."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    Field,
)

from zoo.settings import Settings
from zoo.train.limits import MAX_STEPS
from zoo.train.roles import role

Schedule = Literal["triangular", "cosine", "constant"]
Beta = Annotated[float, Field(ge=0, lt=1)]


class OptimSettings(Settings):
    """The optimisation: AdamW, clipping, numerics and the non-finite guard."""

    lr: float | None = Field(
        None,
        gt=0,
        description="peak learning rate; unset: the preset's",
        json_schema_extra=role("resume"),
    )
    weight_decay: float | None = Field(
        None,
        ge=0,
        description="AdamW weight decay; unset: the preset's",
        json_schema_extra=role("weights"),
    )
    betas: tuple[Beta, Beta] | None = Field(
        None,
        description="AdamW betas, each in [0, 1); unset: the preset's",
        json_schema_extra=role("weights"),
    )
    eps: float | None = Field(
        None,
        gt=0,
        lt=1,
        description="AdamW epsilon; unset: the preset's",
        json_schema_extra=role("weights"),
    )
    grad_clip: float | None = Field(
        None,
        ge=0,
        description="global-norm clipping, 0 = off; unset: the preset's",
        json_schema_extra=role("resume"),
    )
    bf16: bool = Field(
        False, description="bf16 autocast for the body", json_schema_extra=role("weights")
    )
    fast_dropout: bool = Field(
        True,
        description="draw CPU dropout masks from 64-bit random words split into 15-bit lanes "
        "(same drop probability within 2^-16, a quarter of torch's bernoulli_ draws), apply them "
        "block by block, and compute attention with dropout a batch slice at a time; no effect "
        "on CUDA or on the saved checkpoint",
        json_schema_extra=role("weights"),
    )
    flush_denormal: bool = Field(
        True,
        description="flush denormal floats to zero on the CPU (peaked softmaxes underflow into "
        "denormals, which x86 processes ~100x slower)",
        json_schema_extra=role("weights"),
    )
    max_nonfinite_skips: int = Field(
        3,
        ge=0,
        description="steps in a row whose update is skipped for a non-finite loss or gradient "
        "before the run stops",
        json_schema_extra=role("resume"),
    )


class ScheduleSettings(Settings):
    """The schedule: its length, warm-up and shape, and the budgets that stop a run."""

    steps: int | None = Field(
        None,
        ge=0,
        le=MAX_STEPS,
        description="optimizer steps (the schedule's length, and the step budget); unset: the "
        "preset's; 0 saves the initial weights as `final/` (an untrained control)",
        json_schema_extra=role("resume"),
    )
    schedule: Schedule | None = Field(
        None,
        description="learning-rate schedule; unset: the preset's",
        json_schema_extra=role("resume"),
    )
    warmup_steps: int | None = Field(
        None,
        ge=0,
        le=MAX_STEPS,
        description="linear warm-up steps; unset: the preset's",
        json_schema_extra=role("resume"),
    )
    min_lr_ratio: float | None = Field(
        None,
        ge=0,
        lt=1,
        description="cosine schedule's end, x the peak; unset: the preset's",
        json_schema_extra=role("resume"),
    )
    max_tokens: int | None = Field(
        None,
        gt=0,
        description="stop once this many training tokens are seen (a budget)",
        json_schema_extra=role("resume"),
    )
    max_flops: float | None = Field(
        None,
        gt=0,
        description="stop at this many training FLOPs (a budget)",
        json_schema_extra=role("resume"),
    )
    max_seconds: float | None = Field(
        None,
        gt=0,
        description="stop after this much training-loop wall time (a budget)",
        json_schema_extra=role("resume"),
    )
