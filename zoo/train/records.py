"""What a training run writes as it goes: `MetricsLog` (metrics.jsonl, line by line, and the
trackers) and `Checkpointer` (the step checkpoints with their training state, and `final/`).

Both keep what a killed run already wrote: a metrics line is flushed as it is logged, and a
checkpoint is renamed into place only once complete; a resumed run keeps the lines up to its
step and the marks it had reached.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from zoo.reader import MAX_BYTES, check_regular, read_text
from zoo.train.atomic import temporary_dir
from zoo.train.body_only import writes_body_only
from zoo.train.checkpoint import save_checkpoint
from zoo.train.guard import NonFiniteGuard
from zoo.train.metadata import CheckpointMetadata
from zoo.train.run import Run, StopRule, checkpoint_metadata
from zoo.train.sharded import SHARDED, full_model_state, save_sharded
from zoo.train.step import head_from_embeddings
from zoo.train.trackers import Tracker
from zoo.writer import write_text


def _step_of(line: str, resumed_at: int) -> bool:
    """Whether a metrics line is kept on resume: a line of a step up to the resume point; a
    partial or damaged line (a run killed while writing it) is dropped."""
    try:
        row = json.loads(line)
        return isinstance(row, dict) and int(row["step"]) <= resumed_at
    except (ValueError, KeyError, TypeError):
        return False


class MetricsLog:
    """metrics.jsonl, appended and flushed line by line (a killed run keeps what it logged).

    A fresh run starts the file anew; a resumed one keeps the lines up to its step."""

    def __init__(
        self,
        path: Path,
        enabled: bool,
        resumed_at: int | None,
        trackers: list[Tracker] | None = None,
    ) -> None:
        self.path, self.enabled = path, enabled
        self.trackers = trackers or []
        if not (enabled and path.exists()):
            return
        if resumed_at is None:
            path.unlink()
            return
        check_regular(path, "the metrics log")  # a FIFO there would block the resume forever
        text = read_text(path, "the metrics log", MAX_BYTES)
        keep = [ln for ln in text.splitlines() if _step_of(ln, resumed_at)]
        write_text(path, "".join(ln + "\n" for ln in keep))

    def write(self, row: dict[str, Any]) -> None:
        if self.enabled:
            with self.path.open("a") as f:
                f.write(json.dumps(row) + "\n")
            if not self.trackers:
                return
            values = {
                k: float(v) for k, v in row.items() if k != "step" and isinstance(v, int | float)
            }
            for tracker in self.trackers:
                tracker.log(int(row["step"]), values)

    def close(self) -> None:
        for tracker in self.trackers:
            tracker.close()


class Checkpointer:
    """Writes `checkpoints/step-N/` (with training state) every `save_every` steps and at
    each of `save_at_steps`, and `final/`, on the main process only (`saves=False`: none along
    the way, as when an intermediate checkpoint is made again)."""

    def __init__(self, run: Run, stop: StopRule, saves: bool = True) -> None:
        self.run, self.stop, self.saves = run, stop, saves
        r = run.recipe
        self.guard = NonFiniteGuard(
            run.out, run.counters, run.cfg.max_nonfinite_skips, r.lr, r.grad_clip
        )
        self.passed = set(self._reached())  # marks a resumed run had reached already
        self.saved: Path | None = None  # the last step checkpoint written

    def _reached(self) -> list[str]:
        c = self.run.counters
        return self.run.cfg.save_at.reached(c.tokens_seen, c.flops, c.wall_seconds)

    def maybe_save(self) -> None:
        run, every = self.run, self.run.cfg.save_every
        step = run.counters.step
        marks = [m for m in self._reached() if m not in self.passed]
        self.passed.update(marks)
        wanted = (every and step % every == 0) or step in run.cfg.save_at_steps or marks
        if self.saves and wanted and not self.stop.done(run.counters):
            self._save_step(marks)

    def save_interrupted(self) -> Path:
        """The current step's checkpoint, training state included, for a run a signal
        stops (written once: `maybe_save` may have written it at this step already)."""
        path = self._step_dir()
        if self.saved != path:
            self._save_step([])
        return path

    def _step_dir(self) -> Path:
        return self.run.out / "checkpoints" / f"step-{self.run.counters.step:07d}"

    def _save_step(self, marks: list[str]) -> None:
        run = self.run
        self.guard.settle()  # the skipped steps the training state counts
        state = {"scheduler": run.scheduler.state_dict(), **run.counters.state()}
        path = self._step_dir()
        self._save(path, checkpoint_metadata(run, reached=marks), state)
        self.saved = path

    def save_final(self, validation: dict[str, float]) -> Path:
        run, final = self.run, self.run.out / "final"
        self.guard.settle()
        marks = [m for m in self._reached() if m not in self.passed]
        meta = checkpoint_metadata(run, validation, self.stop.reason(run.counters), marks)
        self._save(final, meta, None)
        return final

    def _save(self, path: Path, meta: CheckpointMetadata, state: dict[str, Any] | None) -> None:
        """Every rank: the finiteness check, the head, the gathered weights and (with a
        training `state`) its shards of the model and optimizer; rank 0: the Hugging Face
        folder around them, renamed into place once complete."""
        run = self.run
        self.guard.check_parameters(run.model, run.counters.step, path, run.ctx)
        head_from_embeddings(run.model, run.spec, run.objective)  # the objective it trains
        full = full_model_state(run)  # FSDP: gathered on rank 0
        tmp = Path(run.ctx.agree(str(temporary_dir(path))))
        try:
            if state is not None:
                save_sharded(run, tmp / SHARDED)
            if run.ctx.is_main:
                body_only = writes_body_only(run.model, run.spec, run.objective)
                save_checkpoint(path, run.model, run.tokenizer, meta, state, full, tmp, body_only)
        except BaseException:  # a full disk, a kill: the last good checkpoint stands alone
            if run.ctx.is_main:
                shutil.rmtree(tmp, ignore_errors=True)
            raise
        run.ctx.barrier()
