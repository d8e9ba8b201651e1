"""The verdicts in one picture: each judged claim's Δ in units of the paper's Δ.

    write_forest(found, docs / "figures" / "verdicts.svg")   # what `hlm report --paper` does

A claim is drawn where it has a verdict other than *not comparable*, or was declared after its
rows (exploratory: a hollow square, its raw 95 % interval), and the paper gives its Δ
(`Finding.paper_effect`). Its point is our Δ divided by the paper's, and its bar the interval at
the corrected level divided likewise. So 1 is the paper's effect, 0 is none, and below 0 is the
opposite direction. The ratio is unit-free, so GLUE points, log-perplexities and speed ratios
share one axis. Ratios beyond ±`EDGE` sit on the edge as an arrow, with their value written
beside it. Perplexities of barely trained decoders land there. One panel per scale; the colour
says which arm our rows favour (headless better or worse), a filled point that the corrected
test agrees (reproduced or contradicted), a hollow one that it is inconclusive.

The SVG keeps its text as text and carries no date, so a rerun over the same rows writes the
same bytes.
"""

from __future__ import annotations

import io
import math
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from harness.paper.findings import Finding
from zoo.writer import write_bytes

EDGE = 5.0  # ratios beyond ±EDGE are drawn on the edge, their value written
# the colour says which arm our rows favour; a filled point, that the corrected test agrees
COLOURS = {"headless better": "#1b7837", "headless worse": "#b2182b"}
ROW_INCHES = 0.24


@dataclass(frozen=True)
class Point:
    """One claim as drawn: its label, verdict and Δ / paper Δ with the interval's ends."""

    label: str
    verdict: str
    ratio: float
    low: float  # nan where the comparison has no interval (one measurement, no spread)
    high: float
    better: bool = True  # our Δ favours the headless arm

    @property
    def colour(self) -> str:
        return COLOURS["headless better" if self.better else "headless worse"]

    @property
    def significant(self) -> bool:
        """The corrected test agrees (reproduced or contradicted): drawn filled."""
        return self.verdict in ("reproduced", "contradicted")


def _judged(f: Finding) -> bool:
    """A claim with a verdict other than not comparable."""
    return f.figure.compared and f.verdict not in (None, "not comparable")


def _late(f: Finding) -> bool:
    """A claim declared after its rows, compared but judged exploratory."""
    return f.late and f.blocked is None


def point(f: Finding) -> Point | None:
    """`f` as a point of the figure; None where it is not drawn (no verdict and not declared
    late, not comparable, or no Δ in the paper)."""
    effect = f.paper_effect
    if not (_judged(f) or _late(f)) or not effect or math.isnan(f.gain):
        return None
    ends = sorted(x / effect for x in f.interval)  # dividing by a negative Δ swaps them
    quantity = f.figure.quantity.split(" (")[0]
    label = f"{f.figure.claim}: {quantity} [{f.role}]"  # the claim's group names the budget
    verdict = "exploratory" if f.verdict is None else str(f.verdict)
    return Point(label, verdict, f.gain / effect, ends[0], ends[1], f.gain > 0)


def panels(found: list[Finding]) -> list[tuple[str, list[Point]]]:
    """(scale, its points) for every scale with a point, in the findings' order of scales."""
    out = []
    for scale in dict.fromkeys(f.scale for f in found):
        points = [p for f in found if f.scale == scale and (p := point(f)) is not None]
        if points:
            out.append((scale, points))
    return out


def left_out(found: list[Finding]) -> int:
    """The claims with a verdict other than not comparable (or declared late) that are not
    drawn: the paper gives no Δ for them (a figure it only draws, or a stated trend)."""
    return sum((_judged(f) or _late(f)) and point(f) is None for f in found)


def _clip(x: float) -> float:
    return max(-EDGE, min(EDGE, x))


