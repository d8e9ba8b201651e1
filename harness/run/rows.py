"""Leaderboard rows of a computed cell: its results, with the cell's and checkpoint's columns.

A result's own step / tokens / FLOPs / seconds (a task that evaluated intermediate
checkpoints) win over the checkpoint metadata's; everything else comes from the cell and the
typed checkpoint metadata (`zoo.train.metadata`).
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from harness.results.leaderboard import GROUP, mixed_cells, read_leaderboard
from harness.results.metrics import direction
from harness.results.provenance import git_sha, now
from harness.tasks import Result, TaskContext
from zoo.errors import UserError
from zoo.train.metadata import CheckpointMetadata, versions
from zoo.train.recipe import resolve_recipe

if TYPE_CHECKING:
    from harness.run.cells import Cell


# the `objective` of a row whose checkpoint hlm did not pretrain (no metadata, no run config):
# it is evaluated as a classical LM, but no comparison by objective may count it as one of ours
EXTERNAL = "external"


def recorded_objective(cell: Cell, ctx: TaskContext, meta: CheckpointMetadata | None) -> str:
    """The objective a row records: the run's, the checkpoint metadata's, or `EXTERNAL`."""
    return ctx.objective if cell.pretrain is not None or meta is not None else EXTERNAL


def _common(cell: Cell, ctx: TaskContext, meta: CheckpointMetadata | None) -> dict[str, Any]:
    spec, recipe = ctx.spec, resolve_recipe(ctx.pretrain, ctx.spec)
    return {
        "suite": cell.suite.name,
        "suite_version": cell.suite.version,
        "cell_id": cell.cell_id,
        "model": cell.label,
        "preset": spec.name,
        "objective": recorded_objective(cell, ctx, meta),
        "scale": spec.name.split("-", 1)[-1],
        "vocab_size": meta.vocab_size if meta is not None else spec.vocab_size,
        "batch_size": meta.batch_size if meta is not None else recipe.batch_size,
        "negatives": meta.negatives if meta is not None else None,
        "seed": cell.seed,
        "task": cell.task.label(),
        "params": meta.params if meta is not None else None,
        "sweep": json.dumps(cell.sweep, sort_keys=True),
        "config": json.dumps(_config(cell, ctx, meta), sort_keys=True, default=str),
        "git_sha": git_sha(),
        "versions": json.dumps(versions()),
        "hardware": trained_on(meta),
        "timestamp": now(),
    }


def _config(cell: Cell, ctx: TaskContext, meta: CheckpointMetadata | None) -> dict[str, Any]:
    """The cell's configuration, with the run config that made its weights (`pretrain`:
    every key field, a plugin objective's options included) where one is known."""
    if meta is not None and meta.config:
        source = {"objective_source": meta.objective_source} if meta.objective_source else {}
        return {**cell.config, "pretrain": meta.config, **source}
    if cell.pretrain is not None:
        return {**cell.config, "pretrain": ctx.pretrain.key_fields()}
    return cell.config


def trained_on(meta: CheckpointMetadata | None) -> str | None:
    """Where a checkpoint was trained, as the `hardware` column shows it ('cuda x1: NVIDIA
    H100 80GB HBM3'); for a cell with no checkpoint (throughput), this machine (its GPU
    where torch sees one); None where an older checkpoint's metadata does not say."""
    if meta is None:
        import torch

        from zoo.hardware import processor

        device = "cuda" if torch.cuda.is_available() else "cpu"
        return f"{device} x1: {processor(device)}"
    if not meta.hardware:
        return None
    return f"{meta.device} x{meta.world_size}: {meta.hardware}"


def _first(value: Any, fallback: Any) -> Any:
    return value if value is not None else fallback


def sample_rows(
    cell: Cell, results: list[Result], meta: CheckpointMetadata | None, task: str
) -> list[dict[str, Any]]:
    """The per-example scores of `results`, one row each (`harness.results.samples`)."""
    common = {
        "cell_id": cell.cell_id,
        "model": cell.label,
        "sweep": json.dumps(cell.sweep, sort_keys=True),
        "seed": cell.seed,
        "step": meta.pretrain_step if meta is not None else None,
    }
    return [
        {**common, "task": r.task or task, "metric": r.metric, "key": key, "value": value}
        for r in results
        for key, value in (r.samples or {}).items()
    ]


def cell_rows(
    cell: Cell, ctx: TaskContext, results: list[Result], meta: CheckpointMetadata | None
) -> list[dict[str, Any]]:
    """The leaderboard rows of a computed cell; a non-finite metric fails the cell (a
    UserError naming it) instead of reaching a row."""
    bad = [
        f"{r.task or cell.task.label()} {r.metric} = {r.value}"
        for r in results
        if not math.isfinite(r.value)
    ]
    if bad:
        raise UserError(f"non-finite result ({'; '.join(bad)}): the cell failed, no row written")
    common = _common(cell, ctx, meta)
    rows = []
    for r in results:
        rows.append(
            {
                **common,
                "task": r.task or common["task"],
                "metric": r.metric,
                "value": float(r.value),
                "stderr": r.stderr,
                "higher_is_better": direction(r.metric, r.higher_is_better),
                "step": _first(r.step, meta.pretrain_step if meta else None),
                "tokens_seen": _first(r.tokens_seen, meta.tokens_seen if meta else None),
                "train_flops": _first(r.train_flops, meta.train_flops if meta else None),
                "train_seconds": _first(r.train_seconds, meta.wall_seconds if meta else None),
            }
        )
    return rows


def refuse_mixed_rows(out: Path, cell: Cell, rows: list[dict[str, Any]]) -> None:
    """A UserError, before any of them is written, where one of the cell's rows has the
    model, sweep point, seed, task, metric and step of a row another cell of `out` wrote.
    A damaged file is the run's to name and recompute, not this check's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "<file>: skipped, ..."
        board = read_leaderboard(out)
    others = board[board["cell_id"] != cell.cell_id]
    if others.empty or not rows:
        return
    cols = [*GROUP, "step", "cell_id", "config"]
    both = pd.concat([others[cols], pd.DataFrame(rows)[cols]], ignore_index=True)
    mixed = mixed_cells(both)
    if mixed:
        raise UserError(
            f"{cell.label} / {cell.task.label()} (seed {cell.seed}): {mixed[0]}; none of its "
            "rows was written"
        )
