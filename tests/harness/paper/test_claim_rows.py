"""A finding as a row of the reproduction page (`harness.paper.claim_rows`): a claim fills
every column, our own measurement has no paper Δ and no verdict, the why is short, and what
rows share is said once under the table (protocols as numbered footnotes)."""

from __future__ import annotations

import re

import pytest

from harness.paper.claim_rows import (
    COLUMNS,
    MEASURED,
    Footnotes,
    claim_row,
    delta_text,
    run_text,
    section_notes,
    short_why,
)
from harness.paper.claims_file import findings
from harness.paper.tables import ditto, num
from tests.harness.paper.rows import by_key, duplicates_rows, encoder_rows


@pytest.fixture(scope="module")
def found(tmp_path_factory: pytest.TempPathFactory) -> list:
    return findings(encoder_rows(tmp_path_factory.mktemp("rows"), sst2_ce=0.78, gain=0.02))


def test_a_claims_row_fills_every_column(found: list) -> None:
    avg = by_key(found, "table1-tokens: GLUE average")
    row = dict(zip(COLUMNS, claim_row(avg), strict=True))
    assert row["claim"] == "GLUE average dev" and row["scale"] == "CPU"
    low, high = avg.interval
    assert row["our Δ [CI]"] == delta_text(avg)
    assert delta_text(avg) == f"{num(avg.gain, True)} [{num(low, True)}, {num(high, True)}]"
    assert row["paper"] == "82.43 → 83.29" and row["paper Δ"] == "0.86"
    assert row["verdict"] == "**reproduced**"
    assert row["p → adjusted"] == f"{avg.p_value:.3g} → {avg.p_adjusted:.3g}"  # paired t
    assert row["why"] == "headless better, as the paper has it"


def test_the_runs_are_said_once_and_both_alike_in_one_phrase(found: list) -> None:
    avg = by_key(found, "table1-tokens: GLUE average")
    assert run_text(avg) == "bert-tiny-cwt vs bert-tiny-ce (3000 steps each)"
    cpu = [f for f in found if f.figure.claim == "table1-tokens" and f.scale == "CPU"]
    notes = section_notes(cpu, Footnotes())
    assert notes[0].startswith("- Our runs: ") and notes[0].count("(3000 steps each)") == 1
    not_run = "- Not run: GLUE QNLI dev, GLUE QQP dev, GLUE MNLI dev:"
    assert any(n.startswith(not_run) for n in notes)


def test_protocols_are_cited_by_number_and_listed_once(found: list) -> None:
    protocols = Footnotes()
    tokens = section_notes([f for f in found if f.figure.claim == "table1-tokens"], protocols)
    again = section_notes([f for f in found if f.figure.claim == "table1-time"], protocols)
    cited = [n for n in tokens + again if n.startswith("- Protocols ")]
    assert cited[0] == cited[1]  # the same protocols, the same numbers
    listed = protocols.lines("## Protocols")
    assert listed[1] == "## Protocols" and len(listed) == 3 + len(protocols.texts)
    assert any("full training sets (Appendix E)" in line for line in listed)


def test_a_failed_gate_reads_as_value_against_bar(tmp_path) -> None:
    found = findings(encoder_rows(tmp_path, sst2_ce=0.52, gain=0.02))
    avg = by_key(found, "table1-tokens: GLUE average")
    assert avg.gate_failed
    why = short_why(avg)
    assert re.fullmatch(r"gate: bert-tiny-ce misses glue/sst2 accuracy 0\.52\d* < 0\.\d+", why)
    assert len(why.split()) <= 25


def test_a_measurement_has_no_paper_delta_and_no_verdict(tmp_path) -> None:
    """The duplicate-target ablation, where the paper makes no claim: its row is measured
    and tested, with no paper Δ and no verdict; the paper's words go under the table."""
    found = findings(duplicates_rows(tmp_path, sst2=0.78))
    masked = by_key(found, "duplicates: CWT duplicate targets masked")
    row = dict(zip(MEASURED, claim_row(masked), strict=True))
    assert "paper Δ" not in row and "verdict" not in row
    assert row["paper"] == "stated below"
    assert row["our Δ [CI]"] == delta_text(masked) != "-"
    assert row["p → adjusted"] == f"{masked.p_value:.3g} → {masked.p_value:.3g}"
    notes = section_notes([masked], Footnotes())
    assert any(masked.figure.stated in n for n in notes)


def test_a_finding_without_rows_reads_as_dashes(found: list) -> None:
    table3 = by_key(found, "table3")
    row = dict(zip(COLUMNS, claim_row(table3), strict=True))
    assert delta_text(table3) == "-" and row["ours"] == "-"
    assert row["p → adjusted"] == "-" and row["verdict"] == "**not comparable**"
    assert row["why"].startswith("no rows: nothing committed in leaderboards/paper-cpu-decoder")


def test_ditto_marks_a_cell_that_repeats_the_one_above() -> None:
    rows = [["a", "CPU", "x"], ["b", "CPU", "x"], ["c", "GPU", "x"]]
    assert ditto(rows, (1, 2)) == [["a", "CPU", "x"], ["b", "″", "″"], ["c", "GPU", "″"]]
