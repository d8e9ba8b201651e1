"""The parameters of the fine-tuning task types (`glue`, `superglue`, `synthetic`, `xnli`)
and their description in words (`TaskType.describe`: what a row ran, as the report's
protocol quotes it). The task types themselves are in `encoder_benchmarks.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from harness.downstream.benchmarks import PAPER_XNLI_LANGUAGES, xnli
from harness.downstream.data import TaskData
from zoo.settings import Settings
from zoo.train.limits import MAX_POSITIONS

# Appendix E: Table 14 (balanced CE) and Table 12 (plain CE); Table 16 for XNLI
LOSS_DEFAULTS = {"balanced": (1e-5, 0.0), "ce": (5e-6, 0.01)}


MAX_EXAMPLES = 10**8  # past any benchmark's training set


def distinct(values: list[Any] | None) -> list[Any] | None:
    """`values`, each once, or a ValueError naming the one given twice."""
    if values is None:
        return None
    seen: set[Any] = set()
    for v in values:
        if v in seen:
            raise ValueError(f"{v!r} is given twice: each value once")
        seen.add(v)
    return values


class FinetuneParams(Settings):
    tasks: list[str] = Field(
        default_factory=list, description="sub-tasks (default: the paper's set)"
    )
    source: Literal["hub", "local"] = Field(
        "hub", description="hub ids, or local files under data_dir"
    )
    revision: str | None = Field(
        None,
        min_length=1,
        description="with source: hub, the datasets' revision (a commit sha or tag; the same "
        "for every sub-task); default: each one's main branch when it is read",
    )
    data_dir: str | None = Field(None, description="local data root (default: $HLM_DATA_ROOT)")
    train_files: dict[str, list[str]] = Field(
        default_factory=dict, description="sub-task -> your train files"
    )
    eval_files: dict[str, list[str]] = Field(
        default_factory=dict, description="sub-task -> your eval files"
    )
    max_examples: int | None = Field(
        None, gt=0, le=MAX_EXAMPLES, description="cap on training examples (fast runs)"
    )
    max_eval_examples: int | None = Field(None, gt=0, le=MAX_EXAMPLES)
    epochs: int = Field(10, gt=0, le=1000)
    batch_size: int = Field(32, gt=0, le=65_536)
    lr: float | None = Field(None, gt=0, le=10, description="default: 1e-5 (balanced) / 5e-6 (ce)")
    weight_decay: float | None = Field(
        None, ge=0, le=10, description="default: 0 (balanced) / 0.01 (ce)"
    )
    loss: Literal["balanced", "ce"] = "balanced"
    warmup_ratio: float = Field(0.1, ge=0, lt=1)
    max_length: int = Field(128, gt=8, le=MAX_POSITIONS)
    finetune_seeds: int = Field(
        1, gt=0, le=100, description="fine-tuning runs per checkpoint (mean reported)"
    )
    pooling: Literal["cls-pooler", "cls", "mean"] = Field(
        "cls-pooler",
        description="what the head reads: [CLS] through a new pooler (the paper's, as "
        "AutoModelForSequenceClassification builds it), [CLS] alone, or the mean token state",
    )
    schedule: Literal["constant", "linear"] = Field(
        "constant",
        description="the rate after warm-up: constant (the paper's) or decaying linearly to 0",
    )
    lr_grid: list[Annotated[float, Field(gt=0, le=10)]] | None = Field(
        None,
        min_length=2,
        max_length=32,
        description="learning rates tried per model, each fine-tuned on the training set "
        "less a held-out slice and scored there (never on the evaluation set); the best "
        "fine-tunes on the whole training set (unset: lr alone)",
    )
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto", description="where to fine-tune: auto (cuda where torch sees a GPU), cpu or cuda"
    )

    def rate(self) -> tuple[float, float]:
        """The learning rate and weight decay fine-tuning uses: the ones given, else the
        paper's for the loss (`LOSS_DEFAULTS`)."""
        lr, wd = LOSS_DEFAULTS[self.loss]
        return (
            self.lr if self.lr is not None else lr,
            self.weight_decay if self.weight_decay is not None else wd,
        )

    @field_validator("tasks", "lr_grid")
    @classmethod
    def _each_once(cls, values: list[Any] | None) -> list[Any] | None:
        """A task or a rate twice would measure one thing twice (1e-3 and 0.001 included)."""
        return distinct(values)

    @model_validator(mode="after")
    def _one_rate_or_a_grid(self) -> FinetuneParams:
        if self.lr_grid is not None and "lr" in self.model_fields_set:
            raise ValueError(
                f"lr ({self.lr}) and lr_grid ({self.lr_grid}): the grid chooses the rate, so lr "
                "is never read: give one of them"
            )
        return self

    @model_validator(mode="after")
    def _revision_is_read(self) -> FinetuneParams:
        """`revision` pins Hub datasets: with local files it is never read."""
        if self.revision is not None and self.source != "hub":
            raise ValueError(
                f"revision ({self.revision}) pins Hub datasets; with source: {self.source} it "
                "is never read: leave it out"
            )
        return self

    @model_validator(mode="after")
    def _data_dir_is_read(self) -> FinetuneParams:
        """`data_dir` roots local files: from the hub, with no files of yours, it is never read."""
        files = self.train_files or self.eval_files
        if self.data_dir is not None and self.source == "hub" and not files:
            raise ValueError(
                f"data_dir ({self.data_dir}) is read only with source: local or train_files / "
                "eval_files; from the hub it is never read: leave it out"
            )
        return self


