"""Running a suite: expand into cells, skip finished ones, pretrain once per key, write rows.

A cell is one model x sweep point x seed x task. Its id is a hash of its resolved
configuration (plugin files' contents included), so a re-run computes only what is missing
and `--force` recomputes. Pretrained checkpoints live in `<runs>/pretrain/<key>/` keyed by a
hash of the resolved pretraining configuration and are shared by every task (and suite) that
needs them; an interrupted pretraining resumes from its last checkpoint. Each run records the
suite's current cell ids (`_cells.json`), so results of cells the suite no longer has stay on
disk but are not shown as the suite's.
"""

from __future__ import annotations

import fcntl
import hashlib
import itertools
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from tqdm import tqdm

from harness.leaderboard import done_cells, write_cell, write_current_cells
from harness.rows import cell_rows
from harness.suite import RECIPE_KEYS, ModelEntry, Suite, TaskEntry, load_suite
from harness.tasks import TASKS, TaskContext
from zoo.errors import UserError
from zoo.models import PRESETS, get_spec, spec_from_hf_config
from zoo.models.spec import ModelSpec
from zoo.registry import Registry
from zoo.train.causal_finetune import CausalFinetuneConfig, finetune_causal
from zoo.train.checkpoint import checkpoint_step, list_checkpoints, load_model
from zoo.train.config import PretrainConfig, resolve_recipe
from zoo.train.metadata import find_metadata
from zoo.train.pretrain import pretrain

