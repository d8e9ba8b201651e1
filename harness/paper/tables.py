"""The page's Markdown tables of `hlm report --paper`: the number format every table shares,
the verdict tally, the power table (per claim that passed its gates: the spread, the Δ the
seeds detect, the power at the paper's Δ, alone and at the corrected level) and the paper's
results not attempted.

    num(0.0123, percent=True)    # "1.23": the paper's unit
    table(["a", "b"], [["1", "2"]])
    power_section(found)         # the "## Power" section's lines
"""

from __future__ import annotations

import math

from harness.paper.figures import VERDICTS
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


def tally(found: list[Finding]) -> list[str]:
    """The claims counted by verdict, as a Markdown table's lines."""
    claims = [f for f in found if f.figure.compared]
    return [
        "| verdict | comparisons |",
        "| --- | --- |",
        *(f"| {v} | {sum(f.verdict == v for f in claims)} |" for v in VERDICTS),
    ]


def power_row(f: Finding) -> list[str] | None:
    """The power table's row of a claim with rows in both arms, tested or held back by a
    failed gate (said in the row: the seeds' power is what a run that passes would have);
    None for the others. With one seed an arm there is no spread yet, and the row says so.
    Each figure twice: a test alone (α) → the test held to the corrected level."""
    c = f.comparison
    blocked = f.verdict == "not comparable"  # compared but not tested: a gate failed
    if not f.figure.compared or c is None or (blocked and not f.gate_failed):
        return None
    effect = f.paper_effect
    spread = c.sd > 0  # False for nan: one seed, or identical differences
    pct = f.figure.percent
    levels = (ALPHA, f.alpha)
    powers = [p for a in levels if (p := f.paper_power(a)) is not None]  # [] if not sized
    need = c.seeds_for(effect, alpha=f.alpha) if powers and effect else None
    return [
        f"{f.figure.source}: {f.figure.quantity} ({f.role})"
        + (" — gate failed, not tested" if blocked else ""),
        str(c.seeds),
        num(c.sd, pct) if spread else ("- (one seed: no spread yet)" if c.seeds < 2 else "0"),
        " → ".join(num(c.detectable(alpha=a), pct) for a in levels) if spread else "-",
        num(abs(effect), pct) if effect else "-",
        " → ".join(f"{p:.0%}" for p in powers) if powers else "-",
        str(need) if need is not None else ("> 1000" if powers else "-"),
    ]


def power_section(
    found: list[Finding], heading: str = "## Power: what the seeds could see"
) -> list[str]:
    """Per claim with rows in both arms (tested, or held back by a failed gate): the
    seed-level spread, the detectable Δ, the paper's Δ, the power it had and the seeds it
    needs, alone and at the corrected level."""
    rows = [row for f in found if (row := power_row(f)) is not None]
    family = found[0].family if found else 1
    head = [
        "claim",
        "seeds",
        "spread (sd)",
        f"Δ detectable at {POWER:.0%} (alone → corrected)",
        "paper's Δ",
        "power at it (alone → corrected)",
        "seeds for it (corrected)",
    ]
    return [
        "",
        heading,
        "",
        "Per claim with rows in both arms, in the paper's unit as in the tables above (percent "
        "where the paper uses it; a claim whose gate failed was not tested, and its row says "
        "what its seeds could have seen): the seed-level spread observed (of the paired "
        "differences, or pooled), the smallest Δ these seeds detect at "
        f"{POWER:.0%} power (two-sided), the paper's Δ, the power the seeds had against it and "
        "the seeds per arm it would need at this spread. "
        f"The detectable Δ and the power are given for a test alone (α = {ALPHA}) "
        "and for a test held to the level the correction asks of each of the page's "
        f"{family} claims of its scale (α = {ALPHA}/{family}, Bonferroni's level, the one its "
        "verdicts use); the seeds needed, at that level. "
        f"`hlm power SUITE --claims {family}` gives the same for any leaderboard, in the "
        "metric's own unit (fractions where the paper gives percent).",
        "",
        table(head, rows) if rows else "No claim passed its gates.",
    ]


def not_attempted(rows: list[list[str]]) -> list[str]:
    """The section of the paper's results no suite compares (source, result, why), each row."""
    return [
        "",
        "## Not attempted",
        "",
        "The paper's results that no suite here compares, and why (QNLI, QQP and MNLI appear "
        "in Table 1's rows as not comparable: no local train set).",
        "",
        table(["paper", "result", "why"], rows),
    ]
