"""One truth in the files: a leaderboard folder read by pandas, pyarrow or duckdb gives the
rows of the suite's current cells (and, with leaderboards/README.md's one-line filter, the
final rows `hlm leaderboard` shows); an edited suite's old cells move to `_superseded/`, and
back when the suite has them again."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pyarrow.dataset as ds

from harness.results.leaderboard import (
    SUPERSEDED,
    final_rows,
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


def test_the_documented_filter_reads_the_rows_hlm_leaderboard_shows(tmp_path: Path) -> None:
    """leaderboards/README.md said a plain reader needs no filter; a folder with rows along
    pretraining mixes them in. Its one-line filters give the final rows."""
    import glob

    board = tmp_path / "quickstart"
    write_cell(board, "c1", [row("m", "val_ppl", 5.0, step=30)])
    write_cell(board, "c1.step-0000010", [row("m", "val_ppl", 9.0, step=10)])
    final = final_rows(read_leaderboard(board))
    files = glob.glob(f"{board}/*.parquet")
    by_pandas = pd.concat(pd.read_parquet(f) for f in files if ".step-" not in f)
    by_duckdb = duckdb.sql(
        f"select * from read_parquet('{board}/*.parquet', filename=true) "
        "where filename not like '%.step-%'"
    ).df()
    assert len(pd.read_parquet(board)) == 2  # unfiltered: both
    for got in (by_pandas, by_duckdb):
        assert got["value"].tolist() == final["value"].tolist() == [5.0]
