"""`throughput` task: training-step speed and memory, side by side with a baseline objective.

It measures on the CPU (its memory is a process's RSS); GPU figures come from
`hlm bench --device cuda`.

Speed: the model and its baseline twin (same preset, vocabulary and batch, `baseline`
objective) are stepped alternately in this process; step latency is the median after warm-up,
so both see the same machine state. FLOPs are analytic (`zoo.flops`); MFU is against the
fp32 `torch.mm` roofline of `hlm bench` (`harness.bench.timing.Roofline`), sampled before and
after the steps.

Both steps use the cell's loss options (`loss:` in the suite: duplicates, kernels...), so an
ablation row measures what it names.

Memory: the RSS high-water mark of a fresh process (`harness.bench.probe`) that builds the
model and runs the same steps; `memory_vs_baseline` compares the growth of RSS during the
steps (optimizer state, gradients, activations), which excludes the interpreter.
"""

from __future__ import annotations

import statistics

from pydantic import BaseModel, ConfigDict, Field

from harness.bench.probe import probe
from harness.bench.stepper import Stepper, Variant
from harness.bench.timing import Roofline
from harness.tasks.base import TASKS, Result, TaskContext, TaskType
from zoo.models import get_spec
from zoo.numerics import flush_denormal
from zoo.objectives import OBJECTIVES
from zoo.train.config import resolve_recipe


class ThroughputParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    steps: int = Field(5, gt=0, description="measured steps per model")
    warmup: int = Field(2, ge=0)
    baseline: str | None = Field("ce", description="objective of the twin measured side by side")
    memory: bool = Field(True, description="measure peak RSS in a fresh process")
    batch_size: int | None = Field(None, gt=0, description="default: the recipe's micro-batch")
    seq_len: int | None = Field(None, gt=0)


def _variants(ctx: TaskContext, baseline: str | None) -> dict[str, Variant]:
    """The cell's variant (its objective and loss options) and its baseline twin's."""
    cfg = ctx.pretrain
    variants = {"model": Variant(cfg.objective, cfg.loss, sparse=cfg.sparse_embeddings)}
    if baseline:
        loss = OBJECTIVES.get(baseline).options.model_validate(cfg.loss.model_dump())
        variants["baseline"] = Variant(baseline, loss)
    return variants


def run_throughput(ctx: TaskContext) -> list[Result]:
    with flush_denormal(ctx.pretrain.flush_denormal):  # measure what training does
        return _run_throughput(ctx)


def _memory(ctx: TaskContext, variants: dict[str, Variant], batch: int, seq: int) -> list[Result]:
    spec = ctx.spec
    mem = {
        k: probe(
            "step",
            None,
            preset=spec.name,
            vocab=spec.vocab_size,
            batch=batch,
            seq=seq,
            steps=2,
            variant=v,
        )
        for k, v in variants.items()
    }
    ratio = 1.0
    if "baseline" in mem:
        ratio = mem["model"]["growth_mb"] / max(mem["baseline"]["growth_mb"], 1e-6)
    return [Result("peak_rss_mb", mem["model"]["peak_mb"]), Result("memory_vs_baseline", ratio)]


def _run_throughput(ctx: TaskContext) -> list[Result]:
    p: ThroughputParams = ctx.params
    recipe = resolve_recipe(ctx.pretrain, ctx.spec)
    batch, seq = p.batch_size or recipe.batch_size, p.seq_len or recipe.seq_len
    baseline = p.baseline if p.baseline and p.baseline != ctx.objective else None
    variants = _variants(ctx, baseline)
    spec = get_spec(ctx.spec.name, ctx.spec.vocab_size)
    steppers = {k: Stepper(spec, v, batch, seq, ctx.seed) for k, v in variants.items()}
    roofline = Roofline()
    roofline.sample()
    times: dict[str, list[float]] = {k: [] for k in steppers}
    for i in range(p.warmup + p.steps):
        for name, s in steppers.items():  # interleaved: same machine state for both
            dt = s.step()
            if i >= p.warmup:
                times[name].append(dt)
    roofline.sample()
    med = {k: statistics.median(v) for k, v in times.items()}
    model = steppers["model"]
    tokens = batch * seq
    achieved = model.flops / med["model"]
    out = [
        Result("tokens_per_s", tokens / med["model"]),
        Result("step_ms", 1000 * med["model"], stderr=1000 * statistics.pstdev(times["model"])),
        Result("flops_per_token", model.flops / tokens),
        Result("achieved_tflops", achieved / 1e12),
        Result("mfu", achieved / statistics.mean(roofline.samples)),
        Result("params", float(model.n_params)),
        Result("speedup_vs_baseline", med["baseline"] / med["model"] if baseline else 1.0),
    ]
    return out + (_memory(ctx, variants, batch, seq) if p.memory else [])


THROUGHPUT = TaskType(
    name="throughput",
    description="training tokens/s, step latency, FLOPs, MFU and peak memory, with ratios to a baseline objective",
    run=run_throughput,
    params=ThroughputParams,
    metrics=(
        "tokens_per_s",
        "step_ms",
        "flops_per_token",
        "achieved_tflops",
        "mfu",
        "params",
        "speedup_vs_baseline",
        "peak_rss_mb",
        "memory_vs_baseline",
    ),
    needs_checkpoint=False,
)
TASKS.add(THROUGHPUT.name, THROUGHPUT)
