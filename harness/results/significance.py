"""Significance of a model's difference from the baseline, as the paper tests it.

Single-seed comparisons of a task that keeps per-example scores (`harness.results.samples`) are
tested on the examples both models scored: a paired one-tailed t-test (the paper's). Multi-seed
comparisons are tested over seeds: a one-tailed Welch t-test. `compare_to_baseline` records
which test made each mark, so the leaderboard can say so.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import pandas as pd
from scipy import stats

PAIRED = "paired t-test over kept samples"
WELCH = "Welch t-test over seeds"


def _one_tailed(
    test: Any, a: list[float], b: list[float], higher_is_better: bool, **kw: Any
) -> float:
    alternative = "greater" if higher_is_better else "less"
    with warnings.catch_warnings():  # near-identical samples: scipy warns, the p-value stands
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(test(a, b, alternative=alternative, **kw).pvalue)


def welch_one_tailed(a: list[float], b: list[float], higher_is_better: bool) -> float:
    """p-value that `a` is better than `b` (Welch's t-test, one-tailed); nan if undefined."""
    if len(a) < 2 or len(b) < 2 or (max(a) == min(a) and max(b) == min(b)):
        return math.nan  # undefined without variance
    return _one_tailed(stats.ttest_ind, a, b, higher_is_better, equal_var=False)


def paired_one_tailed(a: dict[str, float], b: dict[str, float], higher_is_better: bool) -> float:
    """p-value that `a` is better than `b` on the examples both scored (paired t-test,
    one-tailed); nan with fewer than 2 shared examples or no variance of the differences."""
    keys = sorted(set(a) & set(b))
    diffs = {a[k] - b[k] for k in keys}
    if len(keys) < 2 or len(diffs) < 2:
        return math.nan
    return _one_tailed(
        stats.ttest_rel, [a[k] for k in keys], [b[k] for k in keys], higher_is_better
    )


def latest_samples(samples: pd.DataFrame) -> dict[tuple[str, str, str, str], dict[str, float]]:
    """(model, sweep, task, metric) -> {example key: score} at the latest evaluated step."""
    if samples.empty:
        return {}
    d = samples.assign(_step=samples["step"].fillna(-1))
    last = d.groupby(["model", "sweep", "task", "metric"])["_step"].transform("max")
    d = d[d["_step"] == last]
    out: dict[tuple[str, str, str, str], dict[str, float]] = {}
    for (model, sweep, task, metric), g in d.groupby(["model", "sweep", "task", "metric"]):
        out[str(model), str(sweep), str(task), str(metric)] = dict(
            zip(g["key"], g["value"], strict=True)
        )
    return out


def _test(
    r: dict[str, Any], b: dict[str, Any], samples: dict[Any, dict[str, float]]
) -> tuple[float, str]:
    hib = bool(r["higher_is_better"])
    if int(r["n"]) == 1 and int(b["n"]) == 1:
        mine = samples.get((r["model"], r["sweep"], r["task"], r["metric"]))
        theirs = samples.get((b["model"], b["sweep"], b["task"], b["metric"]))
        if mine and theirs:
            return paired_one_tailed(mine, theirs, hib), PAIRED
        return math.nan, ""
    return welch_one_tailed(list(r["values"]), list(b["values"]), hib), WELCH


def compare_to_baseline(
    agg: pd.DataFrame, baseline: str, samples: pd.DataFrame | None = None, alpha: float = 0.05
) -> pd.DataFrame:
    """Adds delta, p_value, significant (better than the baseline at `alpha`) and test (which
    test gave the p-value) columns to an aggregated leaderboard."""
    agg = agg.copy()
    kept = latest_samples(samples) if samples is not None else {}
    records: list[dict[str, Any]] = agg.to_dict("records")  # type: ignore[assignment]
    base = {(r["sweep"], r["task"], r["metric"]): r for r in records if r["model"] == baseline}
    deltas, pvals, tests = [], [], []
    for r in records:
        b = (
            base[(r["sweep"], r["task"], r["metric"])]
            if (r["sweep"], r["task"], r["metric"]) in base
            else None
        )
        deltas.append(math.nan if b is None else float(r["mean"]) - float(b["mean"]))
        p, test = math.nan, ""
        if b is not None and r["model"] != baseline and r["higher_is_better"] is not None:
            p, test = _test(r, b, kept)
        pvals.append(p)
        tests.append(test)
    agg["delta"], agg["p_value"], agg["test"] = deltas, pvals, tests
    agg["significant"] = [bool(p < alpha) if not math.isnan(p) else False for p in pvals]
    return agg
