"""`hlm run --reached`: the checkpoints a pretraining has reached, evaluated while it trains.

A cell evaluates its intermediate checkpoints (`every:`, `at:`, a matched budget) after its
pretraining ends (`harness.run.points`), so a run of many hours writes nothing until then.
`--reached` evaluates, for the selected cells, each such checkpoint already on disk and
complete (one is renamed into place once written), into the point's own file
(`<cell_id>.step-N.parquet`): the file the cell's own run writes, which that run then skips
(`harness.run.compute`). It never trains, never makes a missing checkpoint and never
evaluates a final one, so it can run beside the pretraining, as often as wanted:

    hlm run suites/cpu-ladder.yaml --model pythia-tiny-ce --seed 0 --reached

Each point is claimed while it computes: two runs never evaluate one checkpoint.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

from harness.run.cells import EVERY_CELL, Cell, Selection, expand
from harness.run.compute import compute_point, written
from harness.run.points import Point, reads_pretraining
from harness.run.preflight import preflight
from harness.run.runner import record_suite
from harness.suite import load_suite
from harness.suite.loading import MAX_CELLS
from zoo.errors import UserError
from zoo.train.atomic import checkpoint_problem
from zoo.train.layout import checkpoint_step, list_checkpoints
from zoo.train.metadata import read_metadata

log = logging.getLogger(__name__)


@dataclass
class ReachedSummary:
    """What `--reached` found: checkpoints evaluated now, those already evaluated, those
    another run evaluated meanwhile, and the failures (model / task (seed): why)."""

    computed: int = 0
    done: int = 0
    elsewhere: int = 0
    failed: list[str] = field(default_factory=list)
    leaderboard: Path = Path()

    def line(self) -> str:
        """One line for the terminal."""
        return (
            f"checkpoints reached: {self.computed} evaluated now, {self.done} already, "
            f"{self.elsewhere} by another run, {len(self.failed)} failed -> {self.leaderboard}"
        )


def reached_points(cell: Cell) -> list[Point]:
    """The intermediate checkpoints the cell evaluates that its pretraining has written and
    that read, oldest first; none for a cell that reads no pretraining of its own."""
    if cell.pretrain is None or not reads_pretraining(cell):
        return []
    out = Path(cell.pretrain.output_dir)
    wanted = set(cell.steps())
    budgets = cell.suite.compare_at is not None
    ready = [p for p in list_checkpoints(out) if checkpoint_problem(p) is None]
    return [
        Point(f"{cell.cell_id}.{p.name}", p)
        for p in ready
        if checkpoint_step(p) in wanted or (budgets and read_metadata(p).reached)
    ]


def run_reached(
    path: str | Path,
    root: Path = Path("leaderboards"),
    select: Selection = EVERY_CELL,
    progress: bool = True,
    max_cells: int = MAX_CELLS,
) -> ReachedSummary:
    """Evaluate every reached checkpoint of the `select`ed cells of the suite at `path` that
    its leaderboard folder under `root` lacks (see the module docstring)."""
    suite = load_suite(path, max_cells)
    out = root / suite.name
    out.mkdir(parents=True, exist_ok=True)
    cells = expand(suite)
    record_suite(out, suite, cells)  # the folder knows its suite and cells, as `hlm run` leaves it
    summary = ReachedSummary(leaderboard=out)
    todo: list[tuple[Cell, Point]] = []
    for cell in select.apply(cells):
        for point in reached_points(cell):
            if written(out, point.result_id):
                summary.done += 1
            else:
                todo.append((cell, point))
    preflight(suite, [cell for cell, _ in todo])
    bar = tqdm(todo, desc=f"{suite.name}: checkpoints reached", unit="checkpoint",
               disable=None if progress else True)  # fmt: skip
    with logging_redirect_tqdm():
        for cell, point in bar:
            step = point.result_id.split(".", 1)[1]
            bar.set_postfix_str(f"{cell.label} / {cell.task.label()} / {step}")
            try:
                if compute_point(cell, point, out):
                    summary.computed += 1
                else:
                    summary.elsewhere += 1
            except UserError as exc:
                summary.failed.append(
                    f"{cell.label} / {cell.task.label()} (seed {cell.seed}) at "
                    f"{point.result_id}: {exc}"
                )
    return summary
