"""Downstream metrics with scikit-learn / scipy (evaluate.load needs the Hub and fails offline)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy import stats
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef


def accuracy(pred: Sequence[float], gold: Sequence[float]) -> float:
    return float(accuracy_score(gold, pred))


def f1(pred: Sequence[float], gold: Sequence[float]) -> float:
    """Binary F1 of the positive class (id 1), as GLUE reports for MRPC and QQP."""
    return float(f1_score(gold, pred, pos_label=1, average="binary", zero_division=0))


def mcc(pred: Sequence[float], gold: Sequence[float]) -> float:
    return float(matthews_corrcoef(gold, pred))


def spearman(pred: Sequence[float], gold: Sequence[float]) -> float:
    value = stats.spearmanr(pred, gold).statistic
    return 0.0 if np.isnan(value) else float(value)


def pearson(pred: Sequence[float], gold: Sequence[float]) -> float:
    if np.std(pred) == 0 or np.std(gold) == 0:
        return 0.0
    return float(stats.pearsonr(pred, gold).statistic)


METRIC_FNS: dict[str, Callable[[Sequence[float], Sequence[float]], float]] = {
    "accuracy": accuracy,
    "f1": f1,
    "mcc": mcc,
    "spearman": spearman,
    "pearson": pearson,
}
