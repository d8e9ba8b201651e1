"""`hlm power SUITE`: how much the seeds of a leaderboard could see.

    hlm power paper-cpu-encoder                    # against the suite's baseline
    hlm power paper-cpu-encoder --effect 0.01      # power and seeds for a Δ of 0.01
    hlm power paper-cpu-encoder --claims 41        # each test one of 41 corrected together
    hlm power ablation --baseline bert-tiny-ce --task glue
    hlm power paper-cpu-wiki-decoder --task validation --metric val_ce --effect 0.14

For every model, sweep point, task and metric it shares with the baseline (a metric with a
direction, no best-epoch pick, compared only where its `Metric.comparable` scope allows; the
leaderboard's marks correct over all of them, and the footer says how many), each arm is reduced to
one value per pretraining seed and compared (`harness.results.stats`): the seeds, the
observed Δ, the seed-level spread, the smallest |Δ| these seeds detect at 80 % power
(two-sided, α = 0.05, or 0.05 / `--claims` where that many claims are corrected together, as
`hlm report --paper` corrects its page), and for the effect asked (`--effect`, an effect
decided before looking: the paper's Δ, or the smallest that would matter) the power the
seeds had and the seeds per arm it would need at that spread. It is how a run is sized: a
pilot's spread in, the seeds out.

Without `--effect` there is no power column: the power "at the observed Δ" is a function of
the p-value alone (Hoenig and Heisey, 2001), so it would say nothing the test has not, and
a low one would read as a reason for a null result that it is not.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from harness.report.tables import row_label, select_task
from harness.results.fields import point_order
from harness.results.leaderboard import (
    aggregate,
)
from harness.results.significance import (
    best_epoch,
    comparable,
)
from harness.results.stats import ALPHA, compare_seeds
from zoo.errors import UserError
from zoo.registry import unknown_name_message

COLUMNS = [
    "model",
    "sweep",
    "task",
    "metric",
    "seeds",
    "delta",
    "sd",
    "detectable",
    "effect",
    "power",
    "seeds_needed",
]


def _row(
    r: dict[str, Any], b: dict[str, Any], effect: float | None, alpha: float
) -> dict[str, Any]:
    c = compare_seeds(pd.Series(r["by_seed"], dtype=float), pd.Series(b["by_seed"], dtype=float))
    size = abs(effect) if effect is not None else math.nan  # never the observed Δ
    return {
        "model": r["model"],
        "sweep": r["sweep"],
        "task": r["task"],
        "metric": r["metric"],
        "seeds": c.seeds,
        "delta": c.delta,
        "sd": c.sd,
        "detectable": c.detectable(alpha=alpha),
        "effect": size,
        "power": c.power_at(size, alpha=alpha) if size > 0 else math.nan,
        "seeds_needed": c.seeds_for(size, alpha=alpha) if size > 0 else None,
    }


def power_table(
    df: pd.DataFrame, baseline: str, effect: float | None = None, claims: int = 1
) -> pd.DataFrame:
    """One row per comparison with the baseline (see the module docstring), each test held
    to α / `claims`."""
    alpha = ALPHA / claims
    agg = aggregate(df)
    records: list[dict[str, Any]] = agg.to_dict("records")  # type: ignore[assignment]
    base = {(r["sweep"], r["task"], r["metric"]): r for r in records if r["model"] == baseline}
    if not base:
        raise UserError(
            f"no rows of the baseline {baseline!r} (models: {sorted(agg['model'].unique())})"
        )
    rows = []
    for r in records:
        b = base.get((r["sweep"], r["task"], r["metric"]))
        if b is None or r["model"] == baseline or r["higher_is_better"] is None:
            continue
        if best_epoch(str(r["metric"])):  # never tested: no power to speak of
            continue
        if comparable(str(r["metric"]), r, b):
            rows.append(_row(r, b, effect, alpha))
    return pd.DataFrame(rows, columns=COLUMNS)


def level(claims: int) -> str:
    if claims == 1:
        return f"{ALPHA}, no correction (--claims N for N tests corrected together)"
    return f"{ALPHA}/{claims} = {ALPHA / claims:.3g}, Bonferroni's level for {claims} claims"


def selected(df: pd.DataFrame, task: str | None, metric: str | None) -> pd.DataFrame:
    """The rows of `task` and `metric` (all where None); a metric the board does not hold is
    an error naming the close ones."""
    if task:
        df = df[select_task(df["task"], task)]
    if metric:
        known = sorted(df["metric"].unique())
        if metric not in known:
            raise UserError(f"--metric: {unknown_name_message('metric', metric, known)}")
        df = df[df["metric"] == metric]
    return df


def printable(table: pd.DataFrame) -> pd.DataFrame:
    """The table as printed: by task, model and sweep point (in the order of its values), a
    task's metrics as they came; each row labelled as the leaderboard labels it (the model,
    and its sweep point where it has one), and "-" where nothing could be sized."""
    points = [point_order(s if isinstance(s, str) else None) for s in table["sweep"]]
    keys = list(zip(table["task"], table["model"], points, strict=True))
    table = table.iloc[sorted(range(len(keys)), key=keys.__getitem__)]
    shown = table.astype({"seeds_needed": float})  # None (no spread, or no effect) prints "-"
    labels = [row_label(m, s) for m, s in zip(table["model"], table["sweep"], strict=True)]
    return shown.drop(columns="sweep").assign(model=labels)
