"""Our side of the paper's figures, judged: one `Finding` (with its verdict) per figure and role.

For every figure of `harness.paper.figures.PAPER`, `harness.paper.sources` says where our rows
are and which gates the vanilla model must pass; `harness.paper.compare.measure` reduces each
arm to one value per pretraining seed and compares them (Δ with its 95 % interval, a
two-sided p). `findings()` then corrects every p of the report together (Holm) and gives each
claim one of four verdicts (`harness.paper.figures.verdict`):

- *reproduced*: our gain in the paper's direction, significant after correction;
- *contradicted*: the opposite direction, significant after correction;
- *inconclusive*: neither; the finding says the smallest effect its seeds could detect at
  80 % power at the corrected level (α over the family's size: Bonferroni's level, Holm's
  first step) and how many seeds the paper's Δ would need at the spread observed;
- *not comparable*: a gate failed, or there are no rows (which one is said).

The family corrected is every test the report makes: a finding whose gate failed makes none.
Figures where the paper makes no claim (`PaperFigure.compared` False) are our measurements:
their Δ, interval and p are shown (and corrected with the rest), with no verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from harness.paper.compare import Measured, SuiteRows, measure, speed_ratio
from harness.paper.figures import PAPER, PaperFigure, Role, Verdict, verdict
from harness.paper.labels import machine_counts
from harness.paper.scales import SCALES
from harness.paper.sources import Parts, Source
from harness.results.gates import GateCheck
from harness.results.leaderboard import current_cells, final_rows, read_leaderboard
from harness.results.samples import read_samples
from harness.results.stats import ALPHA, POWER, Comparison, holm


@dataclass
class Finding:
    """One figure for one role against vanilla: the paper's values, ours, and the verdict."""

    figure: PaperFigure
    role: Role
    source: Source
    scale: str = "CPU"  # `harness.paper.scales.SCALES`
    machines: dict[str, int] = field(default_factory=dict)  # rows per recorded machine
    measured: Measured | None = None
    unmeasured: str = "no rows"  # why `measured` is None, where rows there are
    gates: list[GateCheck] = field(default_factory=list)
    vanilla_tokens: float = math.nan  # what the vanilla model's gated checkpoint pretrained on
    p_adjusted: float = math.nan  # Holm over every test of the report
    family: int = 1  # the tests Holm corrects together (the report's), for the power
    verdict: Verdict | None = "not comparable"  # None: our measurement, no claim to judge
    reason: str = ""

    @property
    def sign(self) -> float:
        return 1.0 if self.figure.higher_is_better else -1.0

    @property
    def alpha(self) -> float:
        """The level each test of the family is held to for the power: α / family,
        Bonferroni's, which is Holm's first step and so a lower bound on Holm's power."""
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
        """The 95 % interval of `gain`."""
        c = self.comparison
        if c is None:
            return math.nan, math.nan
        low, high = self.sign * c.low, self.sign * c.high
        return min(low, high), max(low, high)

    @property
    def p_value(self) -> float:
        c = self.comparison
        return math.nan if c is None else c.p

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


def _part_values(rows: pd.DataFrame, model: str, parts: Parts) -> dict[str, float]:
    d = rows[
        (rows["model"] == model)
        & rows["task"].str.startswith(parts.prefix)
        & (rows["metric"] == parts.metric)
    ]
    return {str(k): float(v) for k, v in final_rows(d).groupby("task")["value"].mean().items()}


def _parts_detail(rows: pd.DataFrame, source: Source, role: Role) -> str:
    parts = source.parts
    if parts is None:
        return ""
    mine, base = (_part_values(rows, source.roles[r], parts) for r in (role, "vanilla"))
    gaps = [
        f"{k.removeprefix(parts.prefix)} {100 * (mine[k] - base[k]):+.1f}"
        for k in sorted(set(mine) & set(base))
    ]
    return f"gap per {parts.name.rstrip('s')} (points, mean over seeds): " + ", ".join(gaps)


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
        f"; the 95 % interval [{scale * low:.3g}, {scale * high:.3g}] stops short of the "
        f"paper's Δ ({scale * effect:.3g}): an effect as large as the paper's is not seen here "
        "(the interval is not widened for the page's many tests)"
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
        text += (
            f"; the paper's Δ ({scale * abs(effect):.3g}) had {f.paper_power():.0%} power here "
            "and would need "
            + (f"{need} {c.unit}" if need is not None else f"more than 1000 {c.unit}")
            + " at this spread"
        )
    return text


def _gate_reason(f: Finding, rows: pd.DataFrame) -> str | None:
    """Why the finding is not comparable, or None."""
    s = f.source
    missing = _missing(s, rows)
    if missing:
        return f"no rows: {missing}"
    if f.measured is not None and f.measured.seeds:  # the seeds compared, and no other
        rows = rows[rows["seed"].isin(f.measured.seeds)]
    elsewhere = _elsewhere(rows, s.machine)
    if elsewhere:
        return (
            f"not the machine compared: leaderboards/{s.board} holds rows run on "
            f"{elsewhere}, where each should record an {s.machine}"
        )
    vanilla = s.roles["vanilla"]
    f.gates = [c.run(rows, vanilla) for c in s.checks]
    seen = pd.to_numeric(rows.loc[rows["model"] == vanilla, "tokens_seen"], errors="coerce")
    f.vanilla_tokens = float(seen.max())
    failed = [g.text for g in f.gates if not g.passed]
    if failed:
        return f"gate failed: the baseline {vanilla}'s " + "; ".join(failed)
    if f.measured is None:
        return _unmeasured(f, rows)
    return None


