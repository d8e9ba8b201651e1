"""One truth in the files: a leaderboard folder read by pandas, pyarrow or duckdb gives the
rows `hlm leaderboard` shows; an edited suite's old cells move to `_superseded/`, and back
when the suite has them again."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pyarrow.dataset as ds

from harness.results.leaderboard import (
    SUPERSEDED,
    read_leaderboard,
    write_cell,
    write_current_cells,
)
from tests.harness.results.test_leaderboard import row


def _cells(folder: Path) -> dict[str, set[str]]:
    return {
        "hlm": set(read_leaderboard(folder)["cell_id"]),
        "pandas": set(pd.read_parquet(folder)["cell_id"]),
        "pyarrow": set(ds.dataset(folder).to_table().column("cell_id").to_pylist()),
        "duckdb": {
            r[0] for r in duckdb.sql(f"select cell_id from '{folder}/*.parquet'").fetchall()
        },
    }


def test_every_reader_sees_the_current_rows(tmp_path: Path) -> None:
    board = tmp_path / "board"
    for cell in ("a", "b", "old"):  # a model each: two cells never write one row key
        write_cell(board, cell, [{**row(cell, "val_loss", 1.0), "cell_id": cell}])
    write_cell(board, "a.step-3", [{**row("a", "val_loss", 2.0, step=3), "cell_id": "a"}])
    write_current_cells(board, ["a", "b"])
    assert all(cells == {"a", "b"} for cells in _cells(board).values()), _cells(board)
    assert (board / SUPERSEDED / "old.parquet").is_file()
    assert set(read_leaderboard(board, include_stale=True)["cell_id"]) == {"a", "b", "old"}
    write_current_cells(board, ["a", "old"])  # the suite edited back: the file returns
    assert all(cells == {"a", "old"} for cells in _cells(board).values())
    assert (board / SUPERSEDED / "b.parquet").is_file()
