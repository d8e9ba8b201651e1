"""Leaderboard schema 2: every committed folder reads alike through pandas, duckdb and
`datasets`, and `hlm leaderboard --migrate` carries an older folder over losslessly."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.results.leaderboard import read_leaderboard, result_files, write_cell
from harness.results.migrate import is_current, migrate_folder
from harness.results.schema import COLUMNS, SCHEMA, SCHEMA_FILE, SCHEMA_VERSION, folder_version
from tests.harness.results.test_leaderboard import row
from zoo.errors import UserError

ROOT = Path(__file__).resolve().parents[3] / "leaderboards"
FOLDERS = sorted(d for d in ROOT.iterdir() if d.is_dir() and result_files(d))
KEY = ["cell_id", "task", "metric", "step", "seed", "sweep", "final_checkpoint"]


def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    out = df[COLUMNS].sort_values(KEY, kind="mergesort").reset_index(drop=True)
    out["timestamp"] = pd.to_datetime(out["timestamp"], utc=True).astype("datetime64[us, UTC]")
    out = out.astype(object)
    return out.where(out.notna(), None)  # one null (pandas: NaN, duckdb: <NA>)


def test_every_committed_folder_is_at_todays_schema() -> None:
    assert len(FOLDERS) >= 18
    for folder in FOLDERS:
        assert folder_version(folder) == SCHEMA_VERSION, folder
        stale = [f.name for f in result_files(folder) if not is_current(f)]
        assert not stale, f"{folder}: {stale[:3]}"


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda d: d.name)
def test_pandas_duckdb_and_datasets_read_the_same_rows(folder: Path, tmp_path: Path) -> None:
    import datasets
    import duckdb

    files = [str(f) for f in result_files(folder)]
    by_pandas = pd.read_parquet(folder)  # pyarrow's dataset: the first file's schema
    by_duckdb = duckdb.sql(f"SELECT * FROM read_parquet({files!r})").df()
    loaded = datasets.load_dataset(
        "parquet", data_files=files, split="train", cache_dir=str(tmp_path)
    )
    by_datasets = loaded.to_pandas()
    ours = _sorted(read_leaderboard(folder, include_stale=True))
    reference = _sorted(by_pandas)
    assert len(reference) == sum(pq.read_metadata(f).num_rows for f in files)
    for name, frame in (("duckdb", by_duckdb), ("datasets", by_datasets)):
        pd.testing.assert_frame_equal(_sorted(frame), reference, check_dtype=False, obj=name)
    assert set(by_pandas.columns) == set(COLUMNS)  # hardware and final_checkpoint kept
    ours = ours[ours["cell_id"].isin(set(reference["cell_id"]))]  # not _superseded/
    pd.testing.assert_frame_equal(ours.reset_index(drop=True), reference, check_dtype=False)


def _old_file(path: Path, rows: list[dict], drop: tuple[str, ...], float_step: bool) -> None:
    """A result file as headless-zoo wrote it before columns `drop` existed."""
    fields = [f for f in SCHEMA if f.name not in drop]
    if float_step:
        fields = [pa.field("step", pa.float64()) if f.name == "step" else f for f in fields]
    schema = pa.schema(fields)
    pq.write_table(
        pa.Table.from_pylist([{f.name: r[f.name] for f in fields} for r in rows], schema=schema),
        path,
    )


def _old_folder(board: Path) -> dict[str, list[dict]]:
    board.mkdir()
    (board / "_superseded").mkdir()
    files = {
        "a": [row("m", "val_loss", 2.5, step=100), row("m", "acc", 0.71, step=100)],
        "a.step-0000050": [row("m", "val_loss", 3.25, step=50)],
        "_superseded/b": [row("old", "val_loss", 4.0, step=100)],
    }
    files["a"][1]["stderr"] = float("nan")
    for name, rows in files.items():
        _old_file(board / f"{name}.parquet", rows, ("final_checkpoint", "hardware"), True)
    return files


def test_migrate_carries_every_value_over_and_runs_once(tmp_path: Path) -> None:
    board = tmp_path / "t"
    files = _old_folder(board)
    assert folder_version(board) == 1
    done = migrate_folder(board)
    assert len(done.rewritten) == 3 and done.current == 0
    assert folder_version(board) == SCHEMA_VERSION
    for name, rows in files.items():
        path = board / f"{name}.parquet"
        assert is_current(path)
        got = pq.read_table(path).to_pylist()
        for before, after in zip(rows, got, strict=True):
            for column, value in before.items():
                if column in ("final_checkpoint", "hardware"):
                    continue
                same = value == after[column] or (value != value and after[column] != after[column])
                assert same, (name, column, value, after[column])
            assert after["final_checkpoint"] is (".step-" not in name)
            assert after["hardware"] is None and isinstance(after["step"], int)
    again = migrate_folder(board)
    assert again.rewritten == [] and again.current == 3


def test_a_file_that_does_not_carry_over_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    board = tmp_path / "t"
    _old_folder(board)
    bad = row("m", "acc", 0.5, step=7)
    bad["step"] = 7.5
    _old_file(board / "c.parquet", [bad], ("hardware",), True)
    before = {p: p.read_bytes() for p in board.rglob("*.parquet")}
    with pytest.raises(UserError, match=r"c\.parquet: does not convert"):
        migrate_folder(board)
    assert {p: p.read_bytes() for p in board.rglob("*.parquet")} == before
    assert not (board / SCHEMA_FILE).exists()
    extra = pa.table({**{c: [v] for c, v in row("m", "acc", 0.5).items()}, "note": ["x"]})
    (board / "c.parquet").unlink()
    pq.write_table(extra, board / "d.parquet")
    with pytest.raises(UserError, match="note are not in the leaderboard schema"):
        migrate_folder(board)


def test_a_new_folder_starts_at_todays_version_and_a_newer_one_is_refused(tmp_path) -> None:
    write_cell(tmp_path / "new", "c1", [row("m", "acc", 0.5)])
    record = json.loads((tmp_path / "new" / SCHEMA_FILE).read_text())
    assert record["schema_version"] == SCHEMA_VERSION
    assert list(record["columns"]) == COLUMNS
    old = tmp_path / "old"
    _old_folder(old)
    write_cell(old, "c2", [row("m", "acc", 0.5)])
    assert folder_version(old) == 1  # older files wait for --migrate
    record["schema_version"] = SCHEMA_VERSION + 1
    (tmp_path / "new" / SCHEMA_FILE).write_text(json.dumps(record))
    with pytest.raises(UserError, match="newer than this headless-zoo reads"):
        read_leaderboard(tmp_path / "new")


def test_the_verb_migrates_every_folder_and_a_dry_run_writes_nothing(tmp_path, capsys) -> None:
    from harness.cli import main

    _old_folder(tmp_path / "one")
    before = (tmp_path / "one" / "a.parquet").read_bytes()
    assert main(["leaderboard", "--migrate", "--dry-run", "--leaderboards", str(tmp_path)]) == 0
    assert "would rewrite: " in capsys.readouterr().out
    assert (tmp_path / "one" / "a.parquet").read_bytes() == before
    assert main(["leaderboard", "--migrate", "--leaderboards", str(tmp_path)]) == 0
    assert "3 file(s) rewritten" in capsys.readouterr().out  # _superseded/ too
    assert folder_version(tmp_path / "one") == SCHEMA_VERSION
