"""`throughput` task: training-step speed and memory, side by side with a baseline objective.

It measures on the CPU (its memory is a process's RSS); GPU figures come from
`hlm bench --device cuda`.

Speed: the model and its baseline twin (same preset, vocabulary and batch, `baseline`
objective) are stepped alternately in this process; step latency is the median after warm-up,
so both see the same machine state. FLOPs are analytic (`zoo.flops`); MFU is against an fp32
`torch.mm` roofline measured in the same run.

Memory: the RSS high-water mark of a fresh process (`python -m harness.tasks.memprobe`) that
builds the model and runs the same steps; `memory_vs_baseline` compares the growth of RSS
during the steps (optimizer state, gradients, activations), which excludes the interpreter.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

import torch
from pydantic import BaseModel, ConfigDict, Field

from harness.tasks.base import Result, TaskContext, TaskType
from zoo.data.batches import IGNORE, clm_labels
from zoo.flops import train_step_flops
from zoo.models import get_spec
from zoo.models.fast_attention import use_fast_dropout
from zoo.models.spec import ModelSpec
from zoo.numerics import flush_denormal
from zoo.objectives import OBJECTIVES, ObjectiveOptions
from zoo.train.pretrain import resolve_recipe
from zoo.train.step import TrainModule, last_layer_queries, prepare_for_objective


class ThroughputParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    steps: int = Field(5, gt=0, description="measured steps per model")
    warmup: int = Field(2, ge=0)
    baseline: str | None = Field("ce", description="objective of the twin measured side by side")
    memory: bool = Field(True, description="measure peak RSS in a fresh process")
    batch_size: int | None = Field(None, gt=0, description="default: the recipe's micro-batch")
    seq_len: int | None = Field(None, gt=0)


def matmul_roofline(n: int = 1024, d: int = 1024, reps: int = 5) -> float:
    """Best fp32 FLOP/s of a plain [n, d] @ [d, n] torch.mm on this machine, now."""
    a, b = torch.randn(n, d), torch.randn(d, n)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - t)
    return 2.0 * n * n * d / best


def synthetic_batch(
    spec: ModelSpec, batch: int, seq: int, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random tokens with 15% MLM targets (encoder) or next-token labels (decoder)."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(8, spec.vocab_size, (batch, seq), generator=g)
    if spec.kind == "decoder":
        return ids, clm_labels(ids)
    pick = torch.rand(ids.shape, generator=g) < 0.15
    return ids.masked_fill(pick, 4), ids.masked_fill(~pick, IGNORE)


class Stepper:
    """One model + objective + optimizer, stepping on a fixed batch.

    `hf_default`: the reference vanilla step of Hugging Face (`model(input_ids, labels=...)`),
    which projects every position onto the vocabulary, not only the selected ones (and runs
    the whole last layer). Otherwise the step is the pretraining one (`TrainModule`), with the
    encoder's last layer pruned to the selected positions unless `prune_last_layer` is off.
    Every variant, hf-default included, draws its dropout masks with `use_fast_dropout` unless
    `fast_dropout` is off, so that they differ only in the head and the loss.
    """

    def __init__(
        self,
        spec: ModelSpec,
        objective: str,
        batch: int,
        seq: int,
        seed: int,
        options: ObjectiveOptions | None = None,
        hf_default: bool = False,
        sparse: bool = False,
        bf16: bool = False,
        prune_last_layer: bool = True,
        fast_dropout: bool = True,
        device: str = "cpu",
    ) -> None:
        from zoo.train.config import ResolvedRecipe
        from zoo.train.optim import clip_grad_norm, make_optimizer

        torch.manual_seed(seed)
        self.spec, self.objective = spec, OBJECTIVES.get(objective)
        self.hf_default, self.bf16 = hf_default, bf16
        self.model = spec.build(tie_word_embeddings=not self.objective.needs_output_embeddings)
        prepare_for_objective(self.model, spec, self.objective)
        self.device = torch.device(device)
        self.model.to(self.device)  # type: ignore[arg-type]  # transformers types .to as a wrapper
        if fast_dropout:  # as pretraining does by default (PretrainConfig.fast_dropout)
            use_fast_dropout(self.model)
        self.module = TrainModule(
            self.model, spec, self.objective, options or ObjectiveOptions(), prune_last_layer
        )
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        recipe = ResolvedRecipe(
            steps=1,
            batch_size=batch,
            grad_accum=1,
            seq_len=seq,
            lr=1e-4,
            weight_decay=0.01,
            betas=(0.9, 0.999),
            eps=1e-8,
            grad_clip=1.0,
            schedule="constant",
            warmup_steps=0,
        )
        self.opt = make_optimizer(self.model, spec, self.objective, recipe, sparse)
        self._clip = clip_grad_norm
        inputs, labels = synthetic_batch(spec, batch, seq, seed)
        self.inputs, self.labels = inputs.to(self.device), labels.to(self.device)
        self.k = int((self.labels != IGNORE).sum())
        if hf_default:  # every position through the head
            from zoo.flops import body_forward_flops

            extra = 2.0 * spec.hidden_size * spec.hidden_size if spec.is_encoder else 0.0
            self.flops = 3.0 * (
                body_forward_flops(spec, batch, seq)
                + batch * seq * (2.0 * spec.hidden_size * spec.vocab_size + extra)
            )
        else:
            queries = last_layer_queries(spec, self.labels != IGNORE, prune_last_layer)
            self.flops = train_step_flops(spec, self.objective, batch, seq, self.k, queries)
        self.n_params = sum(p.numel() for p in self.model.parameters())

    def step(self) -> float:
        t = time.perf_counter()
        self.opt.zero_grad(set_to_none=True)
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.bf16):
            if self.hf_default:
                hf_labels = self.labels if self.spec.is_encoder else self.inputs
                loss = self.model(input_ids=self.inputs, labels=hf_labels).loss
            else:
                loss = self.module(self.inputs, self.labels)["loss"]
        loss.backward()
        self._clip(self.params, 1.0)
        self.opt.step()
        if self.device.type == "cuda":  # the kernels were only queued
            torch.cuda.synchronize(self.device)
        return time.perf_counter() - t


def measure_memory(
    preset: str, vocab: int, objective: str, batch: int, seq: int, steps: int
) -> dict[str, float]:
    """Peak RSS of a fresh process running `steps` training steps (see memprobe)."""
    arg = json.dumps(
        {
            "preset": preset,
            "vocab_size": vocab,
            "objective": objective,
            "batch": batch,
            "seq": seq,
            "steps": steps,
        }
    )
    out = subprocess.run(
        [sys.executable, "-m", "harness.tasks.memprobe", arg],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def run_throughput(ctx: TaskContext) -> list[Result]:
    with flush_denormal(ctx.pretrain.flush_denormal):  # measure what training does
        return _run_throughput(ctx)


def _run_throughput(ctx: TaskContext) -> list[Result]:
    p: ThroughputParams = ctx.params
    recipe = resolve_recipe(ctx.pretrain, ctx.spec)
    batch, seq = p.batch_size or recipe.batch_size, p.seq_len or recipe.seq_len
    spec = ctx.spec
    steppers = {"model": Stepper(spec, ctx.objective, batch, seq, ctx.seed)}
    baseline = p.baseline if p.baseline and p.baseline != ctx.objective else None
    if baseline:
        steppers["baseline"] = Stepper(
            get_spec(spec.name, spec.vocab_size), baseline, batch, seq, ctx.seed
        )
    times: dict[str, list[float]] = {k: [] for k in steppers}
    for i in range(p.warmup + p.steps):
        for name, s in steppers.items():  # interleaved: same machine state for both
            dt = s.step()
            if i >= p.warmup:
                times[name].append(dt)
    roofline = matmul_roofline()
    med = {k: statistics.median(v) for k, v in times.items()}
    model = steppers["model"]
    tokens = batch * seq
    achieved = model.flops / med["model"]
    out = [
        Result("tokens_per_s", tokens / med["model"]),
        Result("step_ms", 1000 * med["model"], stderr=1000 * statistics.pstdev(times["model"])),
        Result("flops_per_token", model.flops / tokens),
        Result("achieved_tflops", achieved / 1e12),
        Result("mfu", achieved / roofline),
        Result("params", float(model.n_params)),
        Result("speedup_vs_baseline", med["baseline"] / med["model"] if baseline else 1.0),
    ]
    if p.memory:
        mem = measure_memory(spec.name, spec.vocab_size, ctx.objective, batch, seq, 2)
        out.append(Result("peak_rss_mb", mem["peak_rss_mb"]))
        ratio = 1.0
        if baseline:
            base = measure_memory(spec.name, spec.vocab_size, baseline, batch, seq, 2)
            ratio = mem["step_growth_mb"] / max(base["step_growth_mb"], 1e-6)
        out.append(Result("memory_vs_baseline", ratio))
    return out


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
