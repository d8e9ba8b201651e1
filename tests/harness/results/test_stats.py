"""The statistics of a verdict, checked against scipy and by simulation with a known truth:
under the null the share of reports with any false finding stays at alpha after Holm's
correction, a planted effect is found at the power the tool predicts, and checkpoints of one
seed reduced first do not raise the false-positive rate (pooled, they would)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats

from harness.results.stats import (
    ALPHA,
    _power_by_integration,
    by_seed,
    compare_seeds,
    detectable_effect,
    differences,
    holm,
    per_example,
    power,
    seeds_needed,
    trend,
)

RNG = np.random.default_rng(20241125)


def _series(values: np.ndarray, seeds: range | list[int] | None = None) -> pd.Series:
    return pd.Series(values, index=list(seeds if seeds is not None else range(len(values))))


def test_paired_interval_and_p_match_scipy() -> None:
    a, b = RNG.normal(1.0, 1.0, 6), RNG.normal(0.0, 1.0, 6)
    c = compare_seeds(_series(a), _series(b))
    ref = stats.ttest_rel(a, b)
    ci = ref.confidence_interval()
    assert c.paired and c.seeds == 6
    assert c.p == pytest.approx(ref.pvalue)
    assert (c.low, c.high) == (pytest.approx(ci.low), pytest.approx(ci.high))
    assert c.delta == pytest.approx(float((a - b).mean()))


def test_welch_when_seeds_differ() -> None:
    a, b = RNG.normal(1.0, 1.0, 4), RNG.normal(0.0, 2.0, 5)
    c = compare_seeds(_series(a, range(4)), _series(b, range(10, 15)))
    ref = stats.ttest_ind(a, b, equal_var=False)
    ci = ref.confidence_interval()
    assert not c.paired and c.seeds == 4 and c.test == "Welch t-test over 4 vs 5 seeds"
    assert c.p == pytest.approx(ref.pvalue)
    assert (c.low, c.high) == (pytest.approx(ci.low), pytest.approx(ci.high))
    # the same values as measurements (a cell that pretrains nothing): the same test, named so
    m = compare_seeds(_series(a, range(4)), _series(b, range(10, 15)), "measurements")
    assert m.test == "Welch t-test over 4 vs 5 measurements" and m.unit == "measurements"
    assert (m.p, m.low, m.high) == (c.p, c.low, c.high)


def test_one_seed_has_no_seed_level_test() -> None:
    c = compare_seeds(_series(np.array([0.7])), _series(np.array([0.6])))
    assert math.isnan(c.p) and c.delta == pytest.approx(0.1)
    assert "no seed-level test" in c.test


def test_arms_without_a_test_say_why() -> None:
    """No values (NaN dropped), no spread, one measurement: a Δ where there is one, no p,
    and the reason in words; never a p of 0 or 1 made up from nothing."""
    empty = compare_seeds(_series(np.array([math.nan, math.nan])), _series(np.array([0.5, 0.6])))
    assert (empty.seeds, empty.test) == (0, "no values") and math.isnan(empty.delta)
    flat = compare_seeds(
        _series(np.array([0.7, 0.7]), [0, 1]), _series(np.array([0.5, 0.5]), [2, 3])
    )
    assert flat.test == "2 vs 2 seeds: no spread" and flat.delta == pytest.approx(0.2)
    same = compare_seeds(_series(np.array([0.7, 0.8])), _series(np.array([0.6, 0.7])))
    assert same.paired and same.test == "paired over 2 seeds: identical differences"
    # equal gaps but for float rounding, which grows with the values (perplexities of 1e7)
    big = compare_seeds(_series(np.array([1.8e7, 4.0e7]) + 0.3), _series(np.array([1.8e7, 4.0e7])))
    assert big.test == "paired over 2 seeds: identical differences"
    welch = compare_seeds(
        _series(np.array([0.7, 0.7 + 1e-16]), [0, 1]), _series(np.array([0.5, 0.5]), [2, 3])
    )
    assert welch.test == "2 vs 2 seeds: no spread"
    one = differences([0.03], "side-by-side measurements", 0.03)
    assert one.test == "one of the side-by-side measurements: no test" and one.seeds == 1
    assert all(math.isnan(c.p) for c in (empty, flat, same, big, welch, one))
    assert by_seed(pd.DataFrame({"seed": [], "value": []})).empty


def test_holm_matches_the_textbook_example() -> None:
    # Holm (1979) style: sorted 0.01, 0.02, 0.03, 0.04 with m = 4
    assert holm([0.04, 0.01, 0.03, 0.02]) == pytest.approx([0.06, 0.04, 0.06, 0.06])
    out = holm([0.01, math.nan, 0.5])
    assert out[0] == pytest.approx(0.02) and math.isnan(out[1]) and out[2] == pytest.approx(0.5)


def test_power_matches_a_simulation_and_seeds_needed_inverts_it() -> None:
    sd, n = 1.0, 5
    effect = detectable_effect(sd, n, paired=False)
    assert power(effect, sd, n, paired=False) == pytest.approx(0.8, abs=1e-6)
    assert seeds_needed(effect, sd, paired=False) == n
    found = 0
    trials = 2000
    for _ in range(trials):
        a, b = RNG.normal(effect, sd, n), RNG.normal(0.0, sd, n)
        c = compare_seeds(_series(a, range(n)), _series(b, range(100, 100 + n)))
        found += c.p < ALPHA
    assert found / trials == pytest.approx(0.8, abs=0.04)


@pytest.mark.parametrize("df", [3, 4, 8])
@pytest.mark.parametrize("ncp", [0.0, 0.5, 2.0, 6.0])
def test_the_integrated_power_is_the_noncentral_ts(df: int, ncp: float) -> None:
    """Where scipy's noncentral t is defined, the integral used where it is not agrees."""
    crit = float(stats.t.ppf(1 - 0.05 / 28 / 2, df))
    exact = stats.nct.sf(crit, df, ncp) + stats.nct.cdf(-crit, df, ncp)
    assert _power_by_integration(crit, df, ncp) == pytest.approx(exact, abs=1e-9)


