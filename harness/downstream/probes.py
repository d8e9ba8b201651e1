"""Frozen-feature probes, as SentEval and MTEB run them: what a checkpoint's features carry,
with no fine-tuning noise. numpy and scikit-learn only; the model is `harness.tasks.probe`'s.

    clf = classify(train_x, train_y, eval_x, seed=0)        # predicted labels of eval_x
    reg = regress(train_x, train_y, eval_x, seed=0)         # predicted scores of eval_x
    pair_features(u, v)                                     # [u, v, |u-v|, u*v] (SentEval)
    jaccard(a, b)                                           # token overlap: the trivial baseline
    token_cosine(states), effective_rank(states)           # how collapsed the states are

A probe's one setting, its regularisation, is chosen on a slice held out of the training set
(`HELD_OUT`), never on the set that is scored, then refit on the whole training set.
"""

from __future__ import annotations

import math
import re

import numpy as np

HELD_OUT = 0.1  # share of the training set that chooses the regularisation
C_GRID = (0.01, 0.1, 1.0, 10.0)  # logistic regression's inverse strength
ALPHA_GRID = (0.1, 1.0, 10.0, 100.0)  # ridge's strength


def _split(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(fit, held-out) indices of a training set of `n`, a fixed draw of `seed`."""
    order = np.random.default_rng(seed).permutation(n)
    cut = max(1, int(n * HELD_OUT))
    return order[cut:], order[:cut]


def _standard(train: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    """Each array standardised by the training set's mean and spread."""
    mean, std = train.mean(0), train.std(0) + 1e-8
    return [(x - mean) / std for x in (train, *others)]


def classify(train_x: np.ndarray, train_y: np.ndarray, eval_x: np.ndarray, seed: int) -> np.ndarray:
    """Logistic regression on standardised features; C chosen on the held-out slice by
    accuracy; the predicted classes of `eval_x`.

    train_x: [N, F], train_y: [N] class ids, eval_x: [M, F] -> [M]."""
    from sklearn.linear_model import LogisticRegression

    train_x, eval_x = _standard(train_x, eval_x)
    fit, held = _split(len(train_y), seed)

    def model(c: float) -> LogisticRegression:
        return LogisticRegression(C=c, max_iter=1000, random_state=seed)

    scores = {
        c: (model(c).fit(train_x[fit], train_y[fit]).predict(train_x[held]) == train_y[held]).mean()
        for c in C_GRID
    }
    best = max(C_GRID, key=lambda c: (scores[c], -c))  # ties: the stronger regularisation
    return np.asarray(model(best).fit(train_x, train_y).predict(eval_x))


def regress(train_x: np.ndarray, train_y: np.ndarray, eval_x: np.ndarray, seed: int) -> np.ndarray:
    """Ridge regression on standardised features; alpha chosen on the held-out slice by
    Pearson correlation; the predicted scores of `eval_x`.

    train_x: [N, F], train_y: [N], eval_x: [M, F] -> [M]."""
    from sklearn.linear_model import Ridge

    train_x, eval_x = _standard(train_x, eval_x)
    fit, held = _split(len(train_y), seed)

    def r(alpha: float) -> float:
        pred = Ridge(alpha=alpha).fit(train_x[fit], train_y[fit]).predict(train_x[held])
        return pearson(pred, train_y[held])

    scores = {a: r(a) for a in ALPHA_GRID}
    best = max(ALPHA_GRID, key=lambda a: (scores[a], a))  # ties: the stronger regularisation
    return np.asarray(Ridge(alpha=best).fit(train_x, train_y).predict(eval_x))


def pearson(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson's r; 0 where either side is constant (no linear signal to find)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.std() == 0 or b.std() == 0:
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])


def cosines(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Row-wise cosine of two [N, D] arrays -> [N]."""
    nu = np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1) + 1e-12
    return np.asarray((u * v).sum(1) / nu)


def pair_features(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """SentEval's features of a sentence pair encoded apart: [u, v, |u-v|, u*v] -> [N, 4D]."""
    return np.concatenate([u, v, np.abs(u - v), u * v], axis=1)


def similarity_features(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """SentEval's STS features, symmetric in the pair: [u*v, |u-v|] -> [N, 2D]."""
    return np.concatenate([u * v, np.abs(u - v)], axis=1)


_WORD = re.compile(r"\w+")


def jaccard(a: str, b: str) -> float:
    """Token overlap of two texts: |A ∩ B| / |A ∪ B| of their lower-cased words."""
    wa, wb = set(_WORD.findall(a.lower())), set(_WORD.findall(b.lower()))
    return len(wa & wb) / len(wa | wb) if wa | wb else 0.0


def token_cosine(states: np.ndarray) -> float:
    """Mean cosine between distinct token states (rows of [N, D]): near 1, every state points
    one way (the collapse early MLM training goes through)."""
    n = len(states)
    if n < 2:
        return float("nan")
    unit = states / (np.linalg.norm(states, axis=1, keepdims=True) + 1e-12)
    total = float(np.square(unit.sum(0)).sum())  # sum over all pairs, self-pairs included
    return (total - n) / (n * (n - 1))


def effective_rank(states: np.ndarray) -> float:
    """Roy and Vetterli's effective rank of token states [N, D]: exp of the entropy of the
    normalised singular values (D where all directions are used equally, 1 for a line)."""
    s = np.linalg.svd(states, compute_uv=False)
    p = s / s.sum()
    p = p[p > 0]
    return float(math.exp(-(p * np.log(p)).sum()))
