"""The pretraining configuration: one typed model, from a YAML file and/or CLI flags.

Fields left as ``None`` take the preset's paper recipe (Appendix D) when resolved by
`resolve()`; the resolved config is written next to the checkpoint, so every run records the
numbers it actually used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from zoo.errors import UserError
from zoo.objectives import DUPLICATE_MODES


class PretrainConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    preset: str = Field(description="model preset (hlm ls)")
    objective: str = Field("cwt", description="pretraining objective (hlm ls)")
    output_dir: str = Field(description="where checkpoints, metrics and logs go")
    vocab_size: int | None = Field(None, description="vocabulary size (default: preset's)")
    tokenizer: str | None = Field(
        None, description="tokenizer folder/hub id; trained on the corpus if unset"
    )
    corpus: list[str] = Field(default_factory=lambda: ["synthetic"], description="corpus sources")
    validation: list[str] | None = Field(
        None, description="validation sources (default: hold out a fraction)"
    )
    validation_fraction: float = 0.02
    max_documents: int | None = Field(
        None, description="use only the first N documents (quick runs)"
    )
    init_from: str | None = Field(
        None, description="start from this checkpoint instead of random init"
    )

    steps: int | None = None
    batch_size: int | None = Field(None, description="micro-batch size per process")
    grad_accum: int = 1
    seq_len: int | None = None
    lr: float | None = None
    weight_decay: float | None = None
    betas: tuple[float, float] | None = None
    eps: float | None = None
    grad_clip: float | None = None
    schedule: Literal["triangular", "cosine", "constant"] | None = None
    warmup_steps: int | None = None
    bf16: bool = False
    seed: int = 0

    mlm_probability: float = 0.15
    temperature: float = 1.0
    duplicates: str = "keep"
    cwt_impl: Literal["auto", "plain", "chunked", "recompute", "torch", "cce", "liger"] = Field(
        "auto",
        description="contrastive loss kernel: plain [K, K], chunked, recompute, torch, auto by "
        "size, or (CUDA, where installed) cce / liger",
    )
    ce_impl: Literal["plain", "chunked", "torch", "cce", "liger"] = Field(
        "plain",
        description="vocabulary CE at the selected positions: plain [K, V], chunked, torch, or "
        "(CUDA, where installed) cce / liger",
    )
    loss_chunk: int = Field(1024, gt=0, description="rows per block of the chunked losses")
    negatives: Literal["local", "global"] = Field(
        "local",
        description="contrastive negatives: this process's batch, or every rank's batch "
        "all-gathered (torchrun; same as local in one process)",
    )
    sparse_embeddings: bool = Field(
        False,
        description="sparse input-embedding gradients + SparseAdam (headless objectives): update cost "
        "proportional to the tokens in the batch, not to V",
    )
    prune_last_layer: bool = Field(
        True,
        description="encoders: run the last layer's queries and feed-forward only at the masked "
        "positions, the only ones a loss reads (same values; ~17% fewer FLOPs for 4 layers)",
    )
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto",
        description="where to train: auto (cuda where torch sees a GPU, else cpu), cpu or cuda "
        "(under torchrun, one GPU per local rank, nccl)",
    )
    fast_dropout: bool = Field(
        True,
        description="draw CPU dropout masks from 64-bit random words split into 15-bit lanes "
        "(same drop probability within 2^-16, a quarter of torch's bernoulli_ draws), apply them "
        "block by block, and compute attention with dropout a batch slice at a time; no effect "
        "on CUDA or on the saved checkpoint",
    )
    untie_head: bool = Field(
        False, description="give the model a separate LM head initialised from the embeddings"
    )
    freeze_body: bool = Field(False, description="train only the LM head (probe)")
    flush_denormal: bool = Field(
        True,
        description="flush denormal floats to zero on the CPU (peaked softmaxes underflow into "
        "denormals, which x86 processes ~100x slower)",
    )
    plugins: list[str] = Field(
        default_factory=list, description="Python files that register objectives"
    )

    eval_every: int = 0
    eval_batches: int = 8
    save_every: int = 0
    log_every: int = 10
    progress: bool = True

    @field_validator("duplicates")
    @classmethod
    def _dup(cls, v: str) -> str:
        if v not in DUPLICATE_MODES:
            raise ValueError(f"must be one of {', '.join(DUPLICATE_MODES)}")
        return v

    @field_validator("steps", "batch_size", "seq_len", "vocab_size", "grad_accum")
    @classmethod
    def _positive(cls, v: int | None) -> int | None:
        if v is not None and v <= 0:
            raise ValueError("must be > 0")
        return v

    @field_validator("mlm_probability", "validation_fraction")
    @classmethod
    def _fraction(cls, v: float) -> float:
        if not 0 < v < 1:
            raise ValueError("must be in (0, 1)")
        return v


class ResolvedRecipe(BaseModel):
    """Every training number, after the preset defaults are filled in."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    steps: int
    batch_size: int
    grad_accum: int
    seq_len: int
    lr: float
    weight_decay: float
    betas: tuple[float, float]
    eps: float
    grad_clip: float
    schedule: Literal["triangular", "cosine", "constant"]
    warmup_steps: int


def format_validation_error(exc: ValidationError, source: str) -> str:
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in err["loc"]).replace(
            ".[", "["
        )
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        lines.append(f"{source}: {loc or '<root>'}: {msg}")
    return "\n".join(lines)


def load_config(path: str | None, overrides: dict[str, object]) -> PretrainConfig:
    """A config from an optional YAML file, with CLI `overrides` (non-None values) on top."""
    data: dict[str, object] = {}
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise UserError(f"config file not found: {path}")
        try:
            loaded = yaml.safe_load(p.read_text())
        except yaml.YAMLError as exc:
            raise UserError(f"{path}: invalid YAML: {exc}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise UserError(f"{path}: expected a mapping of config keys")
        data.update(loaded or {})
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return PretrainConfig.model_validate(data)
    except ValidationError as exc:
        raise UserError(format_validation_error(exc, path or "command line")) from None
