"""A suite expanded into cells: one model x sweep point x seed x task each, keyed by hashes.

A cell's id is a hash of its resolved configuration (the contents of the plugin files that
registered its objective, preset, model family, loss kernel or task type; those of the files
that define its task: a user's lm-eval task folder; the contents of the local
data it reads where they differ from those first keyed, and any task default it relies on
that changed since it was pinned, `harness.tasks.keyed_defaults`), so a re-run computes only
what is missing and an edited definition or data file is computed anew. Its pretraining is a
typed `PretrainConfig` whose hash (the pretraining key) names its folder `<runs>/pretrain/<key>/`,
shared by every task and suite that needs the same pretraining.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.suite import ModelEntry, Suite, TaskEntry
from harness.tasks import TASKS, Identity
from harness.tasks.keyed_defaults import PINNED_DATA, moved_data, moved_defaults
from zoo.checksums import short_digest
from zoo.errors import UserError
from zoo.models import FAMILIES, PRESETS, get_spec
from zoo.objectives import OBJECTIVES
from zoo.objectives.kernels import KERNELS
from zoo.registry import Registry, plugin_module
from zoo.train.budgets import BudgetMarks
from zoo.train.config import PretrainConfig
from zoo.train.finetune_settings import FINETUNE_VERSION
from zoo.train.names import runs_dir
from zoo.train.recipe import resolve_recipe, unreached_peak


def digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def plugin_digests(paths: list[Path], read: list[tuple[Registry[Any], str]]) -> dict[str, str]:
    """The name and content hash of each plugin file among `paths` that registered one of the
    names `read` (registry, name): editing a plugin re-keys only what reads it. A name no
    registry holds yet (its plugin not imported) keys every plugin file, as none can be ruled
    out."""
    if any(name not in registry for registry, name in read):
        used = {plugin_module(p) for p in paths}
    else:
        used = {m for registry, name in read if (m := registry.plugin(name)) is not None}
    return file_digests({p.name: p for p in paths if plugin_module(p) in used})


def pretraining_reads(cfg: PretrainConfig) -> list[tuple[Registry[Any], str]]:
    """The registered names a pretraining run reads: its objective, preset, model family and
    loss kernels."""
    spec = get_spec(cfg.preset, cfg.vocab_size) if cfg.preset in PRESETS else None
    kernels = [getattr(cfg.loss, k, None) for k in ("ce_impl", "cwt_impl")]
    return [
        (OBJECTIVES, cfg.objective),
        (PRESETS, cfg.preset),
        *([(FAMILIES, spec.family)] if spec is not None else []),
        *[(KERNELS, k) for k in kernels if isinstance(k, str) and k in KERNELS],
    ]


def file_digests(files: dict[str, Path]) -> dict[str, str]:
    """Each named file's content hash."""
    return {name: short_digest(p) for name, p in files.items()}


def task_identity(task: TaskEntry, suite_dir: Path) -> Identity:
    """What defines `task`'s computation beyond its params (`TaskType.identity`: the files
    of a user's lm-eval task folder, lm-eval's release, the local data it reads); nothing for
    most tasks."""
    spec = TASKS.get(task.type)
    return spec.identity(spec.params.model_validate(task.params), suite_dir)


def moved_shared_data(cells: list[Cell]) -> list[str]:
    """The pinned data (`keyed_defaults.PINNED_DATA`: the benchmark files under the data
    root) that differs here from what was first keyed, in words, with how many of `cells`
    read it: those cells are keyed anew, and computed anew by `hlm run`."""
    counts: dict[str, int] = {}
    for cell in cells:
        for name in cell.config["data_files"] if "data_files" in cell.config else {}:
            if name in PINNED_DATA:
                counts[name] = counts.setdefault(name, 0) + 1
    return [
        f"{name} differs from the data first keyed: {n} cell{'s' * (n != 1)} read it, keyed anew"
        for name, n in sorted(counts.items())
    ]


