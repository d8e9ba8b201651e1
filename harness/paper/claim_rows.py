"""One finding as a row of the reproduction page's tables (`harness.paper.document`), and the
notes under a section's table.

A row holds the claim and its scale, the paper's figure and ours, both Δs, the raw and
adjusted p (with the test where it is not a paired t-test), the verdict, and a short why (at
most about 25 words: the gate missed, what the seeds could detect, or why there are no rows).
What rows share is said once under the table (`section_notes`): the runs compared, the
paper's set-up, where our protocol differs, the equal-time step, an average's parts and the
per-example evidence. `COLUMNS` are a claim's, `MEASURED` those of our own measurements
where the paper makes no claim (no verdict).
"""

from __future__ import annotations

import math

from harness.paper.figures import Role
from harness.paper.findings import EXPLORATORY, Finding
from harness.paper.tables import num
from harness.results.gates import GateCheck
from harness.results.stats import POWER

COLUMNS = [
    "claim",
    "scale",
    "paper",
    "ours",
    "paper Δ",
    "our Δ [CI]",
    "p → adjusted",
    "verdict",
    "why",
]
# our own measurements: no paper Δ, no verdict; the gate a row misses is its section's
MEASURED = ["claim", "scale", "paper", "ours", "our Δ [CI]", "p → adjusted", "why"]


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
    per = f" {f.measured.per}" if f.measured is not None and f.measured.per else ""
    return f"{num(f.gain, pct)}{per}{ci}"


def _p(f: Finding) -> str:
    c = f.comparison
    if c is None:
        return "-"
    if math.isnan(f.p_value):
        return "- (one seed an arm)" if c.seeds < 2 else "- (no spread)"
    if f.gate_failed:  # a claim's or our own measurement's: no test; the why names the gate
        return "-"
    if f.verdict == "not comparable":
        return f"{f.p_value:.3g} → - (not tested)"
    test = "" if c.test.startswith("paired t-test") else f" ({c.test})"  # the usual test
    return f"{f.p_value:.3g} → {f.p_adjusted:.3g}{test}"


def run_text(f: Finding) -> str:
    """The two runs compared, as the rows say what they trained ("a vs b (3000 steps, 12.3M
    tokens each)" where both trained alike)."""
    m = f.measured
    roles: tuple[Role, Role] = (f.role, "vanilla")
    if m is None or not m.runs:
        return " vs ".join(f.source.roles[r] for r in roles)
    mine, base = (m.runs[r] for r in roles)
    arm, base_model = f.source.roles[f.role], f.source.roles["vanilla"]
    if mine.removeprefix(arm) == base.removeprefix(base_model) and mine != arm:
        return f"{arm} vs {base_model}{mine.removeprefix(arm)[:-1]} each)"
    return f"{mine} vs {base}"


def claim_label(f: Finding) -> str:
    """The compared quantity, with the arm where it is not the headless model."""
    return f.figure.quantity + ("" if f.role == "headless" else f" [{f.role}]")


def _gate(g: GateCheck) -> str:
    """A missed gate in a few words: "glue/sst2 accuracy 0.7408 < 0.7992" (the bar)."""
    if math.isnan(g.value):
        return f"{g.name}: no row"
    side = ">" if g.at_most else "<"
    if g.far_end != g.value and (g.value <= g.bar if g.at_most else g.value >= g.bar):
        return f"{g.name} {num(g.value)}, its interval to {num(g.far_end)} {side} {num(g.bar)}"
    return f"{g.name} {num(g.value)} {side} {num(g.bar)}"


def _open(f: Finding) -> str:
    """An inconclusive claim's why: what its seeds could detect (the power section has the
    rest), or why there was no test."""
    c = f.comparison
    if c is None or math.isnan(f.p_adjusted):
        return "no test: " + ("one seed an arm" if c is not None and c.seeds < 2 else "no spread")
    scale = 100 if f.figure.percent else 1
    return (
        f"not significant; {c.seeds} {c.unit} detect |Δ| ≥ "
        f"{scale * c.detectable(alpha=f.alpha):.3g} at {POWER:.0%} power"
    )


