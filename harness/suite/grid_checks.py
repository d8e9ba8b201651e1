"""Semantic checks of a suite's grid: the sweep's keys and values, and each model's whole
pretraining config at every sweep point, as `hlm run` will build it (the checks that need
the preset, and a setting the run would not read named at the key that set it).

Each returns a list of ``FILE: KEY.PATH: message`` lines, like those of
`harness.suite.checks`, which runs them after its per-section checks.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from harness.suite.finding import suite_relative
from harness.suite.schema import (
    MODEL_KEYS,
    TASK_SWEEP,
    RecipeOverrides,
    Suite,
    overrides,
    pretraining_point,
    sweep_keys,
    task_sweep_target,
)
from harness.tasks import TASKS
from zoo.data.corpus import source_problem
from zoo.errors import error_message
from zoo.models import PRESETS
from zoo.objectives import OBJECTIVES, LossOptions, ObjectiveOptions
from zoo.registry import unknown_name_message
from zoo.train.config import PretrainConfig
from zoo.train.sections.model import UNREAD_OPTION


def corpus_problems(sources: list[str], src: str, key: str) -> list[str]:
    """The sources of a corpus list that name no corpus, each at its index."""
    problems = [(i, source_problem(s)) for i, s in enumerate(sources)]
    return [f"{src}: {key}[{i}]: {p}" for i, p in problems if p is not None]


def _loss_options_with(name: str, objectives: list[str]) -> type[ObjectiveOptions]:
    """The options model of the first of `objectives` that has option `name` (plugins'
    own options included); the shared `LossOptions` where none has it."""
    for objective in objectives:
        if objective in OBJECTIVES and name in OBJECTIVES.get(objective).options.model_fields:
            return OBJECTIVES.get(objective).options
    return LossOptions


def _sweep_value(
    src: str, key: str, skey: str, value: Any, objectives: list[str]
) -> tuple[list[str], Any]:
    """A sweep value's problems, and the value as the run reads it (JSON; as written where
    it does not validate)."""
    if skey in ("preset", "objective"):
        reg = PRESETS if skey == "preset" else OBJECTIVES
        return ([] if value in reg else [f"{src}: {key}: {reg.unknown_message(str(value))}"]), value
    name = skey.removeprefix("loss.")
    model = _loss_options_with(name, objectives) if skey.startswith("loss.") else RecipeOverrides
    try:
        read = model.model_validate({name: value}).model_dump(mode="json")[name]
    except ValidationError as exc:
        return [f"{src}: {key}: {error_message(e)}" for e in exc.errors()], value
    if skey in ("corpus", "validation") and read:  # as read: `corpus: X` is [X]
        beside = [suite_relative(s, Path(src)) for s in read]
        return corpus_problems(beside, src, key), read
    return [], read


def repeats(src: str, key: str, given: list[Any], read: list[Any]) -> list[str]:
    """A sweep value that reads as one listed before it, though written otherwise (YAML reads
    `1e-3` as text, which the run reads as 0.001; `corpus: X` is `[X]`): the two points are
    one run, and the sweep would list a point that changes nothing."""
    first: dict[str, int] = {}
    problems = []
    for j, value in enumerate(read):
        text = json.dumps(value, sort_keys=True, default=str)
        if text in first:
            i = first[text]
            problems.append(
                f"{src}: {key}[{j}]: {given[j]!r} and {key}[{i}] ({given[i]!r}) are read as "
                f"one value, {text}: each value runs once"
            )
        first.setdefault(text, j)
    return problems


def check_sweep(suite: Suite) -> list[str]:
    problems, keys = [], sweep_keys()
    objectives = [m.objective for m in suite.models if m.objective] + [
        str(o) for o in suite.sweep.get("objective", [])
    ]
    for skey, values in suite.sweep.items():
        key = f"sweep.{skey}"
        if skey.startswith(TASK_SWEEP):
            problems += _task_sweep_problems(suite, skey, values)
        elif skey not in keys:
            problems.append(
                f"{suite.path}: {key}: not a sweepable key; "
                + unknown_name_message("sweep key", skey, keys)
            )
        elif not values:
            problems.append(f"{suite.path}: {key}: expected a non-empty list of values")
        else:
            read = []
            for j, value in enumerate(values):
                found, as_read = _sweep_value(suite.path, f"{key}[{j}]", skey, value, objectives)
                problems += found
                read.append(as_read)
            problems += repeats(suite.path, key, values, read)
    return problems


def _task_sweep_problems(suite: Suite, skey: str, values: list[Any]) -> list[str]:
    """A `tasks.LABEL.PARAM` sweep key: a task entry of the suite, a param of its type, and
    values that the type's params model takes in place of the entry's own."""
    where = f"{suite.path}: sweep.{skey}"
    target = task_sweep_target(skey)
    if target is None:
        return [f"{where}: expected tasks.<task label>.<param> (as tasks.glue.lr)"]
    entries = {t.label(): t for t in suite.tasks}
    if target[0] not in entries:
        return [f"{where}: " + unknown_name_message("task label", target[0], sorted(entries))]
    task = entries[target[0]]
    if task.type not in TASKS:
        return []  # reported by the task's own check
    params = TASKS.get(task.type).params
    if target[1] not in params.model_fields:
        known = sorted(params.model_fields)
        return [f"{where}: " + unknown_name_message(f"{task.type} param", target[1], known)]
    if not values:
        return [f"{where}: expected a non-empty list of values"]
    problems, read = [], []
    for j, value in enumerate(values):
        try:
            got = params.model_validate({**task.params, target[1]: value})
            read.append(got.model_dump(mode="json")[target[1]])
        except ValidationError as exc:
            problems += [f"{where}[{j}]: {error_message(e)}" for e in exc.errors()]
            read.append(value)
    return problems + repeats(suite.path, f"sweep.{skey}", values, read)


def _recipe_source(suite: Suite, i: int, point: dict[str, Any], key: str) -> str:
    """Where a model's pretraining key (`lr`, `loss.temperature`) was set: the sweep, the
    model's recipe or the suite's."""
    if key in point:
        return f"sweep.{key}[{suite.sweep[key].index(point[key])}]"
    name, own, shared = key, overrides(suite.models[i].recipe), overrides(suite.recipe)
    if key.startswith("loss."):
        name = key.removeprefix("loss.")
        own, shared = suite.models[i].recipe.loss or {}, suite.recipe.loss or {}  # type: ignore[attr-defined]
    if name in own:
        return f"models[{i}].recipe.{key}"
    return f"recipe.{key}" if name in shared else f"models[{i}].{key}"


def _error_problems(
    suite: Suite, i: int, point: dict[str, Any], objective: str, err: ErrorDetails
) -> list[str]:
    """One config error as the suite's problems: a loss option the objective never reads
    at the key that set it; any other error at its key, unless another check reports it."""
    if err["type"] == UNREAD_OPTION:
        unread = OBJECTIVES.get(objective).lacks_message
        return [
            f"{suite.path}: {_recipe_source(suite, i, point, f'loss.{n}')}: {unread([n])}"
            for n in err["ctx"]["names"]
        ]
    if not err["loc"] or err["loc"][0] in _CHECKED_ELSEWHERE:
        return []
    return [
        f"{suite.path}: {_recipe_source(suite, i, point, str(err['loc'][0]))}"
        + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"][1:])
        + f": {error_message(err)}"
    ]


# check_loss reports the loss options (not those the objective never reads: only a whole
# config shows them), check_models and check_sweep the corpus sources
_CHECKED_ELSEWHERE = ("loss", "corpus", "validation")


def _config_problems(suite: Suite, i: int, point: dict[str, Any]) -> list[str]:
    m = suite.models[i]
    fixed = {"preset": m.preset, "objective": m.objective, "output_dir": ""}
    data = {
        **fixed,
        **suite.recipe_for(m, point),
        **{k: point[k] for k in MODEL_KEYS if k in point},
    }
    if data["preset"] not in PRESETS or data["objective"] not in OBJECTIVES:
        return []  # reported by check_models / check_sweep
    try:
        PretrainConfig.model_validate(data)
    except ValidationError as exc:
        objective = str(data["objective"])
        return [p for e in exc.errors() for p in _error_problems(suite, i, point, objective, e)]
    return []


def check_recipes(suite: Suite) -> list[str]:
    """Each model's whole pretraining config at each sweep point, as `hlm run` will build it:
    the checks that need the preset (seq_len within its positions, vocab_size above the
    tokenizer's specials) and every range check of a value set in the suite (a task entry's
    swept params leave the pretraining as it is: each such config is checked once)."""
    keys = sorted(pretraining_point(suite.sweep))
    problems: list[str] = []
    for values in itertools.product(*(suite.sweep[k] for k in keys)):
        point = dict(zip(keys, values, strict=True))
        for i, m in enumerate(suite.models):
            if m.checkpoint is None:
                problems += _config_problems(suite, i, suite.point_for(m, point))
    return problems


def check_sweep_models(suite: Suite) -> list[str]:
    """`sweep_models` names models of the suite; each `loss.NAME` key is read by a model it
    covers (a key no objective there reads would sweep nothing)."""
    labels = [m.label() for m in suite.models]
    problems = [
        f"{suite.path}: sweep_models[{i}]: " + unknown_name_message("model", name, labels)
        for i, name in enumerate(suite.sweep_models or [])
        if name not in labels
    ]
    covered = [m for m in suite.models if m.label() in (suite.sweep_models or labels)]
    for key, values in suite.sweep.items():
        if not key.startswith("loss.") or not covered:
            continue
        if not any(key in suite.point_for(m, {key: values[0]}) for m in covered):
            objectives = ", ".join(sorted({str(m.objective) for m in covered}))
            problems.append(
                f"{suite.path}: sweep.{key}: no model the sweep covers reads it "
                f"(their objectives: {objectives})"
            )
    return problems