def _draw_point(ax: Axes, y: int, p: Point) -> None:
    colour, face = p.colour, p.colour if p.significant else "white"
    if not math.isnan(p.low):
        ax.plot([_clip(p.low), _clip(p.high)], [y, y], color=colour, lw=1.6)
    if abs(p.ratio) <= EDGE:
        marker = "s" if p.verdict == "exploratory" else "o"
        ax.plot(p.ratio, y, marker, color=colour, mfc=face, ms=5)
        return
    marker, side, align = (">", -0.15, "right") if p.ratio > 0 else ("<", 0.15, "left")
    ax.plot(_clip(p.ratio), y, marker, color=colour, mfc=face, ms=7)
    ax.annotate(f"{p.ratio:.3g}", (_clip(p.ratio) + side, y), va="center", ha=align, size=7)


def _panel(ax: Axes, scale: str, points: list[Point]) -> None:
    for y, p in enumerate(reversed(points)):
        _draw_point(ax, y, p)
    ax.axvline(0, color="black", lw=0.8)
    ax.axvline(1, color="black", lw=0.8, ls="--")
    ax.set_yticks(range(len(points)), [p.label for p in reversed(points)])
    ax.set_ylim(-0.7, len(points) - 0.3)
    ax.set_xlim(-EDGE - 0.3, EDGE + 0.3)
    ax.set_xticks(range(-int(EDGE), int(EDGE) + 1))
    ax.set_title(f"at {scale} scale", loc="left", size=9)
    ax.grid(axis="x", color="#dddddd", lw=0.5)


def _legend(fig: Figure) -> None:
    handles = [Line2D([], [], color=c, marker="o", lw=1.6, label=v) for v, c in COLOURS.items()]
    handles += [
        Line2D([], [], color="black", marker="o", lw=0, label="significant after correction"),
        Line2D([], [], color="black", marker="o", mfc="white", lw=0, label="inconclusive"),
        Line2D(
            [],
            [],
            color="black",
            marker="s",
            mfc="white",
            lw=0,
            label="exploratory: declared after its rows (95 %)",
        ),
        Line2D([], [], color="black", lw=0.8, ls="--", label="the paper's Δ (1)"),
        Line2D([], [], color="black", lw=0.8, label="no difference (0)"),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=4, frameon=False)


def forest_svg(found: list[Finding]) -> bytes | None:
    """The judged claims of every scale drawn as SVG; None where no claim can be drawn."""
    drawn = panels(found)
    if not drawn:
        return None
    with svg_style(font_size=8):
        fig, axes = stacked_panels([len(points) + 1.2 for _, points in drawn], 10, 1.4, True)
        for ax, (scale, points) in zip(axes, drawn, strict=True):
            _panel(ax, scale, points)
        _legend(fig)
        axes[-1].set_xlabel(
            f"our Δ ÷ the paper's Δ, its interval likewise (beyond ±{EDGE:g}: an arrow, its value)"
        )
        fig.suptitle("The paper's claims we compare: our effect in units of the paper's")
        return svg_bytes(fig)


def stacked_panels(
    rows: list[float], width: float, margin: float, sharex: bool
) -> tuple[Figure, list[Axes]]:
    """A figure of panels one above the other, each as tall as its `rows` (in rows of
    `ROW_INCHES`), plus `margin` inches for the titles and legend."""
    fig, axes = plt.subplots(
        len(rows),
        1,
        sharex=sharex,
        figsize=(width, margin + ROW_INCHES * sum(rows)),
        gridspec_kw={"height_ratios": rows},
        squeeze=False,
        layout="constrained",
    )
    return fig, list(axes[:, 0])


def svg_style(font_size: float) -> AbstractContextManager[None]:
    """Matplotlib's settings for the page's figures: text kept as text, element ids salted,
    so that (with `svg_bytes`) the same rows give the same bytes."""
    return plt.rc_context(
        {"svg.fonttype": "none", "svg.hashsalt": "headless-zoo", "font.size": font_size}
    )


def svg_bytes(fig: Figure) -> bytes:
    """`fig` as SVG with no date, closed after (drawn under `svg_style`)."""
    out = io.BytesIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    plt.close(fig)
    return out.getvalue()


def write_svg(svg: bytes | None, path: Path) -> Path | None:
    """`svg` into `path`; None, and nothing written, where there is no figure."""
    if svg is None:
        return None
    return write_bytes(path, svg)


def write_forest(found: list[Finding], path: Path) -> Path | None:
    """`forest_svg` into `path`; None, and nothing written, where no claim can be drawn."""
    return write_svg(forest_svg(found), path)
