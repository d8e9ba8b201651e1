"""Running a suite: expand into cells (`harness.run.cells`), skip finished ones, evaluate each
cell's checkpoints (`harness.run.points`), write rows (`harness.run.rows`).

A finished cell is skipped and `--force` recomputes. Pretrained checkpoints are shared by
every task (and suite) that needs them; an interrupted pretraining resumes from its last
checkpoint. Each run records the suite's current cell ids (`_cells.json`), so results of cells
the suite no longer has stay on disk but are not shown as the suite's.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

from harness.logs import CELL_PROGRESS
from harness.results.leaderboard import (
    SUPERSEDED,
    done_cells,
    remove_temporaries,
    write_current_cells,
)
from harness.run.artifacts import remove_dead_artifacts
from harness.run.cells import (
    EVERY_CELL,
    Cell,
    Selection,
    expand,
    moved_shared_data,
    pretraining_folder,
)
from harness.run.claims import claimed
from harness.run.compute import run_cell, written
from harness.run.points import (
    Point,
    ensure_pretrained,
    prepare,
    preparing_now,
    pretraining_elsewhere,
    reads_pretraining,
)
from harness.run.preflight import preflight, pretraining_cached
from harness.run.why import reasons
from harness.suite import Suite, load_suite
from harness.suite.loading import MAX_CELLS
from harness.suite.record import write_suite_record
from zoo.errors import UserError

log = logging.getLogger(__name__)


@dataclass
class RunSummary:
    total: int
    skipped: int
    computed: int
    failed: list[str]
    leaderboard: Path
    elsewhere: int = 0  # cells another run of the suite was computing, or finished meanwhile
    published: list[str] = field(default_factory=list)


@dataclass
class _Outcome:
    """The cells of one run that failed, and those another run of the suite computed."""

    bar: Any
    said_progress: bool = False  # progress was asked for: where no bar shows, log lines do
    todo: int = 0  # the cells this run computes, and how many it has
    ran: int = 0
    failed: list[str] = field(default_factory=list)
    elsewhere: int = 0

    def run(self, cell: Cell, out: Path, done: set[str], force: bool) -> None:
        """Compute the cell under its claim (or count it as computed elsewhere)."""
        self.bar.set_postfix_str(f"{cell.label} / {cell.task.label()}")
        with claimed(out, cell.cell_id) as mine:
            if not mine or (not force and _finished(out, cell)):
                self.elsewhere += 1  # another run of this suite computes (or computed) it
            else:
                log.debug(
                    "cell %s: %s / %s (seed %d)",
                    cell.cell_id,
                    cell.label,
                    cell.task.label(),
                    cell.seed,
                )
                try:
                    run_cell(cell, out, done, redo=force)
                except UserError as exc:
                    self.failed.append(
                        f"{cell.label} / {cell.task.label()} (seed {cell.seed}): {exc}"
                    )
        self.bar.update(1)
        self.ran += 1
        if self.bar.disable and self.said_progress:  # no bar (a log file): a line per cell
            log.info(
                "cell %d/%d of this run done: %s / %s (seed %d)",
                self.ran, self.todo, cell.label, cell.task.label(), cell.seed,
            )  # fmt: skip


def _finished(out: Path, cell: Cell) -> bool:
    """Whether the cell's own result file is there and reads (written by another run)."""
    return written(out, cell.cell_id)


def leaderboard_dir(suite_name: str, root: Path = Path("leaderboards")) -> Path:
    return root / suite_name


def record_suite(out: Path, suite: Suite, cells: list[Cell]) -> None:
    """Write the suite as run (includes merged: for `hlm leaderboard NAME` and publishing)
    and its cells into leaderboard folder `out`; rows of other cells are filed away."""
    write_suite_record(out, suite)
    gone = write_current_cells(out, [c.cell_id for c in cells])
    if gone:
        log.warning(
            "%d result files of cells %s no longer has (an edited suite) moved to %s; they are "
            "no longer its results",
            len(gone),
            suite.path,
            out / SUPERSEDED,
        )


def _run_cells(
    todo: list[Cell], outcome: _Outcome, out: Path, done: set[str], force: bool, wait: bool
) -> None:
    """Run the cells grouped by pretraining key: a checkpoint is trained once, then reused;
    a cell whose pretraining another run is training now waits for a second pass, or with
    `wait` False is left to that run (counted with the cells another run computes)."""
    later = []
    for cell in todo:
        if pretraining_elsewhere(cell):
            later.append(cell)
        else:
            outcome.run(cell, out, done, force)
    for cell in later:
        if wait or not pretraining_elsewhere(cell):
            outcome.run(cell, out, done, force)
        else:
            log.info("%s (seed %d): its pretraining trains in another run: left to it",
                     cell.label, cell.seed)  # fmt: skip
            outcome.elsewhere += 1
            outcome.bar.update(1)


