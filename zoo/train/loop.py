"""The training loop: `fit(run)` steps a set-up `Run` until its stopping rule says stop.

    final_dir = fit(setup(cfg, resume, ctx))

`train_step` is one optimizer step over the run's micro-batches, `Checkpointer` writes the
intermediate and final checkpoints, `StopRule` decides when the run is done, and `MetricsLog`
appends one JSON line per log or evaluation step. A SIGTERM or SIGINT stops the run after
the step in hand, with that step's checkpoint (`zoo.train.interrupt`). Batches and dropout are
functions of (seed, step, micro-step, rank), so a resumed run reproduces the loss curve of an
uninterrupted one.
"""

from __future__ import annotations

import json
import math
import resource
import signal
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import torch
from tqdm import tqdm

from zoo.data.batches import IGNORE, BatchSampler
from zoo.errors import TrainingDiverged
from zoo.flops import train_step_flops
from zoo.train.checkpoint import save_checkpoint, temporary_dir
from zoo.train.evaluate import make_labels, summarize, validation_batches
from zoo.train.guard import NonFiniteGuard, last_good_checkpoint
from zoo.train.interrupt import StopSignals, TrainingInterrupted
from zoo.train.metadata import CheckpointMetadata
from zoo.train.optim import clip_grad_norm, grad_norm
from zoo.train.run import Counters, Run, checkpoint_metadata
from zoo.train.sharded import SHARDED, full_model_state, save_sharded
from zoo.train.step import head_from_embeddings, last_layer_queries
from zoo.train.trackers import Tracker, open_trackers


def peak_rss_mb() -> float:
    """High-water mark of this process's resident memory (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def step_seed(seed: int, step: int, micro: int, rank: int) -> int:
    return ((seed * 1_000_003 + step) * 101 + micro) * 131 + rank


@dataclass(frozen=True)
class StopRule:
    """When a run is done: at the first of `max_steps` optimizer steps, `max_tokens` training
    tokens, `max_flops` training FLOPs and `max_seconds` of training-loop wall time (the
    budgets a comparison holds equal: paper Table 1). Unset budgets never stop a run."""

    max_steps: int
    max_tokens: int | None = None
    max_flops: float | None = None
    max_seconds: float | None = None

    def reason(self, c: Counters) -> str | None:
        """The budget `c` has reached (steps first), or None while the run goes on."""
        for name, limit, value in (
            ("steps", self.max_steps, c.step),
            ("tokens", self.max_tokens, c.tokens_seen),
            ("flops", self.max_flops, c.flops),
            ("seconds", self.max_seconds, c.wall_seconds),
        ):
            if limit is not None and value >= limit:
                return name
        return None

    def done(self, c: Counters) -> bool:
        return self.reason(c) is not None

    @classmethod
    def of(cls, run: Run) -> StopRule:
        cfg = run.cfg
        return cls(run.recipe.steps, cfg.max_tokens, cfg.max_flops, cfg.max_seconds)


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
        keep = [ln for ln in path.read_text().splitlines() if _step_of(ln, resumed_at)]
        path.write_text("".join(ln + "\n" for ln in keep))

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
    each of `save_steps`, and `final/`, on the main process only (`saves=False`: none along
    the way, as when an intermediate checkpoint is made again)."""

    def __init__(self, run: Run, stop: StopRule, saves: bool = True) -> None:
        self.run, self.stop, self.saves = run, stop, saves
        r = run.recipe
        self.guard = NonFiniteGuard(run.out, run.cfg.max_nonfinite_skips, r.lr, r.grad_clip)
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
        wanted = (every and step % every == 0) or step in run.cfg.save_steps or marks
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
        state = {"scheduler": run.scheduler.state_dict(), **run.counters.state()}
        path = self._step_dir()
        self._save(path, checkpoint_metadata(run, reached=marks), state)
        self.saved = path

    def save_final(self, validation: dict[str, float]) -> Path:
        run, final = self.run, self.run.out / "final"
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
        head_from_embeddings(run.model, run.spec, run.lineage.objective)
        full = full_model_state(run)  # FSDP: gathered on rank 0
        tmp = Path(run.ctx.agree(str(temporary_dir(path))))
        if state is not None:
            save_sharded(run, tmp / SHARDED)
        if run.ctx.is_main:
            save_checkpoint(path, run.model, run.tokenizer, meta, state, full, tmp)
        run.ctx.barrier()


