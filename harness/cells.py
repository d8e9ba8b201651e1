"""A suite expanded into cells: one model x sweep point x seed x task each, keyed by hashes.

A cell's id is a hash of its resolved configuration (plugin files' contents included), so a
re-run computes only what is missing. Its pretraining is a typed `PretrainConfig` whose hash
(the pretraining key) names its folder `<runs>/pretrain/<key>/`, shared by every task and
suite that needs the same pretraining.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.suite import ModelEntry, Suite, TaskEntry
from zoo.models import get_spec
from zoo.train.config import BudgetMarks, PretrainConfig
from zoo.train.recipe import resolve_recipe

RUNS_ENV = "HLM_RUNS_DIR"
_KEY_EXCLUDE = {
    "output_dir",
    "progress",
    "log_every",
    "eval_every",
    "eval_batches",
    "plugins",
    "pretrain_key",
    "report_to",
    "compile",
    "strategy",
}


def runs_dir() -> Path:
    return Path(os.environ[RUNS_ENV]) if RUNS_ENV in os.environ else Path("runs")


def digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def plugin_digests(paths: list[Path]) -> dict[str, str]:
    """Each plugin file's name and content hash: editing a plugin changes every key."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()[:16] for p in paths}


@dataclass(frozen=True)
class Cell:
    suite: Suite
    model: ModelEntry
    label: str
    sweep: dict[str, Any]
    seed: int
    task: TaskEntry
    pretrain: PretrainConfig | None  # None for an existing checkpoint
    pretrain_key: str | None
    cell_id: str
    config: dict[str, Any] = field(default_factory=dict)


def _checkpoint_steps(suite: Suite, cfg: PretrainConfig) -> tuple[int, list[int]]:
    """(save_every, save_steps): the intermediate checkpoints the suite's tasks evaluate:
    every N steps (`every:`), and fractions of the step budget (`at:`)."""
    save_every = min((t.every for t in suite.tasks if t.every), default=0)
    steps = resolve_recipe(cfg, get_spec(cfg.preset, cfg.vocab_size)).steps
    fractions = {f for t in suite.tasks for f in (t.at or [])}
    return save_every, sorted({max(1, round(f * steps)) for f in fractions} - {steps})


def _pretrain_config(
    suite: Suite, model: ModelEntry, point: dict[str, Any], seed: int
) -> tuple[PretrainConfig, str]:
    plugins = suite.plugin_paths()
    cfg = PretrainConfig(
        preset=point["preset"] if "preset" in point else model.preset,
        objective=point["objective"] if "objective" in point else model.objective,
        output_dir="",
        seed=seed,
        plugins=[str(p.resolve()) for p in plugins],
        progress=False,
        **suite.recipe_for(model, point),
    )
    save_every, save_steps = _checkpoint_steps(suite, cfg)
    marks = suite.compare_at or BudgetMarks()
    cfg = cfg.model_copy(
        update={"save_every": save_every, "save_steps": save_steps, "save_at": marks}
    )
    key = digest({**cfg.model_dump(exclude=_KEY_EXCLUDE), "plugins": plugin_digests(plugins)})
    out = str(runs_dir() / "pretrain" / key)
    return cfg.model_copy(update={"output_dir": out, "pretrain_key": key}), key


def expand(suite: Suite) -> list[Cell]:
    """All cells of a suite, in a stable order (sweep point, model, seed, task)."""
    keys = sorted(suite.sweep)
    points = [
        dict(zip(keys, c, strict=True)) for c in itertools.product(*(suite.sweep[k] for k in keys))
    ]
    plugins = plugin_digests(suite.plugin_paths())
    cells: list[Cell] = []
    for point, model, seed in itertools.product(points, suite.models, suite.seeds):
        cfg, pkey = None, None
        if model.checkpoint is None:
            cfg, pkey = _pretrain_config(suite, model, point, seed)
        for task in suite.tasks:
            if task.models is not None and model.label() not in task.models:
                continue
            config = {
                "model": model.label(),
                "pretrain_key": pkey,
                "checkpoint": model.checkpoint,
                "finetune_causal": model.finetune_causal,
                "finetune": model.finetune.model_dump(exclude={"progress"}),
                "sweep": point,
                "seed": seed,
                "task": task.model_dump(),
                "plugins": plugins,
            }
            cell_id = digest(config)
            cells.append(
                Cell(suite, model, model.label(), point, seed, task, cfg, pkey, cell_id, config)
            )
    return cells
