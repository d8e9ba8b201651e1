"""tools/gpu-run.sh end to end at toy size on this CPU: a suite run seed by seed within its
budget, the rows packed into one file, and tools/gpu-collect.sh bringing them into a
leaderboards folder where `hlm leaderboard` reads them."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from harness.results.leaderboard import read_leaderboard

ROOT = Path(__file__).parents[1]


def _run(tmp_path: Path, budget: int) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "OUT": str(tmp_path / "out"),
        "GPU_RUN_WORK": str(tmp_path / "work"),
        "GPU_RUN_SUITES": str(ROOT / "tests" / "harness" / "data" / "tiny.yaml"),
        "GPU_RUN_BUDGET_S": str(budget),
        "GPU_RUN_BENCH": "0",
        "GPU_RUN_NO_INSTALL": "1",
    }
    return subprocess.run(
        ["bash", str(ROOT / "tools" / "gpu-run.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.mark.slow
def test_a_toy_gpu_run_lands_rows_that_collect_into_a_leaderboard(tmp_path: Path) -> None:
    res = _run(tmp_path, budget=900)
    assert res.returncode == 0, res.stderr + res.stdout
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        "leaderboards.tar.gz",
        "log.txt",
        "machine.txt",
    ]
    log = (out / "log.txt").read_text()
    assert "tiny.yaml seed 0" in log and "tiny.yaml seed 1" in log and "done in" in log
    with tarfile.open(out / "leaderboards.tar.gz") as tar:
        assert any(n.endswith(".parquet") for n in tar.getnames())
    lb = tmp_path / "lb"
    env = {**os.environ, "GPU_COLLECT_INTO": str(lb), "GPU_COLLECT_NO_REPORT": "1"}
    got = subprocess.run(
        ["bash", str(ROOT / "tools" / "gpu-collect.sh"), str(out)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert got.returncode == 0, got.stderr
    rows = read_leaderboard(lb / "tiny")
    assert set(rows["seed"]) == {0, 1} and set(rows["model"]) == {"bert-tiny-ce", "bert-tiny-cwt"}


def test_a_spent_budget_runs_nothing_and_still_packs_the_results(tmp_path: Path) -> None:
    res = _run(tmp_path, budget=0)
    assert res.returncode == 0, res.stderr
    log = (tmp_path / "out" / "log.txt").read_text()
    assert "budget spent before" in log
    assert (tmp_path / "out" / "leaderboards.tar.gz").is_file()
