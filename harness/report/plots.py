"""Figures from a leaderboard (PNG, PDF or SVG), where people would rather look than read.

- `curves-<task>-<metric>.png`: a metric along pretraining, vs tokens seen, training FLOPs
  and training seconds, one line per model (paper Figs. 3-5, 7), when rows at several steps
  exist;
- `sweep-<key>.png`: throughput, memory and quality vs a sweep key (vocab size, batch size),
  one line per model (paper Figs. 2, 6, 7);
- `bars-<task>.png`: each metric of a task per model (mean ± std over seeds, as the
  leaderboard's table shows them) otherwise;
- `dist-<task>-<metric>.png`: per-example scores, as density histograms where each model has
  many distinct values (paper Fig. 8), else as each seed's mean and the mean's 95 % interval
  over seeds (0/1 scores, a handful of values);
- `separation.png`: where a suite has untrained twins, each model's gap to its twin along
  pretraining on each instrument, with the gate's margin (`harness.report.separation`).

A task family with more than 12 sub-tasks (BLiMP's paradigms) gets figures of its overall
rows only; the sub-tasks stay in the leaderboard's tables.

Each model keeps one colour in every figure of a leaderboard (`palette`). A PNG is written
as a palette PNG (256 colours, about a third of the bytes of matplotlib's RGBA file: these
figures are committed beside the leaderboards); PDF and SVG carry no date; the same rows give
the same bytes. Perplexities are drawn on a log axis with plain tick labels (20, 30, not
2x10^1), and error bars get caps only where there is a spread (n > 1). Values that only
compare within an objective or a model kind (a CWT loss and a CE loss; MLM and CLM
perplexities) get one axis per group (`groups`), as the metric registry says; a causally
fine-tuned model's loss is a CE loss, whatever its pretraining objective. A trivial model's
score (the unigram model's perplexity) is flat along pretraining: it gets no curve.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from harness.report.distributions import plot_distributions
from harness.report.figures import (
    figure_path,
    groups,
    log_axis,
    measured_objective,
    metric_label,
    palette,
    save,
)
from harness.report.separation import plot_separation
from harness.results.fields import SweepPoint, point_order
from harness.results.leaderboard import aggregate, final_rows
from harness.results.metrics import direction, is_baseline, metric_info


def _finish_axis(ax: Axes, metric: str, xlabel: str, title: str = "") -> None:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(metric_label(metric))
    if metric_info(metric).log_scale:
        log_axis(ax)
    if title:
        ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)


def _caps(n: pd.Series) -> int:
    """Error-bar cap size: none when no point has a spread (one seed)."""
    return 3 if (n > 1).any() else 0


AXES = (
    ("tokens_seen", "tokens seen"),
    ("train_flops", "training FLOPs"),
    ("train_seconds", "training seconds"),
)


def plot_curves(
    df: pd.DataFrame,
    out: Path,
    colors: dict[str, Any] | None = None,
    formats: tuple[str, ...] = ("png",),
) -> list[Path]:
    """One figure per task and metric evaluated at several steps: the metric against tokens,
    FLOPs and training seconds, one line per model; one row of axes per comparable group.
    A trivial model's score (flat along pretraining) gets none."""
    files: list[Path] = []
    colors = colors or palette(df)
    steps = df.groupby(["model", "sweep", "task", "metric"])["step"].nunique().reset_index()
    along = steps[steps["step"] >= 2][["task", "metric"]].drop_duplicates()
    along = along[~along["metric"].map(is_baseline)]
    for task, metric in along.itertuples(index=False):
        rows = groups(df[(df["task"] == task) & (df["metric"] == metric)], str(metric))
        fig, axes = plt.subplots(len(rows), len(AXES), figsize=(15, 4 * len(rows)), squeeze=False)
        for row, (group, d) in zip(axes, rows, strict=True):
            _curve_row(row, d, str(metric), group, colors)
        title = f"{task}: {metric} along pretraining (mean over seeds)"
        files += save(fig, title, figure_path(out, "curves", task, metric), formats)
    return files