def first_sample(step: int, per_step: int, micro: int, rank: int, world: int, size: int) -> int:
    """Position in the sample stream of a micro-batch's first sample. A step reads positions
    step x per_step onwards, whatever the world size (micro-batches interleave the ranks):
    a run resumed at another world size neither repeats nor skips a sample."""
    return step * per_step + (micro * world + rank) * size


def micro_batches(run: Run, sampler: BatchSampler) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """(inputs [B, T], labels [B, T]) of each micro-batch of the run's current step."""
    r, ctx, step, seed = run.recipe, run.ctx, run.counters.step, run.cfg.seed
    for micro in range(r.grad_accum):
        first = first_sample(
            step, run.per_step, micro, ctx.rank, ctx.world_size, r.micro_batch_size
        )
        idx = sampler.indices(first, r.micro_batch_size)
        gen = torch.Generator().manual_seed(step_seed(seed, step, micro, ctx.rank))
        torch.manual_seed(step_seed(seed, step, micro, ctx.rank) + 7)  # dropout
        inputs, labels = make_labels(
            run.spec, run.blocks[idx], run.spec.vocab_size, run.special, run.masking, gen
        )
        yield inputs.to(ctx.device), labels.to(ctx.device)


def train_step(
    run: Run, module: torch.nn.Module, sampler: BatchSampler, guard: NonFiniteGuard
) -> dict[str, float]:
    """One optimizer step over the run's micro-batches; returns the logged losses (means; the
    loss averaged over ranks too).
    A step whose loss or gradients are not finite is skipped (`guard`)."""
    r, cfg = run.recipe, run.cfg
    run.optimizer.zero_grad(set_to_none=True)
    logs: dict[str, float] = {}
    for inputs, labels in micro_batches(run, sampler):
        with torch.autocast(run.ctx.device.type, dtype=torch.bfloat16, enabled=cfg.bf16):
            result = module(inputs, labels)
        loss = result["loss"] / r.grad_accum
        loss.backward()  # even when not finite: every rank takes part in DDP's reduction
        selected = labels != IGNORE  # (B, T)
        queries = last_layer_queries(run.spec, selected, cfg.prune_last_layer)
        k = int(selected.sum())
        run.counters.flops += run.ctx.world_size * train_step_flops(
            run.spec, run.objective, r.micro_batch_size, r.seq_len, k, queries
        )
        for name, value in result.items():
            logs[name] = logs.get(name, 0.0) + float(value.detach()) / r.grad_accum
    logs["loss"] = run.ctx.all_reduce_mean(logs["loss"])  # every rank's mean: one decision
    norm = grad_norm(run.trainable)
    if guard.step_ok(run.counters.step + 1, logs["loss"], norm):
        if r.grad_clip > 0:
            clip_grad_norm(run.trainable, r.grad_clip, norm)
        run.optimizer.step()
        run.scheduler.step()
    else:
        run.counters.skipped_steps += 1
        logs["skipped"] = 1.0
        _advance_schedule_after_skip(run)
    return logs


def _advance_schedule_after_skip(run: Run) -> None:
    """A skipped step advances the schedule too: the learning rate stays a function of the
    step counter (and so of where a resumed run starts). Torch warns that a value of the
    schedule is lost when no optimizer step came yet, which is what is meant here."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", r"Detected call of `lr_scheduler\.step\(\)`")
        run.scheduler.step()


def evaluate(run: Run, log: MetricsLog) -> dict[str, float]:
    """Validation metrics at the run's current step, logged."""
    c = run.counters
    m = summarize(
        validation_batches(
            run.step,
            run.val_blocks,
            run.recipe.micro_batch_size,
            run.cfg.eval_batches,
            run.special,
            run.masking,
        )
    )
    log.write({"step": c.step, "tokens_seen": c.tokens_seen, "train_flops": c.flops, **m})
    return m


def _log_row(run: Run, logs: dict[str, float], loss: float, dt: float) -> dict[str, Any]:
    tokens = run.per_step * run.recipe.seq_len
    c = run.counters
    return {
        "step": c.step,
        "loss": loss,
        **{k: v for k, v in logs.items() if k != "loss"},
        "lr": run.scheduler.get_last_lr()[0],
        "tokens_per_s": tokens / dt,
        "step_seconds": dt,
        "tokens_seen": c.tokens_seen,
        "train_flops": c.flops,
        "peak_rss_mb": peak_rss_mb(),
    }


