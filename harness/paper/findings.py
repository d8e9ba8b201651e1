"""Our side of the paper's figures, judged: one `Finding` (with its verdict) per figure and role.

For every claim a claims file declares (`harness.paper.claims_file`; the paper's is
`suites/claims/paper.yaml`), its `Source` says where our rows are and which gates the vanilla
model must pass; `harness.paper.compare.measure` reduces each
arm to one value per pretraining seed and compares them as the claim is stated (a two-sided
p). `findings()` then corrects within each scale's family and gives each claim one of four
verdicts (`harness.paper.figures.verdict`):

- *reproduced*: our gain in the paper's direction, significant after correction;
- *contradicted*: the opposite direction, significant after correction;
- *inconclusive*: neither; the finding says the smallest effect its seeds could detect at
  80 % power at the corrected level (α over the family's size: Bonferroni's level, Holm's
  first step) and how many seeds the paper's Δ would need at the spread observed;
- *not comparable*: a gate failed, or there are no rows (which one is said).

The family is declared before any row exists: the paper's claims at one scale (every
`PaperFigure.compared` figure and role the scale compares), whether or not its rows or
gates let it be tested, so a row landing elsewhere never moves a verdict. Each p is
corrected by Bonferroni over that count, and each interval drawn at the same level, so an
interval excludes 0 exactly where the verdict is not "inconclusive". Figures where the paper
makes no claim (`compared` False) are exploratory: their Δ, 95 % interval and raw p are
shown apart, with no verdict; they neither adjust nor are adjusted.
A claim with neither numbers nor a stated direction is not tested (no default direction).
An arm that gives one answer to 90 % of the questions is not comparable on accuracy
(`harness.paper.answers`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from harness.paper.comparable import Blocked, Why, gate_reason
from harness.paper.compare import Measured, SuiteRows, measure, parts_detail
from harness.paper.equal_time import speed_ratio
from harness.paper.figures import PaperFigure, Role, Verdict, verdict
from harness.paper.labels import machine_counts
from harness.paper.sources import Source
from harness.results.gates import GateCheck
from harness.results.leaderboard import current_cells, read_leaderboard
from harness.results.samples import read_samples
from harness.results.stats import ALPHA, POWER, Comparison

# the reason of a row that tests no claim of the paper and was measured
EXPLORATORY = "exploratory: not one of the claims tested (raw p, 95 % interval)"


@dataclass
class Finding:
    """One figure for one role against vanilla: the paper's values, ours, and the verdict."""

    figure: PaperFigure
    role: Role
    source: Source
    scale: str = "CPU"  # the claims file's scale
    machines: dict[str, int] = field(default_factory=dict)  # rows per recorded machine
    measured: Measured | None = None
    unmeasured: str = "no rows"  # why `measured` is None, where rows there are
    gates: list[GateCheck] = field(default_factory=list)
    vanilla_tokens: float = math.nan  # what the vanilla model's gated checkpoint pretrained on
    p_adjusted: float = math.nan  # Bonferroni over the scale's declared claims (raw: exploratory)
    family: int = 1  # the claims of its scale, declared (1: exploratory)
    verdict: Verdict | None = "not comparable"  # None: our measurement, no claim to judge
    reason: str = ""
    blocked: Blocked | None = None  # why it is not comparable, by kind (None: it is)
    declared: str = ""  # when its claim was declared, against its first row (git's history)
    late: bool = False  # declared confirmatory, but not before its rows: judged exploratory

    @property
    def sign(self) -> float:
        return 1.0 if self.figure.higher_is_better else -1.0

    @property
    def alpha(self) -> float:
        """The level each test of the family is held to: α / family (Bonferroni)."""
        return ALPHA / max(self.family, 1)

    @property
    def gate_failed(self) -> bool:
        """A gate of the vanilla model failed: compared, but not tested."""
        return any(not g.passed for g in self.gates)

    @property
    def comparison(self) -> Comparison | None:
        return None if self.measured is None else self.measured.comparison

    @property
    def gain(self) -> float:
        """How much better the role is than vanilla (positive: better), in our metric."""
        c = self.comparison
        return math.nan if c is None else self.sign * c.delta

    @property
    def interval(self) -> tuple[float, float]:
        """The interval of `gain` at the family's level (1 - α / family; 95 % for an
        exploratory row): it excludes 0 exactly where the adjusted p is below α. At equal
        time it spans the intervals at both ends of the speed ratio's interval too."""
        c = self.comparison
        if c is None:
            return math.nan, math.nan
        low, high = c.interval_at(self.alpha)
        for other in self._alternates:  # equal time: the speed ratio's interval carried
            lo, hi = other.interval_at(self.alpha)
            low, high = min(low, lo), max(high, hi)
        low, high = self.sign * low, self.sign * high
        return min(low, high), max(low, high)

    @property
    def level(self) -> float:
        """The interval's confidence, as a fraction (0.95 for an exploratory row)."""
        return 1 - self.alpha

    @property
    def _alternates(self) -> tuple[Comparison, ...]:
        """At equal time, the comparisons at the speed ratio's interval ends that have a test."""
        if self.measured is None or math.isnan(self.measured.comparison.low):
            return ()
        return tuple(a for a in self.measured.alternates if not math.isnan(a.low))

    @property
    def p_value(self) -> float:
        """The test's p; at equal time, the largest over the speed ratio's interval."""
        c = self.comparison
        if c is None or math.isnan(c.p):
            return math.nan
        return max([c.p, *(a.p for a in self._alternates)])

    @property
    def seeds(self) -> int:
        c = self.comparison
        return 0 if c is None else c.seeds

    @property
    def paper_effect(self) -> float | None:
        """The paper's Δ in our metric's unit (fractions where the paper gives percent)."""
        gain = self.figure.paper_gain(self.role)
        if gain is None:
            return None
        return gain / 100 if self.figure.percent else gain

    def paper_power(self, alpha: float | None = None) -> float | None:
        """The power the seeds had against the paper's Δ at the spread observed, at `alpha`
        (default: the corrected level); None where the paper gives no Δ or the seeds no
        spread."""
        c, effect = self.comparison, self.paper_effect
        if c is None or not effect or not c.sd > 0:
            return None
        return c.power_at(effect, alpha=self.alpha if alpha is None else alpha)


