"""The metric registry: what each metric means, which direction is better, and (for the ones
this project computes from predictions) the function that computes it.

Leaderboards read the sort order and the direction of significance tests from here, never from
the metric's name. Scores use scikit-learn / scipy (`evaluate.load` needs the Hub).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from zoo.registry import Registry

ScoreFn = Callable[[Sequence[float], Sequence[float]], float]  # (predictions, gold) -> score


@dataclass(frozen=True)
class Metric:
    name: str
    higher_is_better: bool | None  # None: informational (no "better")
    unit: str = ""
    description: str = ""
    fn: ScoreFn | None = None  # for metrics computed from predictions here
    log_scale: bool = False  # plotted on a log axis (perplexities)
    # which models' values share an axis: "all", "kind" (encoders apart from decoders: MLM vs
    # CLM), or "objective" (also CWT apart from CE: a loss only comparable within its objective)
    comparable: str = "all"
    baseline: bool = False  # a trivial model's score, shown beside the models' (no direction)
    # a score that answering one class to most questions earns (accuracy, F1): an arm whose
    # answers are mostly one class (`answer_share`) is not compared on it
    answer_biased: bool = False
    # what one kept sample is: the unit the per-example test counts ("examples" of a test set,
    # "evaluation batches" where a task keeps one score per batch, "measured rounds" where a
    # speed is timed round by round)
    sample_unit: str = "examples"
    # what one value per seed is, the unit of the seed-level test: "seeds" (a pretraining run
    # each), or "measurements" where the cell pretrains nothing (speed, memory): its seed
    # indexes one independent measurement
    replicate: str = "seeds"

    def score(self, pred: Sequence[float], gold: Sequence[float]) -> float:
        if self.fn is None:
            raise ValueError(f"metric {self.name!r} is reported by its task, not computed here")
        return self.fn(pred, gold)


def measured(
    name: str, better: bool | None, unit: str, description: str, rounds: bool = False
) -> Metric:
    """A speed or memory metric: its cell pretrains nothing, so each seed's value is one
    measurement (`replicate`); `rounds`: one sample kept per timed round."""
    kept = "measured rounds" if rounds else "examples"
    return Metric(name, better, unit, description, replicate="measurements", sample_unit=kept)


# scikit-learn and scipy are imported where a score is computed: a verb that only reads
# metadata (`hlm validate`, a run whose cells are done) skips their second of imports


def accuracy(pred: Sequence[float], gold: Sequence[float]) -> float:
    from sklearn.metrics import accuracy_score

    return float(accuracy_score(gold, pred))


def f1(pred: Sequence[float], gold: Sequence[float]) -> float:
    """Binary F1 of the positive class (id 1), as GLUE reports for MRPC and QQP."""
    from sklearn.metrics import f1_score

    return float(f1_score(gold, pred, pos_label=1, average="binary", zero_division=0))


def answer_share(pred: Sequence[float], gold: Sequence[float]) -> float:
    """The share of examples given the most frequent answer: 1.0 for a constant answer. It
    reads the predictions only; `gold` is taken for the common signature."""
    del gold
    if len(pred) == 0:
        return float("nan")
    _, counts = np.unique(np.asarray(pred), return_counts=True)
    return float(counts.max() / len(pred))


def mcc(pred: Sequence[float], gold: Sequence[float]) -> float:
    from sklearn.metrics import matthews_corrcoef

    return float(matthews_corrcoef(gold, pred))


def _correlation(fn: Callable[..., object], pred: Sequence[float], gold: Sequence[float]) -> float:
    """`fn`'s statistic, or 0 where a side is constant: a constant correlates with nothing.

    Constancy is tested exactly (max == min): a float32 column of one repeated value has a
    rounding-error standard deviation (~1e-8), which scipy would answer with NaN and a warning.
    """
    if np.ptp(pred) == 0 or np.ptp(gold) == 0:
        return 0.0
    value = float(fn(pred, gold).statistic)  # type: ignore[attr-defined]
    return 0.0 if np.isnan(value) else value


def spearman(pred: Sequence[float], gold: Sequence[float]) -> float:
    from scipy import stats

    return _correlation(stats.spearmanr, pred, gold)


def pearson(pred: Sequence[float], gold: Sequence[float]) -> float:
    from scipy import stats

    return _correlation(stats.pearsonr, pred, gold)


METRICS: Registry[Metric] = Registry("metric")

BUILTIN_METRICS = (
    Metric(
        "val_loss",
        False,
        "nats",
        "validation loss of the training objective (CWT loss depends on K)",
        comparable="objective",
        sample_unit="evaluation batches",
    ),
    Metric(
        "val_ce",
        False,
        "nats",
        "validation cross-entropy through the (tied or fine-tuned) LM head",
        comparable="kind",
        sample_unit="evaluation batches",
    ),
    Metric(
        "val_ppl",
        False,
        "",
        "validation perplexity, exp(val_ce)",
        log_scale=True,
        comparable="kind",
    ),
    Metric(
        "unigram_ppl",
        None,
        "",
        "perplexity of the training text's add-one unigram model on the tokens the model's "
        "perplexity is scored on (validation text; an lm-eval task's targets)",
        log_scale=True,
        comparable="kind",
        baseline=True,
    ),
    Metric(
        "context_gain",
        True,
        "nats",
        "decoders: LM-head cross-entropy on a block's first 16 predictions minus on its second "
        "half's, how much of the context read the model uses (in-context learning score)",
        comparable="kind",
        sample_unit="evaluation batches",
    ),
    measured("tokens_per_s", True, "tok/s", "training throughput"),
    measured("step_ms", False, "ms", "median training-step latency after warm-up", rounds=True),
    measured(
        "peak_rss_mb",
        False,
        "MiB",
        "peak resident memory of a fresh process running training steps",
    ),
    measured(
        "speedup_vs_baseline",
        True,
        "x",
        "tokens/s relative to the baseline, measured side by side",
        rounds=True,
    ),
    measured("memory_vs_baseline", False, "x", "peak memory relative to the baseline"),
    measured(
        "speedup_vs_hf",
        True,
        "x",
        "tokens/s relative to Hugging Face's full-projection step",
        rounds=True,
    ),
    measured("cuda_peak_mb", False, "MiB", "CUDA allocator's peak over a training step"),
    measured("max_batch", True, "sequences", "largest batch whose training step fits (CUDA)"),
    measured("flops_per_token", None, "FLOP", "analytic training FLOPs per token"),
    measured("achieved_tflops", True, "TFLOP/s", "analytic FLOPs / measured step time"),
    measured("mfu", True, "", "achieved FLOP/s over the same-run fp32 matmul roofline"),
    Metric("params", None, "", "parameters of the model as trained"),
    # downstream fine-tuning (a "@best" suffix: the best epoch instead of the last)
    Metric("accuracy", True, "", "accuracy", accuracy, answer_biased=True),
    Metric("f1", True, "", "F1 of the positive class", f1, answer_biased=True),
    Metric("mcc", True, "", "Matthews correlation (CoLA)", mcc),
    Metric("spearman", True, "", "Spearman correlation (STS-B)", spearman),
    Metric("pearson", True, "", "Pearson correlation (STS-B)", pearson),
    Metric("average", True, "", "mean of the sub-tasks' primary metrics"),
    Metric(
        "majority",
        None,
        "",
        "the primary metric of predicting the training set's most frequent class (regression: "
        "its mean) for every example",
        baseline=True,
    ),
    Metric(
        "answer_share",
        None,
        "",
        "the share of examples given the model's most frequent answer (1: a constant answer)",
        answer_share,
    ),
    # lm-eval
    Metric("acc", True, "", "lm-eval accuracy", answer_biased=True),
    Metric("acc_norm", True, "", "lm-eval length-normalised accuracy", answer_biased=True),
    Metric(
        "perplexity", False, "", "lm-eval perplexity (LAMBADA: of the last word)", log_scale=True
    ),
    Metric("word_perplexity", False, "", "lm-eval word perplexity", log_scale=True),
    Metric("byte_perplexity", False, "", "lm-eval byte perplexity", log_scale=True),
    Metric("bits_per_byte", False, "", "lm-eval bits per byte"),
    Metric("likelihood_diff", False, "", "CrowS-Pairs: mean |log-likelihood difference|"),
    Metric("pct_stereotype", False, "", "CrowS-Pairs: share of stereotyped sentences preferred"),
    Metric("exact_match", True, "", "lm-eval exact match"),
    Metric(
        "jaccard",
        None,
        "",
        "the probe's metric on token overlap alone (Jaccard of the two texts' words)",
        baseline=True,
    ),
    # representation analysis (Appendix A), and the collapse of token states (probe)
    Metric("token_cosine", None, "", "mean cosine between distinct last-layer token states"),
    Metric("effective_rank", None, "", "effective rank of the last-layer token states"),
    Metric("synonym_cosine", True, "", "mean cosine of WordNet synonyms' input embeddings"),
    Metric("synonym_pairs", None, "", "WordNet synonym pairs whose words are single tokens"),
    Metric(
        "random_pair_cosine", None, "", "mean cosine of the same words paired at random (chance)"
    ),
    Metric("synonym_margin", True, "", "synonym_cosine minus random_pair_cosine, pair by pair"),
)
for _metric in BUILTIN_METRICS:
    METRICS.add(_metric.name, _metric)


def is_baseline(metric: str) -> bool:
    """Whether the metric is a trivial model's score (shown beside the models' scores)."""
    return metric in METRICS and METRICS.get(metric).baseline


def direction(metric: str, fallback: bool | None = None) -> bool | None:
    """higher_is_better of a metric name (a "@best" suffix is ignored); `fallback` for names
    the registry does not know (e.g. what lm-eval reports for an arbitrary task)."""
    base = metric.split("@", 1)[0]
    return METRICS.get(base).higher_is_better if base in METRICS else fallback


def metric_info(metric: str) -> Metric:
    """The registered metric of a name (a "@best" suffix ignored); an unknown name (what
    lm-eval reports for an arbitrary task) gets a neutral, informational entry."""
    base = metric.split("@", 1)[0]
    return METRICS.get(base) if base in METRICS else Metric(base, None)
