"""`harness.results.stats` delegates its arithmetic to scipy and statsmodels: on every
comparison the committed leaderboards hold, each result equals the textbook formula the
project computed by hand before (kept here as the reference)."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from harness.results import stats
from harness.results.leaderboard import aggregate, read_leaderboard, result_files
from harness.results.samples import read_samples

ROOT = Path(__file__).resolve().parents[3] / "leaderboards"
FOLDERS = sorted(d for d in ROOT.iterdir() if d.is_dir() and result_files(d))
ALPHA = stats.ALPHA


def _paired(d: np.ndarray) -> tuple[float, float, float]:
    n, delta, se = len(d), float(d.mean()), float(d.std(ddof=1)) / math.sqrt(len(d))
    half = float(sps.t.ppf(1 - ALPHA / 2, n - 1)) * se
    return delta - half, delta + half, float(2 * sps.t.sf(abs(delta / se), n - 1))


def _welch(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float, float]:
    na, nb, va, vb = len(a), len(b), a.var(ddof=1), b.var(ddof=1)
    delta, se = a.mean() - b.mean(), math.sqrt(va / na + vb / nb)
    df = (va / na + vb / nb) ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
    half = float(sps.t.ppf(1 - ALPHA / 2, df)) * se
    return delta - half, delta + half, float(2 * sps.t.sf(abs(delta / se), df)), df


def _holm(p: list[float]) -> list[float]:
    order = sorted(range(len(p)), key=lambda i: p[i])
    out, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        out[i] = running
    return out


def _power(effect: float, sd: float, n: int, paired: bool) -> float:
    df = n - 1 if paired else 2 * n - 2
    se = sd / math.sqrt(n) if paired else sd * math.sqrt(2 / n)
    crit = float(sps.t.ppf(1 - ALPHA / 2, df))
    return float(sps.nct.sf(crit, df, effect / se) + sps.nct.cdf(-crit, df, effect / se))


def _pairs() -> list[tuple[str, pd.Series, pd.Series]]:
    """Every two models of a committed folder at one sweep point, task and metric, as their
    per-seed values: the comparisons the leaderboards' marks and the paper page make."""
    out = []
    for folder in FOLDERS:
        agg = aggregate(read_leaderboard(folder))
        for key, g in agg.groupby(["sweep", "task", "metric"]):
            for (_, x), (_, y) in itertools.combinations(g.iterrows(), 2):
                a, b = pd.Series(x["by_seed"]), pd.Series(y["by_seed"])
                out.append((f"{folder.name} {key} {x['model']} vs {y['model']}", a, b))
    return out


PAIRS = _pairs()


def test_every_committed_comparison_equals_the_formula() -> None:
    tested = {"paired": 0, "Welch": 0}
    pvalues = []
    # each pair as run (paired over shared seeds), then as if its arms shared no seed (Welch)
    unpaired = [(f"{n} (unpaired)", a, b.set_axis(b.index + 1000)) for n, a, b in PAIRS]
    for name, a, b in PAIRS + unpaired:
        c = stats.compare_seeds(a, b)
        if math.isnan(c.p):
            continue
        shared = a.index.intersection(b.index)
        if c.paired:
            want = _paired((a[shared] - b[shared]).to_numpy(dtype=float))
            tested["paired"] += 1
        else:
            *want, df = _welch(a.to_numpy(dtype=float), b.to_numpy(dtype=float))
            assert c.df == pytest.approx(df, rel=1e-12), name
            tested["Welch"] += 1
        assert (c.low, c.high, c.p) == pytest.approx(tuple(want), rel=1e-9, abs=1e-15), name
        pvalues.append(c.p)
        if c.sd > 0 and c.seeds >= 2 and c.delta:
            want_power = _power(abs(c.delta), c.sd, c.seeds, c.paired)
            if not math.isnan(want_power):
                got = stats.power(c.delta, c.sd, c.seeds, c.paired)
                assert got == pytest.approx(want_power, rel=1e-9, abs=1e-12), name
    assert tested["paired"] >= 200 and tested["Welch"] >= 200, tested
    assert stats.holm(pvalues) == pytest.approx(_holm(pvalues), rel=1e-12)


def test_holm_keeps_nan_out_of_the_family() -> None:
    assert stats.holm([0.01, math.nan, 0.04])[::2] == pytest.approx(_holm([0.01, 0.04]))
    assert math.isnan(stats.holm([0.01, math.nan, 0.04])[1])


def test_the_bootstrap_draws_the_resamples_it_drew_by_hand() -> None:
    """scipy's bootstrap draws the same index matrix from the same generator, so the
    interval and p on committed per-example scores equal the hand-rolled resampling's."""
    samples = read_samples(ROOT / "paper-cpu-encoder")
    continuous = samples[~samples["value"].isin([0.0, 1.0])]
    _, g = next(iter(continuous.groupby(["task", "metric"])))
    first, second = sorted(g["cell_id"].unique())[:2]
    a = g[g["cell_id"] == first].set_index("key")["value"].to_dict()
    b = g[g["cell_id"] == second].set_index("key")["value"].to_dict()
    ev = stats.per_example(a, b, rounds=999)
    assert ev is not None
    keys = sorted(set(a) & set(b))
    d = np.array([a[k] - b[k] for k in keys])
    rng = np.random.default_rng(0)
    means = d[rng.integers(0, len(d), size=(999, len(d)))].mean(axis=1)
    low, high = np.quantile(means, [ALPHA / 2, 1 - ALPHA / 2])
    tails = [((means <= 0).sum() + 1) / 1000, ((means >= 0).sum() + 1) / 1000]
    assert (ev.low, ev.high, ev.p) == pytest.approx((low, high, min(1.0, 2 * min(tails))))
