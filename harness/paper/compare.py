"""Our side of one paper figure for one role: the values, and the comparison with vanilla.

The pretraining seed is the unit (`Source.unit == "seed"`): each arm is first reduced to one
value per seed, then compared across seeds (`harness.results.stats.compare_seeds`). What is
reduced inside a seed depends on the checkpoint compared (`Source.at`):

- `final`: the seed's last evaluated checkpoint;
- `equal-time`: headless at its last checkpoint; vanilla at the step it reaches in the same
  time, from the step-time ratio measured side by side (`harness.paper.equal_time`), again
  at both ends of the ratio's interval (`Measured.alternates`);
- `along`: the mean over the checkpoints both evaluated (Figure 3);
- `sweep`: the mean over the sweep points both evaluated (Figures 6, 7).

Speed and memory (`unit == "measurement"`) involve no pretraining: each side-by-side
measurement (a sweep point and run, a seed's cell, or at one point the kept alternating
rounds) is one independent paired difference, and is counted as a measurement, not a seed.
Where per-example scores were kept, a per-example test on the first seed both arms share is
a second line of evidence (`Measured.evidence`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from harness.paper.equal_time import SpeedRatio, equal_time, wall_ratios
from harness.paper.figures import PaperFigure, Role
from harness.paper.labels import at_steps, protocol, run_label
from harness.paper.sources import Parts, Source, final_values, waiting
from harness.results.fields import SweepPoint, point_order
from harness.results.leaderboard import final_rows
from harness.results.metrics import metric_info
from harness.results.stats import (
    Comparison,
    Evidence,
    compare_seeds,
    differences,
    magnitude,
    per_example,
    trend,
)

MEASUREMENTS = "side-by-side measurements"  # the test's unit where no run is pretrained


@dataclass(frozen=True)
class SuiteRows:
    """A suite's committed rows, its kept samples, and how many rows record each machine
    (`harness.paper.labels.machine_counts`)."""

    rows: pd.DataFrame
    samples: pd.DataFrame
    machines: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class SeedEvidence:
    """The per-example test on one pretraining seed both arms share: role minus vanilla, in
    the metric's own direction."""

    seed: int
    test: Evidence

    def text(self, sign: float) -> str:
        """The sentence, with role minus vanilla times `sign` (+1 where higher is better, -1
        where lower is) so that it reads like the report's Δ: positive is better."""
        ev = self.test
        low, high = sorted((sign * ev.low, sign * ev.high))
        return f"Δ {sign * ev.delta:+.3g} [{low:+.3g}, {high:+.3g}], p = {ev.p:.3g}" + (
            "" if self.seed == 0 else f" (seed {self.seed})"
        )


@dataclass(frozen=True)
class Measured:
    """Our values per role (means over seeds) and role minus vanilla, compared."""

    ours: dict[Role, float]
    comparison: Comparison
    detail: str = ""
    evidence: SeedEvidence | None = None
    runs: dict[Role, str] = field(default_factory=dict)
    seeds: tuple[int, ...] = ()  # the pretraining seeds compared (both arms have them)
    protocol: str = ""  # how both arms were evaluated, in words (`labels.protocol`)
    # at equal time: the comparison again at each end of the speed ratio's 95 % interval
    alternates: tuple[Comparison, ...] = ()
    # at equal time: the comparison at each seed's own training-loop ratio, in words (a
    # check the claims pages show beside the verdict, never its basis)
    check: str = ""
    # what the Δ is: a trend's unit ("per doubling of vocab_size"), the point that stands
    # for a claim made at every point ("at batch_size 8"); '' for a gap over all points
    per: str = ""
    untested: str = ""  # what a trend leaves untested: points on the other side of vanilla


def _point_key(row: pd.Series, at: str) -> str:
    if at == "along":
        return f"step {int(row['step'])}"
    return _sweep_words(row["sweep"])


def _paired_points(rows: pd.DataFrame, source: Source, role: Role) -> pd.DataFrame:
    """role and vanilla per (sweep point, step, seed) both evaluated, with their gap."""
    keys = ["sweep", "step", "seed"]
    d = {
        "mine": at_steps(rows, source.roles[role], source).set_index(keys)["value"],
        "base": at_steps(rows, source.roles["vanilla"], source).set_index(keys)["value"],
    }
    both = pd.concat(d, axis=1).dropna().reset_index()
    if source.at == "sweep":  # the last step of each (point, seed)
        both = both.sort_values("step").groupby(["sweep", "seed"]).tail(1)
    return both.assign(gap=both["mine"] - both["base"])


