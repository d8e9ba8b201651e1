"""Equal training time: vanilla at the step it reaches in the time headless took.

The time comes from the step-time ratio the throughput task measures side by side
(`Source.speed`: a suite and a model), not from each run's own wall seconds. Those runs'
own training-loop ratios (`wall_ratios`, per seed) give a second reading, a check said
beside the verdict, never its basis: other work on a shared machine lengthens them. Its 95 %
interval over the side-by-side measurements is carried through: the comparison is made again
at both ends of that interval (`Measured.alternates`), and a finding's interval spans all
three while its p is the largest (`harness.paper.findings.Finding`), so a verdict at equal
time holds over the ratio's uncertainty, not at its mean alone.

Where no checkpoint of vanilla lies at the step of equal time, its value there is
interpolated between the checkpoints on either side, linearly in log-steps (`at_step`): a
nearest checkpoint would hand vanilla up to half a checkpoint interval more or less time. A
seed whose step lies outside its checkpoints is left out and said so, never extrapolated.

    ratio = speed_ratio(rows_of_the_speed_suite, "bert-tiny-cwt")   # SpeedRatio or None
    mine, base, said = equal_time(rows, source, "headless", ratio.value, ratio.where)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from harness.paper.figures import Role
from harness.paper.labels import at_steps
from harness.paper.sources import Source
from harness.results.leaderboard import final_rows
from harness.results.stats import differences, magnitude


@dataclass(frozen=True)
class SpeedRatio:
    """A model's tokens/s over its baseline's, measured side by side: the mean, its 95 %
    interval over the measurements (nan with one), and the machines that measured it."""

    value: float
    low: float
    high: float
    where: str

    @property
    def ends(self) -> tuple[float, ...]:
        """The interval's ends, where there is an interval (positive ratios only)."""
        return tuple(x for x in (self.low, self.high) if math.isfinite(x) and x > 0)


def speed_ratio(rows: pd.DataFrame, model: str) -> SpeedRatio | None:
    """`model`'s side-by-side speed ratio over its baseline (its `speedup_vs_baseline` rows,
    each one measurement); None without rows."""
    if rows.empty:
        return None
    d = rows[(rows["model"] == model) & (rows["metric"] == "speedup_vs_baseline")]
    if d.empty:
        return None
    where = ", ".join(sorted(set(d["hardware"].dropna()))) or "machine not recorded"
    values = d["value"].astype(float)
    spread = differences(values.to_numpy(), "measurements", magnitude(values))
    return SpeedRatio(float(values.mean()), spread.low, spread.high, where)


def at_step(steps: list[float], values: list[float], target: float) -> tuple[float, str] | None:
    """The value at step `target` of a run evaluated at `steps`: a checkpoint's own where one
    lies there; else interpolated between the checkpoints on either side, linearly in
    log(step), as learning curves are near straight there (linear in steps would lean below
    a concave curve, to vanilla's loss). With its description; None outside the checkpoints."""
    pairs = sorted(zip(steps, values, strict=True))
    for step, value in pairs:
        if math.isclose(step, target, rel_tol=1e-6):
            return value, f"step {step:.0f}"
    below = [(s, v) for s, v in pairs if 0 < s < target]
    above = [(s, v) for s, v in pairs if s > target]
    if not below or not above:
        return None
    (s0, v0), (s1, v1) = below[-1], above[0]
    w = math.log(target / s0) / math.log(s1 / s0)
    return v0 + w * (v1 - v0), f"steps {s0:.0f}-{s1:.0f}, weight {w:.2f} on {s1:.0f}"


def wall_ratios(rows: pd.DataFrame, source: Source, role: Role) -> dict[object, float]:
    """Per seed both arms trained: `role`'s speed over vanilla's in the runs' own training
    loops, from the wall seconds per step at each run's last checkpoint its rows evaluated
    (rows that record no training seconds give none)."""
    per_step = {}
    for r in (role, "vanilla"):
        d = at_steps(rows, source.roles[r], source)
        d = d[pd.to_numeric(d["train_seconds"], errors="coerce") > 0]
        last = d.sort_values("step").groupby("seed").tail(1).set_index("seed")
        per_step[r] = last["train_seconds"].astype(float) / last["step"].astype(float)
    shared = per_step[role].index.intersection(per_step["vanilla"].index)
    return {s: float(per_step["vanilla"][s] / per_step[role][s]) for s in shared}


def equal_time(
    rows: pd.DataFrame,
    source: Source,
    role: Role,
    ratio: float | Mapping[object, float],
    where: str,
) -> tuple[pd.Series, pd.Series, str]:
    """Per seed: `role` at its last checkpoint; vanilla at the step it reaches in the same
    time (`role`'s steps / `ratio`, one for all seeds or one per seed: a seed without one
    is left out), by `at_step`; and what was read, in words."""
    mine = final_rows(at_steps(rows, source.roles[role], source)).set_index("seed")
    base = at_steps(rows, source.roles["vanilla"], source)
    if mine.empty or base.empty:
        return mine["value"], pd.Series(dtype=float), ""
    picks: dict[object, float] = {}  # by seed
    said: dict[str, list[str]] = {}  # what was read -> the seeds it was read for
    for seed, last in mine.iterrows():
        b = base[base["seed"] == seed]
        own = ratio.get(seed) if isinstance(ratio, Mapping) else ratio
        if b.empty or own is None:
            continue
        target = float(last["step"]) / own
        found = at_step(b["step"].astype(float).tolist(), b["value"].tolist(), target)
        if found is None:
            how = (
                f"left out, step {target:.0f} outside vanilla's checkpoints "
                f"({b['step'].min():.0f}-{b['step'].max():.0f})"
            )
        else:
            picks[seed], how = found[0], f"vanilla at {found[1]}"
        said.setdefault(how, []).append(str(seed))
    notes = [f"seed{'s' * (len(v) > 1)} {', '.join(v)}: {how}" for how, v in said.items()]
    if isinstance(ratio, Mapping):  # its caller says the ratios (`compare._at_wall_time`)
        return mine["value"], pd.Series(picks, dtype=float), "; ".join(notes)
    steps = float(mine["step"].max())
    head = (
        f"equal time from the speed ratio {ratio:.2f}x ({where}): headless's {steps:.0f} "
        f"steps take as long as vanilla's {steps / ratio:.0f} (log-step interpolation); "
    )
    return mine["value"], pd.Series(picks, dtype=float), head + "; ".join(notes)
