"""Semantic checks of a parsed suite, one checker per section: models, loss options,
baseline, publish, tasks; then the grid's (`harness.suite.grid_checks`): the sweep, and each
model's whole pretraining config at every sweep point.

Each returns a list of ``FILE: KEY.PATH: message`` lines (empty when the section is valid);
nothing here computes anything expensive or imports plugins (`harness.suite.loading` does,
before calling `semantic_problems`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness.results.metrics import METRICS
from harness.suite.finding import suite_relative
from harness.suite.grid_checks import (
    check_recipes,
    check_sweep,
    check_sweep_models,
    corpus_problems,
)
from harness.suite.schema import Suite
from harness.tasks import TASKS
from zoo.errors import validation_problems
from zoo.models import PRESETS
from zoo.objectives import OBJECTIVES


def _looks_local(ref: str) -> bool:
    return ref.startswith((".", "/", "~")) or ref.count("/") != 1 or Path(ref).exists()


def _recipe_source_problems(recipe: Any, src: str, key: str) -> list[str]:
    """The corpus and validation sources of a recipe section that name no corpus."""
    return [
        p
        for field in ("corpus", "validation")
        if getattr(recipe, field)
        for p in corpus_problems(
            [suite_relative(s, Path(src)) for s in getattr(recipe, field)], src, f"{key}.{field}"
        )
    ]


def model_kinds(suite: Suite) -> list[str | None]:
    """Each model's kind (encoder / decoder), None where a preset is swept or a checkpoint."""
    return [
        PRESETS.get(m.preset)().kind if m.preset is not None and m.preset in PRESETS else None
        for m in suite.models
    ]


def _checkpoint_problems(m: Any, src: str, key: str) -> list[str]:
    out = []
    if m.preset or m.objective:
        out.append(f"{src}: {key}: give either checkpoint or preset + objective, not both")
    if _looks_local(m.checkpoint) and not Path(m.checkpoint).expanduser().exists():
        out.append(f"{src}: {key}.checkpoint: not found: {m.checkpoint}")
    return out


def _preset_problems(suite: Suite, m: Any, src: str, key: str) -> list[str]:
    out = []
    swept = set(suite.sweep) & {"preset", "objective"}
    for field, reg in (("preset", PRESETS), ("objective", OBJECTIVES)):
        value = getattr(m, field)
        if value is None and field not in swept:
            out.append(f"{src}: {key}.{field}: required (or give a checkpoint)")
        elif value is not None and value not in reg:
            out.append(f"{src}: {key}.{field}: {reg.unknown_message(value)}")
    if m.finetune_causal:
        if m.preset in PRESETS and PRESETS.get(m.preset)().kind != "decoder":
            out.append(f"{src}: {key}.finetune_causal: only decoders are fine-tuned causally")
        if m.objective in OBJECTIVES and not OBJECTIVES.get(m.objective).headless:
            out.append(f"{src}: {key}.finetune_causal: only headless objectives need it")
    return out


def check_models(suite: Suite) -> list[str]:
    src, problems, labels = suite.path, [], {}  # type: ignore[var-annotated]
    for i, m in enumerate(suite.models):
        key = f"models[{i}]"
        if m.checkpoint is not None:
            problems += _checkpoint_problems(m, src, key)
        else:
            problems += _preset_problems(suite, m, src, key)
        if m.label() in labels:
            problems.append(
                f"{src}: {key}.name: duplicate model label {m.label()!r} (also "
                f"models[{labels[m.label()]}])"
            )
        labels[m.label()] = i
        problems += _recipe_source_problems(m.recipe, src, f"{key}.recipe")
    problems += _recipe_source_problems(suite.recipe, src, "recipe")
    return problems


def check_distinct_models(suite: Suite) -> list[str]:
    """Two entries that differ in their name alone are one model under two labels: its
    comparison with itself would read as an ablation that changed nothing."""
    problems: list[str] = []
    seen: dict[str, int] = {}  # a model's settings but its name -> its first index
    for i, m in enumerate(suite.models):
        same = json.dumps(m.model_dump(mode="json", exclude={"name"}), sort_keys=True)
        if same in seen:
            j = seen[same]
            problems.append(
                f"{suite.path}: models[{i}]: the same model as models[{j}] "
                f"({suite.models[j].label()}), but for its name: give it the setting that "
                "sets it apart (a recipe, objective or preset of its own), or drop it"
            )
        seen.setdefault(same, i)
    return problems


def check_loss(suite: Suite) -> list[str]:
    """Each model's `loss:` (suite recipe, then its own) against its objective's options."""
    problems = []
    for i, m in enumerate(suite.models):
        if m.objective is None or m.objective not in OBJECTIVES:
            continue
        loss = {**(suite.recipe.loss or {}), **(m.recipe.loss or {})}  # type: ignore[attr-defined]
        key = f"models[{i}].recipe.loss" if m.recipe.loss else "recipe.loss"  # type: ignore[attr-defined]
        objective = OBJECTIVES.get(m.objective)
        try:
            objective.read_options(
                {k: v for k, v in loss.items() if k not in objective.lacks(loss)}
            )
        except ValidationError as exc:
            problems += validation_problems(exc, suite.path, key, model=objective.options)
    return problems


