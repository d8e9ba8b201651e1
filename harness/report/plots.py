"""PNG figures from a leaderboard, where people would rather look than read.

- `curves-<task>-<metric>.png`: a metric along pretraining, vs tokens seen, training FLOPs
  and training seconds, one line per model (paper Figs. 3-5, 7), when rows at several steps
  exist;
- `sweep-<key>.png`: throughput, memory and quality vs a sweep key (vocab size, batch size),
  one line per model (paper Figs. 2, 6, 7);
- `bars-<task>.png`: each metric of a task per model (mean ± std over seeds) otherwise.

Each model keeps one colour in every figure of a leaderboard (`palette`). A figure is written
as a palette PNG (256 colours, about a third of the bytes of matplotlib's RGBA file: these
figures are committed beside the leaderboards), the same rows giving the same bytes.
Perplexities are drawn on a log axis, and error bars get caps only where there is a spread
(n > 1). Values that only compare within an objective or a model kind (a CWT loss and a CE
loss; MLM and CLM perplexities) get one axis per group (`groups`), as the metric registry says.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from PIL import Image

from harness.results.fields import SweepPoint, point_order
from harness.results.leaderboard import aggregate, final_rows, preset_kind
from harness.results.metrics import METRICS, direction, metric_info
from zoo.writer import inside, replacing


def _save(fig: Figure, title: str, path: Path) -> Path:
    """Title, lay out, write and close a figure; its path."""
    inch = 1 / fig.get_figheight()
    fig.suptitle(title, y=1 - 0.08 * inch, va="top")
    fig.tight_layout()
    fig.subplots_adjust(top=1 - 0.65 * inch)  # the title's band above the panels' titles
    rgba = io.BytesIO()
    fig.savefig(rgba, format="png", dpi=110)
    plt.close(fig)
    with Image.open(rgba) as image, replacing(path) as tmp:  # on white: 256 colours do
        image.convert("RGB").quantize(256).save(tmp, format="PNG", optimize=True)
    return path


def _png(out: Path, kind: str, *names: object) -> Path:
    """The figure's file in `out`: `KIND-NAME-...png`, its names (a task, a metric, a sweep
    key: data) with '/' as '_', one file name that stays in `out` (`zoo.writer.inside`)."""
    name = "-".join([kind, *(str(n).replace("/", "_") for n in names)]) + ".png"
    return inside(out, name, what="plot")


def _label(metric: str) -> str:
    if metric in METRICS:
        m = METRICS.get(metric)
        arrow = {True: " (higher is better)", False: " (lower is better)", None: ""}[
            m.higher_is_better
        ]
        return f"{metric} [{m.unit}]{arrow}" if m.unit else f"{metric}{arrow}"
    return metric


def palette(df: pd.DataFrame) -> dict[str, Any]:
    """One colour per model label of the leaderboard, the same in every figure."""
    models = sorted(str(m) for m in df["model"].unique())
    cmap = plt.get_cmap("tab10" if len(models) <= 10 else "tab20")
    return {m: cmap(i % cmap.N) for i, m in enumerate(models)}


def _kind(preset: object) -> str:
    """The kind a plot groups a preset under: encoder, decoder, or "model" where unknown."""
    kind = preset_kind(preset)
    return kind if kind is not None else "model"


def groups(d: pd.DataFrame, metric: str) -> list[tuple[str, pd.DataFrame]]:
    """The rows of one metric split by what its values compare within (`Metric.comparable`):
    [("", all rows)], or one ("decoder · cwt", rows) per kind (and objective)."""
    scope = metric_info(metric).comparable
    if scope == "all" or d.empty:
        return [("", d)]
    kind = d["preset"].map({p: _kind(p) for p in d["preset"].unique()})
    key = kind if scope == "kind" else kind + " · " + d["objective"].astype(str)
    return [(str(k), g) for k, g in d.groupby(key, sort=True)]


def _finish_axis(ax: Axes, metric: str, xlabel: str, title: str = "") -> None:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(_label(metric))
    if metric_info(metric).log_scale:
        ax.set_yscale("log")
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


def plot_curves(df: pd.DataFrame, out: Path, colors: dict[str, Any] | None = None) -> list[Path]:
    """One figure per task and metric evaluated at several steps: the metric against tokens,
    FLOPs and training seconds, one line per model; one row of axes per comparable group."""
    files, colors = [], colors or palette(df)
    steps = df.groupby(["model", "sweep", "task", "metric"])["step"].nunique().reset_index()
    along = steps[steps["step"] >= 2][["task", "metric"]].drop_duplicates()
    for task, metric in along.itertuples(index=False):
        rows = groups(df[(df["task"] == task) & (df["metric"] == metric)], str(metric))
        fig, axes = plt.subplots(len(rows), len(AXES), figsize=(15, 4 * len(rows)), squeeze=False)
        for row, (group, d) in zip(axes, rows, strict=True):
            _curve_row(row, d, str(metric), group, colors)
        files.append(
            _save(
                fig,
                f"{task}: {metric} along pretraining",
                _png(out, "curves", task, metric),
            )
        )
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
        row[1].set_xscale("log")
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


def plot_sweeps(df: pd.DataFrame, out: Path, colors: dict[str, Any] | None = None) -> list[Path]:
    """One figure per sweep key: a panel per task and metric (four to a row), a line per
    model over the key's values (mean and std over seeds at the final checkpoint)."""
    files, colors = [], colors or palette(df)
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
        files.append(_save(fig, f"sweep over {key}", _png(out, "sweep", key)))
    return files


def plot_bars(df: pd.DataFrame, out: Path, colors: dict[str, Any] | None = None) -> list[Path]:
    files, colors = [], colors or palette(df)
    agg = aggregate(df)
    presets = df.drop_duplicates("model").set_index("model")[["preset"]]
    agg = agg.join(presets, on="model")  # aggregate() carries the objective already
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
        files.append(_save(fig, f"{task}", _png(out, "bars", task)))
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
        ax.set_yscale("log")
    else:
        ax.bar(range(len(m)), m["mean"], yerr=yerr, capsize=_caps(m["n"]), color=colours)
    ax.set_xticks(range(len(m)), names, rotation=35, ha="right", fontsize=7)
    ax.set_xlim(-0.6, len(m) - 0.4)
    ax.set_title(_label(metric) + (f"\n{group}" if group else ""), fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def plot_distributions(
    samples: pd.DataFrame, out: Path, colors: dict[str, Any] | None = None
) -> list[Path]:
    """`dist-<task>-<metric>.png`: the per-example scores of each model at its latest step,
    as overlaid density histograms (paper Fig. 8 for the synonym cosines)."""
    files, colors = [], colors or palette(samples)
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
                color=colors[str(model)],
            )
        ax.set_xlabel(_label(str(metric)))
        ax.set_ylabel("density")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        files.append(
            _save(
                fig,
                f"{task}: distribution of {metric}",
                _png(out, "dist", task, metric),
            )
        )
    return files


def make_plots(df: pd.DataFrame, out: Path, samples: pd.DataFrame | None = None) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    if df.empty:
        return []
    colors = palette(pd.concat([df[["model"]], samples[["model"]]]) if samples is not None else df)
    dists = (
        plot_distributions(samples, out, colors)
        if samples is not None and not samples.empty
        else []
    )
    return (
        plot_curves(df, out, colors)
        + plot_sweeps(df, out, colors)
        + plot_bars(df, out, colors)
        + dists
    )
