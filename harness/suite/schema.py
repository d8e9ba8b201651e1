"""The suite schema: typed models of a suite YAML file (pydantic, unknown keys rejected).

A suite names models (presets x objectives, or existing checkpoints), a pretraining recipe,
tasks, seeds and a sweep (a grid over model or recipe keys; ``loss.KEY`` sweeps one loss
option, ``tasks.LABEL.PARAM`` one parameter of a task entry, such as its fine-tuning lr).
Semantic checks (registry names, paths, task parameters) live in `harness.suite.checks`;
reading files and includes in `harness.suite.loading`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

from pydantic import (
    AfterValidator,
    BaseModel,
    Field,
    StrictInt,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo

from harness.suite.finding import suite_relative
from harness.suite.launcher import Launcher
from zoo.objectives import OBJECTIVES
from zoo.settings import Settings
from zoo.train.budgets import BudgetMarks
from zoo.train.config import PretrainConfig
from zoo.train.finetune_settings import CausalFinetuneConfig
from zoo.train.limits import MAX_STEPS
from zoo.train.roles import recipe_names
from zoo.train.sections.runtime import renamed

# Pretraining keys a suite may set (in `recipe`, per model, or in a sweep): read from the fields.
RECIPE_KEYS = recipe_names(PretrainConfig)
MODEL_KEYS = ["preset", "objective", "vocab_size"]


def loss_keys() -> list[str]:
    """`loss.NAME` for every option of every registered objective, plugins' own included
    (so call it once the suite's plugins are loaded)."""
    return sorted({f"loss.{k}" for _, obj in OBJECTIVES.items() for k in obj.options.model_fields})


def sweep_keys() -> list[str]:
    """Every key a sweep may vary: recipe keys, model keys and loss options."""
    return sorted({*RECIPE_KEYS, *MODEL_KEYS, *loss_keys()})


TASK_SWEEP = "tasks."  # sweep keys `tasks.LABEL.PARAM`: a task entry's parameter, not pretraining


def task_sweep_target(key: str) -> tuple[str, str] | None:
    """(task label, param) that a sweep key `tasks.LABEL.PARAM` varies; None for any other key
    (and for a `tasks.` key that lacks either part)."""
    if not key.startswith(TASK_SWEEP):
        return None
    label, _, param = key.removeprefix(TASK_SWEEP).rpartition(".")
    return (label, param) if label and param else None


def pretraining_point(point: dict[str, Any]) -> dict[str, Any]:
    """The keys of a sweep point that change the pretraining (all but the `tasks.` keys)."""
    return {k: v for k, v in point.items() if not k.startswith(TASK_SWEEP)}


SAFE_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"


def _optional(field: FieldInfo) -> Any:
    """A PretrainConfig field's type as an optional override, with the same range checks."""
    kind = Annotated[field.annotation, *field.metadata] if field.metadata else field.annotation
    return Optional[kind]  # noqa: UP045


class _Recipe(Settings):
    """A recipe's keys as a run config's, a renamed one read under its new name."""

    @model_validator(mode="before")
    @classmethod
    def _renamed_keys(cls, data: Any) -> Any:
        return renamed(data)


# `loss` stays a mapping here: it is validated per model against its objective's options model.
RecipeOverrides: type[BaseModel] = create_model(  # type: ignore[call-overload]
    "RecipeOverrides",
    __base__=_Recipe,
    loss=(Optional[dict[str, Any]], None),  # noqa: UP045
    **{k: (_optional(PretrainConfig.model_fields[k]), None) for k in RECIPE_KEYS},
)


def _distinct(values: list[Any]) -> list[Any]:
    """Refuse a value listed twice (as YAML reads them: 1.0e-3 is 0.001) in the seeds or a
    sweep key: it runs once, so the suite would run less than it lists (and count fewer
    seeds than the file names). Sweep values written apart that the run reads as one
    (`1e-3`, text to YAML, and 0.001) are refused by `grid_checks.repeats`."""
    seen: set[str] = set()
    for value in values:
        text = json.dumps(value, sort_keys=True, default=str)
        if text in seen:
            raise ValueError(f"{text} listed twice: each value runs once")
        seen.add(text)
    return values


def overrides(entry: BaseModel) -> dict[str, Any]:
    """The keys a recipe section sets."""
    return {k: v for k, v in entry.model_dump().items() if v is not None}


class ModelEntry(Settings):
    name: str | None = Field(None, pattern=SAFE_NAME)
    preset: str | None = None
    objective: str | None = None
    checkpoint: str | None = Field(
        None, description="an existing checkpoint folder or hub id (no pretraining)"
    )
    finetune_causal: bool = Field(
        False, description="evaluate after `hlm finetune-causal` (headless decoders)"
    )
    finetune: CausalFinetuneConfig = Field(
        default_factory=CausalFinetuneConfig,
        description="the causal fine-tuning's settings (section 4.2 / Table 15 by default)",
    )
    recipe: RecipeOverrides = Field(default_factory=RecipeOverrides)

    @field_validator("finetune")
    @classmethod
    def _read_when_finetuned(
        cls, v: CausalFinetuneConfig, info: ValidationInfo
    ) -> CausalFinetuneConfig:
        if v != CausalFinetuneConfig() and not info.data.get("finetune_causal"):
            raise ValueError("read only with finetune_causal: true; set it, or leave finetune out")
        return v

    @field_validator("recipe")
    @classmethod
    def _read_when_pretrained(cls, v: BaseModel, info: ValidationInfo) -> BaseModel:
        given, keys = info.data.get("checkpoint"), sorted(overrides(v))
        if given is not None and keys:
            raise ValueError(
                f"{', '.join(keys)}: the checkpoint {given} is not "
                "pretrained here, so its recipe is never read; leave it out"
            )
        return v

    def label(self) -> str:
        if self.name:
            return self.name
        if self.checkpoint:
            return Path(self.checkpoint).name
        return f"{self.preset}-{self.objective}" + ("-ft" if self.finetune_causal else "")


class TaskEntry(Settings):
    type: str
    name: str | None = Field(None, pattern=SAFE_NAME)
    params: dict[str, Any] = Field(default_factory=dict)
    metrics: list[str] | None = None
    every: StrictInt | None = Field(
        None,
        gt=0,
        le=MAX_STEPS,
        description="also evaluate the checkpoints of every N pretraining steps",
    )
    at: list[Annotated[float, Field(gt=0, le=1)]] | None = Field(
        None, description="also evaluate the checkpoints at these fractions of the step budget"
    )
    models: list[str] | None = Field(
        None, description="model labels this task applies to (default: all)"
    )

    def label(self) -> str:
        return self.name or self.type

    def at_point(self, point: dict[str, Any]) -> tuple[TaskEntry, dict[str, Any]]:
        """This entry with the params the sweep `point` sets for it (`tasks.LABEL.PARAM`), and
        the part of the point that applies to it: the pretraining keys and its own task keys,
        not another entry's (so a task that no key sweeps runs once per pretraining point)."""
        own, params = pretraining_point(point), dict(self.params)
        for key, value in point.items():
            target = task_sweep_target(key)
            if target is not None and target[0] == self.label():
                own[key], params[target[1]] = value, value
        return self.model_copy(update={"params": params}), own


class PublishStep(Settings):
    """Optional last step of `hlm run`: off unless `enabled: true` or `hlm run --publish`."""

    enabled: bool = False
    leaderboard: str | None = Field(None, description="OWNER/NAME dataset repo for the leaderboard")
    models: dict[str, str] = Field(
        default_factory=dict, description="model label -> OWNER/NAME model repo"
    )
    private: bool = False


class Suite(Settings):
    name: str = Field(pattern=SAFE_NAME, description="leaderboard folder name: a safe identifier")
    version: StrictInt = Field(
        1, ge=0, le=2**31 - 1, description="the suite's version, in its rows"
    )
    description: str = ""
    include: list[str] = Field(default_factory=list)
    plugins: list[str] = Field(default_factory=list)
    baseline: str | None = Field(None, description="model label significance tests compare against")
    models: list[ModelEntry] = Field(min_length=1)
    recipe: RecipeOverrides = Field(default_factory=RecipeOverrides)
    tasks: list[TaskEntry] = Field(min_length=1)
    seeds: Annotated[
        list[Annotated[StrictInt, Field(ge=0, le=2**32 - 1)]], AfterValidator(_distinct)
    ] = Field(default_factory=lambda: [0], min_length=1)
    sweep: dict[str, Annotated[list[Any], AfterValidator(_distinct)]] = Field(default_factory=dict)
    sweep_models: list[str] | None = Field(
        None, description="the models (labels) the sweep covers; the others run once, unswept"
    )
    compare_at: BudgetMarks | None = Field(
        None,
        description="matched budgets (tokens, flops, seconds): every model keeps and evaluates "
        "the checkpoint where it first reaches each; `hlm leaderboard --at tokens=T` shows them",
    )
    publish: PublishStep | None = None
    # where `hlm run --executor slurm` sends its jobs; no cell's key reads it
    launcher: Launcher | None = None

    path: str = Field("", exclude=True)

    def point_for(self, model: ModelEntry, point: dict[str, Any]) -> dict[str, Any]:
        """The part of sweep `point` that applies to `model`: nothing where `sweep_models`
        leaves the model out; a `loss.NAME` key only where the model's objective at the point
        reads NAME (a plugin's option sweeps the plugin's models, not a `ce` beside them)."""
        if self.sweep_models is not None and model.label() not in self.sweep_models:
            return {}
        objective = point["objective"] if "objective" in point else model.objective
        if not isinstance(objective, str) or objective not in OBJECTIVES:
            return dict(point)  # a checkpoint, or a name check_models reports
        reads = OBJECTIVES.get(objective).options.model_fields
        return {
            k: v
            for k, v in point.items()
            if not k.startswith("loss.") or k.removeprefix("loss.") in reads
        }

    def recipe_for(self, model: ModelEntry, point: dict[str, Any]) -> dict[str, Any]:
        """Pretraining keys of `model` at sweep `point`: the suite's recipe, then the model's,
        then the point's keys; `loss` merged key-wise."""
        recipe = {**overrides(self.recipe), **overrides(model.recipe)}
        recipe["loss"] = {**(self.recipe.loss or {}), **(model.recipe.loss or {})}  # type: ignore[attr-defined]
        for key, value in point.items():
            if key.startswith("loss."):
                recipe["loss"][key.removeprefix("loss.")] = value
            elif key in RECIPE_KEYS:
                recipe[key] = value
        for key in ("corpus", "validation"):  # local paths beside the suite file are found
            if isinstance(recipe.get(key), list):
                recipe[key] = [suite_relative(s, Path(self.path)) for s in recipe[key]]
        return recipe

    def plugin_paths(self) -> list[Path]:
        """Plugin files, relative paths taken from the suite file's folder."""
        base = Path(self.path).parent
        return [(base / p) if not Path(p).is_absolute() else Path(p) for p in self.plugins]