def _null_pvalues(reports: int, claims: int, seeds: int) -> np.ndarray:
    """(reports, claims) p-values of paired seeds with no true effect: scipy's paired t-test
    over all of them at once, which `compare_seeds` equals (checked on the first report)."""
    a, b = RNG.normal(0.0, 1.0, (2, reports, claims, seeds))
    p = stats.ttest_rel(a, b, axis=-1).pvalue
    ours = [compare_seeds(_series(x), _series(y)).p for x, y in zip(a[0], b[0], strict=True)]
    assert_allclose(ours, p[0], rtol=1e-9)
    return np.asarray(p)


def test_under_the_null_holm_keeps_the_familywise_error_at_alpha() -> None:
    """400 simulated reports of 40 claims (3 paired seeds each, no true effect)."""
    pvalues = _null_pvalues(400, 40, 3)
    any_false = [any(p < ALPHA for p in holm(list(report))) for report in pvalues]
    # without the correction, nearly every report would hold a false finding
    assert np.mean(any_false) <= ALPHA + 0.02


def test_uncorrected_many_claims_would_fail_the_same_check() -> None:
    """The check above can fail: uncorrected p over 40 claims finds something almost always."""
    pvalues = _null_pvalues(100, 40, 3)
    assert np.mean((pvalues < ALPHA).any(axis=1)) > 0.5


def _correlated_rows(arm_effect: float, seeds: int, checkpoints: int) -> pd.DataFrame:
    """Each seed: a seed-level draw shared by its checkpoints, plus small checkpoint noise."""
    rows = []
    for seed in range(seeds):
        level = RNG.normal(arm_effect, 1.0)
        for step in range(checkpoints):
            rows.append({"seed": seed, "step": step, "value": level + RNG.normal(0, 0.1)})
    return pd.DataFrame(rows)


