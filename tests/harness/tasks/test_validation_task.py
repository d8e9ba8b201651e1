"""The validation task's unigram baseline (`harness.tasks.validation`), from a token
cache's counts."""

from __future__ import annotations

import numpy as np
import pytest

from harness.tasks.validation import unigram_perplexity


def test_unigram_perplexity() -> None:
    uniform = np.arange(1000) % 10  # every id of 10 as often: perplexity 10 on any of them
    assert unigram_perplexity(
        np.bincount(uniform, minlength=10), np.array([0, 3, 9])
    ) == pytest.approx(10.0)
    skewed = np.array([0] * 98 + [1, 2])  # add-one: p(0) = 99/103
    assert unigram_perplexity(np.bincount(skewed, minlength=3), np.array([0])) == pytest.approx(
        103 / 99
    )
