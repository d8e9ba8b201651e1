"""The pretraining configuration: one typed model, from a YAML file and/or CLI flags.

Fields left as ``None`` take the preset's paper recipe (Appendix D) when resolved by
`resolve_recipe`; the resolved config is written next to the checkpoint, so every run records
the numbers it actually used. The loss knobs are one nested model (``loss:``), the options
model of the chosen objective (`zoo.objectives.LossOptions` or its subclass). Every value is
range-checked here, once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from zoo.errors import UserError
from zoo.models.spec import ModelSpec
from zoo.objectives import OBJECTIVES, LossOptions
from zoo.registry import load_plugin

Schedule = Literal["triangular", "cosine", "constant"]


class BudgetMarks(BaseModel):
    """Budgets at which a run keeps a checkpoint, the first step it reaches each (so that
    models can be compared at equal tokens, FLOPs or seconds, paper Table 1)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tokens: list[Annotated[int, Field(gt=0)]] = Field(default_factory=list)
    flops: list[Annotated[float, Field(gt=0, allow_inf_nan=False)]] = Field(default_factory=list)
    seconds: list[Annotated[float, Field(gt=0, allow_inf_nan=False)]] = Field(default_factory=list)

    def reached(self, tokens: int, flops: float, seconds: float) -> list[str]:
        """Every mark at or below these counters, as `tokens=T` / `flops=F` / `seconds=S`."""
        return [
            f"{name}={mark:g}"
            for name, marks, value in (
                ("tokens", self.tokens, tokens),
                ("flops", self.flops, flops),
                ("seconds", self.seconds, seconds),
            )
            for mark in marks
            if value >= mark
        ]


class PretrainConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    plugins: list[str] = Field(
        default_factory=list,
        description="Python files that register objectives (imported when the config is "
        "validated, before the objective is looked up)",
    )
    preset: str = Field(description="model preset (hlm ls)")
    objective: str = Field("cwt", description="pretraining objective (hlm ls)")
    loss: LossOptions = Field(
        default_factory=LossOptions,
        validate_default=True,
        description="the objective's loss options (its own options model)",
    )
    output_dir: str = Field(description="where checkpoints, metrics and logs go")
    pretrain_key: str | None = Field(
        None, description="the suite cache key of this run (set by hlm run; recorded only)"
    )
    vocab_size: int | None = Field(None, gt=0, description="vocabulary size; unset: the preset's")
    allow_smaller_vocab: bool = Field(
        False,
        description="when the tokenizer trained on the corpus cannot reach vocab_size, train "
        "with the size it reached (with a warning) instead of stopping",
    )
    tokenizer: str | None = Field(
        None, description="tokenizer folder or hub id; unset: trained on the corpus"
    )
    corpus: list[str] = Field(
        default_factory=lambda: ["synthetic"], min_length=1, description="corpus sources"
    )
    validation: list[str] | None = Field(
        None, description="validation sources; unset: hold out validation_fraction of the corpus"
    )
    validation_fraction: float = Field(
        0.02, gt=0, lt=1, description="share of documents held out for validation"
    )
    max_documents: int | None = Field(
        None, gt=0, description="use only the first N documents (quick runs)"
    )
    init_from: str | None = Field(
        None, description="start from this checkpoint instead of random init"
    )

    steps: int | None = Field(
        None,
        gt=0,
        description="optimizer steps (the schedule's length, and the step budget); unset: the "
        "preset's",
    )
    max_tokens: int | None = Field(
        None, gt=0, description="stop once this many training tokens are seen (a budget)"
    )
    max_flops: float | None = Field(
        None, gt=0, allow_inf_nan=False, description="stop at this many training FLOPs (a budget)"
    )
    max_seconds: float | None = Field(
        None,
        gt=0,
        allow_inf_nan=False,
        description="stop after this much training-loop wall time (a budget)",
    )
    batch_size: int | None = Field(
        None,
        gt=0,
        description="global batch: sequences per optimizer step, all processes and "
        "micro-batches together (the paper's batch size); unset: the preset's",
    )
    micro_batch_size: int | None = Field(
        None,
        gt=0,
        description="sequences per forward pass in each process; unset: the largest that "
        "divides the process's share of the batch within micro_tokens",
    )
    micro_tokens: int = Field(
        16384, gt=0, description="most tokens per forward pass when micro_batch_size is unset"
    )
    seq_len: int | None = Field(None, gt=0, description="tokens per sequence; unset: the preset's")
    lr: float | None = Field(
        None, gt=0, allow_inf_nan=False, description="peak learning rate; unset: the preset's"
    )
    weight_decay: float | None = Field(
        None, ge=0, allow_inf_nan=False, description="AdamW weight decay; unset: the preset's"
    )
    betas: tuple[float, float] | None = Field(None, description="AdamW betas; unset: the preset's")
    eps: float | None = Field(None, gt=0, description="AdamW epsilon; unset: the preset's")
    grad_clip: float | None = Field(
        None,
        ge=0,
        allow_inf_nan=False,
        description="global-norm clipping, 0 = off; unset: the preset's",
    )
    schedule: Schedule | None = Field(
        None, description="learning-rate schedule; unset: the preset's"
    )
    warmup_steps: int | None = Field(
        None, ge=0, description="linear warm-up steps; unset: the preset's"
    )
    min_lr_ratio: float | None = Field(
        None, ge=0, lt=1, description="cosine schedule's end, x the peak; unset: the preset's"
    )
    bf16: bool = Field(False, description="bf16 autocast for the body")
    seed: int = Field(0, ge=0, description="seed of initialisation, batches and dropout")

    mlm_probability: float = Field(0.15, gt=0, lt=1, description="encoders: share of masked tokens")
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
    attention: Literal["sdpa", "xformers"] = Field(
        "sdpa",
        description="attention kernel: sdpa (torch's, everywhere) or xformers (CUDA, where "
        "installed; the paper trained with it)",
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

    max_nonfinite_skips: int = Field(
        3,
        ge=0,
        description="steps in a row whose update is skipped for a non-finite loss or gradient "
        "before the run stops",
    )
    eval_every: int = Field(0, ge=0, description="validation every N steps, 0 = only at the end")
    eval_batches: int = Field(8, gt=0, description="validation batches per evaluation")
    save_every: int = Field(0, ge=0, description="checkpoint every N steps, 0 = only final/")
    save_steps: list[int] = Field(
        default_factory=list,
        description="also checkpoint at these steps (evaluated along training)",
    )
    save_at: BudgetMarks = Field(
        default_factory=BudgetMarks,
        description="also checkpoint at the first step reaching each of these budgets",
    )
    log_every: int = Field(10, gt=0, description="metrics.jsonl line every N steps")
    progress: bool = Field(True, description="progress bar")

    @field_validator("plugins")
    @classmethod
    def _import_plugins(cls, v: list[str]) -> list[str]:
        for plugin in v:
            load_plugin(plugin)
        return v

    @field_validator("objective")
    @classmethod
    def _known_objective(cls, v: str) -> str:
        if v not in OBJECTIVES:
            raise ValueError(OBJECTIVES.unknown_message(v))
        return v

    @field_validator("loss", mode="before")
    @classmethod
    def _objective_options(cls, v: Any, info: ValidationInfo) -> Any:
        """Validate `loss:` against the objective's own options model (a LossOptions subclass)."""
        name = info.data["objective"] if "objective" in info.data else None
        if name is None:
            return v
        options = OBJECTIVES.get(name).options
        if isinstance(v, LossOptions):  # the default, or a copy: keep only what was set
            v = v.model_dump(exclude_unset=True)
        if options is LossOptions or not isinstance(v, dict):
            return v  # validated by the field itself, with nested key paths
        try:
            return options.model_validate(v)
        except ValidationError as exc:
            raise ValueError(
                "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            ) from None


class ResolvedRecipe(BaseModel):
    """Every training number, after the preset defaults are filled in."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    steps: int
    batch_size: int  # global: sequences per optimizer step
    micro_batch_size: int  # per process and forward pass
    grad_accum: int  # micro-batches per process and step
    seq_len: int
    lr: float
    weight_decay: float
    betas: tuple[float, float]
    eps: float
    grad_clip: float
    schedule: Schedule
    warmup_steps: int
    min_lr_ratio: float = 0.0


def split_batch(
    batch_size: int, world_size: int, seq_len: int, micro: int | None, micro_tokens: int
) -> tuple[int, int]:
    """(micro-batch size, accumulation steps) with batch = micro x accumulation x world: the
    given micro-batch, or the largest divisor of each process's share within `micro_tokens`."""
    if batch_size % world_size:
        raise UserError(f"batch_size {batch_size} does not split over {world_size} processes")
    share = batch_size // world_size
    if micro is None:
        fits = [d for d in range(1, share + 1) if share % d == 0 and d * seq_len <= micro_tokens]
        micro = max(fits, default=1)
    if share % micro:
        raise UserError(
            f"micro_batch_size {micro} does not divide each process's {share} sequences "
            f"(batch_size {batch_size} over {world_size} processes)"
        )
    return micro, share // micro


def resolve_recipe(cfg: PretrainConfig, spec: ModelSpec, world_size: int = 1) -> ResolvedRecipe:
    """The config's training numbers, each unset one taken from the preset's paper recipe;
    the global batch split into micro-batches and accumulation for `world_size` processes.
    A headless objective takes the preset's headless values (`Recipe.for_objective`)."""
    r = spec.recipe.for_objective(OBJECTIVES.get(cfg.objective).headless)
    batch = r.batch_size if cfg.batch_size is None else cfg.batch_size
    seq_len = r.seq_len if cfg.seq_len is None else cfg.seq_len
    micro, accum = split_batch(batch, world_size, seq_len, cfg.micro_batch_size, cfg.micro_tokens)
    return ResolvedRecipe(
        steps=r.steps if cfg.steps is None else cfg.steps,
        batch_size=batch,
        micro_batch_size=micro,
        grad_accum=accum,
        seq_len=seq_len,
        lr=r.lr if cfg.lr is None else cfg.lr,
        weight_decay=r.weight_decay if cfg.weight_decay is None else cfg.weight_decay,
        betas=r.betas if cfg.betas is None else cfg.betas,
        eps=r.eps if cfg.eps is None else cfg.eps,
        grad_clip=r.grad_clip if cfg.grad_clip is None else cfg.grad_clip,
        schedule=r.schedule if cfg.schedule is None else cfg.schedule,
        warmup_steps=r.warmup_steps if cfg.warmup_steps is None else cfg.warmup_steps,
        min_lr_ratio=r.min_lr_ratio if cfg.min_lr_ratio is None else cfg.min_lr_ratio,
    )


def format_validation_error(exc: ValidationError, source: str) -> str:
    """One `SOURCE: key.path: message` line per problem."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in err["loc"]).replace(
            ".[", "["
        )
        msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        lines.append(f"{source}: {loc or '<root>'}: {msg.removeprefix('Value error, ')}")
    return "\n".join(lines)


def read_yaml_mapping(path: Path) -> dict[str, Any]:
    """A YAML file's top-level mapping, or a UserError naming the file."""
    if not path.is_file():
        raise UserError(f"config file not found: {path}")
    try:
        loaded = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: invalid YAML: {exc}") from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise UserError(f"{path}: expected a mapping of config keys")
    return loaded


def load_config(path: str | None, overrides: dict[str, Any]) -> PretrainConfig:
    """A config from an optional YAML file, with CLI `overrides` (non-None values) on top.

    `overrides` may hold a ``loss`` mapping; its keys are merged into the file's ``loss:``."""
    data: dict[str, Any] = read_yaml_mapping(Path(path)) if path is not None else {}
    loss = {**(data["loss"] if isinstance(data.get("loss"), dict) else {})}
    loss.update({k: v for k, v in overrides.pop("loss", {}).items() if v is not None})
    data.update({k: v for k, v in overrides.items() if v is not None})
    if loss:
        data["loss"] = loss
    try:
        return PretrainConfig.model_validate(data)
    except ValidationError as exc:
        raise UserError(format_validation_error(exc, path or "command line")) from None
