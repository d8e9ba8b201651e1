"""Comparing two arms with the pretraining seed as the unit: effect, interval, test, power.

Every comparison in the project goes through here (the leaderboard's mark, the paper's
verdicts, `hlm power`):

1. Reduce first. Each arm gives one value per pretraining seed (`by_seed`: the mean of
   everything inside a seed: checkpoints along training, fine-tuning seeds, sweep points).
   Checkpoints or fine-tuning runs of one pretraining run are never independent samples.
2. Test across seeds (`compare_seeds`): a paired t-test over the seeds both arms have (two
   or more), Welch's t-test otherwise; two-sided, with Δ = mean(a) - mean(b) and its
   95 % t interval.
3. Correct for many claims (`holm`): Holm's step-down adjustment over one family of tests.
4. Say how much the seeds could see (`power`, `detectable_effect`, `seeds_needed`): the
   two-sided t-test's power from the noncentral t distribution at the seed-level spread
   observed.
5. Where per-example scores were kept, a second line of evidence on the examples both arms
   scored (`per_example`): McNemar's exact test for 0/1 scores, a paired bootstrap otherwise.
   It speaks of the test set, not of pretraining seeds, and is labelled so.

The arithmetic is the reference libraries': scipy's `ttest_1samp`, `ttest_ind` (Welch),
`linregress`, `bootstrap` and `binomtest`; statsmodels' `multipletests` (Holm) and
`TTestPower` / `TTestIndPower`. Where scipy's noncentral t gives nan (one degree of freedom),
power is integrated directly. tests/harness/results/test_reference_stats.py checks them
equal to the formulas on the committed rows.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import integrate, optimize, stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestIndPower, TTestPower

ALPHA = 0.05
POWER = 0.8
MAX_SEEDS = 1000  # `seeds_needed` answers None beyond this
# A spread below this fraction of the values compared is float rounding, not variation: two
# seeds whose gaps are equal but for the last bits (0.7 - 0.6 and 0.8 - 0.7) have no spread,
# and a t-test on them would give a p of 1e-16 out of nothing.
ROUNDING = 1e-12


def _no_spread(spread: float, scale: float) -> bool:
    """Whether `spread` is nil for values of magnitude `scale` (float rounding included)."""
    return spread <= ROUNDING * scale


def magnitude(*values: pd.Series | float) -> float:
    """The largest |value| among series and numbers: the scale of a comparison's rounding."""
    return max(float(v.abs().max()) if isinstance(v, pd.Series) else abs(float(v)) for v in values)


def by_seed(rows: pd.DataFrame, key: str = "seed") -> pd.Series:
    """One value per pretraining seed: the mean of `rows["value"]` within each seed."""
    if rows.empty:
        return pd.Series(dtype=float)
    return rows.groupby(key)["value"].mean().astype(float)


