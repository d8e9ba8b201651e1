"""`throughput` task: training-step speed and memory, side by side with a baseline objective
(paper Figure 2), on the device the run uses (`device: auto` follows the pretraining config).

Speed: the model, its baseline twin (same preset, vocabulary and batch, `baseline`
objective) and Hugging Face's own full-projection step (`hf_baseline`: the step the paper
timed, which projects every position onto the vocabulary) are stepped alternately in this
process; step latency is the median after warm-up, so all see the same machine state. FLOPs
are analytic (`zoo.flops`); MFU is against the fp32 `torch.mm` roofline of `hlm bench`
(`harness.bench.timing.Roofline`) on the CPU, and against a bf16 `torch.mm` roofline on CUDA
(where the steps run under bf16 autocast), sampled after each measured round. A CPU sample
costs seconds: `mfu: false` leaves the roofline and its row out.

The steps are the cell's own pretraining step (its `PretrainConfig`: loss options, embedding
update, last-layer pruning, dropout masks, compile), through the training loop's own
`optimizer_step`, so an ablation row measures what it names. The twin takes the same config
with the baseline objective and dense embedding updates.

Memory: on the CPU the RSS high-water mark of a fresh process (`harness.bench.probe`) that
builds the model and runs the same steps; `memory_vs_baseline` compares the growth of RSS
during the steps, which excludes the interpreter. A process probes each distinct step once
(a cwt cell's twin is the ce cell's step) and reuses the figure. On CUDA the caching
allocator's peak over a step (`cuda_peak_mb`), and with `max_batch: true` the largest batch
that fits (`max_batch`: doubling until out of memory, then bisection).

This file declares the task; the measuring is in `throughput_steps.py`, imported when a cell
runs, so that checking a suite does not load torch.
"""

from __future__ import annotations

from harness.tasks.base import TASKS, Result, TaskContext, TaskType
from harness.tasks.throughput_params import ThroughputParams


def run_throughput(ctx: TaskContext) -> list[Result]:
    from harness.tasks.throughput_steps import measure  # torch: when a cell runs

    return measure(ctx)


class Throughput(TaskType):
    name = "throughput"
    description = (
        "training tokens/s, step latency, FLOPs, MFU and peak memory, with ratios to a "
        "baseline objective"
    )
    params = ThroughputParams
    metrics = (
        "tokens_per_s",
        "step_ms",
        "flops_per_token",
        "achieved_tflops",
        "mfu",
        "params",
        "speedup_vs_baseline",
        "peak_rss_mb",
        "memory_vs_baseline",
        "speedup_vs_hf",
        "cuda_peak_mb",
        "max_batch",
    )
    needs_checkpoint = False

    def run(self, ctx: TaskContext) -> list[Result]:
        return run_throughput(ctx)


THROUGHPUT = TASKS.add(Throughput.name, Throughput())
