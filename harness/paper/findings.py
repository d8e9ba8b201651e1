"""Our side of the paper's figures, compared: one `Finding` (with its verdict) per figure and role.

For every figure of `harness.paper.figures.PAPER`, `harness.paper.sources.source_of` says where our
rows are (suite, task, metric, the model per role) and which sanity gates the vanilla model
must clear; `findings()` reads the committed leaderboards and gives one `Finding` per figure,
role and scale (CPU: every figure; GPU: the encoder and decoder figures a size up, see
`harness.paper.sources.Scale`), which `harness.paper.document` writes out.

Checkpoints compared (`Source.at`):
- `final`: each model's last evaluated checkpoint (equal tokens where the recipes match);
- `equal-time`: headless at its last checkpoint, vanilla at the checkpoint whose training
  seconds are nearest (per seed; both times are shown);
- `along`: every checkpoint both evaluated (Figure 3), the gap averaged over steps and seeds;
- `sweep`: every sweep point (Figures 2, 6, 7), the gap averaged over points and seeds.

Significance: one-tailed in the paper's direction (two-sided where the paper makes no claim):
Welch's t-test over seeds when both have two or more, the paired t-test over kept samples for
one seed where per-item scores were kept, else over the parts of an average each fine-tuned
on its own (XNLI's languages; at several seeds their mean gaps are shown), a paired t-test
over (step or sweep point, seed) for `along` and `sweep`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from scipy import stats

from harness.paper.figures import ALPHA, PAPER, PaperFigure, Role, Verdict, verdict
from harness.paper.sources import SCALES, At, Parts, Source, final_values
from harness.results.leaderboard import current_cells, latest_step, read_leaderboard
from harness.results.samples import read_samples
from harness.results.significance import PAIRED, WELCH, latest_samples, paired_one_tailed
from harness.results.significance import welch_one_tailed as welch


@dataclass
class Finding:
    """One figure for one role against vanilla: the paper's values, ours, and the verdict."""

    figure: PaperFigure
    role: Role
    source: Source
    scale: str = "CPU"  # `harness.paper.sources.SCALES`
    machines: tuple[str, ...] = ()  # where the suite's rows were trained, as they record it
    ours: dict[Role, float] = field(default_factory=dict)
    seeds: int = 0
    gain: float = math.nan  # ours, positive = the role better than vanilla
    p_value: float = math.nan
    test: str = ""
    detail: str = ""
    verdict: Verdict = "not comparable"
    reason: str = ""


def _at_steps(rows: pd.DataFrame, model: str, source: Source) -> pd.DataFrame:
    d = rows[
        (rows["model"] == model) & (rows["task"] == source.task) & (rows["metric"] == source.metric)
    ]
    return d.sort_values("timestamp").drop_duplicates(["seed", "step", "sweep"], keep="last")


def _equal_time(rows: pd.DataFrame, source: Source, role: Role) -> tuple[pd.Series, pd.Series, str]:
    """Per seed: `role` at its last checkpoint, vanilla at the one nearest in seconds."""
    mine = _at_steps(rows, source.roles[role], source)
    base = _at_steps(rows, source.roles["vanilla"], source)
    picks, notes = {}, []
    for seed, last in latest_step(mine).set_index("seed").iterrows():
        b = base[base["seed"] == seed]
        if b.empty:
            continue
        near = b.loc[(b["train_seconds"] - last["train_seconds"]).abs().idxmin()]
        picks[seed] = float(near["value"])
        notes.append(
            f"seed {seed}: vanilla step {int(near['step'])} ({near['train_seconds']:.0f} s) vs "
            f"step {int(last['step'])} ({last['train_seconds']:.0f} s)"
        )
    ours = latest_step(mine).set_index("seed")["value"]
    return ours, pd.Series(picks, dtype=float), "; ".join(notes)


def _paired_gains(rows: pd.DataFrame, source: Source, role: Role, sign: float) -> pd.DataFrame:
    """Gains of `role` over vanilla per (sweep point, step, seed) both evaluated."""
    keys = ["sweep", "step", "seed"]
    mine = _at_steps(rows, source.roles[role], source).set_index(keys)["value"]
    base = _at_steps(rows, source.roles["vanilla"], source).set_index(keys)["value"]
    both = pd.concat({"mine": mine, "base": base}, axis=1).dropna()
    gain = sign * (both["mine"] - both["base"])  # (points,)
    return both.assign(gain=gain / both["base"].abs() if source.relative else gain).reset_index()


