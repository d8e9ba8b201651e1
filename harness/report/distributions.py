"""Per-example scores as figures (`dist-<task>-<metric>`): density histograms where every model
has many distinct values (paper Fig. 8's synonym cosines), else each seed's mean over the
examples and the 95 % t interval of their mean over seeds (0/1 scores, a handful of values),
the pretraining seed being the unit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib import pyplot as plt
from matplotlib.axes import Axes

from harness.report.figures import figure_path, groups, metric_label, palette, save


def plot_distributions(
    samples: pd.DataFrame,
    out: Path,
    colors: dict[str, Any] | None = None,
    formats: tuple[str, ...] = ("png",),
    rows: pd.DataFrame | None = None,
) -> list[Path]:
    """`dist-<task>-<metric>`: the per-example scores of each model at its latest step. As
    overlaid density histograms where every model has many distinct values (paper Fig. 8's
    synonym cosines); else (0/1 scores, a handful of values) as each seed's mean and the
    mean's 95 % t interval over seeds, the seed being the unit. With the leaderboard's `rows`,
    values that compare only within a group (`figures.groups`) get a panel per group."""
    files: list[Path] = []
    colors = colors or palette(samples)
    for (task, metric), d in samples.groupby(["task", "metric"]):
        last = d.groupby("model", group_keys=False)[list(d.columns)].apply(_latest)
        panels = _panels(last, str(metric), rows)
        fig, axes = plt.subplots(len(panels), 1, figsize=(6, 1.2 + 2.8 * len(panels)))
        many = last.groupby("model")["value"].nunique().min() >= MANY_VALUES
        for ax, (group, g) in zip(np.atleast_1d(axes), panels, strict=True):
            (_histograms if many else _seed_intervals)(ax, g, str(metric), colors)
            if group:
                ax.set_title(f"{ax.get_title()}\n{group}".strip(), fontsize=8)
        how = "distribution" if many else "per-example mean by seed"
        path = figure_path(out, "dist", task, metric)
        files += save(fig, f"{task}: {how} of {metric}", path, formats)
    return files


def _panels(d: pd.DataFrame, metric: str, rows: pd.DataFrame | None) -> list[tuple[str, Any]]:
    """The samples split by the groups their models' rows compare within; one panel where
    the rows are not given."""
    if rows is None or rows.empty:
        return [("", d)]
    known = rows.drop_duplicates("model").set_index("model")[["preset", "objective", "config"]]
    joined = d.join(known, on="model")
    return [(group, g) for group, g in groups(joined, metric)]


MANY_VALUES = 30  # distinct values a model needs before a histogram says more than points


def _latest(g: pd.DataFrame) -> pd.DataFrame:
    step = g["step"].fillna(-1)
    return g[step == step.max()]


def _histograms(ax: Axes, d: pd.DataFrame, metric: str, colors: dict[str, Any]) -> None:
    for model, g in d.groupby("model"):
        ax.hist(
            g["value"],
            bins=40,
            density=True,
            histtype="step",
            linewidth=1.5,
            label=f"{model} (mean {g['value'].mean():.3f}, n={len(g)})",
            color=colors[str(model)],
        )
    ax.set_xlabel(metric_label(metric))
    ax.set_ylabel("density")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)


def _seed_intervals(ax: Axes, d: pd.DataFrame, metric: str, colors: dict[str, Any]) -> None:
    """A row per model: each seed's mean over the examples (dots), and the mean of those
    with its 95 % t interval over seeds (a bar; none with one seed)."""
    from harness.results.stats import differences, magnitude

    models = sorted(d["model"].unique())
    for i, model in enumerate(models):
        seeds = d[d["model"] == model].groupby("seed")["value"].mean()
        colour = colors[str(model)]
        ax.plot(seeds, [i] * len(seeds), "o", color=colour, alpha=0.5, markersize=5)
        c = differences(seeds.to_numpy(), "seeds", magnitude(seeds))
        if c.low == c.low:  # an interval: two seeds or more, with a spread
            ax.errorbar([c.delta], [i], xerr=[[c.delta - c.low], [c.high - c.delta]],
                        fmt="D", color=colour, capsize=4, markersize=7)  # fmt: skip
        else:
            ax.plot([c.delta], [i], "D", color=colour, markersize=7)
    ax.set_yticks(range(len(models)), [str(m) for m in models], fontsize=8)
    ax.set_ylim(-0.6, len(models) - 0.4)
    ax.set_xlabel(metric_label(metric) + ": mean over examples")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title("dots: seeds; diamond: their mean, 95 % interval over seeds", fontsize=8)
