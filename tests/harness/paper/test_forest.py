"""The verdicts' figure (`harness.paper.forest`): which claims it draws, the ratio to the
paper's Δ and its interval, arrows for values beyond the edge, the same bytes for the same
rows, and the page and the HTML report that carry it (the committed figure is checked with the
committed page, in test_reproduction)."""

from __future__ import annotations

import base64
import re

import pytest

from harness.paper.claims_file import findings
from harness.paper.document import (
    FIGURE,
    baselines_page,
    render,
    render_html,
    write_reproduction,
)
from harness.paper.forest import EDGE, forest_svg, left_out, panels, point, write_forest
from harness.paper.gate_margins import GATES_FIGURE
from tests.harness.paper.rows import by_key, decoder_rows, encoder_rows
from zoo.errors import UserError


@pytest.fixture
def both(tmp_path) -> list:
    """An encoder pair whose GLUE claims pass their gates (cwt better) and a decoder pair
    whose LAMBADA perplexity is judged (headless worse, as the paper has it, by a log ratio
    5.5 times the paper's): its models answer 5 % of LAMBADA, so their perplexities compare."""
    root = encoder_rows(tmp_path, sst2_ce=0.78, gain=0.02)
    return findings(decoder_rows(root, unigram=2e7, acc=0.05, headless=1e9))


def test_a_point_is_our_delta_over_the_papers(tmp_path) -> None:
    found = findings(encoder_rows(tmp_path, sst2_ce=0.78, gain=0.02))
    avg = by_key(found, "table1-tokens: GLUE average")
    p = point(avg)
    assert p is not None and p.verdict == "reproduced"
    assert p.ratio == pytest.approx(avg.gain / 0.0086)  # the paper's +0.86 GLUE points
    assert p.low == pytest.approx(avg.interval[0] / 0.0086)
    assert p.low < p.ratio < p.high
    assert p.label == "table1-tokens: GLUE average dev [headless]"
    qnli = by_key(found, "table1-tokens: GLUE QNLI")  # no rows: not comparable
    assert point(qnli) is None


def test_a_negative_paper_delta_swaps_the_interval_and_keeps_the_direction(both) -> None:
    """LAMBADA perplexity: the paper has the headless decoder worse (Δ < 0), so do we; the
    ratio is positive (the paper's direction), its interval's ends stay in order, and a ratio
    beyond the edge is drawn as an arrow with its value written."""
    ppl = by_key(both, "table3: LAMBADA perplexity")
    assert ppl.verdict == "reproduced" and ppl.paper_effect < 0 and ppl.gain < 0
    p = point(ppl)
    assert p is not None and p.low < p.ratio < p.high and p.ratio > EDGE
    assert f"{p.ratio:.3g}" in forest_svg(both).decode()


def test_only_judged_claims_with_a_paper_delta_are_drawn(both) -> None:
    drawn = [p for _, points in panels(both) for p in points]
    judged = [f for f in both if f.figure.compared and f.verdict not in (None, "not comparable")]
    with_delta = [f for f in judged if f.paper_effect]
    assert len(drawn) == len(with_delta) == len(judged) - left_out(both) > 1
    assert {p.verdict for p in drawn} <= {"reproduced", "contradicted", "inconclusive"}
    assert [scale for scale, _ in panels(both)] == ["CPU"]


def test_the_svg_keeps_labels_as_text_and_has_no_date(both) -> None:
    svg = forest_svg(both)
    assert svg is not None and svg == forest_svg(both)  # the same rows, the same bytes
    text = svg.decode()
    assert "table3: LAMBADA perplexity [headless]" in text
    assert "table1-tokens: GLUE average dev [headless]" in text
    assert "<dc:date>" not in text  # no date: a rerun changes nothing


def test_no_judged_claim_no_figure_and_no_link(tmp_path) -> None:
    found = findings(tmp_path)  # no leaderboards: every claim not comparable
    assert forest_svg(found) is None
    assert write_forest(found, tmp_path / "f.svg") is None and not (tmp_path / "f.svg").exists()
    assert "verdicts.svg" not in render(found)
    doc = tmp_path / "docs" / "REPRODUCTION.md"
    doc.parent.mkdir()
    doc.write_text("the page as it was")
    with pytest.raises(UserError, match=r"no rows of the paper's suites \(.*paper-cpu-encoder"):
        write_reproduction(tmp_path, doc, None)  # a misspelt folder: the page is kept
    assert doc.read_text() == "the page as it was"


def test_the_page_links_the_figure_it_writes_beside_it(tmp_path) -> None:
    root = encoder_rows(tmp_path / "lb", sst2_ce=0.78, gain=0.02)
    doc = tmp_path / "docs" / "REPRODUCTION.md"
    written = [doc, baselines_page(doc), doc.parent / FIGURE, doc.parent / GATES_FIGURE]
    assert write_reproduction(root, doc, None) == written
    assert f"]({FIGURE.as_posix()})" in doc.read_text()
    assert (doc.parent / FIGURE).read_bytes() == forest_svg(findings(root))


def test_the_html_report_embeds_the_suites_figure(tmp_path) -> None:
    found = findings(encoder_rows(tmp_path, sst2_ce=0.78, gain=0.02))
    page = render_html(found, "paper-cpu-encoder")
    data = re.search(r'src="data:image/svg\+xml;base64,([^"]+)"', page)
    assert data is not None and base64.b64decode(data.group(1)) == forest_svg(found)