@dataclass(frozen=True)
class Comparison:
    """Arm a against arm b over pretraining seeds (two-sided)."""

    delta: float  # mean(a) - mean(b)
    low: float  # 95 % interval of delta
    high: float
    p: float  # two-sided; nan where no test is possible (one seed, no spread)
    seeds: int  # pairs (paired) or the smaller arm's seeds (Welch)
    sd: float  # seed-level spread: of the paired differences, or pooled over both arms
    paired: bool
    test: str  # in words, e.g. "paired t-test over 3 seeds"
    unit: str = "seeds"  # what `seeds` counts: seeds, or independent side-by-side measurements
    df: float = math.nan  # the t statistic's degrees of freedom (nan: no t interval)

    def interval_at(self, alpha: float) -> tuple[float, float]:
        """The (1 - `alpha`) t interval of Δ: at a corrected level, the interval that agrees
        with a test at that level (it excludes 0 exactly where p < `alpha`)."""
        if math.isnan(self.df) or math.isnan(self.low):
            return self.low, self.high
        half = (self.high - self.low) / 2 / float(stats.t.ppf(1 - ALPHA / 2, self.df))
        half *= float(stats.t.ppf(1 - alpha / 2, self.df))
        return self.delta - half, self.delta + half

    def power_range(self, effect: float, alpha: float = ALPHA) -> tuple[float, float]:
        """The power against `effect` at either end of the 95 % interval of the seed-level
        spread (chi-square, `df` degrees of freedom): with 3 seeds the spread itself is
        known only within a factor of several, and so is the power."""
        if math.isnan(self.df) or not self.sd > 0:
            return math.nan, math.nan
        wide = self.sd * math.sqrt(self.df / float(stats.chi2.ppf(ALPHA / 2, self.df)))
        narrow = self.sd * math.sqrt(self.df / float(stats.chi2.ppf(1 - ALPHA / 2, self.df)))
        at = [power(effect, sd, self.seeds, self.paired, alpha) for sd in (wide, narrow)]
        return at[0], at[1]

    def detectable(self, power: float = POWER, alpha: float = ALPHA) -> float:
        """The smallest |Δ| these seeds would detect with `power` at the observed spread."""
        return detectable_effect(self.sd, self.seeds, self.paired, power, alpha)

    def seeds_for(self, effect: float, power: float = POWER, alpha: float = ALPHA) -> int | None:
        """Seeds per arm that would detect `effect` with `power` at the observed spread."""
        return seeds_needed(effect, self.sd, self.paired, power, alpha)

    def power_at(self, effect: float, alpha: float = ALPHA) -> float:
        """The power these seeds had against `effect` at the observed spread."""
        return power(effect, self.sd, self.seeds, self.paired, alpha)


def _no_test(delta: float, n: int, paired: bool, why: str, unit: str = "seeds") -> Comparison:
    return Comparison(delta, math.nan, math.nan, math.nan, n, math.nan, paired, why, unit)


def compare_seeds(a: pd.Series, b: pd.Series, unit: str = "seeds") -> Comparison:
    """Arm `a` against arm `b`, each indexed by seed (one value per seed): paired over the
    seeds both have when they share two or more (a seed only one arm has yet, a run in
    progress, is left out), Welch's test over all seeds otherwise. `unit` names what one
    seed's value is in the test's label: a pretraining seed, or a measurement (a cell that
    pretrains nothing: `Metric.replicate`)."""
    a, b = a.dropna().astype(float), b.dropna().astype(float)
    if a.empty or b.empty:
        return _no_test(math.nan, 0, False, "no values", unit)
    shared = a.index.intersection(b.index)
    if len(shared) >= 2:  # one paired difference per shared seed
        a, b = a[shared], b[shared]
        return differences((a - b).to_numpy(), unit, magnitude(a, b))
    return _welch(a, b, unit)


def differences(d: Sequence[float] | np.ndarray, unit: str, scale: float) -> Comparison:
    """A one-sample t-test of paired differences `d` (one per `unit`: seeds, or independent
    side-by-side measurements) against zero. `scale`, the magnitude of the values whose
    differences these are (`magnitude`), tells float rounding from spread."""
    d = np.asarray(d, dtype=float)  # (n,)
    n = len(d)
    delta = float(d.mean()) if n else math.nan
    if n < 2:
        return _no_test(delta, n, True, f"one of the {unit}: no test", unit)
    sd = float(d.std(ddof=1))
    if _no_spread(sd, scale):
        return _no_test(delta, n, True, f"paired over {n} {unit}: identical differences", unit)
    with warnings.catch_warnings():  # near-identical values: `_no_spread` decided above
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.ttest_1samp(d, 0.0)
    ci = result.confidence_interval(1 - ALPHA)
    test = f"paired t-test over {n} {unit}"
    return Comparison(
        delta, float(ci.low), float(ci.high), float(result.pvalue), n, sd, True, test, unit, n - 1
    )