def _short_of_paper(f: Finding) -> str:
    """Where the interval reaches into the paper's direction but stops short of the paper's
    Δ, say so: not a refutation of the direction, but an effect as large as the paper's is
    not seen. (An interval wholly on the other side of 0 is the contradicted side.)"""
    effect, (low, high) = f.paper_effect, f.interval
    if not effect or math.isnan(low):
        return ""
    far = high if effect > 0 else -low  # the interval's end in the paper's direction
    if not 0 < far < abs(effect):
        return ""
    scale = 100 if f.figure.percent else 1
    return (
        f"; the {100 * f.level:.3g} % interval [{scale * low:.3g}, {scale * high:.3g}] stops "
        f"short of the paper's Δ ({scale * effect:.3g})"
    )


def _power_text(f: Finding) -> str:
    c = f.comparison
    if c is None:
        return ""
    if c.seeds < 2:
        return f"{c.test}: no seed-level spread to size a test from; run at least 2 seeds"
    if not c.sd > 0:  # e.g. two models that answer a yes/no task the same constant way
        return f"{c.test}: every seed gives the same Δ, so there is no spread to size a test from"
    scale = 100 if f.figure.percent else 1  # the row's unit: percent where the paper uses it
    detectable = scale * c.detectable(alpha=f.alpha)
    text = (
        f"{c.seeds} {c.unit} detect |Δ| ≥ {detectable:.3g} at {POWER:.0%} power at the "
        f"corrected level (α = {ALPHA}/{f.family})"
    )
    effect = f.paper_effect
    if effect is not None and effect != 0:
        need = c.seeds_for(effect, alpha=f.alpha)
        low, high = c.power_range(effect, alpha=f.alpha)
        text += (
            f"; power against the paper's Δ ({scale * abs(effect):.3g}): {low:.0%}-{high:.0%} "
            "(over the spread's own 95 % interval); it would need "
            + (f"{need} {c.unit}" if need is not None else f"more than 1000 {c.unit}")
            + " at this spread"
        )
    return text


def _judge(f: Finding, blocked: Why | None) -> None:
    """The verdict (after `p_adjusted` is set) and its reason in words; `blocked`: why the
    finding is not comparable, or None."""
    f.blocked = None if blocked is None else blocked.kind
    if not f.figure.compared:
        f.verdict = None
        f.reason = EXPLORATORY if blocked is None else blocked.text
        return
    if blocked is not None:
        f.verdict, f.reason = "not comparable", blocked.text
        return
    direction = f.figure.paper_direction(f.role)
    if direction is None:
        f.verdict, f.blocked = "not comparable", "no direction"
        f.reason = "the paper states neither a number nor a direction for it"
        return
    paper_better = direction == "better"
    f.verdict = verdict(paper_better, f.gain, f.p_adjusted, True)
    said = "better" if paper_better else "worse"
    p = "no test" if math.isnan(f.p_adjusted) else f"adjusted p = {f.p_adjusted:.3g}"
    trend = f.figure.design == "trend" and f.measured is not None and f.measured.per
    if trend and f.verdict in ("reproduced", "contradicted"):
        f.reason = _trend_words(f, p)
    elif f.verdict == "reproduced":
        f.reason = f"{f.role} {said} than vanilla, as the paper has it ({p})"
    elif f.verdict == "contradicted":
        found = "worse" if paper_better else "better"
        f.reason = f"{f.role} {found} than vanilla, where the paper has it {said} ({p})"
    elif math.isnan(f.p_adjusted):
        test = f.comparison.test if f.comparison is not None else "no comparison"
        f.reason = f"no test as run: {_power_text(f) or test}; inconclusive, not a refutation"
    else:
        f.reason = f"not significant after correction ({p}); {_power_text(f)}{_short_of_paper(f)}"
    if f.verdict == "inconclusive" and f.measured is not None and f.measured.untested:
        f.reason += f"; {f.measured.untested}"


