"""The reproduction page's ladder section (`harness.paper.ladder_section`): the separation
table and operating point of `hlm leaderboard cpu-ladder --separation`, in Markdown."""

from __future__ import annotations

from pathlib import Path

from harness.paper.ladder_section import LADDER, ladder_section
from harness.report.separation import INSTRUMENTS, separation_table
from harness.results.leaderboard import read_leaderboard, write_cell
from tests.harness.report.test_separation import _two_instruments


def _board(root: Path, rows: list[dict]) -> Path:
    board = root / LADDER
    for i, r in enumerate(rows):
        write_cell(board, f"c{i}", [r])
    return board


def test_the_section_gives_the_table_the_point_and_the_committed_figure(tmp_path: Path) -> None:
    """The gated instruments' rows (a comparison with no bar is left to the verb's table),
    the operating point, and the figure where `hlm plot` wrote it."""
    rows = _two_instruments({10: 0.05, 20: 0.05}, {10: 0.03, 20: 0.03}, "s")
    stsb = INSTRUMENTS[4]
    rows += [{**r, "task": stsb.task, "metric": stsb.metric, "cell_id": f"stsb-{i}"}
             for i, r in enumerate(rows) if r["task"] == INSTRUMENTS[0].task]  # fmt: skip
    board = _board(tmp_path, rows)
    assert "STS-B probe (comparison)" in set(
        separation_table(read_leaderboard(board))["instrument"]
    )
    lines = ladder_section(tmp_path)
    assert "## Where pretraining shows: the instrument ladder" in lines
    text = "\n".join(lines)
    assert "comparison |" not in text
    assert "\n| s-ce | SST-2 probe | 0.02 | 10.0 | 1.00 | 0: 10.0 | yes |" in text
    assert "\nOperating point (ce, two gates cleared for good): s-ce at 10.0M tokens" in text
    assert not any("separation.png" in line for line in lines)  # none drawn: no link
    (board / "_plots").mkdir()
    (board / "_plots" / "separation.png").write_bytes(b"png")
    drawn = ladder_section(tmp_path)
    assert drawn[: len(lines)] == lines
    assert drawn[-1].endswith(f"(../leaderboards/{LADDER}/_plots/separation.png)")


def test_no_point_says_how_far_each_model_is_and_no_rows_gives_no_section(tmp_path) -> None:
    assert ladder_section(tmp_path) == []  # no ladder folder
    _board(tmp_path, _two_instruments({10: 0.05}, {10: 0.0}, "o"))
    text = "\n".join(ladder_section(tmp_path))
    assert "No operating point yet: no ce model clears two gates and stays clear." in text
    assert "\n- o-ce at 10.0M tokens (1.00 CPU-hours, 1 seed): SST-2 probe" in text
