"""A finding as a row of the reproduction page (`harness.paper.claim_rows`): a claim fills
every column, our own measurement has no paper Δ and no verdict, and the Δ, p and why cells
say what was compared and tested."""

from __future__ import annotations

import pytest

from harness.paper.claim_rows import COLUMNS, MEASURED, claim_row, delta_text
from harness.paper.claims_file import findings
from harness.paper.tables import num
from tests.harness.paper.rows import by_key, duplicates_rows, encoder_rows


@pytest.fixture(scope="module")
def found(tmp_path_factory: pytest.TempPathFactory) -> list:
    return findings(encoder_rows(tmp_path_factory.mktemp("rows"), sst2_ce=0.78, gain=0.02))


def test_a_claims_row_fills_every_column(found: list) -> None:
    avg = by_key(found, "table1-tokens: GLUE average")
    row = dict(zip(COLUMNS, claim_row(avg), strict=True))
    assert row["our run"] == (
        "GLUE average dev, equal tokens: bert-tiny-cwt (3000 steps) vs bert-tiny-ce (3000 steps)"
    )
    low, high = avg.interval
    assert row["our Δ [CI]"] == delta_text(avg)
    assert delta_text(avg) == f"{num(avg.gain, True)} [{num(low, True)}, {num(high, True)}]"
    assert row["paper"] == "82.43 → 83.29" and row["paper Δ"] == "0.86"
    assert row["seeds"] == "3" and row["verdict"] == "**reproduced**"
    p = row["p → adjusted (test)"]
    assert p == f"{avg.p_value:.3g} → {avg.p_adjusted:.3g} (paired t-test over 3 seeds)"
    assert row["why"].startswith("headless better than vanilla, as the paper has it")
    assert "gates passed: " in row["why"]


def test_a_measurement_has_no_paper_delta_and_no_verdict(tmp_path) -> None:
    """The duplicate-target ablation, where the paper makes no claim: its row is measured
    and tested, with no paper Δ and no verdict."""
    found = findings(duplicates_rows(tmp_path, sst2=0.78))
    masked = by_key(found, "duplicates: CWT duplicate targets masked")
    row = dict(zip(MEASURED, claim_row(masked), strict=True))
    assert "paper Δ" not in row and "verdict" not in row
    assert row["paper"] == f"“{masked.figure.stated}”"
    assert row["our Δ [CI]"] == delta_text(masked) != "-"
    assert row["p → adjusted (test)"].endswith("(paired t-test over 3 seeds)")


def test_a_finding_without_rows_reads_as_dashes(found: list) -> None:
    table3 = by_key(found, "table3")
    row = dict(zip(COLUMNS, claim_row(table3), strict=True))
    assert delta_text(table3) == "-" and row["ours"] == "-"
    assert row["p → adjusted (test)"] == "-" and row["verdict"] == "**not comparable**"
    assert row["why"].startswith("no rows: nothing committed in leaderboards/paper-cpu-decoder")
