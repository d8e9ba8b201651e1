"""Terminal tables: one per task, at most the asked width, turned or cut when too wide."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.report.tables import fitted, pivot, tables
from harness.results.leaderboard import aggregate, read_leaderboard, write_cell
from tests.harness.results.test_leaderboard import row
from zoo.errors import UserError

THROUGHPUT = [
    "step_ms",
    "tokens_per_s",
    "mfu",
    "speedup_vs_hf",
    "speedup_vs_baseline",
    "achieved_tflops",
]


def _board(tmp_path: Path, models: int) -> object:
    for m in range(models):
        name = f"model-with-a-long-label-{m}"
        rows = [row(name, "val_loss", 3.0 + m, seed=s) for s in (0, 1)]
        rows += [row(name, metric, 1000.5 * (m + 1), task="throughput") for metric in THROUGHPUT]
        write_cell(tmp_path, name, rows)
    return aggregate(read_leaderboard(tmp_path))


@pytest.mark.parametrize("models", [2, 9])
def test_every_line_fits_and_each_task_has_its_table(tmp_path: Path, models: int) -> None:
    text = tables(_board(tmp_path, models), width=120)  # type: ignore[arg-type]
    assert max(len(line) for line in text.splitlines()) <= 120
    assert text.startswith("validation\n") and "\nthroughput\n" in text  # quality first
    assert "| val_loss " in text and "throughput/step_ms" not in text  # short column names
    for m in range(models):
        assert text.count(f"model-with-a-long-label-{m} ") >= 1


def test_a_wide_table_is_turned_then_cut(tmp_path: Path) -> None:
    agg = _board(tmp_path, 3)
    table = pivot(agg[agg["task"] == "throughput"])  # type: ignore[index]
    table.columns = [c.removeprefix("throughput/") for c in table.columns]
    turned = fitted(table, width=100)
    assert turned.splitlines()[0].startswith("| metric ")  # models became columns
    cut = fitted(table, width=60)
    assert max(len(line) for line in cut.splitlines()) <= 60
    assert cut.count("| metric ") >= 2  # column groups, each with the metric names


def test_sort_orders_rows_of_its_task_and_typos_get_close_matches(tmp_path: Path) -> None:
    agg = _board(tmp_path, 3)
    text = tables(agg, sort_by="validation/val_loss")  # type: ignore[arg-type]
    validation = text.split("throughput")[0]
    order = [line.split("|")[1].strip() for line in validation.splitlines() if "long-label" in line]
    assert order == [f"model-with-a-long-label-{m}" for m in (0, 1, 2)]  # lower loss first
    with pytest.raises(UserError, match="did you mean 'validation/val_loss'"):
        tables(agg, sort_by="validation/val_los")  # type: ignore[arg-type]


def test_csv_cells_that_hold_mappings_are_json(tmp_path: Path) -> None:
    """`--format csv` wrote Python reprs (`{2: 15246.2}`), which no CSV reader parses back."""
    import csv
    import io
    import json

    from harness.report.tables import render

    rows = [row("m", "accuracy", v, seed=s) for s, v in ((0, 0.5), (1, 0.7))]
    write_cell(tmp_path, "c", rows)
    text = render(aggregate(read_leaderboard(tmp_path)), "csv")
    (record,) = csv.DictReader(io.StringIO(text))
    assert json.loads(record["by_seed"]) == {"0": 0.5, "1": 0.7}
    assert json.loads(record["sweep"]) == {}
