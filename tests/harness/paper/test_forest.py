"""The verdicts' figure (`harness.paper.forest`): which claims it draws, the ratio to the
paper's Δ and its interval, arrows for values beyond the edge, the same bytes for the same
rows, and the page and the HTML report that carry it."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from harness.paper.document import FIGURE, render, render_html, write_reproduction
from harness.paper.findings import findings
from harness.paper.forest import EDGE, forest_svg, left_out, panels, point, write_forest
from tests.harness.paper.rows import by_key, encoder_rows

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def committed() -> list:
    return findings(ROOT / "leaderboards")


def test_a_point_is_our_delta_over_the_papers(tmp_path) -> None:
    found = findings(encoder_rows(tmp_path, sst2_ce=0.78, gain=0.02))
    avg = by_key(found, "table1-tokens: GLUE average")
    p = point(avg)
    assert p is not None and p.verdict == "reproduced"
    assert p.ratio == pytest.approx(avg.gain / 0.0086)  # the paper's +0.86 GLUE points
    assert p.low == pytest.approx(avg.interval[0] / 0.0086)
    assert p.low < p.ratio < p.high
    assert p.label == "Table 1: GLUE average dev, equal tokens [headless]"
    qnli = by_key(found, "table1-tokens: GLUE QNLI")  # no rows: not comparable
    assert point(qnli) is None


def test_a_negative_paper_delta_swaps_the_interval_and_keeps_the_direction(committed) -> None:
    """Table 3's validation loss: the paper has headless+ft worse (Δ < 0), so do we; the
    ratio is positive (the paper's direction) and its interval's ends stay in order."""
    val = next(
        f
        for f in committed
        if f.scale == "CPU" and f.figure.key.startswith("table3: validation loss")
    )
    assert val.paper_effect is not None and val.paper_effect < 0 and val.gain < 0
    p = point(val)
    assert p is not None and p.low < p.ratio < p.high and p.ratio > 0


def test_only_judged_claims_with_a_paper_delta_are_drawn(committed) -> None:
    drawn = [p for _, points in panels(committed) for p in points]
    judged = [
        f for f in committed if f.figure.compared and f.verdict not in (None, "not comparable")
    ]
    with_delta = [f for f in judged if f.paper_effect]
    assert len(drawn) == len(with_delta) == len(judged) - left_out(committed) > 0
    assert all(f.verdict != "not comparable" for f in committed if point(f) is not None)
    assert next(scale for scale, _ in panels(committed)) == "CPU"


def test_the_svg_keeps_labels_as_text_and_writes_off_edge_values(committed) -> None:
    svg = forest_svg(committed)
    assert svg is not None and svg == forest_svg(committed)  # the same rows, the same bytes
    text = svg.decode()
    assert "Table 3: LAMBADA perplexity [headless+ft]" in text
    assert "<dc:date>" not in text  # no date: a rerun changes nothing
    far = [p for _, points in panels(committed) for p in points if abs(p.ratio) > EDGE]
    assert far and all(f"{p.ratio:.3g}" in text for p in far)


def test_no_judged_claim_no_figure_and_no_link(tmp_path) -> None:
    found = findings(tmp_path)  # no leaderboards: every claim not comparable
    assert forest_svg(found) is None
    assert write_forest(found, tmp_path / "f.svg") is None and not (tmp_path / "f.svg").exists()
    assert "verdicts.svg" not in render(found)
    doc = tmp_path / "docs" / "REPRODUCTION.md"
    assert write_reproduction(tmp_path, doc, None) == [doc]


def test_the_page_links_the_figure_it_writes_beside_it(tmp_path) -> None:
    root = encoder_rows(tmp_path / "lb", sst2_ce=0.78, gain=0.02)
    doc = tmp_path / "docs" / "REPRODUCTION.md"
    assert write_reproduction(root, doc, None) == [doc, doc.parent / FIGURE]
    assert f"]({FIGURE.as_posix()})" in doc.read_text()
    assert (doc.parent / FIGURE).read_bytes() == forest_svg(findings(root))


def test_the_html_report_embeds_the_suites_figure(tmp_path) -> None:
    found = findings(encoder_rows(tmp_path, sst2_ce=0.78, gain=0.02))
    page = render_html(found, "paper-cpu-encoder")
    data = re.search(r'src="data:image/svg\+xml;base64,([^"]+)"', page)
    assert data is not None and base64.b64decode(data.group(1)) == forest_svg(found)


def _rounded(svg: str) -> str:
    """The SVG with every number to one decimal: a last-digit difference in a layout float
    between machines is not a change of the figure."""
    return re.sub(r"-?\d+\.\d+", lambda m: f"{float(m.group()):.1f}", svg)


def test_the_committed_figure_is_what_hlm_report_paper_draws(committed) -> None:
    svg = forest_svg(committed)
    assert svg is not None
    assert _rounded(svg.decode()) == _rounded((ROOT / "docs" / FIGURE).read_text())
