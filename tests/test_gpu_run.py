"""tools/gpu-run.sh end to end at toy size on this CPU: a suite run seed by seed within its
budget, the rows packed into one file, and tools/gpu-collect.sh bringing them into a
leaderboards folder where `hlm leaderboard` reads them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from harness.results.leaderboard import read_leaderboard

ROOT = Path(__file__).parents[1]


def _run(
    tmp_path: Path,
    budget: int,
    work: str = "work",
    start_from: Path | None = None,
    suites: str = str(ROOT / "tests" / "harness" / "data" / "tiny.yaml"),
    models: str = "",
    min_cell: int = 60,
    quiet: str = "throughput",
    quiet_force: str = "",
    seed_lanes: str = "1",
) -> subprocess.CompletedProcess[str]:
    """One call of the script, its results in tmp_path/out (emptied first, as on a device)."""
    shutil.rmtree(tmp_path / "out", ignore_errors=True)
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "OUT": str(tmp_path / "out"),
        "GPU_RUN_WORK": str(tmp_path / work),
        "GPU_RUN_FROM": str(start_from or tmp_path / "nothing"),
        "GPU_RUN_SUITES": suites,
        "GPU_RUN_MODELS": models,
        "GPU_RUN_BUDGET_S": str(budget),
        "GPU_RUN_MIN_CELL_S": str(min_cell),
        "GPU_RUN_QUIET_TASKS": quiet,
        "GPU_RUN_QUIET_FORCE": quiet_force,
        "GPU_RUN_SEED_LANES": seed_lanes,
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


def _collect(out: Path, into: Path, report: bool = False) -> subprocess.CompletedProcess[str]:
    """tools/gpu-collect.sh of the results in `out` into the leaderboards folder `into`."""
    env = {**os.environ, "GPU_COLLECT_INTO": str(into)}
    env |= {} if report else {"GPU_COLLECT_NO_REPORT": "1"}
    return subprocess.run(
        ["bash", str(ROOT / "tools" / "gpu-collect.sh"), str(out)],
        env=env,
        capture_output=True,
        text=True,
    )


@pytest.mark.slow
def test_a_toy_gpu_run_lands_rows_that_collect_into_a_leaderboard(tmp_path: Path) -> None:
    res = _run(tmp_path, budget=900)
    assert res.returncode == 0, res.stderr + res.stdout
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        "leaderboards.tar.gz",
        "log-tiny.txt",
        "log.txt",
        "machine.txt",
        "status.txt",
    ]
    log = (out / "log.txt").read_text()
    # seed by seed, model by model in the suite's order
    started = re.findall(r"tiny seed (\d) (\S+) \(", log)
    assert started == [(s, m) for s in "01" for m in ("bert-tiny-ce", "bert-tiny-cwt")], log
    # the lanes leave the throughput cells out; they run after every lane, one seed at a time
    quiet = [log.index(f"tiny: throughput of seed {s}, alone on the GPU") for s in "01"]
    assert max(log.index(f"tiny seed {s} {m} (") for s, m in started) < quiet[0] < quiet[1]
    lane_log = (out / "log-tiny.txt").read_text()
    assert re.findall(r"(\d+) computed", lane_log)[-2:] == ["2", "2"], lane_log  # 2 models
    assert "done in" in log
    # each line says how far into the call it is, never going back
    seconds = [int(n) for n in re.findall(r"^gpu-run \[\+(\d+) s\]: ", log, flags=re.M)]
    assert len(seconds) == len(log.splitlines()) and seconds == sorted(seconds), log
    assert log.index("the suites read: the lanes start") < log.index("tiny seed 0 bert-tiny-ce (")
    assert (out / "status.txt").read_text() == "done\n"
    with tarfile.open(out / "leaderboards.tar.gz") as tar:
        assert any(n.endswith(".parquet") for n in tar.getnames())
    lb = tmp_path / "lb"
    got = _collect(out, lb)
    assert got.returncode == 0, got.stderr
    rows = read_leaderboard(lb / "tiny")
    assert set(rows["seed"]) == {0, 1} and set(rows["model"]) == {"bert-tiny-ce", "bert-tiny-cwt"}
    speed = rows[rows["task"] == "throughput"]
    assert set(zip(speed["seed"], speed["model"], strict=True)) == {
        (s, m) for s in (0, 1) for m in ("bert-tiny-ce", "bert-tiny-cwt")
    }
    # the next call on the same machine, GPU_RUN_MODELS naming the models in the other order
    # (that order, within each seed) and GPU_RUN_QUIET_FORCE measuring the throughput cells
    # again: every other cell is done, nothing else is computed again
    named = "bert-tiny-cwt bert-tiny-ce"
    again = _run(tmp_path, 900, models=named, quiet_force="1")
    assert again.returncode == 0, again.stderr + again.stdout
    log = (out / "log-tiny.txt").read_text()
    computed = [int(n) for n in re.findall(r"(\d+) computed", log)]
    assert computed == [0, 0, 0, 0, 2, 2], log  # 2 seeds x 2 models, then each seed's speed
    assert (out / "status.txt").read_text() == "done\n"
    started = re.findall(r"tiny seed (\d) (\S+) \(", (out / "log.txt").read_text())
    assert started == [(s, m) for s in "01" for m in named.split()]
    # a first call on a fresh machine starts from the collected rows (here with no time to
    # run anything: `hlm run` skipping cells already done is the runner's own test) and packs
    # them back
    fresh = _run(tmp_path, 0, work="fresh-work", start_from=lb)
    assert fresh.returncode == 0, fresh.stderr + fresh.stdout
    with tarfile.open(out / "leaderboards.tar.gz") as tar:
        packed = {Path(n).name for n in tar.getnames() if n.endswith(".parquet")}
    assert packed == {p.name for p in (lb / "tiny").glob("*.parquet")}


@pytest.mark.parametrize(("budget", "min_cell"), [(0, 60), (900, 1000)])
def test_a_spent_budget_runs_nothing_and_still_packs_the_results(
    tmp_path: Path, budget: int, min_cell: int
) -> None:
    """No time left, or less than a model needs (GPU_RUN_MIN_CELL_S): no model starts."""
    res = _run(tmp_path, budget=budget, min_cell=min_cell)
    assert res.returncode == 0, res.stderr
    log = (tmp_path / "out" / "log.txt").read_text()
    assert "budget spent before seed 0 bert-tiny-ce" in log, log
    assert f"a model needs {min_cell}): call again" in log
    assert not (tmp_path / "out" / "log-tiny.txt").exists()  # no `hlm run` was started
    assert (tmp_path / "out" / "leaderboards.tar.gz").is_file()
    assert (tmp_path / "out" / "status.txt").read_text() == "more\n"
    assert "quiet tasks (throughput) run alone after the lanes, in the last 90 s" in log


def test_a_suite_without_quiet_tasks_keeps_no_time_for_them(tmp_path: Path) -> None:
    """The lanes may run up to the benchmark's slot: the time left they see is the budget's
    (less the few seconds of loading the suite), not 90 s less."""
    text = (ROOT / "tests" / "harness" / "data" / "tiny.yaml").read_text()
    calm = tmp_path / "calm.yaml"
    calm.write_text(text.split("  - type: throughput")[0].replace("name: tiny\n", "name: calm\n"))
    res = _run(tmp_path, budget=0, suites=str(calm))
    assert res.returncode == 0, res.stderr
    log = (tmp_path / "out" / "log.txt").read_text()
    assert "no suite has a quiet task (throughput): the lanes run to the benchmark's slot" in log
    left = re.search(r"budget spent before seed 0 bert-tiny-ce \((-?\d+) s left", log)
    assert left is not None, log
    assert -60 < int(left.group(1)) <= 0, log  # with the quiet slot: -90 or less


@pytest.mark.slow
def test_two_suites_run_side_by_side_and_models_can_be_chosen(tmp_path: Path) -> None:
    """Each suite is a lane of its own (both lanes' logs and rows come back); GPU_RUN_MODELS
    runs only the models it names (its order: the test above)."""
    text = (ROOT / "tests" / "harness" / "data" / "tiny.yaml").read_text()
    text = text.replace("seeds: [0, 1]", "seeds: [0]")  # seed by seed: the test above
    for name in ("tiny", "tiny2"):
        (tmp_path / f"{name}.yaml").write_text(text.replace("name: tiny\n", f"name: {name}\n"))
    suites = f"{tmp_path / 'tiny.yaml'} {tmp_path / 'tiny2.yaml'}"
    res = _run(tmp_path, budget=900, suites=suites, models="no-such bert-tiny-cwt", quiet="")
    assert res.returncode == 0, res.stderr + res.stdout
    out = tmp_path / "out"
    assert {"log-tiny.txt", "log-tiny2.txt"} <= {p.name for p in out.iterdir()}
    log = (out / "log.txt").read_text()
    for name in ("tiny", "tiny2"):
        assert re.findall(rf"{name} seed (\d) (\S+) \(", log) == [("0", "bert-tiny-cwt")], log
    with tarfile.open(out / "leaderboards.tar.gz") as tar:
        folders = {Path(n).parts[1] for n in tar.getnames() if len(Path(n).parts) > 1}
    assert folders == {"tiny", "tiny2"}
    assert (out / "status.txt").read_text() == "done\n"


@pytest.mark.slow
def test_seed_lanes_split_a_suite_by_seed_and_share_its_leaderboard(tmp_path: Path) -> None:
    """GPU_RUN_SEED_LANES=2: seed 0 in one lane, seed 1 in the other, side by side, each with
    its log; the rows of both land in the suite's one leaderboard, packed once."""
    res = _run(tmp_path, budget=900, models="bert-tiny-cwt", quiet="", seed_lanes="2")
    assert res.returncode == 0, res.stderr + res.stdout
    out = tmp_path / "out"
    for k in (0, 1):
        lane_log = (out / f"log-tiny-{k}.txt").read_text()
        assert re.findall(r"(\d+) computed", lane_log) == ["2"], lane_log  # 2 tasks, its seed
    assert not (out / "log-tiny.txt").exists()
    log = (out / "log.txt").read_text()
    assert sorted(re.findall(r"tiny seed (\d) (\S+) \(", log)) == [
        ("0", "bert-tiny-cwt"),
        ("1", "bert-tiny-cwt"),
    ], log
    with tarfile.open(out / "leaderboards.tar.gz") as tar:
        names = tar.getnames()
    assert {Path(n).parts[1] for n in names if len(Path(n).parts) > 1} == {"tiny"}
    assert len(names) == len(set(names))  # the folder once, not once a lane
    lb = tmp_path / "lb"
    assert _collect(out, lb).returncode == 0
    rows = read_leaderboard(lb / "tiny")
    assert set(zip(rows["seed"], rows["model"], strict=True)) == {
        (0, "bert-tiny-cwt"),
        (1, "bert-tiny-cwt"),
    }
    assert (out / "status.txt").read_text() == "done\n"


@pytest.mark.parametrize("lanes", ["0", "two", "-1"])
def test_a_bad_number_of_seed_lanes_stops_the_call(tmp_path: Path, lanes: str) -> None:
    res = _run(tmp_path, budget=900, seed_lanes=lanes)
    assert res.returncode == 2
    assert f"GPU_RUN_SEED_LANES must be a whole number of lanes, 1 or more (got '{lanes}')" in (
        res.stderr
    )
    assert not (tmp_path / "out" / "log.txt").exists()  # stopped before anything ran


def test_a_suite_that_does_not_load_fails_its_lane_and_the_call(tmp_path: Path) -> None:
    """The other lane still runs (here: no model chosen, so nothing to compute), and the call
    says failed, not done."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nmodels: 3\n")
    suites = f"{ROOT / 'tests' / 'harness' / 'data' / 'tiny.yaml'} {bad}"
    res = _run(tmp_path, budget=900, suites=suites, models="no-such-model")
    assert res.returncode == 0, res.stderr + res.stdout
    log = (tmp_path / "out" / "log.txt").read_text()
    assert f"{bad} does not load (above): its lane stopped" in log
    assert f"{bad}: models: Input should be a valid list" in res.stderr  # the reason, named
    assert (tmp_path / "out" / "status.txt").read_text() == "failed\n"


def test_collect_files_away_what_the_run_superseded_and_keeps_each_row_once(
    tmp_path: Path,
) -> None:
    from harness.results.leaderboard import SUPERSEDED, write_cell, write_current_cells
    from tests.harness.results.test_leaderboard import row

    here = tmp_path / "lb" / "s"  # the committed board: cell "old" current
    write_cell(here, "old", [row("a", "val_loss", 9.0)])
    write_current_cells(here, ["old"])
    run = tmp_path / "run" / "leaderboards" / "s"  # the GPU machine's, after its `hlm run`
    shutil.copytree(here, run)
    write_cell(run, "new", [row("a", "val_loss", 1.0)])
    assert write_current_cells(run, ["new"]) == [run / SUPERSEDED / "old.parquet"]
    out = tmp_path / "out"
    out.mkdir()
    with tarfile.open(out / "leaderboards.tar.gz", "w:gz") as tar:
        tar.add(run.parent, arcname="leaderboards")
    got = _collect(out, here.parent)
    assert got.returncode == 0, got.stderr
    assert "s: old.parquet is superseded" in got.stdout
    assert sorted(p.name for p in here.glob("*.parquet")) == ["new.parquet"]
    assert list(read_leaderboard(here)["value"]) == [1.0]
    assert sorted(read_leaderboard(here, include_stale=True)["value"]) == [1.0, 9.0]
    # the project's page reads leaderboards/ only: rows collected elsewhere leave it alone
    page = ROOT / "docs" / "REPRODUCTION.md"
    before = page.read_bytes()
    got = _collect(out, here.parent, report=True)
    assert got.returncode == 0, got.stderr
    assert f"the reproduction page reads leaderboards/, not {here.parent}" in got.stdout
    assert page.read_bytes() == before
