"""The checkpoints a cell evaluates, each prepared once: pretrained (or resumed), and causally
fine-tuned for a headless decoder marked `finetune_causal`.

A cell evaluates its final checkpoint and, when its task asks (`every: N` steps, `at:`
fractions of the step budget), the intermediate ones along pretraining. Each point has its
own leaderboard file (`<cell_id>.parquet` for the final one, `<cell_id>.step-N.parquet`
before), so an interrupted cell resumes where it stopped and no checkpoint is evaluated
twice. A fine-tuned point counts the fine-tuning's tokens too (paper Fig. 4). The training
code (torch, transformers) is imported where a point is made: a run whose cells are all done
starts without it.
"""

from __future__ import annotations

import logging
import shutil
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout

from harness.logs import CELL_PROGRESS
from harness.run.cells import Cell, digest
from harness.suite.schema import pretraining_point
from harness.tasks import TASKS
from zoo.errors import UserError, ZooWarning
from zoo.train.atomic import checkpoint_problem
from zoo.train.config import PretrainConfig
from zoo.train.finetune_settings import FINETUNE_VERSION
from zoo.train.layout import FINETUNED, checkpoint_step, list_checkpoints
from zoo.train.metadata import read_metadata
from zoo.train.names import PRETRAINING, link_run, run_name


@dataclass(frozen=True)
class Point:
    """One evaluation of a cell: its result file's id and the checkpoint it reads (None for a
    task that needs none)."""

    result_id: str
    checkpoint: Path | None


log = logging.getLogger(__name__)


