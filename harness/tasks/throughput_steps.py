"""The measurement behind the `throughput` task (`harness.tasks.throughput` says what it
measures and how): the steppers timed side by side, memory on the CPU or CUDA, the largest
batch that fits. Imported when a cell runs, so that checking a suite does not load torch.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import replace
from typing import TYPE_CHECKING

import torch

from harness.bench.memory import cuda_peak_mb
from harness.bench.probe import probe
from harness.bench.stepper import Stepper, Variant
from harness.bench.timing import Roofline
from harness.tasks.base import Result, TaskContext
from zoo.errors import UserError
from zoo.models import get_spec
from zoo.models.spec import ModelSpec
from zoo.numerics import flush_denormal
from zoo.objectives import OBJECTIVES
from zoo.train.distributed import resolve_device
from zoo.train.recipe import resolve_recipe

if TYPE_CHECKING:
    from harness.tasks.throughput_params import ThroughputParams


def _variants(
    ctx: TaskContext, baseline: str | None, p: ThroughputParams, cuda: bool
) -> dict[str, Variant]:
    """The cell's own pretraining step (its config, bf16 autocast on CUDA), its baseline
    twin's (the baseline objective with the options both read, dense embedding updates) and
    Hugging Face's full-projection step."""
    model = Variant(ctx.pretrain.model_copy(update={"bf16": cuda}))
    variants = {"model": model}
    if baseline:
        loss = OBJECTIVES.get(baseline).options_from(ctx.pretrain.loss)  # the options both read
        twin = {"objective": baseline, "loss": loss.model_dump(), "sparse_embeddings": False}
        variants["baseline"] = model.changed(**twin)
    if p.hf_baseline:
        hf = model.changed(objective="ce", loss={}, sparse_embeddings=False)
        variants["hf"] = replace(hf, hf_default=True)
    return variants


def _cpu_memory(
    ctx: TaskContext, variants: dict[str, Variant], batch: int, seq: int
) -> list[Result]:
    spec = ctx.spec
    mem = {
        k: _step_memory(spec, v, batch, seq, ctx.pretrain.plugins)
        for k, v in variants.items()
        if k != "hf"
    }
    ratio = 1.0
    if "baseline" in mem:
        ratio = mem["model"]["growth_mb"] / max(mem["baseline"]["growth_mb"], 1e-6)
    return [Result("peak_rss_mb", mem["model"]["peak_mb"]), Result("memory_vs_baseline", ratio)]


_MEASURED: dict[str, dict[str, float]] = {}  # this process's step probes, by what they ran


def _step_memory(
    spec: ModelSpec, v: Variant, batch: int, seq: int, plugins: list[str]
) -> dict[str, float]:
    """A step's memory probe (a fresh interpreter: seconds), run once per process for what
    it steps: a ce cell's twin is the cell's own step, a cwt cell's twin the ce cell's.
    The key is the whole config (its plugins too) but the run's folder and key, which each
    model has its own and a step never reads."""
    step = v.config.model_dump(mode="json", exclude={"output_dir", "pretrain_key"})
    key = json.dumps([spec.name, spec.vocab_size, batch, seq, step, v.hf_default, v.cuda_graphs])
    if key not in _MEASURED:
        _MEASURED[key] = probe(
            "step",
            None,
            preset=spec.name,
            vocab=spec.vocab_size,
            batch=batch,
            seq=seq,
            steps=2,
            variant=v,
            plugins=plugins,
        )
    return _MEASURED[key]


def _cuda_memory(steppers: dict[str, Stepper]) -> list[Result]:
    peak = {k: cuda_peak_mb(s.step) for k, s in steppers.items() if k != "hf"}
    ratio = peak["model"] / max(peak["baseline"], 1e-6) if "baseline" in peak else 1.0
    return [Result("cuda_peak_mb", peak["model"]), Result("memory_vs_baseline", ratio)]