def _unmeasured(f: Finding, rows: pd.DataFrame) -> str:
    """Why a finding whose gates pass has no figure: the models with no row of its metric,
    each with the command that computes it, else what else is missing for both."""
    s = f.source
    has = rows[(rows["task"] == s.task) & (rows["metric"] == s.metric)]["model"]
    lacking = [m for m in (s.roles[f.role], s.roles["vanilla"]) if not (has == m).any()]
    if lacking:
        return "; ".join(
            f"no rows of {s.task} / {s.metric} for {m} (`{s.command} --model {m}`)" for m in lacking
        )
    return f"{f.unmeasured} of {s.task} / {s.metric} for both models"


def _missing(s: Source, rows: pd.DataFrame) -> str:
    """Why `rows` hold nothing to compare for `s` (and the command that computes them), or
    ''."""
    if s.unavailable:
        return s.unavailable
    if rows.empty:
        return f"nothing committed in leaderboards/{s.board} (`{s.command}`)"
    vanilla = s.roles["vanilla"]
    if not ((rows["model"] == vanilla) & (rows["task"] == s.task)).any():
        return (
            f"the vanilla model {vanilla} has no {s.task} rows in "
            f"leaderboards/{s.board} yet (`{s.command} --model {vanilla}`)"
        )
    return ""


def _elsewhere(rows: pd.DataFrame, machine: str) -> str:
    """The machines `rows` record that are not `machine` (all of them fine where `machine` is
    ''), in words; '' where there are none."""
    if not machine:
        return ""
    other = sorted({str(h) for h in rows["hardware"].fillna("") if machine not in str(h)})
    return ", ".join(h or "no named machine" for h in other)


def _judge(f: Finding, blocked: str | None) -> None:
    """The verdict (after `p_adjusted` is set) and its reason in words; `blocked`: why the
    finding is not comparable, or None."""
    if not f.figure.compared:
        f.verdict = None
        f.reason = blocked or "our measurement; the paper makes no claim here"
        return
    if blocked is not None:
        f.verdict, f.reason = "not comparable", blocked
        return
    paper_better = f.paper_effect is None or f.paper_effect > 0
    f.verdict = verdict(paper_better, f.gain, f.p_adjusted, True)
    said = "better" if paper_better else "worse"
    p = "no test" if math.isnan(f.p_adjusted) else f"adjusted p = {f.p_adjusted:.3g}"
    if f.verdict == "reproduced":
        f.reason = f"{f.role} {said} than vanilla, as the paper has it ({p})"
    elif f.verdict == "contradicted":
        found = "worse" if paper_better else "better"
        f.reason = f"{f.role} {found} than vanilla, where the paper has it {said} ({p})"
    else:
        f.reason = f"not significant after correction ({p}); {_power_text(f)}{_short_of_paper(f)}"


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
        speed = speed_ratio(data[s.speed[0]], s.speed[1])
    found = measure(data[s.board], s, f.role, speed)
    if s.at == "equal-time":
        f.unmeasured = (
            "no side-by-side speed ratio"
            if speed is None
            else "no vanilla checkpoints around the step of equal time"
        )
    if found is not None and s.parts is not None:
        rows = data[s.board].rows
        parts = _parts_detail(rows[rows["seed"].isin(found.seeds)], s, f.role)
        detail = "; ".join(x for x in (found.detail, parts) if x)
        found = replace(found, detail=detail)
    f.measured = found


def findings(root: Path, suite: str | None = None) -> list[Finding]:
    """One finding per paper figure, compared role and scale, from the leaderboards under
    `root` (only the figures whose rows come from `suite`, when given); every p is
    Holm-adjusted over the findings returned."""
    data: dict[str, SuiteRows] = {}
    out = []
    for scale in SCALES:
        for fig in PAPER:
            source = scale.source(fig)
            if source is None or (suite is not None and source.board != suite):
                continue
            if source.board not in data:
                data[source.board] = _suite_rows(root, source.board)
            roles = [
                r for r in source.roles if r != "vanilla" and (not fig.values or r in fig.values)
            ]
            for role in roles:
                f = Finding(fig, role, source, scale.name, data[source.board].machines)
                _measure(f, data, root)
                out.append(f)
    # the family: every test the report makes (a finding whose gate failed makes none)
    blocked = [_gate_reason(f, data[f.source.board].rows) for f in out]
    tested = [f.p_value if why is None else math.nan for f, why in zip(out, blocked, strict=True)]
    family = sum(not math.isnan(p) for p in tested)
    for f, p, why in zip(out, holm(tested), blocked, strict=True):
        f.p_adjusted, f.family = p, family
        _judge(f, why)
    return out


__all__ = ["ALPHA", "Finding", "findings"]
