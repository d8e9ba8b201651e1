"""Running a suite: expand into cells, skip finished ones, pretrain once per key, write rows.

A cell is one model x sweep point x seed x task. Its id is a hash of its resolved
configuration, so a re-run computes only what is missing and `--force` recomputes. Pretrained
checkpoints live in `<runs>/pretrain/<key>/` keyed by a hash of the resolved pretraining
configuration and are shared by every task (and suite) that needs them; an interrupted
pretraining resumes from its last checkpoint.
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

from harness.leaderboard import done_cells, git_sha, now, write_cell
from harness.metrics import direction
from harness.suite import RECIPE_KEYS, ModelEntry, Suite, TaskEntry, load_suite
from harness.tasks import TASKS, TaskContext
from zoo.errors import UserError
from zoo.models import PRESETS, get_spec, spec_from_hf_config
from zoo.models.spec import ModelSpec
from zoo.train.checkpoint import list_checkpoints, read_metadata, versions
from zoo.train.config import PretrainConfig
from zoo.train.finetune import finetune_causal
from zoo.train.pretrain import pretrain, resolve_recipe

RUNS_ENV = "HLM_RUNS_DIR"
_KEY_EXCLUDE = {"output_dir", "progress", "log_every", "eval_every", "eval_batches", "plugins"}


def runs_dir() -> Path:
    return Path(os.environ.get(RUNS_ENV, "runs"))


def digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


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
    save_every: int = 0
    config: dict[str, Any] = field(default_factory=dict)


def _overrides(entry: Any) -> dict[str, Any]:
    return {k: v for k, v in entry.model_dump().items() if v is not None}


def expand(suite: Suite) -> list[Cell]:
    """All cells of a suite, in a stable order (sweep point, model, seed, task)."""
    suite_dir = Path(suite.path).parent
    plugins = [str((suite_dir / p).resolve()) for p in suite.plugins]
    keys = sorted(suite.sweep)
    points = [
        dict(zip(keys, combo, strict=True))
        for combo in itertools.product(*(suite.sweep[k] for k in keys))
    ]
    every = [t.every for t in suite.tasks if t.every]
    save_every = min(every) if every else 0
    cells: list[Cell] = []
    for point in points:
        for model in suite.models:
            for seed in suite.seeds:
                cfg: PretrainConfig | None = None
                pkey: str | None = None
                if model.checkpoint is None:
                    recipe = {**_overrides(suite.recipe), **_overrides(model.recipe)}
                    recipe.update({k: v for k, v in point.items() if k in RECIPE_KEYS})
                    cfg = PretrainConfig(
                        preset=point.get("preset", model.preset),
                        objective=point.get("objective", model.objective),
                        output_dir="",
                        seed=seed,
                        plugins=plugins,
                        save_every=save_every,
                        progress=False,
                        **recipe,
                    )
                    pkey = digest(cfg.model_dump(exclude=_KEY_EXCLUDE))
                    cfg = cfg.model_copy(update={"output_dir": str(runs_dir() / "pretrain" / pkey)})
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
                            save_every,
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
    assert cell.pretrain is not None
    out = Path(cell.pretrain.output_dir)
    with _lock(out.parent / f"{out.name}.lock"):
        if not (out / "final").is_dir():
            pretrain(cell.pretrain, resume=bool(list_checkpoints(out)))
        final = out / "final"
        if cell.model.finetune_causal:
            ft = out / f"finetune-causal-{cell.model.finetune_steps}"
            if not (ft / "final").is_dir():
                finetune_causal(
                    str(final),
                    str(ft),
                    steps=cell.model.finetune_steps,
                    warmup_steps=max(1, cell.model.finetune_steps // 10),
                    progress=False,
                )
            final = ft / "final"
    return final


def _cell_context(cell: Cell) -> tuple[TaskContext, ModelSpec, str]:
    tt = TASKS.get(cell.task.type)
    params = tt.params.model_validate(cell.task.params)
    if cell.pretrain is not None:
        spec = get_spec(cell.pretrain.preset, cell.pretrain.vocab_size)
        objective = cell.pretrain.objective
        cfg = cell.pretrain
    else:
        assert cell.model.checkpoint is not None
        meta = read_metadata(cell.model.checkpoint)
        from zoo.train.checkpoint import load_model

        loaded = load_model(cell.model.checkpoint)
        if meta.get("preset") in PRESETS:
            spec = get_spec(meta["preset"], loaded.config.vocab_size)
        else:
            spec = spec_from_hf_config(loaded.config, name=cell.label)
        objective = str(
            meta.get("objective", "ce")
        )  # a checkpoint with no metadata is a classical LM
        cfg = PretrainConfig(
            preset=spec.name,
            objective=objective,
            output_dir="",
            seed=cell.seed,
            **_overrides(cell.suite.recipe),
        )
    checkpoint: Path | None = None
    along: list[tuple[int, Path]] = []
    if tt.needs_checkpoint:
        checkpoint = (
            ensure_pretrained(cell)
            if cell.pretrain is not None
            else Path(str(cell.model.checkpoint))
        )
        if cell.task.every and cell.pretrain is not None and not cell.model.finetune_causal:
            out = Path(cell.pretrain.output_dir)
            along = [
                (int(p.name.split("-")[1]), p)
                for p in list_checkpoints(out)
                if int(p.name.split("-")[1]) % cell.task.every == 0
            ]
            along.append((resolve_recipe(cfg, spec).steps, checkpoint))
    ctx = TaskContext(
        spec=spec,
        objective=objective,
        pretrain=cfg,
        params=params,
        seed=cell.seed,
        checkpoint=checkpoint,
        checkpoints=along,
        suite_dir=Path(cell.suite.path).parent,
    )
    return ctx, spec, objective


def run_cell(cell: Cell) -> list[dict[str, Any]]:
    """Compute one cell and return its leaderboard rows (not yet written)."""
    ctx, spec, objective = _cell_context(cell)
    tt = TASKS.get(cell.task.type)
    results = tt.run(ctx)
    if cell.task.metrics:
        results = [r for r in results if r.metric in cell.task.metrics]
    meta = read_metadata(ctx.checkpoint) if ctx.checkpoint is not None else {}
    recipe = resolve_recipe(ctx.pretrain, spec)
    common = {
        "suite": cell.suite.name,
        "suite_version": cell.suite.version,
        "cell_id": cell.cell_id,
        "model": cell.label,
        "preset": spec.name,
        "objective": objective,
        "scale": spec.name.split("-", 1)[-1],
        "vocab_size": spec.vocab_size,
        "batch_size": int(meta.get("batch_size", recipe.batch_size * recipe.grad_accum)),
        "seed": cell.seed,
        "task": cell.task.label(),
        "params": int(meta["params"]) if "params" in meta else None,
        "sweep": json.dumps(cell.sweep, sort_keys=True),
        "config": json.dumps(cell.config, sort_keys=True, default=str),
        "git_sha": git_sha(),
        "versions": json.dumps(versions()),
        "timestamp": now(),
    }
    rows = []
    for r in results:
        hib = direction(r.metric, r.higher_is_better)
        rows.append(
            {
                **common,
                "task": r.task or common["task"],
                "metric": r.metric,
                "value": float(r.value),
                "stderr": r.stderr,
                "higher_is_better": hib,
                "step": r.step if r.step is not None else meta.get("steps"),
                "tokens_seen": r.tokens_seen
                if r.tokens_seen is not None
                else meta.get("tokens_seen"),
                "train_flops": r.train_flops
                if r.train_flops is not None
                else meta.get("train_flops"),
                "train_seconds": r.train_seconds
                if r.train_seconds is not None
                else meta.get("wall_seconds"),
            }
        )
    if not rows:
        raise UserError(f"cell {cell.label}/{cell.task.label()} produced no rows")
    return rows


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
    cells = expand(suite)
    if only is not None:
        cells = [c for c in cells if c.label == only]
    out = leaderboard_dir(suite.name, root)
    out.mkdir(parents=True, exist_ok=True)
    # the suite as run (includes merged), for `hlm leaderboard NAME` and for publishing
    (out / "_suite.yaml").write_text(yaml.safe_dump(suite.model_dump(mode="json"), sort_keys=False))
    done = set() if force else done_cells(out)
    todo = [c for c in cells if c.cell_id not in done]
    # group by pretraining key: a checkpoint is trained once, then every task uses it
    todo.sort(key=lambda c: (c.pretrain_key or "", c.task.type))
    failed: list[str] = []
    bar = tqdm(
        total=len(cells),
        initial=len(cells) - len(todo),
        desc=f"{suite.name}: cells",
        unit="cell",
        disable=not progress,
    )
    for cell in todo:
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

    assert suite.publish is not None
    done: list[str] = []
    if suite.publish.leaderboard:
        publish_leaderboard(
            suite.name, suite.publish.leaderboard, private=suite.publish.private, leaderboards=root
        )
        done.append(suite.publish.leaderboard)
    for label, repo in suite.publish.models.items():
        cell = next((c for c in cells if c.label == label and c.pretrain is not None), None)
        if cell is None:
            raise UserError(f"publish.models.{label}: no pretrained checkpoint for this model")
        publish_model(
            ensure_pretrained(cell),
            repo,
            private=suite.publish.private,
            leaderboards=root,
            suite=suite.name,
            label=label,
        )
        done.append(repo)
    return done
