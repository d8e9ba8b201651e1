"""What every figure of a leaderboard shares: one colour per model (`palette`), metric labels
with their unit and direction, the groups whose values share an axis (`groups`: a CWT loss
never beside a CE loss), log axes with plain tick labels, and the writer that saves a
figure in each format asked (PNG as a 256-colour palette image, PDF and SVG without a date,
so the same rows give the same bytes)."""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter
from PIL import Image

from harness.results.fields import cell_config
from harness.results.leaderboard import preset_kind
from harness.results.metrics import METRICS, metric_info
from zoo.writer import inside, replacing

plt.rcParams["svg.hashsalt"] = "headless-zoo"  # the same figure, the same SVG ids
METADATA = {"pdf": {"CreationDate": None, "ModDate": None}, "svg": {"Date": None}}


def save(fig: Figure, title: str, path: Path, formats: tuple[str, ...] = ("png",)) -> list[Path]:
    """Title, lay out, write (one file per format, `path` with its suffix) and close a
    figure; the files."""
    inch = 1 / fig.get_figheight()
    fig.suptitle(title, y=1 - 0.08 * inch, va="top")
    fig.tight_layout()
    fig.subplots_adjust(top=1 - 0.65 * inch)  # the title's band above the panels' titles
    files = []
    for fmt in formats:
        target = path.with_suffix(f".{fmt}")
        if fmt == "png":
            rgba = io.BytesIO()
            fig.savefig(rgba, format="png", dpi=110)
            with Image.open(rgba) as image, replacing(target) as tmp:  # on white: 256 colours
                image.convert("RGB").quantize(256).save(tmp, format="PNG", optimize=True)
        else:
            with replacing(target) as tmp:
                fig.savefig(tmp, format=fmt, metadata=METADATA[fmt])
        files.append(target)
    plt.close(fig)
    return files


def figure_path(out: Path, kind: str, *names: object) -> Path:
    """The figure's file in `out`: `KIND-NAME-...png` (another format: its suffix), its
    names (a task, a metric, a sweep key: data) with '/' as '_', one file name that stays in
    `out` (`zoo.writer.inside`)."""
    name = "-".join([kind, *(str(n).replace("/", "_") for n in names)]) + ".png"
    return inside(out, name, what="plot")


def plain(value: float, _: object = None) -> str:
    """A log axis's tick as a plain number (20, 0.5, 1e+06), never `2x10^1`."""
    return f"{value:g}"


def log_axis(ax: Axes, axis: str = "y") -> None:
    """A log axis with plain tick labels; where it spans less than a decade, the minor ticks
    at 2, 3 and 5 times a power of ten are labelled too (a perplexity from 17 to 45 shows
    20 and 30; FLOPs from 4e11 to 1.3e12 show 5e+11 and 1e+12), and under 2x every minor
    tick (124 to 134 shows 124, 126, ...)."""
    target = ax.yaxis if axis == "y" else ax.xaxis
    (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
    target.set_major_formatter(FuncFormatter(plain))
    low, high = ax.get_ylim() if axis == "y" else ax.get_xlim()
    ratio = high / low if low > 0 else math.inf
    # under 2x, matplotlib spaces the minor ticks as a linear axis: each keeps its label
    label = plain if ratio < 2 else _minor if ratio < 10 else (lambda *_: "")
    target.set_minor_formatter(FuncFormatter(label))


def _minor(value: float, _: object = None) -> str:
    """A minor tick's label: at 2, 3 or 5 times a power of ten, else none."""
    lead = f"{value:e}"[0]
    return plain(value) if lead in "235" else ""


def metric_label(metric: str) -> str:
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
    key = kind if scope == "kind" else kind + " · " + measured_objective(d)
    return [(str(k), g) for k, g in d.groupby(key, sort=True)]


def measured_objective(d: pd.DataFrame) -> pd.Series:
    """The loss each row's value is of: a causally fine-tuned model's is CE (its new head),
    whatever objective pretrained it; other rows', their objective."""
    if "config" not in d.columns:  # aggregated rows: `plot_bars` set it from the rows
        return d["objective"].astype(str)
    tuned = d["config"].map(lambda c: isinstance(c, str) and cell_config(c).finetune_causal)
    return d["objective"].astype(str).where(~tuned.astype(bool), "ce")