RUNS_ENV = "HLM_RUNS_DIR"
_KEY_EXCLUDE = {
    "output_dir",
    "progress",
    "log_every",
    "eval_every",
    "eval_batches",
    "plugins",
    "pretrain_key",
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


def _overrides(entry: Any) -> dict[str, Any]:
    return {k: v for k, v in entry.model_dump().items() if v is not None}


def _recipe(suite: Suite, model: ModelEntry, point: dict[str, Any]) -> dict[str, Any]:
    """Suite recipe, then the model's, then the sweep point's keys; `loss` merged key-wise."""
    recipe = {**_overrides(suite.recipe), **_overrides(model.recipe)}
    recipe["loss"] = {**(suite.recipe.loss or {}), **(model.recipe.loss or {})}  # type: ignore[attr-defined]
    for key, value in point.items():
        if key.startswith("loss."):
            recipe["loss"][key.removeprefix("loss.")] = value
        elif key in RECIPE_KEYS:
            recipe[key] = value
    return recipe


def _pretrain_config(
    suite: Suite, model: ModelEntry, point: dict[str, Any], seed: int, save_every: int
) -> tuple[PretrainConfig, str]:
    plugins = suite.plugin_paths()
    cfg = PretrainConfig(
        preset=point["preset"] if "preset" in point else model.preset,
        objective=point["objective"] if "objective" in point else model.objective,
        output_dir="",
        seed=seed,
        plugins=[str(p.resolve()) for p in plugins],
        save_every=save_every,
        progress=False,
        **_recipe(suite, model, point),
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
    save_every = min((t.every for t in suite.tasks if t.every), default=0)
    plugins = plugin_digests(suite.plugin_paths())
    cells: list[Cell] = []
    for point, model, seed in itertools.product(points, suite.models, suite.seeds):
        cfg, pkey = None, None
        if model.checkpoint is None:
            cfg, pkey = _pretrain_config(suite, model, point, seed, save_every)
        for task in suite.tasks:
            if task.models is not None and model.label() not in task.models:
                continue
            config = {
                "model": model.label(),
                "pretrain_key": pkey,
                "checkpoint": model.checkpoint,
                "finetune_causal": model.finetune_causal,
                "finetune_steps": model.finetune_steps,
                "sweep": point,
                "seed": seed,
                "task": task.model_dump(),
                "plugins": plugins,
            }
            cells.append(
                Cell(
                    suite,
                    model,
                    model.label(),
                    point,
                    seed,
                    task,
                    cfg,
                    pkey,
                    digest(config),
                    config,
                )
            )
    return cells


@contextmanager
def _lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)  # two runs never pretrain the same key at once
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def ensure_pretrained(cell: Cell) -> Path:
    """The final checkpoint for the cell's pretraining key (trained or resumed if missing)."""
    if cell.pretrain is None:
        raise UserError(f"{cell.label}: an existing checkpoint has no pretraining to run")
    out = Path(cell.pretrain.output_dir)
    with _lock(out.parent / f"{out.name}.lock"):
        if not (out / "final").is_dir():
            pretrain(cell.pretrain, resume=bool(list_checkpoints(out)))
        final = out / "final"
        if cell.model.finetune_causal:
            ft = out / f"finetune-causal-{cell.model.finetune_steps}"
            if not (ft / "final").is_dir():
                steps = cell.model.finetune_steps
                settings = CausalFinetuneConfig(
                    steps=steps, warmup_steps=max(1, steps // 10), progress=False
                )
                finetune_causal(str(final), str(ft), settings)
            final = ft / "final"
    return final


def _checkpoint_spec(cell: Cell) -> tuple[ModelSpec, PretrainConfig]:
    """An existing checkpoint's spec and a config describing it (its objective from metadata;
    a checkpoint without metadata is a classical LM)."""
    ref = str(cell.model.checkpoint)
    meta = find_metadata(ref) if Path(ref).is_dir() else None
    loaded = load_model(ref)
    if meta is not None and meta.preset in PRESETS:
        spec = get_spec(meta.preset, loaded.config.vocab_size)
    else:
        spec = spec_from_hf_config(loaded.config, name=cell.label)
    objective = meta.objective if meta is not None else "ce"
    recipe = {k: v for k, v in _overrides(cell.suite.recipe).items() if k != "loss"}
    cfg = PretrainConfig(
        preset=spec.name, objective=objective, output_dir="", seed=cell.seed, **recipe
    )
    return spec, cfg


def _along(cell: Cell, cfg: PretrainConfig, spec: ModelSpec, final: Path) -> list[tuple[int, Path]]:
    """The checkpoints a task with `every: N` evaluates: every N steps, then the final one."""
    if not (cell.task.every and cell.pretrain is not None and not cell.model.finetune_causal):
        return []
    out = Path(cell.pretrain.output_dir)
    steps = [(checkpoint_step(p), p) for p in list_checkpoints(out)]
    return [(s, p) for s, p in steps if s % cell.task.every == 0] + [
        (resolve_recipe(cfg, spec).steps, final)
    ]


def cell_context(cell: Cell) -> TaskContext:
    tt = TASKS.get(cell.task.type)
    if cell.pretrain is not None:
        spec, cfg = get_spec(cell.pretrain.preset, cell.pretrain.vocab_size), cell.pretrain
    else:
        spec, cfg = _checkpoint_spec(cell)
    checkpoint: Path | None = None
    along: list[tuple[int, Path]] = []
    if tt.needs_checkpoint:
        checkpoint = (
            ensure_pretrained(cell)
            if cell.pretrain is not None
            else Path(str(cell.model.checkpoint))
        )
        along = _along(cell, cfg, spec, checkpoint)
    return TaskContext(
        spec=spec,
        objective=cfg.objective,
        pretrain=cfg,
        params=tt.params.model_validate(cell.task.params),
        seed=cell.seed,
        checkpoint=checkpoint,
        checkpoints=along,
        suite_dir=Path(cell.suite.path).parent,
    )


def run_cell(cell: Cell) -> list[dict[str, Any]]:
    """Compute one cell and return its leaderboard rows (not yet written)."""
    ctx = cell_context(cell)
    results = TASKS.get(cell.task.type).run(ctx)
    if cell.task.metrics:
        results = [r for r in results if r.metric in cell.task.metrics]
    if not results:
        raise UserError(f"cell {cell.label}/{cell.task.label()} produced no rows")
    meta = find_metadata(ctx.checkpoint) if ctx.checkpoint is not None else None
    return cell_rows(cell, ctx, results, meta)


@dataclass
class RunSummary:
    total: int
    skipped: int
    computed: int
    failed: list[str]
    leaderboard: Path
    published: list[str] = field(default_factory=list)


def leaderboard_dir(suite_name: str, root: Path = Path("leaderboards")) -> Path:
    return root / suite_name


def _only(cells: list[Cell], only: str | None) -> list[Cell]:
    if only is None:
        return cells
    labels: Registry[None] = Registry("model label")
    for c in cells:
        if c.label not in labels:
            labels.add(c.label, None)
    labels.get(only)  # a typo gets the close-match error
    return [c for c in cells if c.label == only]


def run_suite(
    path: str | Path,
    force: bool = False,
    root: Path = Path("leaderboards"),
    progress: bool = True,
    only: str | None = None,
    publish: bool = False,
) -> RunSummary:
    """Validate, expand and run a suite; finished cells are skipped unless `force`; the
    suite's `publish:` step runs if it is enabled or `publish` is set."""
    suite = load_suite(path)
    if publish and suite.publish is None:
        raise UserError(f"{suite.path}: publish: --publish needs a `publish:` section in the suite")
    all_cells = expand(suite)
    cells = _only(all_cells, only)
    out = leaderboard_dir(suite.name, root)
    out.mkdir(parents=True, exist_ok=True)
    # the suite as run (includes merged), for `hlm leaderboard NAME` and for publishing
    (out / "_suite.yaml").write_text(yaml.safe_dump(suite.model_dump(mode="json"), sort_keys=False))
    write_current_cells(out, [c.cell_id for c in all_cells])
    done = set() if force else done_cells(out)
    todo = sorted(
        (c for c in cells if c.cell_id not in done),
        key=lambda c: (c.pretrain_key or "", c.task.type),
    )
    failed: list[str] = []
    bar = tqdm(
        total=len(cells),
        initial=len(cells) - len(todo),
        desc=f"{suite.name}: cells",
        unit="cell",
        disable=not progress,
    )
    for (
        cell
    ) in todo:  # grouped by pretraining key: a checkpoint is trained once, then every task uses it
        bar.set_postfix_str(f"{cell.label} / {cell.task.label()}")
        try:
            write_cell(out, cell.cell_id, run_cell(cell))
        except UserError as exc:
            failed.append(f"{cell.label} / {cell.task.label()} (seed {cell.seed}): {exc}")
        bar.update(1)
    bar.close()
    summary = RunSummary(len(cells), len(cells) - len(todo), len(todo) - len(failed), failed, out)
    if suite.publish is not None and (suite.publish.enabled or publish) and not failed:
        summary.published = publish_suite(suite, cells, root)
    return summary


def publish_suite(suite: Suite, cells: list[Cell], root: Path) -> list[str]:
    """The suite's `publish:` step: the leaderboard, then each listed model's checkpoint (its
    first seed and sweep point). Returns what was published."""
    from harness.publish import publish_leaderboard, publish_model

    step = suite.publish
    if step is None:
        return []
    done: list[str] = []
    if step.leaderboard:
        publish_leaderboard(suite.name, step.leaderboard, private=step.private, leaderboards=root)
        done.append(step.leaderboard)
    for label, repo in step.models.items():
        cell = next((c for c in cells if c.label == label and c.pretrain is not None), None)
        if cell is None:
            raise UserError(f"publish.models.{label}: no pretrained checkpoint for this model")
        publish_model(
            ensure_pretrained(cell),
            repo,
            private=step.private,
            leaderboards=root,
            suite=suite.name,
            label=label,
        )
        done.append(repo)
    return done