def short_warm_ups(cells: list[Cell]) -> list[str]:
    """`MODEL: why` for each model whose pretraining is shorter than its preset's warm-up,
    left unset (`zoo.train.recipe.unreached_peak`): said by `hlm validate` before the hours
    a run takes, as the run itself warns of it."""
    said: dict[str, None] = {}  # in order, each once (a model's seeds and tasks say the same)
    for cell in cells:
        if (cfg := cell.pretrain) is not None:
            spec = get_spec(cfg.preset, cfg.vocab_size)
            if why := unreached_peak(cfg, resolve_recipe(cfg, spec), spec):
                said[f"{cell.label}: {why}"] = None
    return list(said)


def missing_data(cells: list[Cell]) -> dict[str, list[str]]:
    """The local data `cells` would read that is not here, by task label: `hlm run` and
    `hlm evaluate` refuse to start on it rather than fail each cell after its pretraining."""
    gone: dict[str, set[str]] = {}
    for cell in cells:
        if cell.data_not_here:
            gone.setdefault(cell.task.label(), set()).update(cell.data_not_here)
    return {label: sorted(names) for label, names in gone.items()}


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
    data_not_here: tuple[str, ...] = ()  # local data it would read that is not on this machine

    def steps(self) -> list[int]:
        """The intermediate pretraining steps this cell's task evaluates."""
        return [] if self.pretrain is None else task_steps(self.task, _run_steps(self.pretrain))


def task_steps(task: TaskEntry, steps: int) -> list[int]:
    """The intermediate pretraining steps a task evaluates, of a run of `steps` steps: the
    multiples of its `every:`, and its `at:` fractions of the step budget (the last step is
    the final checkpoint, evaluated anyway)."""
    wanted = set(range(task.every, steps, task.every)) if task.every else set()
    wanted |= {max(1, round(f * steps)) for f in task.at or []}
    return sorted(wanted - {steps})


def _run_steps(cfg: PretrainConfig) -> int:
    return resolve_recipe(cfg, get_spec(cfg.preset, cfg.vocab_size)).steps


def _applies(task: TaskEntry, model: ModelEntry) -> bool:
    return task.models is None or model.label() in task.models


def _pretrain_config(
    suite: Suite, model: ModelEntry, point: dict[str, Any], seed: int
) -> tuple[PretrainConfig, str]:
    plugins = suite.plugin_paths()
    cfg = PretrainConfig(
        preset=point["preset"] if "preset" in point else model.preset,
        objective=point["objective"] if "objective" in point else model.objective,
        output_dir="",  # the key's folder, below
        seed=seed,
        plugins=[str(p.resolve()) for p in plugins],
        progress=False,
        **suite.recipe_for(model, point),
    )
    steps = _run_steps(cfg)  # every point any of the model's tasks evaluates (runtime keys)
    wanted = {s for t in suite.tasks if _applies(t, model) for s in task_steps(t, steps)}
    marks = suite.compare_at or BudgetMarks()
    cfg = cfg.model_copy(
        update={"save_at_steps": sorted(wanted | set(cfg.save_at_steps)), "save_at": marks}
    )
    key = digest({**cfg.key_fields(), "plugins": plugin_digests(plugins, pretraining_reads(cfg))})
    out = str(pretraining_folder(key))
    return cfg.model_copy(update={"output_dir": out, "pretrain_key": key}), key


def _keyed_task(task: TaskEntry) -> dict[str, Any]:
    """The task entry as keyed: its params but those its type says change no score."""
    unscored = TASKS.get(task.type).unscored
    data = task.model_dump()
    data["params"] = {k: v for k, v in data["params"].items() if k not in unscored}
    return data


def pretraining_folder(pretrain_key: str) -> Path:
    """That pretraining's folder in the runs cache (its output folder)."""
    return runs_dir() / "pretrain" / pretrain_key


def _keyed_where_set(model: ModelEntry, task: TaskEntry, identity: Identity) -> dict[str, Any]:
    """What joins a cell's id only where it is set, so that other cells keep their ids: the
    causal fine-tuning's version, the task's definition files (by content) and versions, the
    data it reads that differs from what was first keyed, and a default it relies on that
    has changed."""
    extra: dict[str, Any] = {}
    if model.finetune_causal:  # a fix to what it saves: its cells computed anew
        extra["finetune_version"] = FINETUNE_VERSION
    if identity.files:
        extra["task_files"] = file_digests(identity.files)
    if identity.versions:
        extra["task_versions"] = identity.versions
    if data := moved_data(identity.data):
        extra["data_files"] = data  # an edited data file, a user's own
    if moved := moved_defaults(task.type, task.params):
        extra["task_defaults"] = moved
    return extra


