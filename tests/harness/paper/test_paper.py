"""The paper's figures (`harness.paper.figures`): typed once, each with a metric that has a
direction, labels that say what the paper ran apart from ours, and the symmetric verdict rule."""

from __future__ import annotations

import math

import pytest

from harness.paper.figures import verdict
from tests.harness.paper.rows import PAPER

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
    # a perplexity compares on the log scale: the gain is a log ratio
    assert lambada_ppl.paper_gain("headless") == pytest.approx(math.log(170.23 / 524.44))  # worse
    assert lambada_ppl.paper_gain("headless+ft") == pytest.approx(math.log(170.23 / 153.5))
    glue = next(f for f in PAPER if f.key == "table1-tokens: GLUE average dev")
    assert glue.paper_gain() == pytest.approx(83.29 - 82.43)
    assert by[("Figure 3", "GLUE average along pretraining")].paper_gain() is None


@pytest.mark.parametrize(
    ("paper_better", "gain", "p_adjusted", "comparable", "expected"),
    [
        (True, 0.02, 0.01, True, "reproduced"),
        (True, 0.02, 0.20, True, "inconclusive"),
        (True, -0.02, 0.01, True, "contradicted"),  # significant the other way
        (True, -0.02, 0.60, True, "inconclusive"),  # not significant: never a refutation
        (True, 0.02, 0.01, False, "not comparable"),
        (False, -0.5, 0.005, True, "reproduced"),  # the paper has it worse, and so do we
        (False, 0.5, 0.01, True, "contradicted"),
        (False, 0.5, 0.30, True, "inconclusive"),
        (True, math.nan, math.nan, True, "not comparable"),
        (True, 0.02, math.nan, True, "inconclusive"),  # no test possible
        (True, 0.02, 0.05, True, "inconclusive"),  # alpha is strict
    ],
)
def test_verdict_is_symmetric(paper_better, gain, p_adjusted, comparable, expected) -> None:
    assert verdict(paper_better, gain, p_adjusted, comparable) == expected


def test_labels_say_what_the_paper_ran_in_their_own_field() -> None:
    """The quantity names what is compared; the paper's set-up (BERT-base, its tokens and
    GPU hours) stands in `setting`, never in the label our rows are shown under."""
    for f in PAPER:
        for paper_only in ("4.1B", "GPU hours", "BERT-base", "512 tokens"):
            assert paper_only not in f.quantity, f.key
    glue = next(f for f in PAPER if f.key == "table1-time: GLUE average dev")
    assert "888" in glue.setting and "GPU hours" in glue.setting


def test_each_claim_appears_once() -> None:
    """Table 6's cwt row is its own claim, with Table 6's numbers (small encoders), not
    Table 1's (BERT-base)."""
    cwt = next(f for f in PAPER if f.key == "table6: GLUE average, cwt")
    assert cwt.values == {"vanilla": 82.45, "headless": 83.37}
    assert len({(f.source, f.quantity, tuple(f.values.items())) for f in PAPER}) == len(PAPER)
