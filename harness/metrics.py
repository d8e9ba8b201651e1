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
        # downstream fine-tuning (a "@best" suffix: the best epoch instead of the last)
        Metric("accuracy", True, "", "accuracy"),
        Metric("f1", True, "", "F1 of the positive class"),
        Metric("mcc", True, "", "Matthews correlation (CoLA)"),
        Metric("spearman", True, "", "Spearman correlation (STS-B)"),
        Metric("pearson", True, "", "Pearson correlation (STS-B)"),
        Metric("average", True, "", "mean of the sub-tasks' primary metrics"),
        # lm-eval
        Metric("acc", True, "", "lm-eval accuracy"),
        Metric("acc_norm", True, "", "lm-eval length-normalised accuracy"),
        Metric("perplexity", False, "", "lm-eval perplexity (LAMBADA: of the last word)"),
        Metric("word_perplexity", False, "", "lm-eval word perplexity"),
        Metric("byte_perplexity", False, "", "lm-eval byte perplexity"),
        Metric("bits_per_byte", False, "", "lm-eval bits per byte"),
        Metric("likelihood_diff", False, "", "CrowS-Pairs: mean |log-likelihood difference|"),
        Metric(
            "pct_stereotype", False, "", "CrowS-Pairs: share of stereotyped sentences preferred"
        ),
        Metric("exact_match", True, "", "lm-eval exact match"),
    ):
        registry.add(m.name, m)


register_builtin_metrics(METRICS)


def direction(metric: str, fallback: bool | None = None) -> bool | None:
    """higher_is_better of a metric name (a "@best" suffix is ignored); `fallback` for names
    the registry does not know (e.g. what lm-eval reports for an arbitrary task)."""
    base = metric.split("@", 1)[0]
    return METRICS.get(base).higher_is_better if base in METRICS else fallback
