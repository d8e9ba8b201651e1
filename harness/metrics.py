"""The metric registry: what each metric means and which direction is better.

Leaderboards read the sort order and the direction of significance tests from here, never from
the metric's name.
"""

from __future__ import annotations

from dataclasses import dataclass

from zoo.registry import Registry


@dataclass(frozen=True)
class Metric:
    name: str
    higher_is_better: bool | None  # None: informational (no "better")
    unit: str = ""
    description: str = ""


METRICS: Registry[Metric] = Registry("metric")


def register_builtin_metrics(registry: Registry[Metric]) -> None:
    for m in (
        Metric(
            "val_loss",
            False,
            "nats",
            "validation loss of the training objective (CWT loss depends on K)",
        ),
        Metric(
            "val_ce",
            False,
            "nats",
            "validation cross-entropy through the (tied or fine-tuned) LM head",
        ),
        Metric("val_ppl", False, "", "validation perplexity, exp(val_ce)"),
        Metric("tokens_per_s", True, "tok/s", "training throughput"),
        Metric("step_ms", False, "ms", "median training-step latency after warm-up"),
        Metric(
            "peak_rss_mb",
            False,
            "MiB",
            "peak resident memory of a fresh process running training steps",
        ),
        Metric(
            "speedup_vs_baseline",
            True,
            "x",
            "tokens/s relative to the baseline, measured side by side",
        ),
        Metric("memory_vs_baseline", False, "x", "peak memory relative to the baseline"),
        Metric("flops_per_token", None, "FLOP", "analytic training FLOPs per token"),
        Metric("achieved_tflops", True, "TFLOP/s", "analytic FLOPs / measured step time"),
        Metric("mfu", True, "", "achieved FLOP/s over the same-run fp32 matmul roofline"),
        Metric("params", None, "", "parameters of the model as trained"),
    ):
        registry.add(m.name, m)


register_builtin_metrics(METRICS)
