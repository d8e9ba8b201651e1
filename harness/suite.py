"""Suites: YAML files loaded into typed models and validated before any compute.

    suite = load_suite("suites/quickstart.yaml")    # raises SuiteError listing every problem

Every problem is reported as ``FILE: KEY.PATH: message``. A suite names models (presets x
objectives, or existing checkpoints), a pretraining recipe, tasks, seeds and a sweep (a grid
over model or recipe keys). ``include:`` reuses other suites: their models and tasks come
first, mappings are merged with this file's keys winning, scalars are overridden.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from zoo.errors import UserError
from zoo.train.config import PretrainConfig

# Pretraining keys a suite may set (in `recipe`, per model, or in a sweep).
_NOT_RECIPE = {"preset", "objective", "output_dir", "init_from", "progress", "plugins", "seed"}
RECIPE_KEYS = [k for k in PretrainConfig.model_fields if k not in _NOT_RECIPE]
MODEL_KEYS = ["preset", "objective", "vocab_size"]
SWEEP_KEYS = sorted({*RECIPE_KEYS, *MODEL_KEYS})

RecipeOverrides: type[BaseModel] = create_model(  # type: ignore[call-overload]
    "RecipeOverrides",
    __config__=ConfigDict(extra="forbid", frozen=True),
    **{k: (Optional[PretrainConfig.model_fields[k].annotation], None) for k in RECIPE_KEYS},  # noqa: UP045
)


class ModelEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = None
    preset: str | None = None
    objective: str | None = None
    checkpoint: str | None = Field(
        None, description="an existing checkpoint folder or hub id (no pretraining)"
    )
    finetune_causal: bool = Field(
        False, description="evaluate after `hlm finetune-causal` (headless decoders)"
    )
    finetune_steps: int = 200
    recipe: RecipeOverrides = Field(default_factory=RecipeOverrides)  # type: ignore[valid-type]

    def label(self) -> str:
        if self.name:
            return self.name
        if self.checkpoint:
            return Path(self.checkpoint).name
        return f"{self.preset}-{self.objective}" + ("-ft" if self.finetune_causal else "")


class TaskEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str
    name: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    metrics: list[str] | None = None
    every: int | None = Field(None, gt=0, description="also run at every N pretraining steps")
    models: list[str] | None = Field(
        None, description="model labels this task applies to (default: all)"
    )

    def label(self) -> str:
        return self.name or self.type


class PublishStep(BaseModel):
    """Optional last step of `hlm run`: off unless `enabled: true` or `hlm run --publish`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = False
    leaderboard: str | None = Field(None, description="OWNER/NAME dataset repo for the leaderboard")
    models: dict[str, str] = Field(
        default_factory=dict, description="model label -> OWNER/NAME model repo"
    )
    private: bool = False


class Suite(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    version: int = 1
    description: str = ""
    include: list[str] = Field(default_factory=list)
    plugins: list[str] = Field(default_factory=list)
    baseline: str | None = Field(None, description="model label significance tests compare against")
    models: list[ModelEntry] = Field(min_length=1)
    recipe: RecipeOverrides = Field(default_factory=RecipeOverrides)  # type: ignore[valid-type]
    tasks: list[TaskEntry] = Field(min_length=1)
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    sweep: dict[str, list[Any]] = Field(default_factory=dict)
    publish: PublishStep | None = None

    path: str = Field("", exclude=True)


class SuiteError(UserError):
    """All problems of a suite, one per line."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


def _loc(parts: tuple[Any, ...]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "<root>"


def pydantic_problems(exc: ValidationError, source: str, prefix: str = "") -> list[str]:
    problems = []
    for err in exc.errors():
        loc = _loc(tuple(err["loc"]))
        if prefix:
            loc = (
                prefix
                if loc == "<root>"
                else f"{prefix}.{loc}"
                if not loc.startswith("[")
                else prefix + loc
            )
        msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        problems.append(f"{source}: {loc}: {msg}")
    return problems


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if (
            key in ("models", "tasks")
            and isinstance(value, list)
            and isinstance(out.get(key), list)
        ):
            out[key] = [*out[key], *value]
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def read_raw(path: Path, stack: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The YAML mapping of `path` with its includes merged in."""
    if path.resolve() in stack:
        chain = " -> ".join(str(p) for p in (*stack, path.resolve()))
        raise SuiteError([f"{path}: include: cycle ({chain})"])
    if not path.is_file():
        raise SuiteError([f"{path}: file not found"])
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "<root>"
        raise SuiteError(
            [f"{path}: {where}: invalid YAML ({getattr(exc, 'problem', exc)})"]
        ) from None
    if not isinstance(data, dict):
        raise SuiteError(
            [f"{path}: <root>: expected a mapping of suite keys, got {type(data).__name__}"]
        )
    includes = data.get("include", [])
    if not isinstance(includes, list) or not all(isinstance(i, str) for i in includes):
        raise SuiteError([f"{path}: include: expected a list of file paths"])
    merged: dict[str, Any] = {}
    for i, inc in enumerate(includes):
        inc_path = (path.parent / inc) if not Path(inc).is_absolute() else Path(inc)
        if not inc or not inc_path.is_file():
            raise SuiteError([f"{path}: include[{i}]: file not found: {inc_path}"])
        sub = read_raw(inc_path, (*stack, path.resolve()))
        sub.pop("name", None)
        sub.pop("include", None)
        merged = _merge(merged, sub)
    return _merge(merged, data)


def load_suite(path: str | Path) -> Suite:
    """Parse and fully validate a suite (registry names, paths, task parameters, sweep values)."""
    from harness.validate import semantic_problems

    p = Path(path)
    raw = read_raw(p)
    try:
        suite = Suite.model_validate({**raw, "path": str(p)})
    except ValidationError as exc:
        raise SuiteError(pydantic_problems(exc, str(p))) from None
    problems = semantic_problems(suite, p)
    if problems:
        raise SuiteError(problems)
    return suite


def resolve_suite_path(name_or_path: str, suites_dir: Path = Path("suites")) -> Path:
    """`quickstart` -> suites/quickstart.yaml; a path is returned as is."""
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or p.exists():
        return p
    return suites_dir / f"{name_or_path}.yaml"
