"""The probes can see a signal that is there and none that is not: features that carry the
label (planted) are found, random features score at chance; the collapse diagnostics read
1 and 0 where they should."""

from __future__ import annotations

import numpy as np
import pytest

from harness.downstream.probes import (
    classify,
    cosines,
    effective_rank,
    jaccard,
    pair_features,
    pearson,
    regress,
    token_cosine,
)

N, D = 1200, 32


def _data(seed: int, planted: float) -> tuple[np.ndarray, np.ndarray]:
    """[N, D] features whose first column carries the label with strength `planted`."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, N)
    x = rng.normal(size=(N, D))
    x[:, 0] += planted * (2 * y - 1)
    return x, y


def test_a_planted_label_is_found_and_random_features_score_at_chance() -> None:
    x, y = _data(0, planted=2.0)
    pred = classify(x[:1000], y[:1000], x[1000:], seed=0)
    assert (pred == y[1000:]).mean() > 0.9
    x, y = _data(1, planted=0.0)
    pred = classify(x[:1000], y[:1000], x[1000:], seed=0)
    assert 0.4 < (pred == y[1000:]).mean() < 0.6


def test_a_planted_score_is_regressed_and_noise_is_not() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=(N, D))
    score = x[:, :3].sum(1) + 0.3 * rng.normal(size=N)
    assert pearson(regress(x[:1000], score[:1000], x[1000:], seed=0), score[1000:]) > 0.9
    noise = rng.normal(size=N)
    assert abs(pearson(regress(x[:1000], noise[:1000], x[1000:], seed=0), noise[1000:])) < 0.2


def test_pair_features_let_a_linear_probe_see_agreement() -> None:
    """Whether u and v share a sign is no linear function of [u, v], but is of u*v."""
    rng = np.random.default_rng(3)
    u, v = rng.normal(size=(N, 1)), rng.normal(size=(N, 1))
    y = ((u * v)[:, 0] > 0).astype(int)
    feats = pair_features(u, v)
    assert feats.shape == (N, 4)
    assert (classify(feats[:1000], y[:1000], feats[1000:], seed=0) == y[1000:]).mean() > 0.9


def test_collapse_diagnostics_read_their_extremes() -> None:
    line = np.outer(np.arange(1, 101), np.ones(D))  # every state one direction
    assert token_cosine(line) == pytest.approx(1.0)
    assert effective_rank(line) == pytest.approx(1.0)
    spread = np.eye(D)
    assert token_cosine(spread) == pytest.approx(0.0, abs=1e-9)
    assert effective_rank(spread) == pytest.approx(D)
    assert cosines(np.eye(2), np.eye(2)) == pytest.approx([1.0, 1.0])


def test_jaccard_is_word_overlap() -> None:
    assert jaccard("The cat sat.", "the cat ran") == pytest.approx(2 / 4)
    assert jaccard("", "") == 0.0
    assert pearson(np.ones(5), np.arange(5)) == 0.0  # a constant side: no linear signal