class XNLIParams(FinetuneParams):
    mode: Literal["translate-train", "zero-shot"] = Field(
        "translate-train",
        description="fine-tune per language, or on English and evaluate every language",
    )
    languages: list[str] = Field(
        default_factory=lambda: list(PAPER_XNLI_LANGUAGES), min_length=1, max_length=200
    )
    loss: Literal["balanced", "ce"] = "ce"
    lr: float | None = Field(2e-5, gt=0)
    weight_decay: float | None = Field(0.0, ge=0)
    batch_size: int = Field(128, gt=0)
    epochs: int = Field(3, gt=0)

    @field_validator("languages")
    @classmethod
    def _languages_once(cls, values: list[str]) -> list[str]:
        return distinct(values) or values


def describe(p: FinetuneParams, trained_on: str, built_in: bool = False) -> str:
    """What a fine-tuning row ran, in words: epochs, loss and rate, how many training and
    evaluation examples each task had (`trained_on`: which training sets), and where its data
    came from (`built_in`: generated by the task, whatever its `source`)."""
    lr, _ = p.rate()
    loss = "balanced CE" if p.loss == "balanced" else "plain CE"
    train = f"at most {p.max_examples}" if p.max_examples else "all the"
    scored = f"at most {p.max_eval_examples} examples of" if p.max_eval_examples else "all of"
    runs = f", mean of {p.finetune_seeds} fine-tuning runs" if p.finetune_seeds > 1 else ""
    rate = f"lr {lr:g}" if p.lr_grid is None else f"lr of {p.lr_grid} chosen on held-out train"
    recipe = (
        ""
        if (p.pooling, p.schedule) == ("cls-pooler", "constant")
        else (f", {p.pooling} pooling, {p.schedule} schedule")
    )
    hub = f"revision {p.revision}" if p.revision else "its main branch when read"
    read = f", the data from the Hub ({hub})" if p.source == "hub" else ""
    read = ", the data generated by the task" if built_in else read + _own_files(p)
    return (
        f"fine-tuned {p.epochs} epochs ({loss}, {rate}, batch {p.batch_size}{recipe}) on "
        f"{train} training examples {trained_on}, scored on {scored} each one's evaluation "
        f"split{runs}{read}"
    )


def _own_files(p: FinetuneParams) -> str:
    """The splits read from the suite's own files (`train_files`, `eval_files`), which any
    `source` reads instead of its data, in words; "" where there are none."""
    splits = (("training", p.train_files), ("evaluation", p.eval_files))
    own = [f"{name} {split}" for split, given in splits for name in given]
    return f"; the suite's own files for {', '.join(own)}" if own else ""


def describer(registry: dict[str, TaskData], default: list[str]) -> Callable[[FinetuneParams], str]:
    """`describe` for a benchmark of `registry`'s sub-tasks, `default` where an entry names
    none, naming the tasks; data the tasks generate (`TaskData.generate`) is said to be."""

    def said(p: FinetuneParams) -> str:
        tasks = p.tasks or default
        built_in = all(name in registry and registry[name].generate for name in tasks)
        return describe(p, f"of each task ({', '.join(tasks)})", built_in)

    return said


def describe_xnli(p: XNLIParams) -> str:
    """`describe`, with the XNLI set-up, its languages and where the local splits come from."""
    trained_on = "of English alone" if p.mode == "zero-shot" else "of each language"
    local = f"; {xnli('en').notes}" if p.source == "local" else ""
    return f"{p.mode}, {', '.join(p.languages)}: {describe(p, trained_on)}{local}"
