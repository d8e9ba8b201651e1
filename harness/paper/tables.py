"""The page's Markdown tables of `hlm report --paper`: the number format every table shares,
ditto marks for repeated cells, the power table (per inconclusive claim: the spread, the Δ
the seeds detect, the power at the paper's Δ, alone and at the corrected level) and the
paper's results not attempted.

    num(0.0123, percent=True)    # "1.23": the paper's unit
    table(["a", "b"], [["1", "2"]])
    power_section(found)         # the "## Power" section's lines
"""

from __future__ import annotations

import math

from harness.paper.findings import Finding
from harness.results.stats import ALPHA, POWER


def num(value: float | None, percent: bool = False) -> str:
    """A figure to 4 significant digits, in percent if the paper gives percent; "-" for none."""
    if value is None or math.isnan(value):
        return "-"
    return f"{value * (100 if percent else 1):.4g}"


def table(columns: list[str], rows: list[list[str]]) -> str:
    """A Markdown table (a cell's pipes escaped, its newlines folded)."""

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

    return "\n".join([line(columns), line(["---"] * len(columns)), *map(line, rows)])


def ditto(rows: list[list[str]], columns: tuple[int, ...]) -> list[list[str]]:
    """`rows` with each cell of `columns` that repeats the row above's shown as "″", so that
    a scale's rows, or rows failing the same gate, read as one block."""
    out = []
    for i, row in enumerate(rows):
        above = rows[i - 1] if i else None
        out.append(
            ["″" if above and j in columns and c == above[j] else c for j, c in enumerate(row)]
        )
    return out


def _range(f: Finding) -> str:
    """The corrected power over the spread's own 95 % interval: with a handful of seeds, the
    spread is itself uncertain, and so is the power."""
    c, effect = f.comparison, f.paper_effect
    if c is None or not effect:
        return ""
    low, high = c.power_range(effect, alpha=f.alpha)
    return f" ({low:.0%}-{high:.0%})"


def power_row(f: Finding) -> list[str] | None:
    """The power table's row of an inconclusive claim whose seeds have a spread (None for
    the others: a verdict needs no power; a claim not tested says why in its own row). Each
    figure twice: a test alone (α) → the test held to the corrected level."""
    c = f.comparison
    if not f.figure.compared or c is None or f.verdict != "inconclusive" or not c.sd > 0:
        return None
    effect = f.paper_effect
    pct = f.figure.percent
    levels = (ALPHA, f.alpha)
    powers = [p for a in levels if (p := f.paper_power(a)) is not None]  # [] if not sized
    need = c.seeds_for(effect, alpha=f.alpha) if powers and effect else None
    return [
        f"{f.figure.key} ({f.role})",
        f.scale,
        str(c.seeds),
        num(c.sd, pct),
        " → ".join(num(c.detectable(alpha=a), pct) for a in levels),
        num(abs(effect), pct) if effect else "-",
        " → ".join(f"{p:.0%}" for p in powers) + _range(f) if powers else "-",
        str(need) if need is not None else ("> 1000" if powers else "-"),
    ]


def power_section(
    found: list[Finding], heading: str = "## Power: what the seeds could see"
) -> list[str]:
    """Per claim with rows in both arms (tested, or held back by a failed gate): the
    seed-level spread, the detectable Δ, the paper's Δ, the power it had and the seeds it
    needs, alone and at the corrected level."""
    rows = [row for f in found if (row := power_row(f)) is not None]
    head = [
        "claim",
        "scale",
        "seeds",
        "spread (sd)",
        f"Δ detectable at {POWER:.0%} (alone → corrected)",
        "paper's Δ",
        "power at it (alone → corrected, range over the spread's interval)",
        "seeds for it (corrected)",
    ]
    if not rows:
        return ["", heading, "", "No claim passed its gates."]
    return [
        "",
        heading,
        "",
        "Per inconclusive claim, in the paper's unit: the seeds' spread, the Δ they detect at "
        f"{POWER:.0%} power and their power at the paper's Δ, for a test alone (α = {ALPHA}) → "
        "at the corrected level (α over the scale's family); the seeds that Δ needs. `hlm "
        "power SUITE --claims N` gives the same for any leaderboard.",
        "",
        table(head, rows),
    ]


def not_attempted(rows: list[list[str]]) -> list[str]:
    """The section of the paper's results no suite compares (source, result, why), each row."""
    return [
        "",
        "## Not attempted",
        "",
        "The paper's results no suite here compares (Table 1's QNLI, QQP and MNLI: its notes).",
        "",
        table(["paper", "result", "why"], rows),
    ]
