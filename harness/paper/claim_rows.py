"""One finding as a row of the reproduction page's tables (`harness.paper.document`): our run
beside the paper's setting and figure, both Δs, the seeds, the raw and adjusted p and the
test, the verdict, and why (the reason, the gates passed, where our protocol differs, the
per-example evidence). `COLUMNS` are a claim's, `MEASURED` those of our own measurements
where the paper makes no claim (no paper Δ, no verdict).
"""

from __future__ import annotations

import math

from harness.paper.figures import Role
from harness.paper.findings import Finding
from harness.paper.tables import num

COLUMNS = [
    "our run",
    "paper setting",
    "paper",
    "ours",
    "paper Δ",
    "our Δ [CI]",
    "seeds",
    "p → adjusted (test)",
    "verdict",
    "why",
]
MEASURED = [c for c in COLUMNS if c not in ("paper Δ", "verdict")]


def _pair(values: dict[Role, float], role: Role, percent: bool) -> str:
    if "vanilla" not in values or role not in values:
        return "-"
    return f"{num(values['vanilla'], percent)} → {num(values[role], percent)}"


def delta_text(f: Finding) -> str:
    """Our Δ with its interval at the corrected level (95 % for an exploratory row), as the
    page prints it ("-" where there is none)."""
    pct = f.figure.percent
    if math.isnan(f.gain):
        return "-"
    low, high = f.interval
    ci = "" if math.isnan(low) else f" [{num(low, pct)}, {num(high, pct)}]"
    return f"{num(f.gain, pct)}{ci}"


def _p(f: Finding) -> str:
    c = f.comparison
    if c is None:
        return "-"
    if math.isnan(f.p_value):
        return f"- ({c.test})"
    if f.gate_failed:  # a claim's or our own measurement's: no test either way
        return "- (gate failed: not tested)"
    return f"{f.p_value:.3g} → {f.p_adjusted:.3g} ({c.test})"


def _run(f: Finding) -> str:
    m = f.measured
    roles: tuple[Role, Role] = (f.role, "vanilla")
    if m is None or not m.runs:
        return " vs ".join(f.source.roles[r] for r in roles)
    return " vs ".join(m.runs[r] for r in roles)


def _why(f: Finding) -> str:
    parts = [f.reason]
    passed = [g.text for g in f.gates if g.passed]
    if passed and not f.gate_failed and f.verdict != "not comparable":
        parts.append("gates passed: " + "; ".join(passed))
    ours = f"ours: {f.measured.protocol}" if f.measured and f.measured.protocol else ""
    if said := "; ".join(x for x in (ours, f.source.differs) if x):
        parts.append(f"protocol: {said}")
    if f.measured is not None:
        parts += [f.measured.detail] if f.measured.detail else []
        if f.measured.evidence is not None:
            parts.append(f.measured.evidence.text(f.sign))
    return ". ".join(parts)


def claim_row(f: Finding) -> list[str]:
    """`f` as a row of the page's table: `COLUMNS` for a claim, `MEASURED` for our own
    measurement (no paper Δ, no verdict)."""
    fig = f.figure
    paper = _pair(fig.values, f.role, False) if fig.values else f"“{fig.stated}”"
    cells = {
        "our run": f"{fig.quantity}: {_run(f)}",
        "paper setting": fig.setting or "-",
        "paper": paper,
        "ours": _pair(f.measured.ours, f.role, fig.percent) if f.measured else "-",
        "paper Δ": num(gain) if (gain := fig.paper_gain(f.role)) is not None else "-",
        "our Δ [CI]": delta_text(f),
        "seeds": str(f.seeds),
        "p → adjusted (test)": _p(f),
        "verdict": f"**{f.verdict}**",
        "why": _why(f),
    }
    return [cells[c] for c in (COLUMNS if f.figure.compared else MEASURED)]