def _welch(a: pd.Series, b: pd.Series, unit: str = "seeds") -> Comparison:
    na, nb = len(a), len(b)
    delta = float(a.mean() - b.mean())
    n = min(na, nb)
    if na < 2 or nb < 2:
        return _no_test(delta, n, False, f"{na} vs {nb} {unit}: no seed-level test", unit)
    va, vb = float(a.var(ddof=1)), float(b.var(ddof=1))
    se = math.sqrt(va / na + vb / nb)
    if _no_spread(se, magnitude(a, b)):
        return _no_test(delta, n, False, f"{na} vs {nb} {unit}: no spread", unit)
    with warnings.catch_warnings():  # near-identical values: `_no_spread` decided above
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.ttest_ind(a.to_numpy(), b.to_numpy(), equal_var=False)
    ci = result.confidence_interval(1 - ALPHA)
    sd = math.sqrt((va + vb) / 2)
    test = f"Welch t-test over {na} vs {nb} {unit}"
    low, high, p, df = float(ci.low), float(ci.high), float(result.pvalue), float(result.df)
    return Comparison(delta, low, high, p, n, sd, False, test, unit, df)


def trend(x: Sequence[float], y: Sequence[float], unit: str, per: str) -> Comparison:
    """The least-squares slope of `y` on `x` (one pair per independent `unit`), its 95 % t
    interval and two-sided p (n - 2 degrees of freedom): a claim that a gap grows with a
    sweep variable, tested as a trend, not as replicates. `sd` is the slope's standard error
    times sqrt(n), so the paired t power formulas read it as they read a mean's."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)  # (n,), (n,)
    n = len(xs)
    name = f"trend over {n} {unit} ({per})"
    if n < 3 or np.ptp(xs) == 0:
        return _no_test(math.nan, n, True, f"{name}: fewer than 3 points or one condition", unit)
    fit = stats.linregress(xs, ys)
    slope, se = float(fit.slope), float(fit.stderr)
    if _no_spread(se, magnitude(pd.Series(ys))):
        return _no_test(slope, n, True, f"{name}: no spread", unit)
    half = float(stats.t.ppf(1 - ALPHA / 2, n - 2)) * se
    p = float(fit.pvalue)
    return Comparison(
        slope, slope - half, slope + half, p, n, se * math.sqrt(n), True, name, unit, n - 2
    )


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (nan stays nan and does not count as a test)."""
    idx = [i for i, p in enumerate(pvalues) if not math.isnan(p)]
    out = [math.nan] * len(pvalues)
    if idx:
        adjusted = multipletests([pvalues[i] for i in idx], alpha=ALPHA, method="holm")[1]
        for i, p in zip(idx, adjusted, strict=True):
            out[i] = float(p)
    return out


def power(effect: float, sd: float, n: int, paired: bool, alpha: float = ALPHA) -> float:
    """Power of the two-sided t-test at `n` seeds per arm against a true |Δ| = `effect`."""
    if n < 2 or not sd > 0 or math.isnan(effect):
        return math.nan
    size = abs(effect) / sd  # Cohen's d
    with warnings.catch_warnings():  # statsmodels warns where scipy's nct gives nan
        warnings.simplefilter("ignore", RuntimeWarning)
        if paired:
            value = float(TTestPower().power(size, n, alpha, alternative="two-sided"))
        else:
            value = float(TTestIndPower().power(size, n, alpha, alternative="two-sided"))
    if not math.isnan(value):
        return value
    df = n - 1 if paired else 2 * n - 2
    ncp = size * (math.sqrt(n) if paired else math.sqrt(n / 2))
    return _power_by_integration(float(stats.t.ppf(1 - alpha / 2, df)), df, ncp)


def _power_by_integration(crit: float, df: int, ncp: float) -> float:
    """P(|Z + ncp| > crit * sqrt(V / df)), V ~ chi2(df): the noncentral t's tails where
    scipy's `nct` returns nan (it does at one degree of freedom for some arguments)."""

    log_norm = (df / 2) * math.log(2.0) + math.lgamma(df / 2)  # chi2(df)'s density constant
    shift = ncp / math.sqrt(2.0)

    def tails(v: float) -> float:  # math's scalar functions: scipy's cost 100x more per point
        if v <= 0.0:
            return 0.0
        density = math.exp((df / 2 - 1) * math.log(v) - v / 2 - log_norm)
        s = crit * math.sqrt(v / (2.0 * df))  # P(Z > x) = erfc(x / sqrt 2) / 2
        return density * 0.5 * (math.erfc(s - shift) + math.erfc(s + shift))

    return float(integrate.quad(tails, 0.0, math.inf, limit=200)[0])