def largest_batch(
    spec: ModelSpec, variant: Variant, seq: int, start: int, limit: int = 1 << 16
) -> int:
    """CUDA: the largest batch below `limit` whose training step fits in memory (doubling
    from `start` until a step runs out of memory, then bisection). The default limit, 2^16
    sequences, is where cuDNN's attention stops accepting a batch (it fails, not with an
    out-of-memory error, from 65536 on: pytorch/pytorch#181235)."""

    def fits(batch: int) -> bool:
        try:
            Stepper(spec, variant, batch, seq, 0, "cuda").step()
            return True
        except torch.cuda.OutOfMemoryError:
            return False
        finally:
            torch.cuda.empty_cache()

    ok, bad = 0, min(start, limit)
    while bad < limit and fits(bad):
        ok, bad = bad, min(bad * 2, limit)
    while bad - ok > 1:
        mid = (ok + bad) // 2
        ok, bad = (mid, bad) if fits(mid) else (ok, mid)
    return ok


def _timed(
    steppers: dict[str, Stepper], p: ThroughputParams, roofline: Roofline | None
) -> dict[str, list[float]]:
    """Step seconds per variant, interleaved (the same machine state for all), with the
    roofline (where the MFU is asked for) sampled after each measured round: the MFU's
    denominator is the machine's speed over the same stretch of time, not at two moments
    another job may have slowed."""
    times: dict[str, list[float]] = {k: [] for k in steppers}
    for i in range(p.warmup + p.steps):
        for name, s in steppers.items():
            dt = s.step()
            if i >= p.warmup:
                times[name].append(dt)
        if i >= p.warmup and roofline is not None:
            roofline.sample()
    return times


def _per_round(values: list[float]) -> dict[str, float]:
    return {f"round-{i:03d}": v for i, v in enumerate(values)}


def _speedup(metric: str, times: dict[str, list[float]], twin: str) -> Result:
    """The twin's median step time over the model's; each measured round's own ratio kept as
    a sample (the two were stepped back to back), so one seed can be tested on its rounds.
    The model against itself (it is its own baseline) is 1.0 in every round."""
    ratios = [a / b for a, b in zip(times[twin], times["model"], strict=True)]
    value = statistics.median(times[twin]) / statistics.median(times["model"])
    return Result(metric, value, samples=_per_round(ratios))


def _roofline(cuda: bool) -> Roofline:
    return Roofline(device="cuda", dtype=torch.bfloat16) if cuda else Roofline()


def measure(ctx: TaskContext) -> list[Result]:
    """The `throughput` task's rows for one cell (`ctx.params`: its `ThroughputParams`)."""
    with flush_denormal(ctx.pretrain.flush_denormal):  # measure what training does
        return _measure(ctx)


def _measure(ctx: TaskContext) -> list[Result]:
    p: ThroughputParams = ctx.params
    device = resolve_device(ctx.pretrain.device if p.device == "auto" else p.device)
    cuda = device == "cuda"
    if p.max_batch and not cuda:
        raise UserError("throughput: max_batch finds the largest batch on CUDA only")
    recipe = resolve_recipe(ctx.pretrain, ctx.spec)
    batch, seq = p.batch_size or recipe.micro_batch_size, p.seq_len or recipe.seq_len
    baseline = p.baseline if p.baseline and p.baseline != ctx.objective else None
    variants = _variants(ctx, baseline, p, cuda)
    spec = get_spec(ctx.spec.name, ctx.spec.vocab_size)
    steppers = {k: Stepper(spec, v, batch, seq, ctx.seed, device) for k, v in variants.items()}
    roofline = _roofline(cuda) if p.mfu else None
    times = _timed(steppers, p, roofline)
    med = {k: statistics.median(v) for k, v in times.items()}
    model, tokens = steppers["model"], batch * seq
    achieved = model.flops / med["model"]
    out = [
        Result("tokens_per_s", tokens / med["model"]),
        Result(
            "step_ms",
            1000 * med["model"],
            stderr=1000 * statistics.pstdev(times["model"]),
            samples=_per_round([1000 * t for t in times["model"]]),
        ),
        Result("flops_per_token", model.flops / tokens),
        Result("achieved_tflops", achieved / 1e12),
        Result("params", float(model.n_params)),
        _speedup("speedup_vs_baseline", times, "baseline" if baseline else "model"),
    ]
    if roofline is not None:
        out.append(Result("mfu", achieved / statistics.median(roofline.samples)))
    if p.hf_baseline:
        out.append(_speedup("speedup_vs_hf", times, "hf"))
    if p.memory:
        out += _cuda_memory(steppers) if cuda else _cpu_memory(ctx, variants, batch, seq)
    if p.max_batch:
        out.append(Result("max_batch", float(largest_batch(spec, variants["model"], seq, batch))))
    return out