def _curve_row(
    row: list[Axes], d: pd.DataFrame, metric: str, group: str, colors: dict[str, Any]
) -> None:
    for (model, sweep), g in d.groupby(["model", "sweep"]):
        g = (
            g.groupby("step")
            .agg(value=("value", "mean"), **{c: (c, "first") for c, _ in AXES})
            .reset_index()
        )
        name = model if sweep in ("{}", "") else f"{model} {sweep}"
        for ax, (column, _) in zip(row, AXES, strict=True):
            ax.plot(g[column], g["value"], marker="o", label=name, color=colors[str(model)])
    for ax, (_, xlabel) in zip(row, AXES, strict=True):
        _finish_axis(ax, metric, xlabel, group)
    if (pd.to_numeric(d["train_flops"], errors="coerce") > 0).any():  # rows may record none
        log_axis(row[1], "x")
    row[0].legend(fontsize=8)


def _point_value(sweep_json: str, key: str) -> object:
    return SweepPoint.of(sweep_json).value(key)


def _grid(n: int, panel_inches: tuple[float, float]) -> tuple[Figure, list[Axes]]:
    """A figure of `n` panels, four to a row; the unused cells of the last row hidden."""
    ncols = min(4, n)
    nrows = (n + ncols - 1) // ncols
    w, h = panel_inches
    fig, axes = plt.subplots(nrows, ncols, figsize=(w * ncols, h * nrows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def _numeric_sweep(column: pd.Series) -> pd.Series:
    """Sort key: a sweep point by its values (8192 before 16384), other columns as they are."""
    if column.name != "sweep":
        return column
    return column.map(point_order)


def sweep_series(df: pd.DataFrame, key: str, metric: str) -> dict[str, pd.DataFrame]:
    """One line per model (never merged across models that share an objective): the mean and
    std over seeds of `metric` at each value `x` of sweep key `key` (final checkpoint)."""
    d = final_rows(df[df["metric"] == metric]).copy()
    d["x"] = [_point_value(s, key) for s in d["sweep"]]  # type: ignore[assignment]
    d = d[d["x"].notna()]
    return {
        str(model): g.groupby("x")["value"]
        .agg(["mean", "std", "count"])
        .rename(columns={"count": "n"})
        .reset_index()
        .sort_values("x")
        for model, g in d.groupby("model")
    }


def _sweep_panels(d: pd.DataFrame) -> list[tuple[str, str, pd.DataFrame]]:
    """(metric, title, rows) per task and metric: a metric is never averaged across tasks."""
    return [
        (str(metric), f"{task} · {group}" if group else str(task), g)
        for (task, metric), t in d.groupby(["task", "metric"], sort=True)
        if direction(str(metric)) is not None
        for group, g in groups(t, str(metric))
    ]


def plot_sweeps(
    df: pd.DataFrame,
    out: Path,
    colors: dict[str, Any] | None = None,
    formats: tuple[str, ...] = ("png",),
) -> list[Path]:
    """One figure per sweep key: a panel per task and metric (four to a row), a line per
    model over the key's values (mean and std over seeds at the final checkpoint)."""
    files: list[Path] = []
    colors = colors or palette(df)
    points = [SweepPoint.of(s).values for s in df["sweep"].unique()]
    keys = sorted({k for p in points for k in p if k not in ("objective", "preset")})
    for key in keys:
        panels = _sweep_panels(df[[_point_value(s, key) is not None for s in df["sweep"]]])
        if not panels:
            continue
        fig, axes = _grid(len(panels), (4.2, 3.8))
        for ax, (metric, title, g) in zip(axes, panels, strict=False):
            for model, line in sweep_series(g, key, metric).items():
                spread = line["n"] > 1
                ax.errorbar(
                    line["x"],
                    line["mean"],
                    yerr=line["std"].where(spread, 0).fillna(0),
                    marker="o",
                    capsize=_caps(line["n"]),
                    label=model,
                    color=colors[model],
                )
            _finish_axis(ax, metric, key, title)
            ax.legend(fontsize=8)
        title = f"sweep over {key} (mean ± std over seeds)"
        files += save(fig, title, figure_path(out, "sweep", key), formats)
    return files


def plot_bars(
    df: pd.DataFrame,
    out: Path,
    colors: dict[str, Any] | None = None,
    formats: tuple[str, ...] = ("png",),
) -> list[Path]:
    """One figure per task: each metric with a direction per model, mean ± std over seeds
    at the final checkpoint (the leaderboard table's statistic), each seed's value a dot."""
    files: list[Path] = []
    colors = colors or palette(df)
    agg = aggregate(df)
    presets = df.drop_duplicates("model").set_index("model")[["preset"]]
    agg = agg.join(presets, on="model")
    measured = measured_objective(df).groupby(df["model"]).first()  # a fine-tuned one's: ce
    agg["objective"] = agg["model"].map(measured)
    for task, t in agg.groupby("task"):
        panels = [
            (metric, group, g)
            for metric in t["metric"].unique()
            if direction(metric) is not None
            for group, g in groups(t[t["metric"] == metric], str(metric))
        ]
        if not panels:
            continue
        fig, axes = _grid(len(panels), (3.8, 3.6))
        for ax, (metric, group, m) in zip(axes, panels, strict=False):
            _bar_panel(
                ax,
                m.sort_values(["model", "sweep"], key=_numeric_sweep),
                str(metric),
                group,
                colors,
            )
        files += save(
            fig, f"{task} (mean ± std over seeds)", figure_path(out, "bars", task), formats
        )
    return files


def _bar_panel(ax: Axes, m: pd.DataFrame, metric: str, group: str, colors: dict[str, Any]) -> None:
    names = [
        mo if s == "{}" else f"{mo}\n{s}" for mo, s in zip(m["model"], m["sweep"], strict=True)
    ]
    spread = m["n"] > 1
    yerr = m["std"].where(spread, 0).fillna(0) if spread.any() else None
    colours = [colors[str(mo)] for mo in m["model"]]
    if metric_info(metric).log_scale:  # a bar from zero means nothing on a log axis: points
        for i, (mean, colour) in enumerate(zip(m["mean"], colours, strict=True)):
            err = None if yerr is None else [yerr.iloc[i]]
            ax.errorbar([i], [mean], yerr=err, fmt="o", color=colour, capsize=_caps(m["n"]))
        log_axis(ax)
    else:
        ax.bar(range(len(m)), m["mean"], yerr=yerr, capsize=_caps(m["n"]), color=colours)
    for i, seeds in enumerate(m["by_seed"]):  # each seed's value: the spread behind a mean
        values = list(seeds.values()) if isinstance(seeds, dict) else []
        if len(values) > 1:
            ax.plot([i] * len(values), values, ".", color="black", alpha=0.6, markersize=4)
    ax.set_xticks(range(len(m)), names, rotation=35, ha="right", fontsize=7)
    ax.set_xlim(-0.6, len(m) - 0.4)
    ax.set_title(metric_label(metric) + (f"\n{group}" if group else ""), fontsize=8)
    ax.grid(axis="y", alpha=0.3)


MAX_SUBTASKS = 12  # a family with more sub-tasks (BLiMP's 67 paradigms) is drawn whole only


def drawn_tasks(df: pd.DataFrame) -> pd.DataFrame:
    """The rows that get figures: a task family with more than `MAX_SUBTASKS` sub-tasks
    (`blimp/<paradigm>`) is drawn by its overall rows (`blimp`) alone; its sub-tasks stay in
    the leaderboard's tables."""
    family = df["task"].astype(str).str.split("/").str[0]
    subtask = df["task"].astype(str).str.contains("/")
    many = df[subtask].groupby(family[subtask])["task"].nunique()
    crowded = set(many[many > MAX_SUBTASKS].index)
    return df[~(subtask & family.isin(crowded))]


def make_plots(
    df: pd.DataFrame,
    out: Path,
    samples: pd.DataFrame | None = None,
    formats: tuple[str, ...] = ("png",),
) -> list[Path]:
    """Every figure of the rows (and per-example `samples`) into `out`, in each of
    `formats`: the comparisons first (bars, sweeps, curves), the distributions after."""
    out.mkdir(parents=True, exist_ok=True)
    every = df  # the separation figure reads sub-tasks by name (`probe/sst2/mean`)
    df = drawn_tasks(df)
    if df.empty:
        return []
    colors = palette(pd.concat([df[["model"]], samples[["model"]]]) if samples is not None else df)
    dists = (
        plot_distributions(samples, out, colors, formats, rows=final_rows(df))
        if samples is not None and not samples.empty
        else []
    )
    return (
        plot_bars(df, out, colors, formats)
        + plot_separation(every, out, formats)
        + plot_sweeps(df, out, colors, formats)
        + plot_curves(df, out, colors, formats)
        + dists
    )