def fit(run: Run, until: int | None = None) -> Path:
    """Train until the stopping rule says stop; evaluate, save `final/`, return its path.

    With `until`, re-make one intermediate checkpoint of a finished run: train to that step
    (the schedule stays the whole run's), save `checkpoints/step-N/` and return it, touching
    neither `final/`, the metrics log nor the trackers."""
    cfg, ctx, c = run.cfg, run.ctx, run.counters
    if until is not None:
        return _train(
            run, StopRule(until), MetricsLog(run.out / "metrics.jsonl", False, None), True
        )
    stop = StopRule.of(run)
    trackers = open_trackers(cfg.report_to, run.out, cfg.as_given()) if ctx.is_main else []
    log = MetricsLog(run.out / "metrics.jsonl", ctx.is_main, c.step if c.step else None, trackers)
    try:
        return _train(run, stop, log)
    finally:
        log.close()


def _train(run: Run, stop: StopRule, log: MetricsLog, remake: bool = False) -> Path:
    """The training loop of `fit`, its stop rule and metrics log given. A SIGTERM / SIGINT
    stops it after the step in hand with that step's checkpoint (`zoo.train.interrupt`).
    `remake`: save only the last step's checkpoint (no budget marks), not `final/`."""
    cfg, ctx, c = run.cfg, run.ctx, run.counters
    module = ctx.wrap(run.step)  # DDP; FSDP sharded it at set-up
    if cfg.compile:  # the forward and loss through torch.compile (inductor); same numbers
        module = cast(torch.nn.Module, torch.compile(module))
    sampler = BatchSampler(len(run.blocks), cfg.seed)
    checkpointer = Checkpointer(run, stop, saves=not remake)
    label = f"{run.spec.name}/{run.objective.name}"
    bar = tqdm(
        total=stop.max_steps, initial=c.step, disable=not (cfg.progress and ctx.is_main), desc=label
    )
    run.model.train()
    first = c.step
    if cfg.eval_every and c.step == 0:
        evaluate(run, log)  # the curve's origin
    with StopSignals() as signals:
        while not stop.done(c):
            _step(run, module, sampler, checkpointer, log, bar)
            # every rank's vote, also the step's barrier: all stop at the same step
            if not ctx.all_true(signals.received is None) and not stop.done(c):
                path = checkpointer.save_interrupted()
                raise _interrupted(signals.received, c.step, path, "with its checkpoint")
        bar.close()
        checkpointer.guard.check_some_update(c.step - first)
        final = checkpointer.save_interrupted() if remake else _finish(run, checkpointer, log)
    if signals.received is not None:  # came during the last evaluation or save
        raise _interrupted(signals.received, c.step, final, "after the last step, complete")
    return final


def _step(
    run: Run,
    module: torch.nn.Module,
    sampler: BatchSampler,
    checkpointer: Checkpointer,
    log: MetricsLog,
    bar: tqdm,
) -> None:
    """One step of the loop: train, count, log, evaluate and checkpoint when due."""
    cfg, ctx, c = run.cfg, run.ctx, run.counters
    t0 = time.perf_counter()
    logs = train_step(run, module, sampler, checkpointer.guard)
    dt = ctx.all_reduce_mean(time.perf_counter() - t0)  # one clock for every rank's budget
    c.wall_seconds += dt
    c.tokens_seen += run.per_step * run.recipe.seq_len
    c.step += 1
    loss = logs["loss"]
    bar.set_postfix(loss=f"{loss:.3f}")
    bar.update(1)
    done = checkpointer.stop.done(c)
    if c.step % cfg.log_every == 0 or done or c.step == 1:
        log.write(_log_row(run, logs, loss, dt))
    if cfg.eval_every and c.step % cfg.eval_every == 0 and not done:
        evaluate(run, log)
    checkpointer.maybe_save()


def _finish(run: Run, checkpointer: Checkpointer, log: MetricsLog) -> Path:
    """The last validation and `final/` (refused when the validation is not finite)."""
    validation = evaluate(run, log)
    if not all(math.isfinite(v) for v in validation.values()):
        raise TrainingDiverged(
            f"step {run.counters.step}: validation {validation} is not finite; nothing saved to "
            f"{run.out}/final; the last good checkpoint is {last_good_checkpoint(run.out)}"
        )
    return checkpointer.save_final(validation)


def _interrupted(signum: int | None, step: int, path: Path, how: str) -> TrainingInterrupted:
    """The error that ends a run a signal stopped (another rank's signal: SIGTERM)."""
    signum = signal.SIGTERM if signum is None else signum
    return TrainingInterrupted(
        signum,
        str(path),
        f"{signal.Signals(signum).name}: stopped at step {step} {how} in {path}; the same "
        "command continues from there (`hlm pretrain --resume`, or `hlm run` again)",
    )
