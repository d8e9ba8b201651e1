"""The leaderboard's mark: which models are better than the baseline, with the seed as the unit.

For every (sweep point, task, metric) a model shares with the baseline,
`compare_to_baseline` reduces each arm to one value per pretraining seed and compares them
(`harness.results.stats.compare_seeds`: paired t over shared seeds, Welch otherwise;
two-sided, Δ with its 95 % interval). A speed or memory cell pretrains nothing, so there a
seed's value is one measurement, and the test is labelled so (`Metric.replicate`). With one
seed per arm there is no seed-level test; where per-example scores were kept, the paired
per-example test (McNemar or a paired bootstrap) stands in, labelled as such. The p-values
of all the comparisons of a leaderboard are Holm-adjusted together; † marks a model better
than the baseline at adjusted p < 0.05, and ‡ one worse than it at the same level (no mark
is no verdict: inconclusive, not "equal"). The family is fixed by the rows, not by what a
view shows: every metric with a direction, of every task. A best-epoch metric (`mcc@best`)
is not tested: its epoch was chosen on the very set it is scored on, so it leans to
whichever run varies most.

A metric comparable only within an objective (or a model kind, `Metric.comparable`) is never
compared across them: a CWT loss over in-batch negatives is not a CE loss over the vocabulary.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from harness.results.metrics import metric_info
from harness.results.stats import ALPHA, compare_seeds, holm, per_example

PER_EXAMPLE = "per-example"  # the test label's prefix where one seed per arm was compared
BEST_EPOCH = "not tested: its epoch is chosen on the set it is scored on"


def best_epoch(metric: str) -> bool:
    """Whether `metric` is a best-epoch pick (`mcc@best`), never tested."""
    return "@" in metric


def family_size(compared: pd.DataFrame) -> int:
    """How many tests `compare_to_baseline` corrected together in `compared` (its output):
    those with a p-value, as `holm` counts them."""
    return int(compared["p_value"].notna().sum())


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


def comparable(metric: str, mine: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """Whether `metric` of two aggregated rows may be compared (its `comparable` scope)."""
    scope = metric_info(metric).comparable
    if scope != "all" and (mine["kind"] is None or theirs["kind"] is None):
        return False  # a model the zoo does not know: its kind is not known either
    if scope == "objective":
        return bool(mine["objective"] == theirs["objective"] and mine["kind"] == theirs["kind"])
    if scope == "kind":
        return bool(mine["kind"] == theirs["kind"])
    return True


def _seeds(r: dict[str, Any]) -> pd.Series:
    return pd.Series(r["by_seed"], dtype=float)


def _compare(
    r: dict[str, Any], b: dict[str, Any], kept: dict[Any, dict[str, float]]
) -> tuple[float, float, float, float, str]:
    """(Δ, low, high, two-sided p, test) of row `r` against baseline row `b`."""
    c = compare_seeds(_seeds(r), _seeds(b), metric_info(r["metric"]).replicate)
    if not math.isnan(c.p):
        return c.delta, c.low, c.high, c.p, c.test
    mine = kept.get((r["model"], r["sweep"], r["task"], r["metric"]))
    theirs = kept.get((b["model"], b["sweep"], b["task"], b["metric"]))
    unit = metric_info(r["metric"]).sample_unit
    ev = per_example(mine, theirs, unit) if mine and theirs else None
    if ev is None:
        return c.delta, math.nan, math.nan, math.nan, c.test
    return c.delta, math.nan, math.nan, ev.p, f"{PER_EXAMPLE}: {ev.test} (one pretraining seed)"


def compare_to_baseline(
    agg: pd.DataFrame, baseline: str, samples: pd.DataFrame | None = None
) -> pd.DataFrame:
    """`agg` (from `aggregate`) with delta, low, high (95 % interval over seeds), p_value
    (two-sided), p_adjusted (Holm over every comparison in `agg` of a metric with a
    direction, none `best_epoch`), test, significant (better than the baseline at adjusted
    p < 0.05) and worse (worse than it, at the same level) columns. Pass a leaderboard's
    whole `agg` and choose what to show after: the family, and so every mark, is the rows'."""
    agg = agg.copy()
    kept = latest_samples(samples) if samples is not None else {}
    records: list[dict[str, Any]] = agg.to_dict("records")  # type: ignore[assignment]
    base = {(r["sweep"], r["task"], r["metric"]): r for r in records if r["model"] == baseline}
    out = []
    for r in records:
        b = base.get((r["sweep"], r["task"], r["metric"]))
        if b is None or r["model"] == baseline or r["higher_is_better"] is None:
            out.append((math.nan, math.nan, math.nan, math.nan, ""))
        elif best_epoch(str(r["metric"])):
            out.append((math.nan, math.nan, math.nan, math.nan, BEST_EPOCH))
        elif not comparable(str(r["metric"]), r, b):
            out.append((math.nan, math.nan, math.nan, math.nan, "not comparable across objectives"))
        else:
            out.append(_compare(r, b, kept))
    agg["delta"], agg["low"], agg["high"], agg["p_value"], agg["test"] = (
        [o[i] for o in out] for i in range(5)
    )
    agg["p_adjusted"] = holm(list(agg["p_value"]))
    held = [bool(p < ALPHA) if not math.isnan(p) else False for p in agg["p_adjusted"]]
    better = [
        (d > 0) == bool(h) if not math.isnan(d) else False
        for d, h in zip(agg["delta"], agg["higher_is_better"], strict=True)
    ]
    agg["significant"] = [h and b for h, b in zip(held, better, strict=True)]
    agg["worse"] = [h and not b for h, b in zip(held, better, strict=True)]
    return agg