def _points_detail(g: pd.DataFrame, at: str) -> str:
    g = g.assign(point=g["sweep"].map(point_order)).sort_values(["point", "step", "seed"])
    by = g.groupby([c for c in ("sweep", "step") if g[c].nunique() > 1] or ["seed"], sort=False)
    return "gap " + ", ".join(
        f"{_point_key(grp.iloc[0], at)}: {grp['gap'].mean():+.3g}" for _, grp in by
    )


def _sweep_value(sweep: str, key: str) -> float | None:
    value = SweepPoint.of(sweep).value(key)
    return None if value is None else float(value)


def _at_condition(g: pd.DataFrame, fig: PaperFigure) -> pd.DataFrame:
    """The rows at the one condition `fig`'s claim is stated at (all where it names none)."""
    if fig.condition is None:
        return g
    key, value = fig.condition
    return g[g["sweep"].map(lambda s: _sweep_value(s, key) == value)]


def _compare_gaps(g: pd.DataFrame, source: Source) -> Comparison:
    """Role minus vanilla over `g`'s pairs: each side-by-side measurement one difference,
    else each seed reduced to its mean over the points first."""
    if source.unit == "measurement":
        scale = magnitude(g["mine"], g["base"])
        return differences(g["gap"].to_numpy(), MEASUREMENTS, scale)
    per_seed = g.groupby("seed")[["mine", "base"]].mean()
    return compare_seeds(per_seed["mine"], per_seed["base"])


def _sweep_words(sweep: str) -> str:
    """A sweep point in words (`batch_size 8`), '-' for none."""
    return SweepPoint.of(sweep).words()


def _weakness(c: Comparison, sign: float) -> tuple[int, float]:
    """How weak a point's evidence is for "better here": a gap the other way first, then
    the larger p (no test counts as weakest)."""
    return (0 if sign * c.delta > 0 else 1, 2.0 if math.isnan(c.p) else c.p)


def _every_point(g: pd.DataFrame, source: Source, sign: float) -> tuple[Comparison, str, str]:
    """A claim stated at every point: each point compared on its own; the claim holds only
    where every point does, so the weakest point (the largest p; an intersection-union
    test) stands for the claim. Points are taken in the sweep's numeric order (batch 8
    before 16), so of equally weak points the first in that order stands. Also returns
    the words per point and the standing point's name."""
    points = sorted(g["sweep"].unique(), key=point_order)
    tested = [(str(k), _compare_gaps(g[g["sweep"] == k], source)) for k in points]
    weakest = max(tested, key=lambda t: _weakness(t[1], sign))  # the first of the weakest
    said = ", ".join(f"{_sweep_words(k)}: p {c.p:.2g}" for k, c in tested if not math.isnan(c.p))
    name = _sweep_words(weakest[0])
    test = f"every point tested on its own; the weakest ({name}) stands"
    return (
        replace(weakest[1], test=f"{test}: {weakest[1].test}"),
        f"per point: {said}" if said else "",
        name,
    )


def _sweep_key(g: pd.DataFrame) -> str:
    """The one variable `g`'s sweep points vary."""
    (key,) = {k for s in g["sweep"].unique() for k in SweepPoint.of(s).values}
    return key


def _trend(g: pd.DataFrame, source: Source) -> Comparison:
    """The gap's slope on log2 of the sweep's one variable, with the replication unit as the
    unit: one slope per pretraining seed, tested across seeds; where the cells pretrain
    nothing (side-by-side measurements, whose seeds are repeats at each point), the slope of
    the points' mean gaps, the sweep points being what varies."""
    key = _sweep_key(g)
    per = f"gap per doubling of {key}"
    x = np.log2(g["sweep"].map(lambda s: _sweep_value(s, key)).astype(float).to_numpy())
    g = g.assign(x=x)
    if source.unit == "measurement":
        means = g.groupby("x")["gap"].mean()
        return trend(list(means.index), list(means), "sweep points' mean gaps", per)
    slopes = [
        trend(list(d["x"]), list(d["gap"]), "points", per).delta for _, d in g.groupby("seed")
    ]
    found = differences([v for v in slopes if not math.isnan(v)], "seeds", magnitude(g["gap"]))
    return replace(found, test=f"{per}, one slope per seed: {found.test}")


