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

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from zoo.data.cache import TrainingCorpus, training_corpus
from zoo.data.corpus import source_problem
from zoo.errors import UserError
from zoo.models import PRESETS
from zoo.objectives import OBJECTIVES, LossOptions
from zoo.registry import load_plugin
from zoo.tokenizers import min_vocab_size
from zoo.train.trackers import TRACKERS
from zoo.yaml_files import read_yaml_mapping

Schedule = Literal["triangular", "cosine", "constant"]
Beta = Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)]

# Upper bounds: far above any real run, low enough that a typo fails here and not as an
# allocation abort (a 10^11 vocabulary) or an endless loop later.
MAX_VOCAB = 2**21
MAX_STEPS = 10**9
MAX_SEQUENCES = 2**20
MAX_POSITIONS = 2**20


class BudgetMarks(BaseModel):
    """Budgets at which a run keeps a checkpoint, the first step it reaches each (so that
    models can be compared at equal tokens, FLOPs or seconds, paper Table 1)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tokens: list[Annotated[int, Field(gt=0)]] = Field(default_factory=list)
    flops: list[Annotated[float, Field(gt=0, allow_inf_nan=False)]] = Field(default_factory=list)
    seconds: list[Annotated[float, Field(gt=0, allow_inf_nan=False)]] = Field(default_factory=list)

    @classmethod
    def from_flag(cls, text: str) -> BudgetMarks:
        """`tokens=1e6,flops=2e15,tokens=4e6` (a command-line flag) as marks; a ValueError
        (which argparse reports with the flag) when a part is not NAME=NUMBER."""
        marks: dict[str, list[float]] = {name: [] for name in cls.model_fields}
        for part in filter(None, text.split(",")):
            name, sep, value = part.partition("=")
            if not sep or name.strip() not in marks:
                raise ValueError(f"{part!r}: expected NAME=NUMBER, NAME one of {', '.join(marks)}")
            marks[name.strip()].append(float(value))
        marks["tokens"] = [int(t) if float(t).is_integer() else t for t in marks["tokens"]]
        try:
            return cls.model_validate(marks)
        except ValidationError as exc:
            raise ValueError(format_validation_error(exc, text).split(": ", 1)[1]) from None

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
    tokenizer: str | None = Field(
        None, description="tokenizer folder or hub id; unset: trained on the corpus"
    )
    vocab_size: int | None = Field(
        None, gt=0, le=MAX_VOCAB, description="vocabulary size; unset: the preset's"
    )
    allow_smaller_vocab: bool = Field(
        False,
        description="when the tokenizer trained on the corpus cannot reach vocab_size, train "
        "with the size it reached (with a warning) instead of stopping",
    )
    corpus: list[str] = Field(
        default_factory=lambda: ["synthetic"],
        min_length=1,
        description="corpus sources: synthetic[:N], hub:NAME[:CONFIG][@SPLIT], or local files, "
        "folders and globs (tried under . and $HLM_DATA_ROOT)",
    )
    validation: list[str] | None = Field(
        None,
        min_length=1,
        description="validation sources; unset: hold out validation_fraction of the corpus",
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
        le=MAX_STEPS,
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
        le=MAX_SEQUENCES,
        description="global batch: sequences per optimizer step, all processes and "
        "micro-batches together (the paper's batch size); unset: the preset's",
    )
    micro_batch_size: int | None = Field(
        None,
        gt=0,
        le=MAX_SEQUENCES,
        description="sequences per forward pass in each process; unset: the largest that "
        "divides the process's share of the batch within micro_tokens",
    )
    micro_tokens: int = Field(
        16384, gt=0, description="most tokens per forward pass when micro_batch_size is unset"
    )
    seq_len: int | None = Field(
        None,
        gt=0,
        le=MAX_POSITIONS,
        description="tokens per sequence, at most the preset's positions; unset: the preset's",
    )
    lr: float | None = Field(
        None, gt=0, allow_inf_nan=False, description="peak learning rate; unset: the preset's"
    )
    weight_decay: float | None = Field(
        None, ge=0, allow_inf_nan=False, description="AdamW weight decay; unset: the preset's"
    )
    betas: tuple[Beta, Beta] | None = Field(
        None, description="AdamW betas, each in [0, 1); unset: the preset's"
    )
    eps: float | None = Field(
        None, gt=0, lt=1, allow_inf_nan=False, description="AdamW epsilon; unset: the preset's"
    )
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
    seed: int = Field(
        0, ge=0, le=2**32 - 1, description="seed of initialisation, batches and dropout"
    )

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
    strategy: Literal["ddp", "fsdp"] = Field(
        "ddp",
        description="how a torchrun job spreads the model over its processes: ddp (a full copy "
        "each, gradients all-reduced) or fsdp (FSDP2 fully_shard: parameters, gradients and "
        "optimizer state sharded, each transformer block gathered when it runs); one process "
        "trains the plain model either way",
    )
    compile: bool = Field(
        False,
        description="run the training step's forward and loss through torch.compile "
        "(inductor: C++ on the CPU, Triton on CUDA); the first steps pay the compilation",
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
    save_steps: list[Annotated[int, Field(gt=0)]] = Field(
        default_factory=list,
        description="also checkpoint at these steps (evaluated along training)",
    )
    save_at: BudgetMarks = Field(
        default_factory=BudgetMarks,
        description="also checkpoint at the first step reaching each of these budgets",
    )
    log_every: int = Field(10, gt=0, description="metrics.jsonl line every N steps")
    report_to: list[str] = Field(
        default_factory=list,
        description="also send the metrics to these trackers: tensorboard (OUTPUT_DIR/"
        "tensorboard/), wandb ($WANDB_PROJECT, WANDB_MODE=offline without network)",
    )
    progress: bool = Field(True, description="progress bar")

    def training_text(self) -> TrainingCorpus:
        """The training text, and its validation sources or the part held out of it."""
        return training_corpus(
            self.corpus, self.validation, self.max_documents, self.validation_fraction, self.seed
        )

    @field_validator("plugins")
    @classmethod
    def _import_plugins(cls, v: list[str]) -> list[str]:
        for plugin in v:
            try:
                load_plugin(plugin)
            except UserError as exc:  # reported with the key, like every other value
                raise ValueError(str(exc)) from None
        return v

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, v: str) -> str:
        if v not in PRESETS:
            raise ValueError(PRESETS.unknown_message(v))
        return v

    @field_validator("vocab_size")
    @classmethod
    def _vocab_fits_tokenizer(cls, v: int | None, info: ValidationInfo) -> int | None:
        if v is not None and info.data.get("tokenizer") is None and "preset" in info.data:
            kind = PRESETS.get(info.data["preset"])().kind
            if v < min_vocab_size(kind):
                raise ValueError(
                    f"{v} is too small for the {kind} tokenizer trained here: it must be >= "
                    f"{min_vocab_size(kind)} (its special tokens, alphabet and one more)"
                )
        return v

    @field_validator("seq_len")
    @classmethod
    def _seq_len_fits_positions(cls, v: int | None, info: ValidationInfo) -> int | None:
        if v is not None and "preset" in info.data:
            positions = PRESETS.get(info.data["preset"])().max_positions
            if v > positions:
                raise ValueError(
                    f"{v} is longer than the {info.data['preset']} positions ({positions})"
                )
        return v

    @field_validator("corpus", "validation")
    @classmethod
    def _sources_exist(cls, v: list[str] | None) -> list[str] | None:
        for i, source in enumerate(v or []):
            problem = source_problem(source)
            if problem is not None:
                raise ValueError(f"[{i}] {problem}")
        return v

    @field_validator("report_to")
    @classmethod
    def _known_trackers(cls, v: list[str]) -> list[str]:
        for name in v:
            if name not in TRACKERS:
                raise ValueError(TRACKERS.unknown_message(name))
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


def load_config(path: str | None, overrides: dict[str, Any]) -> PretrainConfig:
    """A config from an optional YAML file, with CLI `overrides` (non-None values) on top.

    `overrides` may hold a ``loss`` mapping; its keys are merged into the file's ``loss:``."""
    data: dict[str, Any] = read_yaml_mapping(Path(path), "config keys") if path is not None else {}
    loss = {**(data["loss"] if isinstance(data.get("loss"), dict) else {})}
    loss.update({k: v for k, v in overrides.pop("loss", {}).items() if v is not None})
    data.update({k: v for k, v in overrides.items() if v is not None})
    if loss:
        data["loss"] = loss
    try:
        return PretrainConfig.model_validate(data)
    except ValidationError as exc:
        raise UserError(format_validation_error(exc, path or "command line")) from None