def _point_label(row: pd.Series, at: At) -> str:
    if at == "along":
        return f"step {int(row['step'])}"
    point = json.loads(row["sweep"]) if row["sweep"] else {}
    return ", ".join(f"{k} {v}" for k, v in point.items()) or "-"


def _compare_points(f: Finding, rows: pd.DataFrame, sign: float) -> None:
    g = _paired_gains(rows, f.source, f.role, sign)
    if g.empty:
        return
    f.ours = {"vanilla": float(g["base"].mean()), f.role: float(g["mine"].mean())}
    f.seeds, f.gain = int(g["seed"].nunique()), float(g["gain"].mean())
    if len(g) > 1 and g["gain"].nunique() > 1:
        alt = "greater" if _paper_better(f) else "less"
        f.p_value = float(stats.ttest_1samp(g["gain"], 0.0, alternative=alt).pvalue)
        f.test = f"paired t-test over {len(g)} (point, seed) pairs"
    point = g["sweep"].map(lambda text: tuple(json.loads(text).values()) if text else ())
    g = g.assign(point=point).sort_values(["point", "step", "seed"])  # batch 8 before 16
    by = g.groupby([c for c in ("sweep", "step") if g[c].nunique() > 1] or ["seed"], sort=False)
    parts = [
        f"{_point_label(grp.iloc[0], f.source.at)}: {gain_text(f.source, grp['gain'].mean())}"
        for _, grp in by
    ]
    f.detail = "gap " + ", ".join(parts)


def gain_text(source: Source, gain: float) -> str:
    """A gain as shown: a share of vanilla's value in percent for a `relative` source."""
    return f"{100 * gain:+.1f}%" if source.relative else f"{gain:+.3g}"


def _paper_better(f: Finding) -> bool:
    """Whether the paper has the role better than vanilla (a stated claim: better)."""
    paper = f.figure.paper_gain(f.role)
    return paper is None or paper > 0


def _comparefinal_values(
    f: Finding, rows: pd.DataFrame, samples: pd.DataFrame, sign: float
) -> None:
    s = f.source
    if s.at == "equal-time":
        mine, base, f.detail = _equal_time(rows, s, f.role)
    else:
        mine = final_values(rows, s.roles[f.role], s.task, s.metric)
        base = final_values(rows, s.roles["vanilla"], s.task, s.metric)
    seeds = mine.index.intersection(base.index)  # a seed only one model has yet: left out
    mine, base, rows = mine[seeds], base[seeds], rows[rows["seed"].isin(seeds)]
    if mine.empty or base.empty:
        return
    f.ours = {"vanilla": float(base.mean()), f.role: float(mine.mean())}
    f.seeds = int(min(len(mine), len(base)))
    f.gain = sign * (f.ours[f.role] - f.ours["vanilla"])
    hib = (sign > 0) == _paper_better(f)  # tested in the paper's direction
    if len(mine) > 1 and len(base) > 1:
        f.p_value, f.test = welch(list(mine), list(base), hib), WELCH
        if s.parts is not None:
            _part_gaps(f, rows, s.parts)
        return
    kept = latest_samples(samples)
    a = kept.get((s.roles[f.role], "{}", s.task, s.metric))
    b = kept.get((s.roles["vanilla"], "{}", s.task, s.metric))
    if a and b:
        f.p_value, f.test = paired_one_tailed(a, b, hib), PAIRED
    elif s.parts is not None:
        _compare_parts(f, rows, s.parts, hib)


def _compare_parts(f: Finding, rows: pd.DataFrame, parts: Parts, hib: bool) -> None:
    """The paired test over the parts of the average, and the gap per part as detail."""
    mine, base = _part_gaps(f, rows, parts)
    f.p_value = paired_one_tailed(mine, base, hib)
    if not math.isnan(f.p_value):
        f.test = f"paired t-test over {len(set(mine) & set(base))} {parts.name}"


def _part_gaps(
    f: Finding, rows: pd.DataFrame, parts: Parts
) -> tuple[dict[str, float], dict[str, float]]:
    """Each model's score per part (mean over seeds); the gap per part goes in the detail."""
    s = f.source
    mine, base = (_part_values(rows, s.roles[r], parts) for r in (f.role, "vanilla"))
    gaps = [
        f"{k.removeprefix(parts.prefix)} {100 * (mine[k] - base[k]):+.1f}"
        for k in sorted(set(mine) & set(base))
    ]
    over = ", mean over seeds" if f.seeds > 1 else ""
    f.detail = f"gap per {parts.name.rstrip('s')} (points{over}): " + ", ".join(gaps)
    return mine, base


