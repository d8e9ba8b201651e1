"""The fuzzer's generator for the one reader: a FIFO, a device or a huge sparse file where a
verb reads a Parquet row file, a claims file, a README or a metrics log. Each verb ends
within its bound, with exit 0 (the file skipped, named) or 2 (refused, named), never a hang
or a MemoryError.

`make test` runs every fourth case; `make fuzz` (HLM_FUZZ=full) runs them all.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.reliability.test_fuzz_rules import cases

ROOT = Path(__file__).parents[2]
BOARD = "cpu-decoder-probes"  # a small committed leaderboard
TIMEOUT = 120  # a hang is a failure; a verb reading these folders takes seconds
SPARSE = 3 * 2**30  # a 3 GB file of no disk


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _device(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _sparse(path: Path) -> None:
    with open(path, "wb") as f:
        f.truncate(SPARSE)


HOSTILE: dict[str, Callable[[Path], None]] = {
    "a FIFO": _fifo,
    "a link to /dev/zero": _device,
    "a 3 GB sparse file": _sparse,
}


def _hlm(*args: str, cwd: Path) -> tuple[int, str]:
    env = {**os.environ, "HLM_DATA_ROOT": str(ROOT.parent / "shared" / "data")}
    try:
        out = subprocess.run(
            [sys.executable, "-m", "harness.cli", *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            cwd=cwd,
            env={**env, "PYTHONPATH": str(ROOT)},
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"hlm {' '.join(args)} hung past {TIMEOUT} s")
    return out.returncode, out.stdout + out.stderr


def _board(tmp_path: Path) -> Path:
    lb = tmp_path / "lb"
    shutil.copytree(ROOT / "leaderboards" / BOARD, lb / BOARD)
    return lb


ROW_VERBS = [
    ["leaderboard", BOARD],
    ["plot", BOARD],
    ["power", BOARD],
    ["report", BOARD],
]


@pytest.mark.parametrize(
    ("verb", "kind"), cases(list(itertools.product(ROW_VERBS, sorted(HOSTILE))))
)
def test_a_hostile_row_file_is_skipped_by_name(tmp_path: Path, verb: list[str], kind: str) -> None:
    lb = _board(tmp_path)
    victim = sorted((lb / BOARD).glob("*.parquet"))[0]
    victim.unlink()
    HOSTILE[kind](victim)
    extra = ["--output-dir", str(tmp_path / "out")] if verb[0] in ("plot", "report") else []
    rc, said = _hlm(*verb, "--leaderboards", str(lb), *extra, cwd=tmp_path)
    assert rc in (0, 2), said
    assert victim.name in said, said
    assert "Traceback" not in said and "MemoryError" not in said


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_claims_file_is_refused_in_one_line(tmp_path: Path, kind: str) -> None:
    claims = tmp_path / "claims.yaml"
    HOSTILE[kind](claims)
    rc, said = _hlm(
        "report", "--claims", str(claims), "--leaderboards", str(tmp_path), cwd=tmp_path
    )
    assert rc == 2 and str(claims) in said, said
    assert "Traceback" not in said and "MemoryError" not in said


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_metrics_log_is_not_read(tmp_path: Path, kind: str, monkeypatch) -> None:
    runs = tmp_path / "runs"
    run = runs / "pretrain" / "0123456789abcdef"
    run.mkdir(parents=True)
    (run / "config.yaml").write_text("preset: bert-tiny\n")
    HOSTILE[kind](run / "metrics.jsonl")
    names = runs / "by-name" / "s" / "m"
    names.mkdir(parents=True)
    (names / "seed-0").symlink_to(run)
    monkeypatch.setenv("HLM_RUNS_DIR", str(runs))
    rc, said = _hlm("runs", cwd=tmp_path)
    assert rc in (0, 2), said
    assert "Traceback" not in said and "MemoryError" not in said