def run_suite(
    path: str | Path,
    force: bool = False,
    root: Path = Path("leaderboards"),
    progress: bool = True,
    select: Selection = EVERY_CELL,
    publish: bool = False,
    max_cells: int = MAX_CELLS,
    wait: bool = True,
) -> RunSummary:
    """Validate, expand and run a suite (only the `select`ed cells; at most `max_cells` in
    all); finished cells are skipped unless `force`; the suite's `publish:` step runs if it
    is enabled or `publish` is set. `wait` False: a cell whose pretraining another run is
    training now is left to that run, not waited for."""
    suite = load_suite(path, max_cells)
    if publish and suite.publish is None:
        raise UserError(f"{suite.path}: publish: --publish needs a `publish:` section in the suite")
    all_cells = expand(suite)
    cells = select.apply(all_cells)
    for moved in moved_shared_data(all_cells):
        log.warning("%s", moved)
    out = leaderboard_dir(suite.name, root)
    out.mkdir(parents=True, exist_ok=True)
    record_suite(out, suite, all_cells)
    remove_temporaries(out)
    remove_dead_artifacts(out)
    done = set() if force else done_cells(out)
    todo = sorted(
        (c for c in cells if c.cell_id not in done),
        key=lambda c: (c.pretrain_key or "", c.task.type),
    )
    preflight(suite, todo)  # at once, not after each cell's pretraining
    bar = tqdm(
        total=len(cells),
        initial=len(cells) - len(todo),
        desc=f"{suite.name}: cells",
        unit="cell",
        disable=None if progress else True,  # None: no bar where stderr is no terminal (a log)
    )
    outcome = _Outcome(bar, progress, len(todo))
    shown = CELL_PROGRESS.set(progress)  # a cell's pretraining bar sits under the suite's
    try:
        with logging_redirect_tqdm():  # log lines above the bar, not through it
            _run_cells(todo, outcome, out, done, force, wait)
    finally:
        bar.close()
        CELL_PROGRESS.reset(shown)
    failed, elsewhere = outcome.failed, outcome.elsewhere
    computed = len(todo) - len(failed) - elsewhere
    summary = RunSummary(len(cells), len(cells) - len(todo), computed, failed, out, elsewhere)
    if suite.publish is not None and (suite.publish.enabled or publish) and not failed:
        summary.published = publish_suite(suite, cells, root)
    return summary


@dataclass
class Plan:
    """What `hlm run` would do: the cells to compute and those done, and whether each
    pretraining run the cells to compute need is cached."""

    suite: Suite
    todo: list[Cell]
    done: list[Cell]
    pretraining: dict[str, bool]  # pretraining key -> its final checkpoint is cached
    training: frozenset[str] = frozenset()  # keys not cached that another process trains now
    why: dict[str, str] = field(default_factory=dict)  # cell id to compute -> why, in words

    def _pretraining(self, cell: Cell, to_compute: bool) -> str:
        """The cell's pretraining key, and for a cell to compute whether it is cached, being
        trained now by another process, or to train (a done cell needs none of it)."""
        key = cell.pretrain_key
        if key is None:
            return ""
        if not reads_pretraining(cell):
            return "none (no checkpoint read)"
        if key not in self.pretraining or not to_compute:
            return key
        if self.pretraining[key]:
            return f"{key} (cached)"
        return f"{key} ({'training now' if key in self.training else 'to train'})"

    def table(self) -> str:
        from tabulate import tabulate

        rows = [
            {
                "status": status,
                "model": c.label,
                "task": c.task.label(),
                "seed": c.seed,
                "sweep": " ".join(f"{k}={v}" for k, v in c.sweep.items()),
                "pretraining": self._pretraining(c, status == "to compute"),
                "why": self.why.get(c.cell_id, "") if status == "to compute" else "",
            }
            for status, cells in (("to compute", self.todo), ("done", self.done))
            for c in cells
        ]
        cached = sum(self.pretraining.values())
        now = len(self.training)
        head = (
            f"{self.suite.name}: {len(self.todo) + len(self.done)} cells, {len(self.done)} done, "
            f"{len(self.todo)} to compute; {len(self.pretraining)} pretraining runs needed "
            f"({cached} cached{f', {now} training now' if now else ''})"
        )
        moved = "".join(f"\n{line}" for line in moved_shared_data([*self.todo, *self.done]))
        return head + moved + "\n\n" + tabulate(rows, headers="keys", tablefmt="github")


def plan_suite(
    path: str | Path,
    root: Path = Path("leaderboards"),
    force: bool = False,
    select: Selection = EVERY_CELL,
    max_cells: int = MAX_CELLS,
) -> Plan:
    """The plan of `hlm run` (`--dry-run`), reading only: nothing is written or computed."""
    suite = load_suite(path, max_cells)
    cells = select.apply(expand(suite))
    out = leaderboard_dir(suite.name, root)
    done = set() if force or not out.is_dir() else done_cells(out)
    todo = [c for c in cells if c.cell_id not in done]
    keys = sorted({c.pretrain_key for c in todo if c.pretrain_key and reads_pretraining(c)})
    cached = {k: pretraining_cached(k) for k in keys}
    now = frozenset(k for k in keys if not cached[k] and preparing_now(pretraining_folder(k)))
    why = (
        reasons(todo, out, force) if out.is_dir() else {c.cell_id: "new: no rows yet" for c in todo}
    )
    return Plan(suite, todo, [c for c in cells if c.cell_id in done], cached, now, why)


def publish_suite(suite: Suite, cells: list[Cell], root: Path) -> list[str]:
    """The suite's `publish:` step: the leaderboard, then each listed model's checkpoint (its
    first seed and sweep point). Returns what was published."""
    from harness.publish.hub import publish_leaderboard, publish_model

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
            prepare(cell, Point(cell.cell_id, ensure_pretrained(cell) / "final")) or Path(),
            repo,
            private=step.private,
            leaderboards=root,
            suite=suite.name,
            label=label,
        )
        done.append(repo)
    return done
