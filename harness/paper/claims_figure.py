"""A claims file's answers in one picture: each claim's Δ and interval, in its own unit.

    write_claims_figure(found, Path("leaderboards/cpu-operating-point-claims.svg"))

The paper's figure (`harness.paper.forest`) divides our Δ by the paper's; our own questions
have no paper Δ, so each is drawn in its metric's unit, one panel per metric (accuracy, F1,
Pearson, a speed ratio). A claim's point is how much better its arm is than its baseline
(positive: better, whatever the metric's direction), its bar the interval at the corrected
level (95 % for an exploratory one). A filled circle: the corrected test decided; hollow:
inconclusive; a hollow square: exploratory; grey: compared but untestable (a gate of the
baseline failed), the cause in its label. Claims with no Δ (not run) are left out: the
page's table lists them. The SVG keeps text as text and carries no date, so the same rows
write the same bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from harness.paper.comparable import cause
from harness.paper.findings import Finding
from harness.paper.forest import stacked_panels, svg_bytes, svg_style, write_svg

COLOURS = {"arm better": "#1b7837", "arm worse": "#b2182b"}
SIDES = {True: "arm better", False: "arm worse"}
UNTESTABLE = "#999999"  # compared, but a gate of the baseline failed: no test


@dataclass(frozen=True)
class Bar:
    """One claim as drawn: its label (its id, and why it is untestable where it is), Δ
    (positive: the arm better) and interval."""

    label: str
    gain: float
    low: float  # nan where there is no interval (one seed, no spread)
    high: float
    decided: bool  # the corrected test agrees (reproduced or contradicted)
    exploratory: bool
    untestable: bool = False  # compared but not tested (a gate failed): grey


def bar(f: Finding) -> Bar | None:
    """`f` as drawn; None where it has no Δ (an arm not run: no comparison)."""
    if math.isnan(f.gain):
        return None
    untestable = f.blocked is not None
    low, high = f.interval
    return Bar(
        f.figure.ident + (f" ({cause(f.blocked)})" if untestable else ""),
        f.gain,
        low,
        high,
        decided=f.verdict in ("reproduced", "contradicted"),
        exploratory=f.verdict is None,
        untestable=untestable,
    )


def by_metric(found: list[Finding]) -> list[tuple[str, list[Bar]]]:
    """(metric, its bars) per metric with a bar, in the file's order of claims."""
    out = []
    for metric in dict.fromkeys(f.source.metric for f in found):
        bars = [b for f in found if f.source.metric == metric and (b := bar(f)) is not None]
        if bars:
            out.append((metric, bars))
    return out


def _panel(ax: Axes, metric: str, bars: list[Bar]) -> None:
    for y, b in enumerate(reversed(bars)):
        colour = UNTESTABLE if b.untestable else COLOURS[SIDES[b.gain > 0]]
        if not math.isnan(b.low):
            ax.plot([b.low, b.high], [y, y], color=colour, lw=1.6)
        face = colour if b.decided else "white"
        ax.plot(b.gain, y, "s" if b.exploratory else "o", color=colour, mfc=face, ms=5)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(bars)), [b.label for b in reversed(bars)])
    ax.set_ylim(-0.7, len(bars) - 0.3)
    ax.set_title(metric, loc="left", size=9)
    ax.xaxis.set_major_locator(MaxNLocator(7))
    ax.grid(axis="x", color="#dddddd", lw=0.5)


def claims_svg(found: list[Finding], title: str) -> bytes | None:
    """The claims with a Δ drawn as SVG; None where none has one."""
    drawn = by_metric(found)
    if not drawn:
        return None
    with svg_style(font_size=8):
        fig, axes = stacked_panels([len(bars) + 1.4 for _, bars in drawn], 9, 1.2, False)
        for ax, (metric, bars) in zip(axes, drawn, strict=True):
            _panel(ax, metric, bars)
        handles = [
            Line2D([], [], color=c, marker="o", lw=1.6, label=side) for side, c in COLOURS.items()
        ]
        handles += [
            Line2D([], [], color=UNTESTABLE, marker="o", mfc="white", lw=1.6, label="untestable"),
            Line2D([], [], color="black", marker="o", lw=0, label="decided after correction"),
            Line2D([], [], color="black", marker="o", mfc="white", lw=0, label="inconclusive"),
            Line2D(
                [], [], color="black", marker="s", mfc="white", lw=0, label="exploratory (95 %)"
            ),
        ]
        fig.legend(handles=handles, loc="outside lower center", ncol=3, frameon=False)
        fig.suptitle(title)
        return svg_bytes(fig)


def write_claims_figure(found: list[Finding], path: Path, title: str) -> Path | None:
    """`claims_svg` into `path`; None, and nothing written, where no claim has a Δ."""
    return write_svg(claims_svg(found, title), path)
