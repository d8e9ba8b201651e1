"""The training loop: `fit(run)` steps a set-up `Run` until its stopping rule says stop.

    final_dir = fit(setup(cfg, resume, ctx))

`train_step` is one optimizer step over the run's micro-batches; `Checkpointer` writes the
intermediate and final checkpoints and `MetricsLog` appends one JSON line per log or evaluation
step (`zoo.train.records`); `StopRule` decides when the run is done (`zoo.train.run`). A
SIGTERM or SIGINT stops the run after the step in hand, with that step's checkpoint
(`zoo.train.interrupt`). Batches and dropout are functions of (seed, step, micro-step, rank),
so a resumed run reproduces the loss curve of an uninterrupted one.
"""

from __future__ import annotations

import logging
import math
import resource
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import torch
from torch import Tensor
from tqdm import tqdm

from zoo.data.batches import BatchSampler
from zoo.errors import TrainingDiverged
from zoo.train.evaluate import make_labels, summarize, validation_batches
from zoo.train.guard import NonFiniteGuard, last_good_checkpoint
from zoo.train.interrupt import StopSignals, TrainingInterrupted
from zoo.train.records import Checkpointer, MetricsLog
from zoo.train.run import Run, StopRule
from zoo.train.step import head_from_embeddings
from zoo.train.trackers import open_trackers
from zoo.train.update import MicroBatch, optimizer_step

log_lines = logging.getLogger("zoo.train.progress")
SAY_EVERY_S = 30.0  # where no bar is shown (a log file), a progress line at most this often


def peak_rss_mb() -> float:
    """High-water mark of this process's resident memory (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def step_seed(seed: int, step: int, micro: int, rank: int) -> int:
    return ((seed * 1_000_003 + step) * 101 + micro) * 131 + rank


def first_sample(step: int, per_step: int, micro: int, rank: int, world: int, size: int) -> int:
    """Position in the sample stream of a micro-batch's first sample. A step reads positions
    step x per_step onwards, whatever the world size (micro-batches interleave the ranks):
    a run resumed at another world size neither repeats nor skips a sample."""
    return step * per_step + (micro * world + rank) * size


def micro_batches(run: Run, sampler: BatchSampler) -> Iterator[MicroBatch]:
    """The micro-batches of the run's current step (inputs, labels: (B, T) each)."""
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
        yield MicroBatch.of(inputs, labels, ctx.device)


def train_step(
    run: Run, module: torch.nn.Module, sampler: BatchSampler, guard: NonFiniteGuard
) -> dict[str, Tensor]:
    """One optimizer step over the run's micro-batches (`zoo.train.update.optimizer_step`);
    its logged values stay on the device."""
    return optimizer_step(run, module, micro_batches(run, sampler), guard)


def evaluate(run: Run, log: MetricsLog) -> dict[str, float]:
    """Validation metrics at the run's current step, logged. A headless run's untied head,
    which no loss trains, is made the input embeddings first, as its checkpoints' is: its
    cross-entropy is the tied head's, not that of the head it was initialised with."""
    head_from_embeddings(run.model, run.spec, run.objective)
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


@dataclass
class _Progress:
    """The progress bar, and the step and training seconds of the last log row: a row's
    speed is the mean over the steps since, timed to their end on the device."""

    bar: tqdm
    step: int
    wall: float
    said: float = 0.0  # when the last progress line was written (monotonic seconds)


def _log_row(run: Run, logs: dict[str, float], since: _Progress) -> dict[str, Any]:
    c = run.counters
    seconds = (c.wall_seconds - since.wall) / max(c.step - since.step, 1)
    return {
        "step": c.step,
        **logs,
        "lr": run.scheduler.get_last_lr()[0],
        "tokens_per_s": run.per_step * run.recipe.seq_len / seconds,
        "step_seconds": seconds,
        "skipped_steps": c.skipped_steps,
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
    # disable None: no bar where stderr is no terminal (a log file gets the log lines alone);
    # leave None: kept only at position 0, so a bar nested under `hlm run`'s goes when done
    shown = cfg.progress and ctx.is_main
    bar = tqdm(
        total=stop.planned_steps(run.per_step * run.recipe.seq_len),
        initial=c.step,
        disable=None if shown else True,
        desc=label,
        leave=None,
    )
    progress = _Progress(bar, c.step, c.wall_seconds)
    run.model.train()
    first = c.step
    if cfg.eval_every and c.step == 0:
        evaluate(run, log)  # the curve's origin
    with StopSignals() as signals:
        while not stop.done(c):
            _step(run, module, sampler, checkpointer, log, progress)
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
    progress: _Progress,
) -> None:
    """One step of the loop: train, count, log, evaluate and checkpoint when due. The step
    reads nothing back from the device but at log steps (and saves): a GPU runs ahead."""
    cfg, ctx, c = run.cfg, run.ctx, run.counters
    t0 = time.perf_counter()
    logs = train_step(run, module, sampler, checkpointer.guard)
    c.wall_seconds += ctx.all_reduce_mean(time.perf_counter() - t0)  # every rank's budget alike
    c.tokens_seen += run.per_step * run.recipe.seq_len
    c.step += 1
    progress.bar.update(1)
    done = checkpointer.stop.done(c)
    if c.step % cfg.log_every == 0 or done or c.step == 1:
        t1 = time.perf_counter()
        values = checkpointer.guard.settle(torch.stack(list(logs.values())))  # the one read
        c.wall_seconds += ctx.all_reduce_mean(time.perf_counter() - t1)  # the device's lag
        row = dict(zip(logs, values, strict=True))
        progress.bar.set_postfix(loss=f"{row['loss']:.3f}")
        logged = _log_row(run, row, progress)
        log.write(logged)
        if ctx.is_main:
            _say(logged, progress, done)
        progress.step, progress.wall = c.step, c.wall_seconds
    if cfg.eval_every and c.step % cfg.eval_every == 0 and not done:
        evaluate(run, log)
    checkpointer.maybe_save()


def _say(row: dict[str, Any], progress: _Progress, last: bool) -> None:
    """Where no bar is shown (stderr a file: `hlm pretrain > log 2>&1`), a line as HF's
    Trainer prints: step, loss, rate, speed, tokens and the time left, every `SAY_EVERY_S`
    seconds and at the last step."""
    now = time.monotonic()
    if not progress.bar.disable or (now - progress.said < SAY_EVERY_S and not last):
        return
    progress.said = now
    total = int(progress.bar.total)  # the planned steps (`StopRule.planned_steps`)
    left = max(total - row["step"], 0) * row["step_seconds"]
    eta = f"{int(left // 3600)}h{int(left % 3600 // 60):02d}m"
    log_lines.info(
        "step %d/%d (%.1f%%): loss %.4f, lr %.2e, %.1fk tokens/s, %.1fM tokens, ETA %s",
        row["step"], total, 100 * row["step"] / max(total, 1), row["loss"], row["lr"],
        row["tokens_per_s"] / 1e3, row["tokens_seen"] / 1e6, eta,
    )  # fmt: skip


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
