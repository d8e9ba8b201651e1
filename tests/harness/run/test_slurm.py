"""`hlm run --executor slurm`: jobs shaped by the work, run through submitit's local executor
(each job a subprocess here) into the leaderboard a local run writes, exactly once under a
kill and a double submission; the sbatch script checked against a fake `sbatch`."""

from __future__ import annotations

import os
import signal
import stat
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from harness.cli import main as hlm
from harness.results.leaderboard import read_leaderboard
from harness.run.cells import expand
from harness.run.claims import CLAIMS
from harness.run.jobs import shape_jobs, torchrun_command
from harness.suite import load_suite
from harness.suite.launcher import Launcher, launcher_from
from zoo.errors import UserError

SUITE = {
    "name": "quickstart",
    "baseline": "bert-tiny-ce",
    "models": [{"preset": "bert-tiny", "objective": o} for o in ("ce", "cwt")],
    "recipe": {"corpus": ["synthetic:300"], "vocab_size": 400, "steps": 20, "batch_size": 8,
               "seq_len": 32},
    "seeds": [0],
    "tasks": [
        {"type": "validation", "every": 10},
        {"type": "throughput", "params": {"steps": 2, "warmup": 1, "baseline": "ce", "mfu": False}},
    ],
}  # fmt: skip
KEYS = ["cell_id", "model", "task", "metric", "step", "seed", "sweep", "config"]


def _suite(folder: Path, **extra: object) -> Path:
    path = folder / "mini.yaml"
    path.write_text(yaml.safe_dump({**SUITE, **extra}))
    return path


def _rows(root: Path) -> pd.DataFrame:
    df = read_leaderboard(root / "quickstart")
    return df.sort_values(["cell_id", "task", "metric", "step"]).reset_index(drop=True)