def short_why(f: Finding) -> str:
    """Why the row has its verdict, in at most about 25 words."""
    missed = [g for g in f.gates if not g.passed]
    if missed and not f.figure.compared:  # the gates' values are in the claims' rows
        return f"{f.source.roles['vanilla']} misses {', '.join(g.name.split()[0] for g in missed)}"
    if missed:
        return f"gate: {f.source.roles['vanilla']} misses {'; '.join(map(_gate, missed))}"
    if f.verdict == "inconclusive":
        return _open(f)
    if f.verdict in ("reproduced", "contradicted"):
        side = "better" if f.gain > 0 else "worse"
        said = "as the paper has it" if f.verdict == "reproduced" else "against the paper"
        return f"{f.role} {side}, {said}"
    if f.reason == EXPLORATORY:  # its table says so
        return "-"
    return f.reason


def claim_row(f: Finding) -> list[str]:
    """`f` as a row of the page's table: `COLUMNS` for a claim, `MEASURED` for our own
    measurement (no paper Δ, no verdict)."""
    fig = f.figure
    paper = _pair(fig.values, f.role, False) if fig.values else "stated below"
    cells = {
        "claim": claim_label(f),
        "scale": f.scale,
        "paper": paper,
        "ours": _pair(f.measured.ours, f.role, fig.percent) if f.measured else "-",
        "paper Δ": num(gain) if (gain := fig.paper_gain(f.role)) is not None else "-",
        "our Δ [CI]": delta_text(f),
        "p → adjusted": _p(f),
        "verdict": f"**{f.verdict}**",
        "why": short_why(f),
    }
    return [cells[c] for c in (COLUMNS if f.figure.compared else MEASURED)]


def _once(items: list[str]) -> list[str]:
    return [x for x in dict.fromkeys(items) if x]


class Footnotes:
    """Texts the page says once, at its end, numbered in the order first cited."""

    def __init__(self) -> None:
        self.texts: dict[str, int] = {}

    def cite(self, text: str) -> int:
        """`text`'s number, given at its first citation."""
        return self.texts.setdefault(text, len(self.texts) + 1)

    def lines(self, heading: str) -> list[str]:
        """The footnotes as a numbered Markdown list under `heading` ([] where none)."""
        if not self.texts:
            return []
        return ["", heading, "", *(f"{n}. {text}" for text, n in self.texts.items())]


def section_notes(found: list[Finding], protocols: Footnotes) -> list[str]:
    """What a section's rows share, each said once, as Markdown bullets; the protocols they
    follow are cited by number (`protocols`, listed once at the page's end)."""
    shown = [f for f in found if not f.source.unavailable]
    notes = [f"Our runs: {'; '.join(_once([run_text(f) for f in shown]))}."] if shown else []
    if settings := _once([f.figure.setting for f in found]):
        notes.append(f"Paper: {'; '.join(settings)}.")
    stated = [f for f in found if not f.figure.values and f.figure.stated]
    for text in _once([f.figure.stated for f in stated]):
        named = _once([f.figure.quantity for f in stated if f.figure.stated == text])
        notes.append(f"{', '.join(named)}: “{text}”.")
    ours = [f"ours: {f.measured.protocol}" for f in shown if f.measured and f.measured.protocol]
    if protocol := _once(ours + [f.source.differs for f in shown]):
        cited = ", ".join(str(protocols.cite(p)) for p in protocol)
        notes.append(f"Protocols {cited} (at the end).")
    notes += _once([f.measured.detail for f in shown if f.measured and f.measured.detail])
    unavailable = [f for f in found if f.source.unavailable]
    for why in _once([f.source.unavailable for f in unavailable]):
        named = _once([f.figure.quantity for f in unavailable if f.source.unavailable == why])
        notes.append(f"Not run: {', '.join(named)}: {why}.")
    evidence = [
        f"{claim_label(f)} ({f.scale}) {f.measured.evidence.text(f.sign)}"
        for f in shown
        if f.verdict not in (None, "not comparable")
        and f.measured is not None
        and f.measured.evidence is not None
    ]
    if evidence:
        notes.append("Per-example, seed 0, test set only: " + "; ".join(evidence))
    return [f"- {n}" for n in notes]