def _trend_words(f: Finding, p: str) -> str:
    """A trend's verdict as tested: which way the gap moves, its slope and interval, and
    what the trend does not test (the side of vanilla each point is on)."""
    m, (low, high) = f.measured, f.interval
    if m is None:
        return p
    way = "grows" if f.gain > 0 else "shrinks"
    words = (
        f"{f.role}'s gap over vanilla {way} along the sweep: slope {f.gain:+.3g} {m.per} "
        f"[{low:+.3g}, {high:+.3g}] ({p})"
    )
    return f"{words}; {m.untested}" if m.untested else words


def _suite_rows(root: Path, suite: str) -> SuiteRows:
    d = root / suite
    if not d.is_dir():
        return SuiteRows(pd.DataFrame(), pd.DataFrame())
    rows = read_leaderboard(d, damaged="refuse")  # the committed page holds every row
    return SuiteRows(rows, read_samples(d, current_cells(d)), machine_counts(rows))


def _measure(f: Finding, data: dict[str, SuiteRows], root: Path) -> None:
    s = f.source
    speed = None
    if s.speed is not None:
        if s.speed[0] not in data:
            data[s.speed[0]] = _suite_rows(root, s.speed[0])
        speed = speed_ratio(data[s.speed[0]].rows, s.speed[1])
    found = measure(data[s.board], s, f.role, f.figure, speed)
    if s.at == "equal-time":
        f.unmeasured = (
            "no side-by-side speed ratio"
            if speed is None
            else "no vanilla checkpoints around the step of equal time"
        )
    if found is not None and s.parts is not None:
        rows = data[s.board].rows
        parts = parts_detail(rows[rows["seed"].isin(found.seeds)], s, f.role)
        detail = "; ".join(x for x in (found.detail, parts) if x)
        found = replace(found, detail=detail)
    f.measured = found


# One declared comparison: the scale it belongs to, the paper's figure and our source of it.
Declared = tuple[str, PaperFigure, Source]


def _roles(fig: PaperFigure, source: Source) -> list[Role]:
    """The roles `fig` compares against vanilla at `source`."""
    return [r for r in source.roles if r != "vanilla" and (not fig.values or r in fig.values)]


def family_sizes(declared: list[Declared]) -> dict[str, int]:
    """Each scale's family: the claims it declares (each claim figure and role), counted
    before any row exists, whatever the rows or gates let be tested."""
    sizes: dict[str, int] = {}
    for scale, fig, source in declared:
        if fig.compared:
            sizes[scale] = sizes.get(scale, 0) + len(_roles(fig, source))
    return sizes


def judge(
    declared: list[Declared], root: Path, families: dict[str, int] | None = None
) -> list[Finding]:
    """One finding per declared comparison and role, from the leaderboards under `root`;
    each claim's p adjusted by Bonferroni over its scale's family (`families`, default:
    the declared comparisons' own `family_sizes`)."""
    sizes = family_sizes(declared) if families is None else families
    data: dict[str, SuiteRows] = {}
    out = []
    for scale, fig, source in declared:
        if source.board not in data:
            data[source.board] = _suite_rows(root, source.board)
        for role in _roles(fig, source):
            f = Finding(fig, role, source, scale, data[source.board].machines)
            _measure(f, data, root)
            out.append(f)
    for f in out:
        why = gate_reason(f, data[f.source.board])
        if f.figure.compared:
            f.family = sizes[f.scale]
            tested = why is None and not math.isnan(f.p_value)
            f.p_adjusted = min(1.0, f.p_value * f.family) if tested else math.nan
        else:  # exploratory: raw p, 95 % interval, outside every family
            f.p_adjusted = f.p_value if why is None else math.nan
        _judge(f, why)
    return out


__all__ = ["ALPHA", "Declared", "Finding", "judge"]