def _against(g: pd.DataFrame, sign: float) -> str:
    """What a trend does not test: the points whose mean gap goes against the claimed
    direction, in words ('' where none does)."""
    means = g.groupby("sweep", sort=False)["gap"].mean()
    wrong = [f"{_sweep_words(str(k))} ({v:+.3g})" for k, v in means.items() if sign * v < 0]
    if not wrong:
        return ""
    return "not tested by the trend: the arm is on the other side of vanilla at " + ", ".join(wrong)


def _points(rows: pd.DataFrame, source: Source, role: Role, fig: PaperFigure) -> Measured | None:
    g = _at_condition(_paired_points(rows, source, role), fig)
    if g.empty:
        return None
    ours: dict[Role, float] = {"vanilla": float(g["base"].mean()), role: float(g["mine"].mean())}
    detail = _points_detail(g, source.at)
    if fig.log_scale:  # compared as log values: the gap is a log ratio
        g = g.assign(mine=np.log(g["mine"]), base=np.log(g["base"]))
        g = g.assign(gap=g["mine"] - g["base"])
    per = untested = ""
    sign = 1.0 if fig.higher_is_better else -1.0
    if fig.design == "every" and source.at == "sweep":
        comparison, per_point, point = _every_point(g, source, sign)
        detail, per = "; ".join(x for x in (detail, per_point) if x), f"at {point}"
    elif fig.design == "trend" and source.at == "sweep":
        comparison, per = _trend(g, source), f"per doubling of {_sweep_key(g)}"
        untested = _against(g, sign)
    else:
        comparison = _compare_gaps(g, source)
    seeds = tuple(int(s) for s in sorted(g["seed"].unique()))
    return Measured(ours, comparison, detail, seeds=seeds, per=per, untested=untested)


def _rounds(data: SuiteRows, source: Source, role: Role, base: float) -> Comparison | None:
    """One side-by-side cell: its kept alternating rounds against vanilla's value."""
    s = data.samples
    if s.empty:
        return None
    s = s[(s["model"] == source.roles[role]) & (s["metric"] == source.metric)]
    if s.empty:
        return None
    return differences(
        (s["value"] - base).to_numpy(), "alternating rounds", magnitude(s["value"], base)
    )


def _evidence(data: SuiteRows, source: Source, role: Role, seeds: pd.Index) -> SeedEvidence | None:
    """The per-example test on the first shared seed, where both arms kept samples."""
    s = data.samples
    if s.empty or seeds.empty:
        return None
    seed = seeds.min()
    s = s[(s["task"] == source.task) & (s["metric"] == source.metric) & (s["seed"] == seed)]
    s = s[s["step"] == s["step"].max()] if not s.empty else s
    mine, base = (
        dict(zip(g["key"], g["value"], strict=True))
        for g in (s[s["model"] == source.roles[r]] for r in (role, "vanilla"))
    )
    unit = metric_info(source.metric).sample_unit
    ev = per_example(mine, base, unit) if mine and base else None
    return None if ev is None else SeedEvidence(int(seed), ev)


def _at_ratio_ends(
    rows: pd.DataFrame, source: Source, role: Role, speed: SpeedRatio, log: bool
) -> tuple[tuple[Comparison, ...], str]:
    """The equal-time comparison again at each end of the speed ratio's interval, and what
    was carried, in words (an end where fewer than 2 seeds have vanilla's checkpoints around
    the step is not evaluated, and said so)."""
    out, said = [], []
    for ratio in speed.ends:
        mine, base, _ = equal_time(rows, source, role, ratio, speed.where)
        shared = mine.index.intersection(base.index)
        if len(shared) < 2:
            said.append(f"at {ratio:.2f}x vanilla's checkpoints end first: not evaluated")
            continue
        a, b = mine[shared], base[shared]
        out.append(compare_seeds(np.log(a), np.log(b)) if log else compare_seeds(a, b))
    span = f"the ratio's 95 % interval [{speed.low:.2f}, {speed.high:.2f}] carried"
    return tuple(out), "; ".join([span, *said]) if speed.ends else ""


def _at_wall_time(rows: pd.DataFrame, source: Source, role: Role, log: bool) -> str:
    """The equal-time comparison again at each seed's own training-loop ratio
    (`equal_time.wall_ratios`), in words: a check beside the verdict (raw p, 95 %
    interval); '' where fewer than 2 seeds have it."""
    ratios = wall_ratios(rows, source, role)
    mine, base, _ = equal_time(rows, source, role, ratios, "training loops")
    shared = mine.index.intersection(base.index)
    if len(shared) < 2:
        return ""
    a, b = mine[shared], base[shared]
    c = compare_seeds(np.log(a), np.log(b)) if log else compare_seeds(a, b)
    low, high = min(ratios[s] for s in shared), max(ratios[s] for s in shared)
    return (
        f"at each seed's own training-loop ratio instead ({low:.2f}-{high:.2f}x; a check, "
        f"not the verdict): Δ {c.delta:.4g} [{c.low:.4g}, {c.high:.4g}] (95 %), raw p {c.p:.2g}"
    )


