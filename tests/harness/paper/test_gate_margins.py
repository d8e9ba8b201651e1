"""The baselines against their gates across the scales (`harness.paper.gate_margins`): each
(suite, baseline, gate) once with its tokens and margin, the page's section and its figure
(the committed figure is checked with the committed page, in test_reproduction)."""

from __future__ import annotations

import math

import pytest

from harness.paper.claims_file import findings
from harness.paper.document import render, render_baselines
from harness.paper.gate_margins import (
    GATES_FIGURE,
    gate_points,
    gate_section,
    gates_svg,
    write_gate_figure,
)
from tests.harness.paper.rows import decoder_rows, encoder_rows

TOKENS = 12_288_000


@pytest.fixture
def found(tmp_path) -> list:
    """An encoder pair whose vanilla model misses its SST-2 bar (0.52 against a majority of
    0.51 + 0.05) and a decoder pair whose validation perplexity (300) clears half the unigram
    one (1000); the encoder's rows record the tokens its checkpoints saw, the decoder's none."""
    root = encoder_rows(tmp_path, sst2_ce=0.52, gain=0.02, tokens_seen=TOKENS)  # type: ignore[arg-type]
    return findings(decoder_rows(root, unigram=2e7))


def _point(points: list, suite: str, gate: str):
    return next(p for p in points if p.suite == suite and p.check.name == gate)


def test_each_baselines_gate_is_listed_once_with_its_margin_and_tokens(found) -> None:
    points = gate_points(found)
    keys = [(p.suite, p.model, p.check.name) for p in points]
    assert len(keys) == len(set(keys))  # many claims share one baseline's gates
    sst2 = _point(points, "paper-cpu-encoder", "glue/sst2 accuracy")
    assert sst2.model == "bert-tiny-ce" and sst2.scale == "CPU" and sst2.tokens == TOKENS
    assert not sst2.check.passed
    # the value (mean over seeds 0-2 of 0.52 + 0.0005 x seed) minus the bar
    assert sst2.check.margin == pytest.approx(0.5205 - 0.56)
    val = _point(points, "paper-cpu-decoder", "validation val_ppl")
    assert val.check.passed and val.check.at_most
    assert val.check.margin == pytest.approx(math.log10(500 / 300))  # orders of magnitude
    assert math.isnan(val.tokens)  # the decoder's rows record none
    names = [p.check.name for p in points]
    assert names == sorted(names)


def test_the_section_tables_every_gate_and_counts_the_failed(found) -> None:
    text = "\n".join(gate_section(found))
    points = gate_points(found)
    failed = sum(not p.check.passed for p in points)
    assert 0 < failed < len(points)
    assert f"{failed} of {len(points)} fail" in text
    assert "| glue/sst2 accuracy | CPU | `paper-cpu-encoder` | `bert-tiny-ce` | 12.3M |" in text
    assert "(orders of magnitude) | passed |" in text
    assert f"]({GATES_FIGURE.as_posix()})" in text
    assert "## Every baseline's gates, across the scales" in render_baselines(found, None)
    page = render(found)
    assert "## The baselines" in page and f"{failed} of {len(points)} baseline gates fail" in page
    assert "](REPRODUCTION-baselines.md)" in page


def test_no_gate_no_section_and_no_figure(tmp_path) -> None:
    nothing = findings(tmp_path)  # no leaderboards: no baseline has a gate with a value
    assert gate_points(nothing) == [] and gate_section(nothing) == []
    assert gates_svg(nothing) is None
    assert write_gate_figure(nothing, tmp_path / "g.svg") is None
    assert not (tmp_path / "g.svg").exists()
    assert "gates.svg" not in render(nothing)


def test_the_figure_draws_a_panel_per_gate_as_text_with_no_date(found, tmp_path) -> None:
    svg = gates_svg(found)
    assert svg is not None and svg == gates_svg(found)  # the same rows, the same bytes
    text = svg.decode()
    for name in {p.check.name for p in gate_points(found)}:
        assert name in text
    assert "<dc:date>" not in text
    path = write_gate_figure(found, tmp_path / "figures" / "gates.svg")
    assert path is not None and path.read_bytes() == svg
