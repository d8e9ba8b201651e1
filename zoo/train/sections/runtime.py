"""The evaluation and runtime sections of a run config: never part of the pretraining key."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from zoo.settings import Settings
from zoo.train.budgets import BudgetMarks
from zoo.train.roles import role
from zoo.train.trackers import TRACKERS

# keys renamed since runs recorded them: old -> new (a config.yaml or a leaderboard's
# _suite.yaml written before still reads, as the new key)
RENAMED_KEYS = {"save_steps": "save_at_steps"}


def renamed(data: Any) -> Any:
    """`data` (a mapping of config keys) with each old key of `RENAMED_KEYS` under its new
    name; both given is an error, naming them."""
    if not isinstance(data, dict) or not any(old in data for old in RENAMED_KEYS):
        return data
    out = dict(data)
    for old, new in RENAMED_KEYS.items():
        if old in out:
            if new in out:
                raise ValueError(f"{old} and {new} are one setting (now {new}): give it once")
            out[new] = out.pop(old)
    return out


class EvaluationSettings(Settings):
    """Evaluation and checkpoints along the run, logging and trackers."""

    eval_every: int = Field(
        0,
        ge=0,
        description="validation every N steps, 0 = only at the end",
        json_schema_extra=role("runtime"),
    )
    eval_batches: int = Field(
        8, gt=0, description="validation batches per evaluation", json_schema_extra=role("runtime")
    )
    save_every: int = Field(
        0,
        ge=0,
        description="checkpoint every N steps, 0 = only final/",
        json_schema_extra=role("runtime"),
    )
    save_at_steps: list[Annotated[int, Field(gt=0)]] = Field(
        default_factory=list,
        description="also checkpoint at these steps (evaluated along training); not Hugging "
        "Face's save_steps, an interval (here save_every)",
        json_schema_extra=role("runtime"),
    )
    save_at: BudgetMarks = Field(
        default_factory=BudgetMarks,
        description="also checkpoint at the first step reaching each of these budgets",
        json_schema_extra=role("runtime", recipe=False),
    )
    log_every: int = Field(
        10, gt=0, description="metrics.jsonl line every N steps", json_schema_extra=role("runtime")
    )
    report_to: list[str] = Field(
        default_factory=list,
        description="also send the metrics to these trackers: tensorboard (OUTPUT_DIR/"
        "tensorboard/), wandb ($WANDB_PROJECT, WANDB_MODE=offline without network)",
        json_schema_extra=role("runtime"),
    )

    @model_validator(mode="before")
    @classmethod
    def _renamed_keys(cls, data: Any) -> Any:
        return renamed(data)

    @field_validator("save_at_steps", mode="before")
    @classmethod
    def _steps_not_interval(cls, v: object) -> object:
        if isinstance(v, int) and not isinstance(v, bool):
            raise ValueError(
                "a list of steps to checkpoint at (e.g. [1000, 2000]); for a checkpoint every "
                f"{v} steps, as Hugging Face's save_steps means, use save_every: {v}"
            )
        return v

    @field_validator("report_to")
    @classmethod
    def _known_trackers(cls, v: list[str]) -> list[str]:
        for name in v:
            if name not in TRACKERS:
                raise ValueError(TRACKERS.unknown_message(name))
        return v


class RuntimeSettings(Settings):
    """Where and how the run is carried out: output folder, device, strategy, compilation."""

    output_dir: str = Field(
        description="where checkpoints, metrics and logs go",
        json_schema_extra=role("runtime", recipe=False),
    )
    overwrite: bool = Field(
        False,
        description="start anew in an --output-dir that holds a run already, clearing it whole "
        "(without it, such a folder is refused unless --resume continues it)",
        json_schema_extra=role("runtime", recipe=False),
    )
    pretrain_key: str | None = Field(
        None,
        description="the suite cache key of this run (set by hlm run; recorded only)",
        json_schema_extra=role("runtime", recipe=False),
    )
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto",
        description="where to train: auto (cuda where torch sees a GPU, else cpu), cpu or cuda "
        "(under torchrun, one GPU per local rank, nccl)",
        json_schema_extra=role("runtime"),
    )
    strategy: Literal["ddp", "fsdp"] = Field(
        "ddp",
        description="how a torchrun job spreads the model over its processes: ddp (a full copy "
        "each, gradients all-reduced) or fsdp (FSDP2 fully_shard: parameters, gradients and "
        "optimizer state sharded, each transformer block gathered when it runs); one process "
        "trains the plain model either way",
        json_schema_extra=role("runtime"),
    )
    compile: bool = Field(
        False,
        description="run the training step's forward and loss through torch.compile "
        "(inductor: C++ on the CPU, Triton on CUDA); the first steps pay the compilation",
        json_schema_extra=role("runtime"),
    )
    progress: bool = Field(
        True, description="progress bar", json_schema_extra=role("runtime", recipe=False)
    )
