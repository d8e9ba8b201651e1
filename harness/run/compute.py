"""One cell's evaluation points computed and written: the task run on each checkpoint, its
rows and per-example samples written as the point finishes (`run_cell`).

A point's file (`<cell_id>.step-N.parquet`, or `<cell_id>.parquet` for the final one) is
written last and atomically, so a point whose file reads is done, whoever wrote it: the
cell's own run, or `hlm run --reached` while the cell's pretraining trained
(`harness.run.reached`). An intermediate point is claimed while it computes
(`harness.run.claims`), so two runs never evaluate one checkpoint at once; the final point
is covered by the cell's own claim.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from harness.results.leaderboard import file_problem, write_cell
from harness.results.samples import write_samples
from harness.run.artifacts import artifact_folder
from harness.run.cells import Cell
from harness.run.claims import claimed
from harness.run.points import Point, evaluation_points, prepare
from harness.run.rows import cell_rows, refuse_mixed_rows, sample_rows
from harness.suite import overrides
from harness.tasks import TASKS, TaskContext
from zoo.errors import UserError
from zoo.models import PRESETS, get_spec, spec_from_hf_config
from zoo.models.spec import ModelSpec
from zoo.train.config import PretrainConfig
from zoo.train.metadata import find_metadata

log = logging.getLogger(__name__)


def _checkpoint_spec(cell: Cell) -> tuple[ModelSpec, PretrainConfig]:
    """An existing checkpoint's spec and a config describing it (its objective from metadata;
    a checkpoint without metadata is a classical LM)."""
    from zoo.train.checkpoint import hf_config  # transformers: for such a cell alone

    ref = str(cell.model.checkpoint)
    meta = find_metadata(ref) if Path(ref).is_dir() else None
    config = hf_config(ref)  # its architecture: no weights need loading
    if meta is not None and meta.preset in PRESETS:
        spec = get_spec(meta.preset, config.vocab_size)
    else:
        spec = spec_from_hf_config(config, name=cell.label)
    objective = meta.objective if meta is not None else "ce"
    recipe = {k: v for k, v in overrides(cell.suite.recipe).items() if k != "loss"}
    # a description of a model trained elsewhere (its preset may be no zoo preset): built from
    # the checkpoint and the suite's already validated recipe, so not validated again
    cfg = PretrainConfig.model_construct(
        preset=spec.name, objective=objective, output_dir="", seed=cell.seed, **recipe
    )
    return spec, cfg


def cell_context(cell: Cell, checkpoint: Path | None, artifacts: Path | None = None) -> TaskContext:
    """What the cell's task needs to evaluate `checkpoint`."""
    tt = TASKS.get(cell.task.type)
    if cell.pretrain is not None:
        spec, cfg = get_spec(cell.pretrain.preset, cell.pretrain.vocab_size), cell.pretrain
    else:
        spec, cfg = _checkpoint_spec(cell)
    return TaskContext(
        spec=spec,
        objective=cfg.objective,
        pretrain=cfg,
        params=tt.params.model_validate(cell.task.params),
        seed=cell.seed,
        checkpoint=checkpoint,
        suite_dir=Path(cell.suite.path).parent,
        artifacts=artifacts,
    )


def run_point(
    cell: Cell, point: Point, artifacts: Path | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Evaluate one of the cell's checkpoints: its leaderboard rows and its per-example
    samples (not yet written); the task's raw outputs go into `artifacts`."""
    checkpoint = prepare(cell, point)
    ctx = cell_context(cell, checkpoint, artifacts)
    spec = TASKS.get(cell.task.type)
    produced = spec.run(ctx)
    wanted = cell.task.metrics
    results = [r for r in produced if r.metric in wanted] if wanted else produced
    if not results and spec.scores(ctx.params):
        gave = ", ".join(r.metric for r in produced) or "nothing"
        asked = f" of the task's metrics ({', '.join(wanted)})" if wanted else ""
        raise UserError(
            f"cell {cell.label}/{cell.task.label()} produced no rows{asked}: it gave {gave}"
        )
    meta = find_metadata(checkpoint) if checkpoint is not None else None
    return cell_rows(cell, ctx, results, meta), sample_rows(cell, results, meta, cell.task.label())


def written(out: Path, result_id: str) -> bool:
    """Whether the point's result file is in `out` and reads (by this run or another)."""
    f = out / f"{result_id}.parquet"
    return f.is_file() and file_problem(f) is None


def compute_point(cell: Cell, point: Point, out: Path, redo: bool = False) -> bool:
    """Evaluate one point and write its files; False where another run evaluates this
    intermediate point now, or (unless `redo`) wrote it meanwhile. The final point is
    covered by the cell's claim."""
    if point.result_id == cell.cell_id:
        _write_point(cell, point, out)
        return True
    with claimed(out, point.result_id) as mine:
        if not mine or (not redo and written(out, point.result_id)):
            log.info("%s (seed %d): %s evaluated by another run", cell.label, cell.seed,
                     point.result_id)  # fmt: skip
            return False
        _write_point(cell, point, out)
        return True


def _write_point(cell: Cell, point: Point, out: Path) -> None:
    with artifact_folder(out, point.result_id) as artifacts:
        rows, samples = run_point(cell, point, artifacts)
    refuse_mixed_rows(out, cell, rows)
    write_samples(out, point.result_id, samples)
    write_cell(out, point.result_id, rows)  # last: marks the point done


def run_cell(cell: Cell, out: Path, done: set[str], redo: bool = False) -> None:
    """Evaluate every point of the cell not yet in `out` (`done` when the run started, or
    written since), writing each as it finishes (the final point last: its file marks the
    cell done); `redo`: every point again (`--force`, `hlm evaluate`)."""
    for point in evaluation_points(cell):
        if redo or (point.result_id not in done and not written(out, point.result_id)):
            compute_point(cell, point, out, redo)
