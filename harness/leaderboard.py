"""Parquet leaderboards: one schema, one file per finished cell, aggregation and tables.

`leaderboards/<suite>/<cell_id>.parquet` holds the rows of one cell. Files are written under a
dot-prefixed temporary name and renamed, so a crash never leaves a half file and two runs at
once never lose rows; readers (pandas, pyarrow, duckdb) skip dot- and underscore-prefixed
names, which is where temporaries, `_plots/` and `_cells.json` live. `_cells.json` lists the
cells of the suite as last run: rows of other cells (an edited suite's old configurations)
stay on disk but `read_leaderboard` leaves them out unless asked for them.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import uuid
import warnings
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from scipy import stats

from harness.metrics import direction
from zoo.registry import check_name

SCHEMA = pa.schema(
    [
        ("suite", pa.string()),
        ("suite_version", pa.int64()),
        ("cell_id", pa.string()),
        ("model", pa.string()),
        ("preset", pa.string()),
        ("objective", pa.string()),
        ("scale", pa.string()),
        ("vocab_size", pa.int64()),
        ("batch_size", pa.int64()),
        ("seed", pa.int64()),
        ("task", pa.string()),
        ("metric", pa.string()),
        ("value", pa.float64()),
        ("stderr", pa.float64()),
        ("higher_is_better", pa.bool_()),
        ("step", pa.int64()),
        ("tokens_seen", pa.int64()),
        ("train_flops", pa.float64()),
        ("train_seconds", pa.float64()),
        ("params", pa.int64()),
        ("sweep", pa.string()),  # JSON of the sweep point ({} when none)
        ("config", pa.string()),  # JSON of the resolved cell configuration
        ("git_sha", pa.string()),
        ("versions", pa.string()),  # JSON
        ("timestamp", pa.timestamp("us", tz="UTC")),
    ]
)
COLUMNS = SCHEMA.names
COLUMN_DOCS = {
    "suite": "suite name",
    "suite_version": "suite version",
    "cell_id": "hash of the cell's resolved configuration",
    "model": "model label in the suite",
    "preset": "zoo preset",
    "objective": "pretraining objective",
    "scale": "preset size (tiny, small, base, 70m...)",
    "vocab_size": "vocabulary size",
    "batch_size": "pretraining batch size (all processes x accumulation)",
    "seed": "seed",
    "task": "task (or sub-task) label",
    "metric": "metric name",
    "value": "metric value",
    "stderr": "standard error or spread reported by the task, if any",
    "higher_is_better": "direction, from the metric registry (null: informational)",
    "step": "pretraining step of the evaluated checkpoint",
    "tokens_seen": "pretraining tokens seen",
    "train_flops": "analytic training FLOPs so far",
    "train_seconds": "training wall seconds so far",
    "params": "parameters of the model as trained",
    "sweep": "JSON of the sweep point",
    "config": "JSON of the resolved cell configuration",
    "git_sha": "commit of headless-zoo that computed it",
    "versions": "JSON of library versions",
    "timestamp": "when the cell finished (UTC)",
}


def git_sha() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            cwd=Path(__file__).resolve().parent,
        )
        return out.stdout.strip() if out.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def now() -> datetime:
    return datetime.now(UTC)


def write_cell(directory: Path, cell_id: str, rows: list[dict[str, Any]]) -> Path:
    """Atomically write one cell's rows (every SCHEMA column must be present)."""
    directory.mkdir(parents=True, exist_ok=True)
    for r in rows:
        missing = set(COLUMNS) - set(r)
        if missing:
            raise ValueError(f"leaderboard row lacks {sorted(missing)}")
    table = pa.Table.from_pylist([{c: r[c] for c in COLUMNS} for r in rows], schema=SCHEMA)
    final = directory / f"{cell_id}.parquet"
    tmp = directory / f".tmp-{cell_id}-{os.getpid()}-{uuid.uuid4().hex[:8]}.parquet"
    pq.write_table(table, tmp)
    os.replace(tmp, final)
    return final


CURRENT = "_cells.json"


def done_cells(directory: Path) -> set[str]:
    return {p.stem for p in directory.glob("*.parquet") if not p.name.startswith((".", "_"))}


def write_current_cells(directory: Path, cell_ids: list[str]) -> None:
    """Record the suite's current cells (atomically)."""
    tmp = directory / f".tmp-cells-{os.getpid()}.json"
    tmp.write_text(json.dumps(sorted(set(cell_ids))))
    os.replace(tmp, directory / CURRENT)


def current_cells(directory: Path) -> set[str] | None:
    """The suite's current cell ids, or None for a folder no run has recorded them in."""
    f = directory / CURRENT
    return set(json.loads(f.read_text())) if f.is_file() else None


def stale_cells(directory: Path) -> set[str]:
    """Cells on disk that the suite, as last run, no longer has."""
    current = current_cells(directory)
    return set() if current is None else done_cells(directory) - current


def read_leaderboard(directory: Path, include_stale: bool = False) -> pd.DataFrame:
    """Every row of the suite's current cells (and of stale ones with `include_stale`)."""
    stale = set() if include_stale else stale_cells(directory)
    files = sorted(
        p
        for p in directory.glob("*.parquet")
        if not p.name.startswith((".", "_")) and p.stem not in stale
    )
    if not files:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in COLUMNS})
    return pa.concat_tables([pq.read_table(f, schema=SCHEMA) for f in files]).to_pandas()


def latest_step(df: pd.DataFrame) -> pd.DataFrame:
    """Keep, per model / sweep point / seed / task / metric, the row of the latest step (the
    newest one among rows of the same step: a stable sort on step, then timestamp)."""
    if df.empty:
        return df
    key = ["model", "sweep", "seed", "task", "metric"]
    d = df.assign(_step=df["step"].fillna(-1))
    d = d.sort_values(["_step", "timestamp"], kind="mergesort")
    return d.groupby(key, dropna=False).tail(1).drop(columns="_step")


