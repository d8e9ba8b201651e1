"""A leaderboard file that does not read is reported by name and skipped by readers, and
`hlm run` computes its cell again; temporaries a killed writer left are cleaned up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.results.leaderboard import (
    done_cells,
    file_problem,
    read_leaderboard,
    remove_temporaries,
    write_cell,
)
from harness.run.runner import run_suite
from tests.harness.conftest import TINY
from tests.harness.results.test_leaderboard import row
from zoo.errors import UserError
from zoo.train.atomic import remove_leftovers


def _dead_pid() -> int:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(proc.stdout)


DAMAGES = {
    "truncated": lambda f: f.write_bytes(f.read_bytes()[: len(f.read_bytes()) // 2]),
    "zero bytes": lambda f: f.write_bytes(b""),
    "random bytes": lambda f: f.write_bytes(os.urandom(2048)),
    "foreign schema": lambda f: pq.write_table(pa.table({"x": [1, 2]}), f),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_file_is_named_skipped_and_not_done(tmp_path: Path, damage: str) -> None:
    write_cell(tmp_path, "good", [row("a", "val_loss", 1.0)])
    bad = write_cell(tmp_path, "bad", [row("b", "val_loss", 2.0)])
    DAMAGES[damage](bad)
    assert file_problem(bad) is not None
    with pytest.warns(UserWarning, match=rf"{bad}: skipped"):
        df = read_leaderboard(tmp_path)
    assert list(df["model"]) == ["a"]
    assert done_cells(tmp_path) == {"good"}  # the damaged cell is computed again


def test_a_reader_that_publishes_refuses_every_damaged_file_by_name(tmp_path: Path) -> None:
    write_cell(tmp_path, "good", [row("a", "val_loss", 1.0)])
    bad = [write_cell(tmp_path, f"bad{i}", [row("b", "val_loss", 2.0, seed=i)]) for i in (1, 2)]
    DAMAGES["zero bytes"](bad[0])
    DAMAGES["foreign schema"](bad[1])
    with pytest.raises(UserError) as caught:
        read_leaderboard(tmp_path, damaged="refuse")
    said = str(caught.value)
    assert said.startswith(f"2 result file(s) do not read: {bad[0]}: not a readable Parquet")
    assert f"; {bad[1]}: not a leaderboard file (no cell_id" in said


def test_hlm_run_recomputes_a_damaged_cell(isolated: Path) -> None:
    lb = isolated / "lb"
    assert run_suite(TINY, root=lb, progress=False).computed == 8
    victim = next(p for p in sorted((lb / "tiny").glob("*.parquet")) if "." not in p.stem)
    victim.write_bytes(victim.read_bytes()[:100])  # truncated
    summary = run_suite(TINY, root=lb, progress=False)
    assert (summary.skipped, summary.computed) == (7, 1) and file_problem(victim) is None


def test_temporaries_of_dead_writers_are_removed(tmp_path: Path) -> None:
    dead, alive = _dead_pid(), os.getpid()
    for pid in (dead, alive):
        (tmp_path / f".tmp-abc-pid{pid}-1234abcd.parquet").write_bytes(b"x")
        (tmp_path / "checkpoints" / f".tmp-step-0000002-pid{pid}").mkdir(parents=True)
    removed = remove_temporaries(tmp_path)
    assert [p.name for p in removed] == [f".tmp-abc-pid{dead}-1234abcd.parquet"]
    assert [p.name for p in remove_leftovers(tmp_path / "checkpoints")] == [
        f".tmp-step-0000002-pid{dead}"
    ]
    assert (tmp_path / "checkpoints" / f".tmp-step-0000002-pid{alive}").is_dir()  # a live writer's