def check_baseline(suite: Suite) -> list[str]:
    labels = [m.label() for m in suite.models]
    if suite.baseline is None or suite.baseline in labels:
        return []
    return [
        f"{suite.path}: baseline: {suite.baseline!r} is not a model label (labels: "
        f"{', '.join(labels)})"
    ]


def check_publish(suite: Suite) -> list[str]:
    if suite.publish is None:
        return []
    src, labels, problems = suite.path, [m.label() for m in suite.models], []
    repos = (
        [("publish.leaderboard", suite.publish.leaderboard)] if suite.publish.leaderboard else []
    )
    for label, repo in suite.publish.models.items():
        if label not in labels:
            problems.append(
                f"{src}: publish.models.{label}: not a model label (labels: {', '.join(labels)})"
            )
        repos.append((f"publish.models.{label}", repo))
    for key, repo in repos:
        if repo.count("/") != 1 or not all(repo.split("/")):
            problems.append(f"{src}: {key}: expected OWNER/NAME, got {repo!r}")
    return problems


def _task_problems(suite: Suite, t: int, kinds: list[str | None]) -> list[str]:
    task, src, key = suite.tasks[t], suite.path, f"tasks[{t}]"
    tt = TASKS.get(task.type)
    labels = [m.label() for m in suite.models]
    problems = []
    try:
        params = tt.params.model_validate(task.params)
        problems += [
            f"{src}: {key}.params.{k}: {msg}" for k, msg in tt.check(params, Path(src).parent)
        ]
        problems += _positions_problems(suite, t, params)
    except ValidationError as exc:
        problems += validation_problems(exc, src, f"{key}.params", model=tt.params)
    for j, metric in enumerate(task.metrics or []):
        if metric.split("@", 1)[0] not in METRICS:
            problems.append(f"{src}: {key}.metrics[{j}]: {METRICS.unknown_message(metric)}")
        elif tt.metrics and metric not in tt.metrics:
            problems.append(
                f"{src}: {key}.metrics[{j}]: {task.type!r} does not produce {metric!r} (it gives "
                f"{', '.join(tt.metrics)})"
            )
    for j, label in enumerate(task.models or []):
        if label not in labels:
            problems.append(
                f"{src}: {key}.models[{j}]: {label!r} is not a model label (labels: "
                f"{', '.join(labels)})"
            )
    for i, kind in enumerate(kinds):
        applies = task.models is None or labels[i] in task.models
        if applies and kind is not None and kind not in tt.kinds:
            problems.append(
                f"{src}: {key}.type: {task.type!r} applies to {'/'.join(tt.kinds)} models, "
                f"but models[{i}] ({labels[i]}) is {'an' if kind == 'encoder' else 'a'} {kind}"
                " (restrict the task with `models: [labels]`)"
            )
    return problems


def _positions_problems(suite: Suite, t: int, params: Any) -> list[str]:
    """A task's `max_length` within the positions of each model it reads (a probe of 4096
    tokens on a 512-position BERT fails deep in the model, minutes in)."""
    task, limit = suite.tasks[t], getattr(params, "max_length", None)
    if not isinstance(limit, int):
        return []
    problems = []
    for i, m in enumerate(suite.models):
        applies = task.models is None or m.label() in task.models
        if applies and m.preset is not None and m.preset in PRESETS:
            positions = PRESETS.get(m.preset)().max_positions
            if limit > positions:
                problems.append(
                    f"{suite.path}: tasks[{t}].params.max_length: {limit} tokens, past the "
                    f"{positions} positions of models[{i}] ({m.label()}, {m.preset})"
                )
    return problems


def _along_problems(suite: Suite, t: int) -> list[str]:
    """`every:` / `at:` only where the task reads checkpoints and the models pretrain."""
    task, key = suite.tasks[t], f"{suite.path}: tasks[{t}]"
    asked = [k for k in ("every", "at") if getattr(task, k) is not None]
    if not asked:
        return []
    if not TASKS.get(task.type).needs_checkpoint:
        return [
            f"{key}.{k}: {task.type!r} reads no checkpoint, so it has none to evaluate along "
            "pretraining"
            for k in asked
        ]
    return [
        f"{key}.{asked[0]}: models[{i}] ({m.label()}) is an existing checkpoint, with no "
        "pretraining to follow"
        for i, m in enumerate(suite.models)
        if m.checkpoint is not None and (task.models is None or m.label() in task.models)
    ]


def check_tasks(suite: Suite) -> list[str]:
    problems, kinds = [], model_kinds(suite)
    first: dict[str, int] = {}
    for t, task in enumerate(suite.tasks):
        label = task.label()
        if label in first:  # one would hide the other's rows (same task column)
            problems.append(
                f"{suite.path}: tasks[{t}].name: duplicate task label {label!r} (also "
                f"tasks[{first[label]}]); give one a `name:`"
            )
        first.setdefault(label, t)
        if task.type not in TASKS:
            problems.append(f"{suite.path}: tasks[{t}].type: {TASKS.unknown_message(task.type)}")
        else:
            problems += _task_problems(suite, t, kinds) + _along_problems(suite, t)
    return problems


CHECKERS = (
    check_models,
    check_distinct_models,
    check_loss,
    check_baseline,
    check_publish,
    check_tasks,
    check_sweep,
    check_sweep_models,
    check_recipes,
)


def semantic_problems(suite: Suite) -> list[str]:
    """Every section's problems, in section order, each once."""
    return list(dict.fromkeys(p for check in CHECKERS for p in check(suite)))
