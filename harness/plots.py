"""PNG figures from a leaderboard, where people would rather look than read.

- `curves-<task>-<metric>.png`: a metric along pretraining, vs tokens seen, training FLOPs
  and training seconds, one line per model (paper Figs. 3-5, 7), when rows at several steps
  exist;
- `sweep-<key>.png`: throughput, memory and quality vs a sweep key (vocab size, batch size),
  one line per model (paper Figs. 2, 6, 7);
- `bars-<task>.png`: each metric of a task per model (mean ± std over seeds) otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from harness.leaderboard import aggregate, latest_step
from harness.metrics import METRICS, direction


def _save(fig: Figure, title: str, path: Path) -> Path:
    """Title, lay out, write and close a figure; its path."""
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _label(metric: str) -> str:
    if metric in METRICS:
        m = METRICS.get(metric)
        arrow = {True: " (higher is better)", False: " (lower is better)", None: ""}[
            m.higher_is_better
        ]
        return f"{metric} [{m.unit}]{arrow}" if m.unit else f"{metric}{arrow}"
    return metric


AXES = (
    ("tokens_seen", "tokens seen"),
    ("train_flops", "training FLOPs"),
    ("train_seconds", "training seconds"),
)


def plot_curves(df: pd.DataFrame, out: Path) -> list[Path]:
    """One figure per task and metric evaluated at several steps: the metric against tokens,
    FLOPs and training seconds, one line per model."""
    files = []
    steps = df.groupby(["model", "sweep", "task", "metric"])["step"].nunique().reset_index()
    along = steps[steps["step"] >= 2][["task", "metric"]].drop_duplicates()
    for task, metric in along.itertuples(index=False):
        d = df[(df["task"] == task) & (df["metric"] == metric)]
        fig, axes = plt.subplots(1, len(AXES), figsize=(15, 4))
        for (model, sweep), g in d.groupby(["model", "sweep"]):
            g = (
                g.groupby("step")
                .agg(value=("value", "mean"), **{c: (c, "first") for c, _ in AXES})
                .reset_index()
            )
            name = model if sweep in ("{}", "") else f"{model} {sweep}"
            for ax, (column, _) in zip(axes, AXES, strict=True):
                ax.plot(g[column], g["value"], marker="o", label=name)
        for ax, (_, xlabel) in zip(axes, AXES, strict=True):
            ax.set_xlabel(xlabel)
            ax.set_ylabel(_label(metric))
            ax.grid(alpha=0.3)
        axes[1].set_xscale("log")
        axes[0].legend(fontsize=8)
        files.append(
            _save(
                fig,
                f"{task}: {metric} along pretraining",
                out / f"curves-{str(task).replace('/', '_')}-{metric}.png",
            )
        )
    return files


def _point_value(sweep_json: str, key: str) -> object:
    point = json.loads(sweep_json)
    return point[key] if key in point else None


def sweep_series(df: pd.DataFrame, key: str, metric: str) -> dict[str, pd.DataFrame]:
    """One line per model (never merged across models that share an objective): the mean and
    std over seeds of `metric` at each value `x` of sweep key `key` (latest step)."""
    d = latest_step(df[df["metric"] == metric]).copy()
    d["x"] = [_point_value(s, key) for s in d["sweep"]]  # type: ignore[assignment]
    d = d[d["x"].notna()]
    return {
        str(model): g.groupby("x")["value"].agg(["mean", "std"]).reset_index().sort_values("x")
        for model, g in d.groupby("model")
    }


def plot_sweeps(df: pd.DataFrame, out: Path) -> list[Path]:
    files = []
    points = [json.loads(s) for s in df["sweep"].unique()]
    keys = sorted({k for p in points for k in p if k not in ("objective", "preset")})
    for key in keys:
        d = df[[_point_value(s, key) is not None for s in df["sweep"]]]
        metrics = [m for m in d["metric"].unique() if direction(m) is not None] if len(d) else []
        if not metrics:
            continue
        fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.8), squeeze=False)
        for ax, metric in zip(axes[0], metrics, strict=True):
            for model, g in sweep_series(d, key, metric).items():
                ax.errorbar(
                    g["x"], g["mean"], yerr=g["std"].fillna(0), marker="o", capsize=3, label=model
                )
            ax.set_xlabel(key)
            ax.set_ylabel(_label(metric))
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        files.append(_save(fig, f"sweep over {key}", out / f"sweep-{key}.png"))
    return files


def plot_bars(df: pd.DataFrame, out: Path) -> list[Path]:
    files = []
    agg = aggregate(df)
    for task, t in agg.groupby("task"):
        metrics = [m for m in t["metric"].unique() if direction(m) is not None]
        if not metrics:
            continue
        ncols = min(4, len(metrics))
        nrows = (len(metrics) + ncols - 1) // ncols
        fig, axes = plt.subplots(nrows, ncols, figsize=(3.8 * ncols, 3.6 * nrows), squeeze=False)
        for ax in axes.flat[len(metrics) :]:
            ax.set_visible(False)
        for ax, metric in zip(axes.flat, metrics, strict=False):
            m = t[t["metric"] == metric].sort_values(["model", "sweep"])
            names = [
                mo if s == "{}" else f"{mo}\n{s}"
                for mo, s in zip(m["model"], m["sweep"], strict=True)
            ]
            ax.bar(range(len(m)), m["mean"], yerr=m["std"], capsize=3, color="tab:blue")
            ax.set_xticks(range(len(m)), names, rotation=35, ha="right", fontsize=7)
            ax.set_title(_label(metric), fontsize=8)
            ax.grid(axis="y", alpha=0.3)
        files.append(_save(fig, f"{task}", out / f"bars-{str(task).replace('/', '_')}.png"))
    return files


def plot_distributions(samples: pd.DataFrame, out: Path) -> list[Path]:
    """`dist-<task>-<metric>.png`: the per-example scores of each model at its latest step,
    as overlaid density histograms (paper Fig. 8 for the synonym cosines)."""
    files = []
    for (task, metric), d in samples.groupby(["task", "metric"]):
        fig, ax = plt.subplots(figsize=(6, 4))
        for model, g in d.groupby("model"):
            last = g[g["step"].fillna(-1) == g["step"].fillna(-1).max()]
            mean = float(last["value"].mean())
            ax.hist(
                last["value"],
                bins=40,
                density=True,
                histtype="step",
                linewidth=1.5,
                label=f"{model} (mean {mean:.3f}, n={len(last)})",
            )
        ax.set_xlabel(_label(str(metric)))
        ax.set_ylabel("density")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        files.append(
            _save(
                fig,
                f"{task}: distribution of {metric}",
                out / f"dist-{str(task).replace('/', '_')}-{metric}.png",
            )
        )
    return files


def make_plots(df: pd.DataFrame, out: Path, samples: pd.DataFrame | None = None) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    if df.empty:
        return []
    dists = plot_distributions(samples, out) if samples is not None and not samples.empty else []
    return plot_curves(df, out) + plot_sweeps(df, out) + plot_bars(df, out) + dists