def _final(
    data: SuiteRows, source: Source, role: Role, speed: SpeedRatio | None, log: bool
) -> Measured | None:
    rows, detail, check = data.rows, "", ""
    alternates: tuple[Comparison, ...] = ()
    if source.at == "equal-time":
        if speed is None:
            return None
        mine, base, detail = equal_time(rows, source, role, speed.value, speed.where)
        alternates, carried = _at_ratio_ends(rows, source, role, speed, log)
        detail = "; ".join(x for x in (detail, carried) if x)
        check = _at_wall_time(rows, source, role, log)
        waits: tuple[Role, ...] = (role,)  # vanilla: the checkpoints around equal time, any
    else:
        mine = final_values(rows, source.roles[role], source.task, source.metric)
        base = final_values(rows, source.roles["vanilla"], source.task, source.metric)
        waits = (role, "vanilla")
    left = "; ".join(
        x for r in waits if (x := waiting(rows, source.roles[r], source.task, source.metric))
    )
    detail = "; ".join(x for x in (detail, f"left out: {left}" if left else "") if x)
    shared = mine.index.intersection(base.index)
    if not shared.empty:  # a seed only one arm has yet (a run in progress) is left out
        mine, base = mine[shared], base[shared]
    if mine.empty or base.empty:
        return None
    ours: dict[Role, float] = {"vanilla": float(base.mean()), role: float(mine.mean())}
    if log:  # compared as log values (a perplexity): Δ is the log of the ratio
        mine, base = np.log(mine), np.log(base)
    measurement = source.unit == "measurement"  # one side-by-side measurement per seed's cell
    comparison = compare_seeds(mine, base, MEASUREMENTS if measurement else "seeds")
    if measurement and math.isnan(comparison.p):
        comparison = _rounds(data, source, role, float(base.mean())) or comparison
    evidence = _evidence(data, source, role, shared)
    seeds = tuple(int(s) for s in shared)
    return Measured(
        ours, comparison, detail, evidence, seeds=seeds, alternates=alternates, check=check
    )


def _part_values(rows: pd.DataFrame, model: str, parts: Parts) -> dict[str, float]:
    d = rows[
        (rows["model"] == model)
        & rows["task"].str.startswith(parts.prefix)
        & (rows["metric"] == parts.metric)
    ]
    return {str(k): float(v) for k, v in final_rows(d).groupby("task")["value"].mean().items()}


def parts_detail(rows: pd.DataFrame, source: Source, role: Role) -> str:
    """The gap per part of an average (XNLI's languages), in points, mean over seeds."""
    parts = source.parts
    if parts is None:
        return ""
    mine, base = (_part_values(rows, source.roles[r], parts) for r in (role, "vanilla"))
    gaps = [
        f"{k.removeprefix(parts.prefix)} {100 * (mine[k] - base[k]):+.1f}"
        for k in sorted(set(mine) & set(base))
    ]
    return f"gap per {parts.name.rstrip('s')} (points, mean over seeds): " + ", ".join(gaps)


def measure(
    data: SuiteRows,
    source: Source,
    role: Role,
    fig: PaperFigure,
    speed: SpeedRatio | None = None,
) -> Measured | None:
    """Our values and the comparison of `role` with vanilla, as `fig`'s claim is stated
    (its design, condition and scale); None without rows of both."""
    if data.rows.empty or source.unavailable:
        return None
    found = (
        _points(data.rows, source, role, fig)
        if source.at in ("along", "sweep")
        else _final(data, source, role, speed, fig.log_scale)
    )
    if found is None:
        return None
    runs = {r: run_label(data.rows, source.roles[r], source) for r in (role, "vanilla")}
    if source.at == "equal-time" and speed is not None:  # vanilla stopped earlier
        runs["vanilla"] = f"{source.roles['vanilla']} (at the step of equal time)"
    said = {r: protocol(data.rows, source.roles[r], source) for r in (role, "vanilla")}
    how = (
        said[role]
        if said[role] == said["vanilla"]
        else f"{role}: {said[role]}; vanilla: {said['vanilla']}"
    )
    return replace(found, runs=runs, protocol=how)
