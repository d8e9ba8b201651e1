"""Every baseline against its gates, by the tokens it pretrained on, across the scales.

    gate_section(found)                                  # the page's section, Markdown lines
    write_gate_figure(found, docs / "figures" / "gates.svg")   # what `hlm report --paper` does

A claim is tested only where its baseline (the vanilla model; for a comparison of two headless
variants, the paper's) passes the gates its task declares (`harness.results.gates`). Each
claim's row says which failed; this puts them side by side: each baseline's gates once per
suite (its final checkpoint, the mean over its seeds), with the tokens that checkpoint
pretrained on and the margin (`GateCheck.margin`: the value minus the bar in the metric's
unit; for a perplexity, log10 of the bar over the value). Drawn one panel per gate, tokens
on a log axis, it shows whether a larger pretraining has moved a model toward its bar: what
the next scale must buy.

The SVG keeps its text as text and carries no date, so a rerun over the same rows writes the
same bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, NullFormatter

from harness.paper.findings import Finding
from harness.paper.forest import svg_bytes, svg_style, write_svg
from harness.paper.tables import num, table
from harness.results.gates import GateCheck

GATES_FIGURE = Path("figures/gates.svg")  # beside the page, by `write_reproduction`
COLUMNS = ["gate", "scale", "rows", "baseline", "tokens", "value", "bar", "margin", ""]
PANEL_COLUMNS = 4
SCALE_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2"]


@dataclass(frozen=True)
class GatePoint:
    """One baseline's gate in one suite's rows: the check and the tokens behind it."""

    scale: str
    suite: str
    model: str
    tokens: float  # nan where the rows record none
    check: GateCheck


def gate_points(found: list[Finding]) -> list[GatePoint]:
    """Each (suite, baseline, gate) once, with a value, ordered by gate, then tokens. The
    findings of one baseline in one suite share its gates: the first one read is kept."""
    seen: dict[tuple[str, str, str], GatePoint] = {}
    for f in found:
        model, suite = f.source.roles["vanilla"], f.source.board
        for g in f.gates:
            if g.name and not math.isnan(g.value):
                point = GatePoint(f.scale, suite, model, f.vanilla_tokens, g)
                seen.setdefault((suite, model, g.name), point)
    return sorted(seen.values(), key=lambda p: (p.check.name, _tokens_key(p), p.suite))


def _tokens_key(p: GatePoint) -> float:
    return math.inf if math.isnan(p.tokens) else p.tokens


def _tokens(tokens: float) -> str:
    return "-" if math.isnan(tokens) else f"{tokens / 1e6:.1f}M"


def _margin(check: GateCheck) -> str:
    unit = " (orders of magnitude)" if check.at_most else ""
    return f"{check.margin:+.3g}{unit}"


def _row(p: GatePoint) -> list[str]:
    c = p.check
    state = "passed" if c.passed else "failed"
    return [
        c.name,
        p.scale,
        f"`{p.suite}`",
        f"`{p.model}`",
        _tokens(p.tokens),
        num(c.value) + (f" [{num(c.interval[0])}, {num(c.interval[1])}]" if c.interval else ""),
        num(c.bar),
        _margin(c),
        state,
    ]


def gate_section(found: list[Finding]) -> list[str]:
    """The page's section: the figure and the table; [] where no baseline has a gate with a
    value."""
    points = gate_points(found)
    if not points:
        return []
    failed = sum(not p.check.passed for p in points)
    lead = (
        "Each baseline's gates at its final checkpoint: the mean over its seeds, with its 95 % "
        "interval, by the tokens it pretrained on. A gate passes where the mean and the "
        "interval's far end clear the bar; a claim is tested only there. The margin is the "
        "value minus the bar (for a perplexity, log10 of the bar over the value); below 0 the "
        "gate fails. "
        f"{failed} of {len(points)} fail. A bar set by an untrained twin is its suite's own."
    )
    alt = "Each baseline's margin to its gates, by pretraining tokens"
    return [
        "",
        "## Every baseline's gates, across the scales",
        "",
        lead,
        "",
        f"![{alt}]({GATES_FIGURE.as_posix()})",
        "",
        table(COLUMNS, [_row(p) for p in points]),
    ]


def _colours(found: list[Finding], points: list[GatePoint]) -> dict[str, str]:
    """A colour per scale with a point, in the findings' order of scales."""
    names = [s for s in dict.fromkeys(f.scale for f in found) if any(p.scale == s for p in points)]
    return {name: SCALE_COLOURS[i % len(SCALE_COLOURS)] for i, name in enumerate(names)}


def _millions(x: float, _: object) -> str:
    return f"{x / 1e6:g}M"


def _span(points: list[GatePoint]) -> tuple[float, float]:
    """The tokens axis every panel shares: the points' range, widened a little (log)."""
    drawn = [p.tokens for p in points if p.tokens > 0]
    if not drawn:
        return 1e6, 1e9
    return min(drawn) / 1.6, max(drawn) * 1.6


def _panel(ax: Axes, name: str, points: list[GatePoint], colours: dict[str, str]) -> None:
    for p in points:
        x = p.tokens if p.tokens > 0 else math.nan  # no tokens recorded: not drawn
        marker = "o" if p.check.passed else "x"
        ax.plot(x, p.check.margin, marker, color=colours[p.scale], ms=6)
        ax.annotate(p.model, (x, p.check.margin), xytext=(4, 3), textcoords="offset points", size=6)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(_millions))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_title(name, loc="left", size=8)
    unit = "log10(bar / value)" if points[0].check.at_most else "value − bar"
    ax.set_ylabel(unit, size=7)
    ax.grid(color="#dddddd", lw=0.5)


def gates_svg(found: list[Finding]) -> bytes | None:
    """The gates' margins drawn as SVG, a panel per gate; None where there is none."""
    points = gate_points(found)
    names = sorted({p.check.name for p in points})
    if not names:
        return None
    colours = _colours(found, points)
    rows = math.ceil(len(names) / PANEL_COLUMNS)
    cols = min(PANEL_COLUMNS, len(names))
    with svg_style(font_size=7):
        fig, axes = plt.subplots(
            rows,
            cols,
            sharex=True,
            figsize=(3.2 * cols, 2.4 * rows + 0.8),
            squeeze=False,
            layout="constrained",
        )
        for ax, name in zip(axes.flat, names, strict=False):
            _panel(ax, name, [p for p in points if p.check.name == name], colours)
            ax.xaxis.set_tick_params(labelbottom=True)
        axes[0, 0].set_xlim(*_span(points))
        for ax in list(axes.flat)[len(names) :]:
            ax.set_visible(False)
        handles = [
            Line2D([], [], color=c, marker="o", lw=0, label=f"{s} scale")
            for s, c in colours.items()
        ]
        handles += [Line2D([], [], color="grey", marker="x", lw=0, label="failed")]
        fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), frameon=False)
        fig.suptitle(
            "The baselines' margins to their gates (0: the bar; below: failed), by the tokens "
            "each pretrained on (log axis)"
        )
        return svg_bytes(fig)


def write_gate_figure(found: list[Finding], path: Path) -> Path | None:
    """`gates_svg` into `path`; None, and nothing written, where there is no gate to draw."""
    return write_svg(gates_svg(found), path)