def _part_values(rows: pd.DataFrame, model: str, parts: Parts) -> dict[str, float]:
    """`model`'s score per part (its task name) at the last checkpoint, mean over seeds."""
    d = rows[
        (rows["model"] == model)
        & rows["task"].str.startswith(parts.prefix)
        & (rows["metric"] == parts.metric)
    ]
    return {str(k): float(v) for k, v in latest_step(d).groupby("task")["value"].mean().items()}


def _two_sided(f: Finding) -> None:
    """Our measurement, no claim to test in a direction: the one-tailed p of a t-test (a
    symmetric statistic) made two-sided."""
    if not math.isnan(f.p_value):
        f.p_value = min(1.0, 2 * min(f.p_value, 1 - f.p_value))
        f.test += ", two-sided"


def _judge(f: Finding, rows: pd.DataFrame) -> None:
    fig = f.figure
    if f.source.unavailable:
        f.reason = f.source.unavailable
        return
    if rows.empty:
        f.reason = (
            f"no committed rows in leaderboards/{f.source.suite} (`hlm run {f.source.suite}`)"
        )
        return
    checks = [g.check(rows, f.source.roles["vanilla"]) for g in f.source.gates]
    failed = [text for ok, text in checks if not ok]
    if math.isnan(f.gain):
        f.reason = f"no rows of {f.source.task} / {f.source.metric} for both models"
    elif failed:
        f.reason = "the vanilla model does not clear its sanity bar: " + "; ".join(failed)
    elif not fig.compared:
        f.reason = f"{_measured(f)}: our measurement, the paper makes no claim here"
    else:
        f.verdict = verdict(fig.paper_gain(f.role), f.gain, f.p_value, True)
        f.reason = _reason(f)


def _measured(f: Finding) -> str:
    better = "better" if f.gain > 0 else "worse"
    p = "no test" if math.isnan(f.p_value) else f"p = {f.p_value:.3g}"
    amount = gain_text(f.source, abs(f.gain)).lstrip("+")
    return f"{f.role} {better} than vanilla by {amount} ({p})"


def _reason(f: Finding) -> str:
    said = "better" if _paper_better(f) else "worse"
    ours = _measured(f)
    if f.verdict == "reproduced":
        return f"{ours}, significant, as the paper has it {said}"
    if f.verdict == "direction only":
        return f"{ours}: the paper's direction, not significant at {ALPHA}"
    return f"{ours}, where the paper has it {said}"


@dataclass(frozen=True)
class SuiteRows:
    """A suite's committed rows, its kept samples, and the machines its rows record."""

    rows: pd.DataFrame
    samples: pd.DataFrame
    machines: tuple[str, ...] = ()


def _suite_rows(root: Path, suite: str) -> SuiteRows:
    d = root / suite
    if not d.is_dir():
        return SuiteRows(pd.DataFrame(), pd.DataFrame())
    rows = read_leaderboard(d)
    machines = tuple(sorted(set(rows["hardware"].dropna())))
    return SuiteRows(rows, read_samples(d, current_cells(d)), machines)


def _finding(fig: PaperFigure, role: Role, source: Source, scale: str, data: SuiteRows) -> Finding:
    f = Finding(fig, role, source, scale, machines=data.machines)
    sign = 1.0 if fig.higher_is_better else -1.0
    if not data.rows.empty:
        if source.at in ("along", "sweep"):
            _compare_points(f, data.rows, sign)
        else:
            _comparefinal_values(f, data.rows, data.samples, sign)
    if not fig.compared:
        _two_sided(f)
    _judge(f, data.rows)
    return f


def findings(root: Path, suite: str | None = None) -> list[Finding]:
    """One finding per paper figure, compared role and scale (`SCALES`: every figure at CPU
    scale, the encoder and decoder ones at GPU scale), from the leaderboards under `root`
    (only the figures whose rows come from `suite`, when given)."""
    cache: dict[str, SuiteRows] = {}
    out = []
    for scale in SCALES:
        for fig in PAPER:
            source = scale.source(fig)
            if source is None or (suite is not None and source.suite != suite):
                continue
            if source.suite not in cache:
                cache[source.suite] = _suite_rows(root, source.suite)
            roles = [
                r for r in source.roles if r != "vanilla" and (not fig.values or r in fig.values)
            ]
            out += [_finding(fig, r, source, scale.name, cache[source.suite]) for r in roles]
    return out