def aggregate(df: pd.DataFrame) -> pd.DataFrame:
    """Mean, std and n over seeds, per model / sweep point / task / metric (latest step)."""
    cols = ["model", "sweep", "task", "metric", "mean", "std", "n", "higher_is_better", "values"]
    if df.empty:
        return pd.DataFrame(columns=cols)
    d = latest_step(df)
    g = d.groupby(["model", "sweep", "task", "metric"], dropna=False, sort=False)
    out = g["value"].agg(mean="mean", std="std", n="count").reset_index()
    out["std"] = out["std"].fillna(0.0)
    out["values"] = g["value"].agg(list).to_numpy()
    stored = g["higher_is_better"].first().to_numpy()
    out["higher_is_better"] = [_direction(m, s) for m, s in zip(out["metric"], stored, strict=True)]
    return out[cols]


def _direction(metric: str, stored: Any = None) -> bool | None:
    """From the registry; for metrics it does not know, the direction stored in the rows."""
    fallback = (
        None
        if stored is None or (isinstance(stored, float) and math.isnan(stored))
        else bool(stored)
    )
    return direction(metric, fallback)


def welch_one_tailed(a: list[float], b: list[float], higher_is_better: bool) -> float:
    """p-value that `a` is better than `b` (Welch's t-test, one-tailed); nan if undefined."""
    if len(a) < 2 or len(b) < 2 or (max(a) == min(a) and max(b) == min(b)):
        return math.nan  # undefined without variance
    alternative = "greater" if higher_is_better else "less"
    with warnings.catch_warnings():  # near-identical samples: scipy warns, the p-value stands
        warnings.simplefilter("ignore", RuntimeWarning)
        res = stats.ttest_ind(a, b, equal_var=False, alternative=alternative)
    return float(res.pvalue)


def compare_to_baseline(agg: pd.DataFrame, baseline: str, alpha: float = 0.05) -> pd.DataFrame:
    """Adds delta, p_value and significant (better than the baseline at `alpha`) columns."""
    agg = agg.copy()
    records: list[dict[str, Any]] = agg.to_dict("records")  # type: ignore[assignment]
    base = {(r["sweep"], r["task"], r["metric"]): r for r in records if r["model"] == baseline}
    deltas, pvals, sig = [], [], []
    for r in records:
        b = base.get((r["sweep"], r["task"], r["metric"]))
        delta = math.nan if b is None else float(r["mean"]) - float(b["mean"])
        p = math.nan
        if b is not None and r["model"] != baseline and r["higher_is_better"] is not None:
            p = welch_one_tailed(list(r["values"]), list(b["values"]), bool(r["higher_is_better"]))
        deltas.append(delta)
        pvals.append(p)
        sig.append(bool(p < alpha) if not math.isnan(p) else False)
    agg["delta"], agg["p_value"], agg["significant"] = deltas, pvals, sig
    return agg


def _fmt(mean: float, std: float, n: int, sig: bool) -> str:
    digits = 4 if abs(mean) < 10 else 1
    s = f"{mean:.{digits}f}" + (f" ± {std:.{digits}f}" if n > 1 else "")
    return s + (" †" if sig else "")


def pivot(agg: pd.DataFrame, sort_by: str | None = None) -> pd.DataFrame:
    """Models (x sweep point) as rows, task/metric as columns, sorted by `sort_by`'s direction."""
    if agg.empty:
        return pd.DataFrame()
    a = agg.copy()
    a["row"] = [
        m if s in ("{}", "", None) else f"{m} {_sweep_label(s)}"
        for m, s in zip(a["model"], a["sweep"], strict=True)
    ]
    a["column"] = [f"{t}/{m}" for t, m in zip(a["task"], a["metric"], strict=True)]
    a["cell"] = [
        _fmt(float(r["mean"]), float(r["std"]), int(r["n"]), bool(r.get("significant", False)))
        for r in a.to_dict("records")
    ]
    table = a.pivot_table(index="row", columns="column", values="cell", aggfunc="first", sort=False)
    means = a.pivot_table(index="row", columns="column", values="mean", aggfunc="first", sort=False)
    if sort_by is not None:
        check_name("--sort column", sort_by, sorted(means.columns))
    key = sort_by if sort_by is not None else (means.columns[0] if len(means.columns) else None)
    if key is not None:
        metric = key.split("/")[-1]
        hib = _direction(metric)
        order = (
            means[key]
            .sort_values(ascending=not hib if hib is not None else True, na_position="last")
            .index
        )
        table = table.loc[order]
    # quality first, cost last: columns by task (throughput at the end), then metric
    columns = sorted(table.columns, key=lambda c: (c.startswith("throughput/"), c))
    table = table[columns]
    table.index.name = "model"
    return table.fillna("")


def _sweep_label(sweep_json: str) -> str:
    point = json.loads(sweep_json)
    return " ".join(f"{k}={v}" for k, v in point.items())


def render(agg: pd.DataFrame, fmt: str, sort_by: str | None = None) -> str:
    """md: the pivot as a markdown table; csv / json: the aggregated long table."""
    if fmt == "md":
        from tabulate import tabulate

        table = pivot(agg, sort_by)
        if table.empty:
            return "(no results yet)"
        return tabulate(table, headers="keys", tablefmt="github")  # type: ignore[arg-type]
    long = agg.drop(columns=["values"])
    if fmt == "csv":
        return str(long.to_csv(index=False))
    if fmt == "json":
        return str(long.to_json(orient="records", indent=2))
    raise ValueError(f"unknown format {fmt!r}")