def test_checkpoints_within_a_seed_reduced_first_keep_the_error_rate() -> None:
    trials, seeds, checkpoints = 1000, 3, 6
    reduced = pooled = 0
    for _ in range(trials):
        a, b = _correlated_rows(0.0, seeds, checkpoints), _correlated_rows(0.0, seeds, checkpoints)
        reduced += compare_seeds(by_seed(a), by_seed(b)).p < ALPHA
        pooled += stats.ttest_ind(a["value"], b["value"], equal_var=False).pvalue < ALPHA
    assert reduced / trials <= ALPHA + 0.02
    assert pooled / trials > 3 * ALPHA  # treating checkpoints as samples: the inflation avoided


def test_per_example_evidence_mcnemar_and_bootstrap() -> None:
    a = {str(i): float(i % 3 != 0) for i in range(300)}  # 2/3 right
    b = {str(i): float(i % 2 == 0) for i in range(300)}  # 1/2 right
    ev = per_example(a, b)
    assert ev is not None and ev.test.startswith("McNemar") and ev.p < 0.01
    assert ev.delta == pytest.approx(2 / 3 - 1 / 2)
    same = per_example(a, a)
    assert same is not None and same.p == 1.0
    x = {str(i): float(v) for i, v in enumerate(RNG.normal(0.2, 1.0, 400))}
    y = {str(i): 0.0 for i in range(400)}
    boot = per_example(x, y)
    assert boot is not None and boot.test.startswith("paired bootstrap")
    assert boot.low < boot.delta < boot.high and boot.p < 0.01
    assert per_example({"a": 1.0}, {"a": 0.0}) is None
    far = per_example({k: v + 10.0 for k, v in x.items()}, y, rounds=999)  # no resample near 0
    assert far is not None and far.p == pytest.approx(2 / 1000)
    batches = per_example(x, y, "evaluation batches")
    assert batches is not None and "over 400 evaluation batches" in batches.test
    sentences = per_example(a, b, "sentences")
    assert sentences is not None and "McNemar exact test over 300 sentences" in sentences.test


def test_an_interval_at_a_corrected_level_excludes_zero_exactly_where_p_is_below_it() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        d = rng.normal(0.3, 0.2, 3)
        c = differences(d, "seeds", 1.0)
        for alpha in (0.05, 0.05 / 27):
            low, high = c.interval_at(alpha)
            assert (c.p < alpha) == (not low <= 0 <= high)
    assert c.interval_at(0.05) == pytest.approx((c.low, c.high))


def test_power_is_a_range_over_the_spreads_own_interval() -> None:
    c = differences(np.array([0.1, 0.3, 0.2]), "seeds", 1.0)
    low, high = c.power_range(0.5)
    point = c.power_at(0.5)
    assert low < point < high
    df = 2  # the spread's 95 % interval with 2 degrees of freedom spans 0.52x to 6.3x
    assert math.sqrt(df / stats.chi2.ppf(0.975, df)) == pytest.approx(0.52, abs=0.01)
    assert math.sqrt(df / stats.chi2.ppf(0.025, df)) == pytest.approx(6.28, abs=0.05)


def test_a_trend_is_the_least_squares_slope_with_its_t_test() -> None:
    x = np.log2([8192, 8192, 16384, 16384, 32768, 32768])
    y = np.array([0.1, 0.12, 0.3, 0.29, 0.5, 0.52])
    c = trend(list(x), list(y), "measurements", "gap per doubling")
    fit = stats.linregress(x, y)
    assert c.delta == pytest.approx(fit.slope) and c.p == pytest.approx(fit.pvalue)
    assert c.df == 4 and c.low < c.delta < c.high
    assert math.isnan(trend([1.0, 1.0, 1.0], [0.1, 0.2, 0.3], "m", "x").p)  # one condition
