"""Whether a finding can be compared, and if not why, by kind (`Blocked`): an arm not run,
rows of another machine, a baseline under its gates, an arm giving one answer to 90 % of
questions on a metric such answers earn, or the claim's one condition not run.

An arm with no rows is "not run", said before a failed gate, so a missing arm never reads
as a failed gate; the baseline's gates are still read, for the baselines' page.

    why = gate_reason(finding, data)   # None: comparable; else Why(kind, sentence)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

import pandas as pd

from harness.paper.answers import ONE_CLASS, one_class
from harness.paper.compare import Measured, SuiteRows
from harness.paper.figures import PaperFigure, Role
from harness.paper.sources import Source
from harness.results.gates import GateCheck
from harness.results.metrics import metric_info

# why a claim is not comparable, by kind: the headline counts them apart
Blocked = Literal[
    "not run", "other machine", "gate failed", "answer bias", "not at its condition", "no direction"
]
# each kind in a few words, as the pages and the headline say it
CAUSES: dict[str, str] = {
    "gate failed": "baseline fails a gate",
    "answer bias": "an arm answers mostly one class",
    "not run": "not run",
    "other machine": "rows of another machine",
    "not at its condition": "its condition not run",
    "no direction": "no direction stated",
}


def cause(blocked: Blocked | None) -> str:
    """Why a finding is not comparable (its `blocked` kind), in a few words."""
    return CAUSES[blocked] if blocked is not None else "no comparison"


class Finding(Protocol):
    """What of a `harness.paper.findings.Finding` the checks read, and the two fields they
    fill (the baseline's gates and the tokens it pretrained on)."""

    figure: PaperFigure
    role: Role
    source: Source
    measured: Measured | None
    unmeasured: str
    gates: list[GateCheck]
    vanilla_tokens: float


@dataclass(frozen=True)
class Why:
    """Why a finding is not comparable: its kind and the sentence that says it."""

    kind: Blocked
    text: str


def gate_reason(f: Finding, data: SuiteRows) -> Why | None:
    """Why the finding is not comparable, or None. An arm with no rows is "not run", said
    before a failed gate: a missing arm never reads as a failed gate (the baseline's gates
    are still read, for the baselines' page)."""
    s, rows = f.source, data.rows
    missing = _missing(s, rows)
    if missing:
        return Why("not run", f"no rows: {missing}")
    if f.measured is not None and f.measured.seeds:  # the seeds compared, and no other
        rows = rows[rows["seed"].isin(f.measured.seeds)]
    elsewhere = _elsewhere(rows, s.machine)
    if elsewhere:
        return Why(
            "other machine",
            f"not the machine compared: leaderboards/{s.board} holds rows run on "
            f"{elsewhere}, where each should record an {s.machine}",
        )
    vanilla = s.roles["vanilla"]
    f.gates = [c.run(rows, vanilla) for c in s.checks]
    seen = pd.to_numeric(rows.loc[rows["model"] == vanilla, "tokens_seen"], errors="coerce")
    f.vanilla_tokens = float(seen.max())
    return _after_gates(f, data, rows)


def _after_gates(f: Finding, data: SuiteRows, rows: pd.DataFrame) -> Why | None:
    """Once the baseline's gates are read: a missing arm, a failed gate, an arm biased to
    one answer, the claim's condition not run, or nothing measured; else None."""
    arm = _arm_missing(f, rows)
    if arm:
        return Why("not run", f"no rows: {arm}")
    failed = [g.text for g in f.gates if not g.passed]
    if failed:
        vanilla = f.source.roles["vanilla"]
        return Why("gate failed", f"gate failed: the baseline {vanilla}'s " + "; ".join(failed))
    degenerate = _degenerate(f, data)
    if degenerate is not None:
        return degenerate
    if f.measured is None:
        return Why("not run", _unmeasured(f, rows))
    return None


def _arm_missing(f: Finding, rows: pd.DataFrame) -> str:
    """Where the compared arm has no row of the claim's task: what to run, else ''."""
    return _no_rows(f.source, rows, f.role)


def _no_rows(s: Source, rows: pd.DataFrame, role: Role) -> str:
    """Where the model of `role` has no row of `s`'s task: what to run, else ''."""
    model = s.roles[role]
    if ((rows["model"] == model) & (rows["task"] == s.task)).any():
        return ""
    return (
        f"the {role} model {model} has no {s.task} rows in leaderboards/{s.board} "
        f"(`{s.command} --model {model}`)"
    )


def _degenerate(f: Finding, data: SuiteRows) -> Why | None:
    """Why gates that passed still leave nothing to compare: an arm whose answers are mostly
    one class on a metric such answers earn, or the one condition the claim is stated at not
    run; else None."""
    s = f.source
    biased = [
        f"{m} {said}"
        for m in (s.roles["vanilla"], s.roles[f.role])
        if metric_info(s.metric).answer_biased
        and (said := one_class(data.rows, data.samples, m, s.task))
    ]
    if biased:
        return Why(
            "answer bias",
            f"not comparable on {s.metric}: an arm gives one answer to {ONE_CLASS:.0%} of "
            "questions or more, so its score measures an answer bias: " + "; ".join(biased),
        )
    if f.measured is None and f.figure.condition is not None:
        key, value = f.figure.condition
        return Why(
            "not at its condition",
            f"the paper states this at {key} {value}, which our sweep does not run",
        )
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
    return _no_rows(s, rows, "vanilla")


def _elsewhere(rows: pd.DataFrame, machine: str) -> str:
    """The machines `rows` record that are not `machine` (all of them fine where `machine` is
    ''), in words; '' where there are none."""
    if not machine:
        return ""
    other = sorted({str(h) for h in rows["hardware"].fillna("") if machine not in str(h)})
    return ", ".join(h or "no named machine" for h in other)
