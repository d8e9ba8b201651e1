"""Semantic checks of a parsed suite, one checker per section: models, loss options,
baseline, publish, tasks, sweep, and each model's whole pretraining config.

Each returns a list of ``FILE: KEY.PATH: message`` lines (empty when the section is valid);
nothing here computes anything expensive or imports plugins (`harness.suite.loading` does,
before calling `semantic_problems`).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from harness.results.metrics import METRICS
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
from zoo.errors import error_message, validation_problems
from zoo.models import PRESETS
from zoo.objectives import OBJECTIVES, LossOptions
from zoo.registry import unknown_name_message
from zoo.train.config import PretrainConfig
from zoo.train.sections.model import UNREAD_OPTION


def _looks_local(ref: str) -> bool:
    return ref.startswith((".", "/", "~")) or ref.count("/") != 1 or Path(ref).exists()


def _recipe_source_problems(recipe: Any, src: str, key: str) -> list[str]:
    """The corpus and validation sources of a recipe section that name no corpus."""
    return [
        p
        for field in ("corpus", "validation")
        if getattr(recipe, field)
        for p in _corpus_problems(getattr(recipe, field), src, f"{key}.{field}")
    ]


def _corpus_problems(sources: list[str], src: str, key: str) -> list[str]:
    problems = [(i, source_problem(s)) for i, s in enumerate(sources)]
    return [f"{src}: {key}[{i}]: {p}" for i, p in problems if p is not None]


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


def check_loss(suite: Suite) -> list[str]:
    """Each model's `loss:` (suite recipe, then its own) against its objective's options."""
    problems = []
    for i, m in enumerate(suite.models):
        if m.objective is None or m.objective not in OBJECTIVES:
            continue
        loss = {**(suite.recipe.loss or {}), **(m.recipe.loss or {})}  # type: ignore[attr-defined]
        key = f"models[{i}].recipe.loss" if m.recipe.loss else "recipe.loss"  # type: ignore[attr-defined]
        try:
            OBJECTIVES.get(m.objective).options.model_validate(loss)
        except ValidationError as exc:
            problems += validation_problems(exc, suite.path, key)
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
        if tt.check is not None:
            problems += [
                f"{src}: {key}.params.{k}: {msg}" for k, msg in tt.check(params, Path(src).parent)
            ]
    except ValidationError as exc:
        problems += validation_problems(exc, src, f"{key}.params")
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


def _loss_options_with(name: str, objectives: list[str]) -> type[LossOptions]:
    """The options model of the first of `objectives` that has option `name` (plugins'
    own options included); the shared `LossOptions` where none has it."""
    for objective in objectives:
        if objective in OBJECTIVES and name in OBJECTIVES.get(objective).options.model_fields:
            return OBJECTIVES.get(objective).options
    return LossOptions


def _sweep_value_problems(
    src: str, key: str, skey: str, value: Any, objectives: list[str]
) -> list[str]:
    if skey in ("preset", "objective"):
        reg = PRESETS if skey == "preset" else OBJECTIVES
        return [] if value in reg else [f"{src}: {key}: {reg.unknown_message(str(value))}"]
    try:
        if skey.startswith("loss."):
            _loss_options_with(skey.removeprefix("loss."), objectives).model_validate(
                {skey.removeprefix("loss."): value}
            )
        else:
            RecipeOverrides.model_validate({skey: value})
    except ValidationError as exc:
        return [f"{src}: {key}: {error_message(e)}" for e in exc.errors()]
    if skey in ("corpus", "validation") and value:
        return _corpus_problems(list(value), src, key)
    return []


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
            for j, value in enumerate(values):
                problems += _sweep_value_problems(
                    suite.path, f"{key}[{j}]", skey, value, objectives
                )
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
    problems = []
    for j, value in enumerate(values):
        try:
            params.model_validate({**task.params, target[1]: value})
        except ValidationError as exc:
            problems += [f"{where}[{j}]: {error_message(e)}" for e in exc.errors()]
    return problems


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
        unread = OBJECTIVES.get(objective).unread_message
        names = err["ctx"]["names"] if "ctx" in err else []
        return [
            f"{suite.path}: {_recipe_source(suite, i, point, f'loss.{n}')}: {unread([n])}"
            for n in names
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
                problems += _config_problems(suite, i, point)
    return problems


CHECKERS = (
    check_models,
    check_loss,
    check_baseline,
    check_publish,
    check_tasks,
    check_sweep,
    check_recipes,
)


def semantic_problems(suite: Suite) -> list[str]:
    """Every section's problems, in section order, each once."""
    return list(dict.fromkeys(p for check in CHECKERS for p in check(suite)))
