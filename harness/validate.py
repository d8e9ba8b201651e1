"""Semantic checks of a parsed suite: every registry name, path, parameter and sweep value.

Returns a list of ``FILE: KEY.PATH: message`` lines (empty when the suite is valid); nothing
here computes anything expensive.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness.metrics import METRICS
from harness.suite import MODEL_KEYS, SWEEP_KEYS, RecipeOverrides, Suite, pydantic_problems
from harness.tasks import TASKS
from zoo.data.corpus import resolve_local
from zoo.errors import UserError
from zoo.models import PRESETS
from zoo.objectives import OBJECTIVES
from zoo.registry import load_plugin
from zoo.tokenizers import min_vocab_size


def _looks_local(ref: str) -> bool:
    return ref.startswith((".", "/", "~")) or ref.count("/") != 1 or Path(ref).exists()


def _corpus_problems(sources: list[str], src: str, key: str) -> list[str]:
    out = []
    for i, s in enumerate(sources):
        if s == "synthetic" or s.startswith(("synthetic:", "hub:")):
            continue
        if not resolve_local(s):
            out.append(
                f"{src}: {key}[{i}]: no file matches {s!r} (relative paths are tried under . and $HLM_DATA_ROOT)"
            )
    return out


def _model_kinds(suite: Suite) -> list[str | None]:
    kinds: list[str | None] = []
    for m in suite.models:
        kinds.append(
            PRESETS.get(m.preset)().kind if m.preset is not None and m.preset in PRESETS else None
        )
    return kinds


def semantic_problems(suite: Suite, path: Path) -> list[str]:
    src = str(path)
    problems: list[str] = []
    for i, plugin in enumerate(suite.plugins):
        plugin_path = path.parent / plugin if not Path(plugin).is_absolute() else Path(plugin)
        try:
            load_plugin(plugin_path)
        except UserError as exc:
            problems.append(f"{src}: plugins[{i}]: {exc}")

    labels: dict[str, int] = {}
    sweep_models = set(suite.sweep) & {"preset", "objective"}
    for i, m in enumerate(suite.models):
        key = f"models[{i}]"
        if m.checkpoint is not None:
            if m.preset or m.objective:
                problems.append(
                    f"{src}: {key}: give either checkpoint or preset + objective, not both"
                )
            if _looks_local(m.checkpoint) and not Path(m.checkpoint).expanduser().exists():
                problems.append(f"{src}: {key}.checkpoint: not found: {m.checkpoint}")
        else:
            for field, reg in (("preset", PRESETS), ("objective", OBJECTIVES)):
                value = getattr(m, field)
                if value is None and field not in sweep_models:
                    problems.append(f"{src}: {key}.{field}: required (or give a checkpoint)")
                elif value is not None and value not in reg:
                    problems.append(f"{src}: {key}.{field}: {reg.unknown_message(value)}")
            if m.finetune_causal:
                if (
                    m.preset is not None
                    and m.preset in PRESETS
                    and PRESETS.get(m.preset)().kind != "decoder"
                ):
                    problems.append(
                        f"{src}: {key}.finetune_causal: only decoders are fine-tuned causally"
                    )
                if (
                    m.objective is not None
                    and m.objective in OBJECTIVES
                    and not OBJECTIVES.get(m.objective).headless
                ):
                    problems.append(
                        f"{src}: {key}.finetune_causal: only headless objectives need it"
                    )
        if m.label() in labels:
            problems.append(
                f"{src}: {key}.name: duplicate model label {m.label()!r} (also models[{labels[m.label()]}])"
            )
        labels[m.label()] = i
        if m.recipe.corpus:  # type: ignore[attr-defined]
            problems += _corpus_problems(m.recipe.corpus, src, f"{key}.recipe.corpus")  # type: ignore[attr-defined]

    if suite.recipe.corpus:  # type: ignore[attr-defined]
        problems += _corpus_problems(suite.recipe.corpus, src, "recipe.corpus")  # type: ignore[attr-defined]
    if suite.baseline is not None and suite.baseline not in labels:
        problems.append(
            f"{src}: baseline: {suite.baseline!r} is not a model label (labels: {', '.join(labels)})"
        )

    if suite.publish is not None:
        repos = (
            [("publish.leaderboard", suite.publish.leaderboard)]
            if suite.publish.leaderboard
            else []
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

    kinds = _model_kinds(suite)
    for t, task in enumerate(suite.tasks):
        key = f"tasks[{t}]"
        if task.type not in TASKS:
            problems.append(f"{src}: {key}.type: {TASKS.unknown_message(task.type)}")
            continue
        tt = TASKS.get(task.type)
        try:
            params = tt.params.model_validate(task.params)
        except ValidationError as exc:
            problems += pydantic_problems(exc, src, f"{key}.params")
            params = None
        if params is not None and tt.check is not None:
            problems += [
                f"{src}: {key}.params.{k}: {msg}" for k, msg in tt.check(params, path.parent)
            ]
        for j, metric in enumerate(task.metrics or []):
            if metric.split("@", 1)[0] not in METRICS:
                problems.append(f"{src}: {key}.metrics[{j}]: {METRICS.unknown_message(metric)}")
            elif tt.metrics and metric not in tt.metrics:
                problems.append(
                    f"{src}: {key}.metrics[{j}]: {task.type!r} does not produce {metric!r} (it gives {', '.join(tt.metrics)})"
                )
        for j, label in enumerate(task.models or []):
            if label not in labels:
                problems.append(
                    f"{src}: {key}.models[{j}]: {label!r} is not a model label (labels: {', '.join(labels)})"
                )
        for i, kind in enumerate(kinds):
            applies = task.models is None or suite.models[i].label() in task.models
            if applies and kind is not None and kind not in tt.kinds:
                problems.append(
                    f"{src}: {key}.type: {task.type!r} applies to {'/'.join(tt.kinds)} models, "
                    f"but models[{i}] ({suite.models[i].label()}) is {'an' if kind == 'encoder' else 'a'} {kind}"
                    " (restrict the task with `models: [labels]`)"
                )

    for skey, values in suite.sweep.items():
        key = f"sweep.{skey}"
        if skey not in SWEEP_KEYS:
            problems.append(
                f"{src}: {key}: not a sweepable key (choose from {', '.join(SWEEP_KEYS)})"
            )
            continue
        if not isinstance(values, list) or not values:
            problems.append(f"{src}: {key}: expected a non-empty list of values")
            continue
        for j, value in enumerate(values):
            problems += _sweep_value_problems(src, f"{key}[{j}]", skey, value, kinds)
    return problems


def _sweep_value_problems(
    src: str, key: str, skey: str, value: Any, kinds: list[str | None]
) -> list[str]:
    if skey == "preset":
        return [] if value in PRESETS else [f"{src}: {key}: {PRESETS.unknown_message(str(value))}"]
    if skey == "objective":
        return (
            []
            if value in OBJECTIVES
            else [f"{src}: {key}: {OBJECTIVES.unknown_message(str(value))}"]
        )
    try:
        RecipeOverrides.model_validate({skey: value})
    except ValidationError as exc:
        return [f"{src}: {key}: {e['msg']}" for e in exc.errors()]
    if skey == "vocab_size":
        need = max((min_vocab_size(k) for k in kinds if k is not None), default=0)
        if int(value) < need:
            return [
                f"{src}: {key}: must be > number of special tokens (at least {need} for these models)"
            ]
    if skey == "corpus":
        return _corpus_problems(list(value), src, key)
    assert skey in MODEL_KEYS or skey in RecipeOverrides.model_fields
    return []