@contextmanager
def _lock(path: Path) -> Iterator[None]:
    """Two runs never prepare the same folder at once (an OS file lock, released with the
    process however it ends)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(path):
        yield


def _lock_file(folder: Path) -> Path:
    """The lock beside a folder that one process at a time prepares."""
    return folder.parent / f"{folder.name}.lock"


def reads_pretraining(cell: Cell) -> bool:
    """Whether computing the cell needs its pretraining run: its model is pretrained here (not
    an existing checkpoint) and its task reads a checkpoint (a throughput cell builds its model
    afresh)."""
    return cell.pretrain is not None and TASKS.get(cell.task.type).needs_checkpoint


def pretraining_elsewhere(cell: Cell) -> bool:
    """Whether another process holds the cell's pretraining lock now (it is training it):
    a run then does other cells first instead of waiting."""
    if cell.pretrain is None or not reads_pretraining(cell):
        return False
    return preparing_now(Path(cell.pretrain.output_dir))


def preparing_now(folder: Path) -> bool:
    """Whether a process holds the lock of a run folder now (it is training it)."""
    path = _lock_file(folder)
    if not path.is_file():
        return False
    lock = FileLock(path, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        return True
    lock.release()
    return False


def train_here(cfg: PretrainConfig, resume: bool) -> None:
    """Pretrain `cfg` in this process (the local runner's way)."""
    from zoo.train.pretrain import pretrain

    pretrain(cfg, resume=resume)


def ensure_pretrained(
    cell: Cell, train: Callable[[PretrainConfig, bool], None] = train_here
) -> Path:
    """The pretraining run's folder, trained (or resumed) by `train` if its `final/` is
    missing, under the run's lock (another process training it is waited for); a cached
    `final/` whose training text has changed since is refused (`check_same_text`)."""
    from zoo.train.resume import check_same_text

    if cell.pretrain is None:
        raise UserError(f"{cell.label}: an existing checkpoint has no pretraining to run")
    out = Path(cell.pretrain.output_dir)
    link_run(_pretraining_name(cell), out)
    with _lock(_lock_file(out)):
        discard_if_damaged(out / "final")
        if (out / "final").is_dir():
            text = cell.pretrain.training_text()
            check_same_text(out / "final", out, text.contents(), cell.pretrain.corpus)
        else:
            log.info("%s: pretraining %s (cached in %s once done)", cell.label, out.name, out)
            resume = resumable(out)
            # the folder is this cache's own: a run killed before its first checkpoint
            # starts over in it
            update = {"overwrite": not resume, "progress": CELL_PROGRESS.get()}
            train(cell.pretrain.model_copy(update=update), resume)
    return out


def resumable(out: Path) -> bool:
    """Whether the run folder `out` holds a checkpoint that reads: a pretraining resumes."""
    return any(checkpoint_problem(p) is None for p in list_checkpoints(out))


def discard_if_damaged(final: Path) -> None:
    """A cached `final/` whose files no longer match their checksums is removed (with a
    warning), so that it is made again."""
    problem = checkpoint_problem(final) if final.is_dir() else None
    if problem is not None:
        warnings.warn(f"{final}: {problem}; making it again", ZooWarning, stacklevel=2)
        shutil.rmtree(final)


def _run_name(cell: Cell, label: str | None = None) -> str:
    """The name `hlm runs` lists the cell's run under (`suite/model/seed-N`, with its point's
    pretraining keys): its pretraining, or for a fine-tuned decoder its fine-tuning."""
    point = pretraining_point(cell.sweep)
    return run_name(cell.suite.name, label or cell.label, cell.seed, point)


def _pretraining_name(cell: Cell) -> str:
    """The name of the cell's pretraining: its run's, or for a fine-tuned decoder (whose own
    name is its fine-tuning's) `suite/model/pretraining/seed-N`, listed while it trains and
    read as any checkpoint name (`@step-N` before fine-tuning)."""
    return _run_name(cell, f"{cell.label}/{PRETRAINING}" if cell.model.finetune_causal else None)


def ensure_finetuned(cell: Cell, checkpoint: Path, folder: Path, named: bool) -> Path:
    """`checkpoint` causally fine-tuned into `folder` (once), per the model entry; `named`:
    linked under the model's name (the final checkpoint's fine-tuning only: one of an earlier
    checkpoint is reached through the pretraining's name, `@step-N`)."""
    from zoo.train.causal_finetune import finetune_causal

    if named:
        link_run(_run_name(cell), folder)
    with _lock(_lock_file(folder)):
        discard_if_damaged(folder / "final")
        if not (folder / "final").is_dir():
            # the folder is this cache's own: a fine-tuning killed before its end starts over
            update = {"progress": CELL_PROGRESS.get(), "overwrite": True}
            settings = cell.model.finetune.model_copy(update=update)
            finetune_causal(str(checkpoint), str(folder), settings)
    return folder / "final"


def ensure_steps(cell: Cell, cfg: PretrainConfig, out: Path) -> None:
    """Make each checkpoint the cell's task evaluates that the cached run lacks (it was
    trained for other evaluation points): resumed from the nearest earlier checkpoint, or
    from the start, up to that step only (`pretrain(until=)`); never a new pretraining."""
    from zoo.train.pretrain import pretrain

    have = {checkpoint_step(p) for p in list_checkpoints(out)}
    last = read_metadata(out / "final").pretrain_step
    missing = [s for s in cell.steps() if s not in have and s < last]
    if not missing:
        return
    with _lock(_lock_file(out)):
        for step in missing:
            if not (out / "checkpoints" / f"step-{step:07d}").is_dir():
                log.info("%s: making the step-%d checkpoint of %s", cell.label, step, out.name)
                pretrain(cfg, until=step)


def _selected(cell: Cell, out: Path) -> list[Path]:
    """Intermediate checkpoints the cell evaluates, oldest first: those its task asks for
    (`every`, `at`; made where missing), and those where a matched budget of the suite was
    first reached."""
    if cell.pretrain is None:
        return []
    ensure_steps(cell, cell.pretrain, out)
    wanted = set(cell.steps())
    budgets = cell.suite.compare_at is not None
    return [
        p
        for p in list_checkpoints(out)
        if checkpoint_step(p) in wanted or (budgets and read_metadata(p).reached)
    ]


def evaluation_points(cell: Cell) -> list[Point]:
    """Every checkpoint the cell evaluates (pretraining it first if needed), intermediate
    ones first, the final one last; `prepare` fine-tunes one where the model asks for it."""
    if not TASKS.get(cell.task.type).needs_checkpoint:
        return [Point(cell.cell_id, None)]
    if cell.pretrain is None:
        return [Point(cell.cell_id, Path(str(cell.model.checkpoint)))]
    out = ensure_pretrained(cell)
    points = [Point(f"{cell.cell_id}.{p.name}", p) for p in _selected(cell, out)]
    return [*points, Point(cell.cell_id, out / "final")]


def prepare(cell: Cell, point: Point) -> Path | None:
    """The checkpoint to evaluate at `point`: its own, or its causal fine-tuning (made once,
    next to the pretraining's checkpoints)."""
    if point.checkpoint is None or not cell.model.finetune_causal or cell.pretrain is None:
        return point.checkpoint
    settings = cell.model.finetune.model_dump(exclude={"progress", "overwrite"})
    made = digest({**settings, "version": FINETUNE_VERSION})  # a fixed one: a folder of its own
    out, tag = Path(cell.pretrain.output_dir), f"{FINETUNED}{made[:8]}"
    final = point.checkpoint.name == "final"
    name = tag if final else f"{tag}-{point.checkpoint.name}"
    return ensure_finetuned(cell, point.checkpoint, out / name, named=final)