def expand(suite: Suite) -> list[Cell]:
    """All cells of a suite, in a stable order (sweep point, model, seed, task)."""
    keys = sorted(suite.sweep)
    points = [
        dict(zip(keys, c, strict=True)) for c in itertools.product(*(suite.sweep[k] for k in keys))
    ]
    paths = suite.plugin_paths()
    cells: list[Cell] = []
    seen: set[str] = set()
    for whole, model, seed in itertools.product(points, suite.models, suite.seeds):
        point = suite.point_for(model, whole)  # the keys that apply to this model
        cfg, pkey = None, None
        if model.checkpoint is None:
            cfg, pkey = _pretrain_config(suite, model, point, seed)
        model_reads = [] if cfg is None else pretraining_reads(cfg)
        for task in suite.tasks:
            if not _applies(task, model):
                continue
            task_here, own = task.at_point(point)
            config = {
                "model": model.label(),
                "pretrain_key": pkey,
                "checkpoint": model.checkpoint,
                "finetune_causal": model.finetune_causal,
                "finetune": model.finetune.model_dump(exclude={"progress", "overwrite"}),
                "sweep": own,
                "seed": seed,
                "task": _keyed_task(task_here),
                "plugins": plugin_digests(paths, [*model_reads, (TASKS, task_here.type)]),
            }
            identity = task_identity(task_here, Path(suite.path).parent)
            config |= _keyed_where_set(model, task_here, identity)
            cell_id = digest(config)
            if cell_id in seen:  # a task the point's `tasks.` keys do not sweep: once
                continue
            seen.add(cell_id)
            not_here = tuple(sorted(name for name, d in identity.data.items() if d is None))
            cells.append(
                Cell(
                    suite,
                    model,
                    model.label(),
                    own,
                    seed,
                    task_here,
                    cfg,
                    pkey,
                    cell_id,
                    config,
                    data_not_here=not_here,
                )
            )
    return cells


@dataclass(frozen=True)
class Selection:
    """Which of a suite's cells a run computes (`hlm run --model / --task / --seed /
    --skip-task`); None selects every value, and `skip_tasks` leaves those task labels out."""

    model: str | None = None  # a model label
    task: str | None = None  # a task label: its `name:`, else its type
    seed: int | None = None
    skip_tasks: tuple[str, ...] = ()  # task labels left out (on a shared machine: throughput)
    cell_ids: frozenset[str] | None = None  # these cells alone (a cluster job's share)

    def apply(self, cells: list[Cell]) -> list[Cell]:
        """The selected cells. A value the suite does not have gets the close-match error; one
        it has is no error where the other filters leave none of its cells (`--model` of an
        untrained twin, `--skip-task` of a task run only for other models)."""
        wanted: list[tuple[str, Callable[[Cell], str], str | None]] = [
            ("model label", lambda c: c.label, self.model),
            ("task label", lambda c: c.task.label(), self.task),
            ("seed", lambda c: str(c.seed), None if self.seed is None else str(self.seed)),
        ]
        every = cells
        for kind, label_of, value in wanted:
            if value is None:
                continue
            _known(kind, {label_of(c) for c in every}).get(value)
            cells = [c for c in cells if label_of(c) == value]
        known = _known("task label", {c.task.label() for c in every})
        for label in self.skip_tasks:
            known.get(label)
        if self.task is not None and self.task in self.skip_tasks:
            raise UserError(f"--task {self.task} and --skip-task {self.task}: chosen and left out")
        if self.cell_ids is not None:
            cells = [c for c in cells if c.cell_id in self.cell_ids]
        return [c for c in cells if c.task.label() not in self.skip_tasks]


def _known(kind: str, labels: set[str]) -> Registry[None]:
    """The labels as a registry: asking for one it lacks gets the close-match error."""
    known: Registry[None] = Registry(kind)
    for label in sorted(labels):
        known.add(label, None)
    return known


EVERY_CELL = Selection()  # the default of a run: no filter