def detectable_effect(
    sd: float, n: int, paired: bool, target: float = POWER, alpha: float = ALPHA
) -> float:
    """The |Δ| that `n` seeds per arm detect with power `target` at spread `sd`."""
    if n < 2 or not sd > 0:
        return math.nan
    hi = sd
    while power(hi, sd, n, paired, alpha) < target:
        hi *= 2
    return float(optimize.brentq(lambda e: power(e, sd, n, paired, alpha) - target, 0.0, hi))


def seeds_needed(
    effect: float, sd: float, paired: bool, target: float = POWER, alpha: float = ALPHA
) -> int | None:
    """Seeds per arm for power `target` against |Δ| = `effect` at spread `sd`; None beyond
    `MAX_SEEDS` or where the effect or the spread is unknown."""
    if math.isnan(effect) or effect == 0 or not sd > 0:
        return None
    for n in range(2, MAX_SEEDS + 1):
        if power(effect, sd, n, paired, alpha) >= target:
            return n
    return None


@dataclass(frozen=True)
class Evidence:
    """A per-example comparison on the examples both arms scored (one pretraining seed each)."""

    delta: float
    low: float
    high: float
    p: float
    examples: int
    test: str


def per_example(
    a: Mapping[str, float],
    b: Mapping[str, float],
    unit: str = "examples",
    rounds: int = 4000,
    seed: int = 0,
) -> Evidence | None:
    """a against b on their shared examples: McNemar's exact test for 0/1 scores, a paired
    bootstrap of the mean difference otherwise (its p at least 2/(rounds + 1), never 0); None
    with fewer than 2 shared examples.
    `unit` names what one example is in the test's label (the metric's `sample_unit`)."""
    keys = sorted(set(a) & set(b))
    if len(keys) < 2:
        return None
    x = np.array([a[k] for k in keys], dtype=float)  # (examples,)
    y = np.array([b[k] for k in keys], dtype=float)
    d = x - y
    if set(np.unique(np.concatenate([x, y]))) <= {0.0, 1.0}:
        return _mcnemar(d, len(keys), unit)
    boot = stats.bootstrap(
        (d,),
        np.mean,
        n_resamples=rounds,
        confidence_level=1 - ALPHA,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    means = boot.bootstrap_distribution  # (rounds,)
    low, high = float(boot.confidence_interval.low), float(boot.confidence_interval.high)
    # each tail counts the observed sample as one of the resamples, so p >= 2/(rounds + 1):
    # a bootstrap never gives p = 0 (Davison & Hinkley 1997, sec. 4.2; Phipson & Smyth 2010)
    tails = [
        (int((means <= 0).sum()) + 1) / (rounds + 1),
        (int((means >= 0).sum()) + 1) / (rounds + 1),
    ]
    p = min(1.0, 2 * min(tails))
    test = f"paired bootstrap over {len(keys)} {unit} ({rounds} resamples)"
    return Evidence(float(d.mean()), low, high, p, len(keys), test)


def _mcnemar(d: np.ndarray, n: int, unit: str) -> Evidence:
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    delta = float(d.mean())
    if wins + losses == 0:
        return Evidence(delta, 0.0, 0.0, 1.0, n, f"McNemar exact test over {n} {unit}")
    p = float(stats.binomtest(wins, wins + losses, 0.5).pvalue)
    se = math.sqrt(max(float(d.var(ddof=1)), 0.0) / n)
    z = float(stats.norm.ppf(1 - ALPHA / 2))
    test = f"McNemar exact test over {n} {unit} ({wins} vs {losses} discordant)"
    return Evidence(delta, delta - z * se, delta + z * se, p, n, test)
