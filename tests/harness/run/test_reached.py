"""`hlm run --reached`: the checkpoints a pretraining has written, evaluated before it ends,
into the files the cell's own run then skips; never a training, never a final checkpoint."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest

from harness.cli import main as hlm
from harness.results.leaderboard import read_leaderboard
from harness.run.cells import expand
from harness.run.claims import CLAIMS, process_start
from harness.run.reached import run_reached
from harness.run.runner import run_suite
from harness.suite import load_suite
from zoo.train.pretrain import pretrain

SUITE = """
name: reach
models: [{preset: bert-tiny, objective: cwt}]
recipe: {corpus: ["synthetic:200"], vocab_size: 400, steps: 6, batch_size: 4, seq_len: 32}
tasks: [{type: validation, every: 2, params: {batches: 1}}]
"""


def _half_trained(isolated: Path) -> tuple[Path, Path, str]:
    """The suite, and its pretraining as a run still training leaves it: checkpoints at steps
    2 and 4 (and 6), no final/ yet; the cell's id."""
    suite = isolated / "reach.yaml"
    suite.write_text(SUITE)
    (cell,) = expand(load_suite(suite))
    assert cell.pretrain is not None
    out = Path(cell.pretrain.output_dir)
    pretrain(cell.pretrain)
    shutil.rmtree(out / "final")
    return suite, out, cell.cell_id


def test_reached_checkpoints_are_evaluated_once_and_the_run_skips_them(isolated: Path) -> None:
    suite, run, cell_id = _half_trained(isolated)
    lb = isolated / "lb"
    made = sorted(p.name for p in (run / "checkpoints").iterdir())
    summary = run_reached(suite, root=lb, progress=False)
    assert (summary.computed, summary.done, summary.failed) == (2, 0, [])
    assert not (run / "final").exists()  # nothing trained, no checkpoint made
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == made
    df = read_leaderboard(lb / "reach")
    assert sorted(df["step"].unique()) == [2, 4] and not df["final_checkpoint"].any()
    files = {p: p.stat().st_mtime_ns for p in (lb / "reach").glob("*.parquet")}
    assert sorted(p.name for p in files) == [f"{cell_id}.step-0000002.parquet",
                                             f"{cell_id}.step-0000004.parquet"]  # fmt: skip
    again = run_reached(suite, root=lb, progress=False)
    assert (again.computed, again.done) == (0, 2)
    # the cell's own run resumes the pretraining, evaluates its final checkpoint only
    assert run_suite(suite, root=lb, progress=False).failed == []
    assert all(p.stat().st_mtime_ns == t for p, t in files.items())
    assert sorted(read_leaderboard(lb / "reach")["step"].unique()) == [2, 4, 6]
    # --force evaluates every point again, those --reached wrote too
    assert run_suite(suite, root=lb, progress=False, force=True).computed == 1
    assert all(p.stat().st_mtime_ns != t for p, t in files.items())


def test_a_checkpoint_another_run_evaluates_is_left_to_it(isolated: Path) -> None:
    suite, _, cell_id = _half_trained(isolated)
    lb = isolated / "lb"
    claims = lb / "reach" / CLAIMS
    claims.mkdir(parents=True)
    parent = os.getppid()  # a live process that is not this one
    owner = {"host": socket.gethostname(), "pid": parent, "started": process_start(parent),
             "claimed_at": 0.0}  # fmt: skip
    (claims / f"{cell_id}.step-0000002").write_text(json.dumps(owner))
    summary = run_reached(suite, root=lb, progress=False)
    assert (summary.computed, summary.elsewhere) == (1, 1)
    assert sorted(read_leaderboard(lb / "reach")["step"].unique()) == [4]


def test_the_cli_says_what_it_did_and_refuses_flags_it_cannot_honour(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite, _, _ = _half_trained(isolated)
    args = ["run", str(suite), "--reached", "--leaderboards", str(isolated / "lb")]
    assert hlm([*args, "--no-progress"]) == 0
    assert "checkpoints reached: 2 evaluated now, 0 already" in capsys.readouterr().out
    assert hlm([*args, "--force"]) == 2
    assert "--reached: not with --force" in capsys.readouterr().err
    assert hlm([*args, "--executor", "slurm"]) == 2
    assert "--reached: evaluates here, not with --executor slurm" in capsys.readouterr().err
