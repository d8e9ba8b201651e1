"""The `throughput` task's parameters, apart from its measuring (`throughput_steps.py`, which
imports torch) and its declaration (`throughput.py`), which both read them."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from zoo.settings import Settings


class ThroughputParams(Settings):
    steps: int = Field(5, gt=0, description="measured steps per model")
    warmup: int = Field(2, ge=0)
    baseline: str | None = Field("ce", description="objective of the twin measured side by side")
    hf_baseline: bool = Field(
        True, description="also time Hugging Face's full-projection step (speedup_vs_hf)"
    )
    memory: bool = Field(
        True, description="measure peak memory (RSS on the CPU, allocator on CUDA)"
    )
    mfu: bool = Field(
        True,
        description="sample the matmul roofline after each measured round for the `mfu` row "
        "(on a CPU, seconds of a core per sample); false: no `mfu` row",
    )
    max_batch: bool = Field(False, description="CUDA: find the largest batch that fits")
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto", description="where to measure; auto: the pretraining config's device"
    )
    batch_size: int | None = Field(
        None, gt=0, description="sequences per measured step; default: the recipe's micro-batch"
    )
    seq_len: int | None = Field(None, gt=0)
