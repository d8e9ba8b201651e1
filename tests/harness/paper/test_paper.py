"""The paper's figures (`harness.paper.figures`): typed once, each with a metric that has a direction,
and the verdict rule."""

from __future__ import annotations

import math

import pytest

from harness.paper.figures import PAPER, verdict

CLAIMS = {  # every row of the reproduction's list
    "table1-tokens",
    "table1-time",
    "figure3",
    "table3",
    "table4",
    "table5",
    "table6",
    "figure2",
    "figure6",
    "figure7",
    "appendix-a",
    "duplicates",
}


def test_every_claim_is_typed_with_a_directed_metric() -> None:
    assert {f.claim for f in PAPER} == CLAIMS
    for figure in PAPER:
        assert isinstance(figure.higher_is_better, bool)  # raises for a metric without one
        assert figure.values or figure.stated, figure.quantity
        assert set(figure.values) <= {"vanilla", "headless", "headless+ft"}
    assert len({f.key for f in PAPER}) == len(PAPER)  # each figure named once


def test_paper_gains_follow_the_metric_direction() -> None:
    by = {(f.source, f.quantity): f for f in PAPER}
    lambada_ppl = by[("Table 3", "LAMBADA perplexity")]
    assert lambada_ppl.paper_gain("headless") == pytest.approx(170.23 - 524.44)  # worse
    assert lambada_ppl.paper_gain("headless+ft") == pytest.approx(170.23 - 153.5)  # better
    glue = by[("Table 1", "GLUE average dev, equal tokens (4.1B)")]
    assert glue.paper_gain() == pytest.approx(83.29 - 82.43)
    assert by[("Figure 3", "GLUE average along pretraining")].paper_gain() is None


@pytest.mark.parametrize(
    ("paper", "ours", "p", "comparable", "expected"),
    [
        (0.9, 0.02, 0.01, True, "reproduced"),
        (0.9, 0.02, 0.20, True, "direction only"),
        (0.9, -0.02, 0.99, True, "not reproduced at this scale"),
        (0.9, 0.02, 0.01, False, "not comparable"),
        (-350.0, -0.5, 0.005, True, "reproduced"),  # headless worse, and worse here too
        (-350.0, -0.5, 0.3, True, "direction only"),  # p: one-tailed, the paper's direction
        (-350.0, 0.5, 0.01, True, "not reproduced at this scale"),
        (None, 0.01, 0.30, True, "direction only"),
        (0.9, math.nan, math.nan, True, "not comparable"),
        (0.9, 0.02, math.nan, True, "direction only"),  # no test possible: direction only
    ],
)
def test_verdict(paper, ours, p, comparable, expected) -> None:
    assert verdict(paper, ours, p, comparable) == expected