@pytest.fixture
def local_jobs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """submitit's local executor for `--executor slurm`, runs in `tmp_path`/runs."""
    monkeypatch.setenv("HLM_SUBMITIT_CLUSTER", "local")
    monkeypatch.setenv("HLM_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # jobs side by side on a few cores
    monkeypatch.setattr("harness.run.slurm.POLL_S", 0.5)
    return tmp_path


def test_jobs_are_shaped_by_the_work(tmp_path: Path) -> None:
    """A job per pretraining with every cell reading it; throughput (no checkpoint read) in
    the array, a task a cell."""
    cells = expand(load_suite(_suite(tmp_path)))
    pretraining, array = shape_jobs(cells)
    assert [j.pretrain_key for j in pretraining] == sorted({c.pretrain_key for c in cells})
    assert all(len(j.cells) == 1 and j.cells[0].task.type == "validation" for j in pretraining)
    assert sorted(c.task.type for j in array for c in j.cells) == ["throughput", "throughput"]
    assert {i for j in pretraining + array for i in j.cell_ids} == {c.cell_id for c in cells}


@pytest.mark.slow
def test_a_suite_through_submitit_gives_the_local_leaderboard(local_jobs: Path, capsys) -> None:
    suite = _suite(local_jobs)
    assert (
        hlm(["run", str(suite), "--leaderboards", str(local_jobs / "here"), "--no-progress"]) == 0
    )
    argv = ["run", str(suite), "--executor", "slurm", "--wait", "--no-progress"]
    assert hlm([*argv, "--leaderboards", str(local_jobs / "jobs")]) == 0
    assert "4 cells computed" in capsys.readouterr().out
    here, jobs = _rows(local_jobs / "here"), _rows(local_jobs / "jobs")
    pd.testing.assert_frame_equal(here[KEYS], jobs[KEYS])  # same cells, keys and points
    kept = here["task"] == "validation"  # deterministic; throughput is a timing
    assert here.loc[kept, "value"].tolist() == jobs.loc[kept, "value"].tolist()
    logs = list((local_jobs / "jobs" / "quickstart" / "_jobs").glob("*/*_log.out"))
    assert len(logs) == 4  # a log per job, beside the leaderboard
    assert hlm([*argv, "--leaderboards", str(local_jobs / "jobs")]) == 0  # all done: no job
    assert "all 4 cells done" in capsys.readouterr().out


def _kill_tree(pid: int) -> None:
    """SIGKILL `pid` (a local job's id is its controller's process id) and its children."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    for child in [*map(int, children), pid]:
        os.kill(child, signal.SIGKILL)


@pytest.mark.slow
def test_a_job_killed_mid_cell_is_retried_and_finishes_once(local_jobs: Path, capsys) -> None:
    """The job pretraining bert-tiny-ce is killed (SIGKILL) once it holds its cell's claim;
    submitting the suite again takes the dead job's claim over, resumes, and writes each
    cell once."""
    longer = {**SUITE["recipe"], "steps": 200}  # a pretraining long enough to be cut
    tasks = [{"type": "validation", "every": 100}, SUITE["tasks"][1]]
    suite, root = _suite(local_jobs, recipe=longer, tasks=tasks), local_jobs / "lb"
    argv = ["run", str(suite), "--executor", "slurm", "--leaderboards", str(root)]
    assert hlm([*argv, "--model", "bert-tiny-ce", "--task", "validation"]) == 0
    job_id = capsys.readouterr().out.split("jobs: ")[1].split()[0]
    claims = root / "quickstart" / CLAIMS
    deadline = time.monotonic() + 300
    while not any(p.name != ".lock" for p in claims.glob("*")) and time.monotonic() < deadline:
        time.sleep(0.2)  # the job has claimed its cell: it is computing it
    (claimed,) = [p.name for p in claims.glob("*") if p.name != ".lock"]
    _kill_tree(int(job_id))  # the job's process and its worker, as a node lost would
    assert not (root / "quickstart" / f"{claimed}.parquet").exists()  # cut mid-cell
    assert hlm([*argv, "--wait", "--no-progress"]) == 0  # the whole suite, the killed cell too
    rows = _rows(root)
    assert rows.groupby(["cell_id", "task", "metric", "step"], dropna=False).size().max() == 1
    assert claimed in set(rows["cell_id"]) and len(set(rows["cell_id"])) == 4
    assert not any(p.name != ".lock" for p in claims.glob("*"))  # every claim released


@pytest.mark.slow
def test_two_submissions_at_once_compute_each_cell_once(local_jobs: Path, capsys) -> None:
    """Both submit every cell; the claims give each cell to one job, the run lock each
    pretraining to one: the cells computed over all jobs are the suite's, once."""
    suite, root = _suite(local_jobs), local_jobs / "lb"
    argv = ["run", str(suite), "--executor", "slurm", "--leaderboards", str(root)]
    assert hlm(argv) == 0 and hlm(argv) == 0  # both return once submitted
    results = list((root / "quickstart" / "_jobs").glob("*/*_result.pkl"))
    deadline = time.monotonic() + 600
    while len(results) < 8 and time.monotonic() < deadline:
        time.sleep(0.5)
        results = list((root / "quickstart" / "_jobs").glob("*/*_result.pkl"))
    computed = 0
    for path in results:
        outcome, summary = pd.read_pickle(path)
        assert outcome == "success", summary
        computed += summary.computed
    assert len(results) == 8 and computed == 4
    rows = _rows(root)
    assert rows.groupby(["cell_id", "task", "metric", "step"], dropna=False).size().max() == 1


def _fake_slurm(folder: Path) -> Path:
    """`sbatch` that keeps the script it is given and answers a job id; `srun` present."""
    bin_ = folder / "bin"
    bin_.mkdir()
    (bin_ / "sbatch").write_text(
        '#!/bin/sh\ncp "$1" "$(dirname "$0")/script-$(ls "$(dirname "$0")" | wc -l).sh"\n'
        'echo "Submitted batch job 4242"\n'
    )
    (bin_ / "srun").write_text("#!/bin/sh\nexit 0\n")
    for f in bin_.iterdir():
        f.chmod(f.stat().st_mode | stat.S_IEXEC)
    return bin_


def test_the_sbatch_scripts_submitit_writes(tmp_path: Path, monkeypatch, capsys) -> None:
    bin_ = _fake_slurm(tmp_path)
    monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("HLM_SUBMITIT_CLUSTER", raising=False)
    suite = _suite(tmp_path, launcher={"partition": "gpu", "time_min": 90})
    flags = ["--gpus-per-node", "2", "--account", "lab", "--sbatch=--constraint=h100"]
    argv = ["run", str(suite), "--executor", "slurm", "--leaderboards", str(tmp_path / "lb")]
    assert hlm([*argv, *flags]) == 0
    assert "4 cells in 4 jobs: 4242 4242 4242_0 4242_1" in capsys.readouterr().out
    scripts = [p.read_text() for p in sorted(bin_.glob("script-*.sh"))]
    assert len(scripts) == 3  # two pretraining jobs, one array
    for text in scripts:
        for line in ("--partition=gpu", "--time=90", "--account=lab", "--constraint=h100"):
            assert f"#SBATCH {line}\n" in text, (line, text)
    pretraining, array = scripts[:2], scripts[2]
    assert all("#SBATCH --gpus-per-node=2\n" in t for t in pretraining)
    assert "#SBATCH --array=0-1%2\n" in array and "#SBATCH --gpus-per-node=1\n" in array
    assert not any((tmp_path / "lb" / "quickstart").glob("*.parquet"))  # nothing ran here


def test_dry_run_lists_the_jobs_and_their_script(tmp_path: Path, capsys) -> None:
    suite = _suite(tmp_path)
    argv = ["run", str(suite), "--executor", "slurm", "--dry-run", "--partition", "gpu"]
    assert hlm([*argv, "--leaderboards", str(tmp_path / "lb")]) == 0
    out = capsys.readouterr().out
    assert "4 cells to compute (0 done): 2 pretraining jobs and a job array of 2 tasks" in out
    assert "#SBATCH --partition=gpu" in out and "#SBATCH --array=0-1%2" in out
    assert not (tmp_path / "lb").exists()  # nothing written


def test_launcher_settings_layer_and_are_checked_once(tmp_path: Path) -> None:
    in_suite = Launcher(partition="a", time_min=60)
    file = tmp_path / "cluster.yaml"
    file.write_text("partition: b\ncpus_per_task: 4\n")
    got = launcher_from(in_suite, str(file), {"cpus_per_task": 16, "account": None})
    assert (got.partition, got.time_min, got.cpus_per_task, got.account) == ("b", 60, 16, None)
    file.write_text("time_min: 0\n")
    with pytest.raises(UserError, match=r"cluster.yaml.*time_min"):
        launcher_from(None, str(file), {})
    file.write_text("partiton: gpu\n")
    with pytest.raises(UserError, match="partiton"):
        launcher_from(None, str(file), {})
    with pytest.raises(UserError, match="sbatch"):
        launcher_from(None, None, {"sbatch": ["constraint=h100"]})


def test_a_launcher_moves_no_cell_key(tmp_path: Path) -> None:
    plain = [c.cell_id for c in expand(load_suite(_suite(tmp_path)))]
    (tmp_path / "b").mkdir()
    sent = _suite(tmp_path / "b", launcher={"partition": "gpu", "gpus_per_node": 4})
    assert [c.cell_id for c in expand(load_suite(sent))] == plain


def test_launcher_flags_need_the_slurm_executor(tmp_path: Path, capsys) -> None:
    suite = _suite(tmp_path)
    assert hlm(["run", str(suite), "--partition", "gpu", "--dry-run"]) == 2
    assert "--partition: only with --executor slurm" in capsys.readouterr().err


def test_torchrun_trains_a_multi_gpu_pretraining(tmp_path: Path, monkeypatch) -> None:
    one = torchrun_command(tmp_path / "c.yaml", False, Launcher(gpus_per_node=4), "n1")
    assert one[1:4] == ["-m", "torch.distributed.run", "--nproc_per_node=4"]
    assert "--standalone" in one and one[-4:] == ["pretrain", "--config", f"{tmp_path}/c.yaml",
                                                  "--overwrite"]  # fmt: skip
    monkeypatch.setenv("SLURM_NODEID", "1")
    two = torchrun_command(tmp_path / "c.yaml", True, Launcher(gpus_per_node=8, nodes=2), "n1")
    assert {"--nnodes=2", "--node_rank=1", "--rdzv_endpoint=n1:29500"} <= set(two)
    assert two[-1] == "--resume"


def test_a_preempted_job_is_requeued_as_it_was(tmp_path: Path) -> None:
    """submitit requeues a job whose callable has `checkpoint` (on preemption or timeout):
    ours resubmits the same cells, which the runner then resumes or skips."""
    import submitit

    from harness.run.jobs import JobSpec
    from harness.run.slurm import CellsJob

    spec = JobSpec(str(tmp_path / "s.yaml"), str(tmp_path), ("a", "b"), False, False, Launcher())
    job = CellsJob()
    again = job.checkpoint(spec)
    assert isinstance(again, submitit.helpers.DelayedSubmission)
    assert again.function is job and again.args == (spec,) and not again.kwargs


def test_a_job_of_a_suite_changed_since_submission_stops(tmp_path: Path) -> None:
    from harness.run.jobs import JobSpec, run_job

    suite = _suite(tmp_path)
    ids = tuple(c.cell_id for c in expand(load_suite(suite)))
    edited = {**SUITE, "recipe": {**SUITE["recipe"], "steps": 30}}  # every key moves
    suite.write_text(yaml.safe_dump(edited))
    spec = JobSpec(str(suite), str(tmp_path / "lb"), ids[:1], False, False, Launcher())
    with pytest.raises(UserError, match="the suite changed since this job was submitted"):
        run_job(spec)
