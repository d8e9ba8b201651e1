"""`hlm run --executor slurm`: a suite's cells sent to a Slurm cluster through submitit.

The jobs are shaped by the work (`harness.run.jobs`): a job per pretraining, a job array for
the cells that read none. Each job runs the local runner on its cells, so the leaderboard is
the one a local `hlm run` writes, cell for cell, and exactly once whatever is resubmitted
beside it. Each job's callable has submitit's `checkpoint` hook: when Slurm preempts it or
its time runs out, submitit requeues it, and the rerun resumes its pretraining and skips its
finished cells.

Job logs and submitit's files go beside the leaderboard, in `leaderboards/<suite>/_jobs/`
(underscored, so readers of the leaderboard skip it). Without `--wait` the job ids are
printed and the command returns; with it, a bar follows the cells (done, running) and
the end names each failed cell with its log and the one command that retries them.

`HLM_SUBMITIT_CLUSTER=local` sends the jobs to submitit's local executor instead (each a
subprocess of this machine): how the tests run a suite through this path without Slurm.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.results.leaderboard import done_cells
from harness.run.cells import Cell
from harness.run.claims import CLAIMS
from harness.run.jobs import JOBS, Job, JobSpec, run_job, shape_jobs
from harness.suite.launcher import Launcher
from zoo.errors import UserError

CLUSTER_ENV = "HLM_SUBMITIT_CLUSTER"  # "local": submitit's local executor (tests)
POLL_S = 5.0


def _submitit() -> Any:
    try:
        import submitit
    except ImportError:
        raise UserError(
            "--executor slurm needs submitit: pip install 'headless-zoo[slurm]'"
        ) from None
    return submitit


class CellsJob:
    """The callable a job runs (`run_job`), requeued as it was when preempted or timed out
    (submitit calls `checkpoint`)."""

    def __call__(self, spec: JobSpec) -> Any:
        return run_job(spec)

    def checkpoint(self, spec: JobSpec) -> Any:
        return _submitit().helpers.DelayedSubmission(self, spec)


def executor(out: Path, launcher: Launcher) -> Any:
    """submitit's executor for the suite's leaderboard folder `out`: Slurm's, or the local
    one where `HLM_SUBMITIT_CLUSTER=local`."""
    submitit = _submitit()
    folder = out / JOBS / "%j"
    if os.environ.get(CLUSTER_ENV) == "local":
        ex = submitit.LocalExecutor(folder=folder)
        ex.update_parameters(timeout_min=launcher.time_min)
        return ex
    if os.environ.get(CLUSTER_ENV) not in (None, "", "slurm"):
        raise UserError(f"{CLUSTER_ENV}={os.environ[CLUSTER_ENV]!r}: 'slurm' or 'local'")
    try:
        ex = submitit.SlurmExecutor(folder=folder)
    except RuntimeError as exc:  # no srun on PATH: not a Slurm cluster's login node
        raise UserError(f"--executor slurm: {exc}") from None
    ex.update_parameters(job_name=f"hlm-{out.name}", **launcher.submitit_parameters())
    return ex


@dataclass
class Submitted:
    """The jobs of one submission, by the cells each runs."""

    jobs: list[tuple[Job, Any]]  # (our job, submitit's job)
    out: Path

    def ids(self) -> list[str]:
        return [j.job_id for _, j in self.jobs]


def submit(
    suite_path: str, cells: list[Cell], out: Path, launcher: Launcher, spec: dict[str, Any]
) -> Submitted:
    """Submit the jobs of `cells` (the suite's cells still to compute): `spec` holds the
    JobSpec fields every job shares (root, force, trust)."""
    pretraining, array = shape_jobs(cells)
    (out / JOBS).mkdir(parents=True, exist_ok=True)
    task = CellsJob()

    def spec_of(job: Job, settings: Launcher) -> JobSpec:
        return JobSpec(suite_path, cell_ids=job.cell_ids, launcher=settings, **spec)

    ex = executor(out, launcher)
    done = [(job, ex.submit(task, spec_of(job, launcher))) for job in pretraining]
    if array:  # a cell alone: one node, at most one GPU
        single = array_launcher(launcher)
        jobs = executor(out, single).map_array(task, [spec_of(j, single) for j in array])
        done += list(zip(array, jobs, strict=True))
    return Submitted(done, out)


def array_launcher(launcher: Launcher) -> Launcher:
    """The settings of the array's tasks: a cell reading no pretraining needs one node and
    at most one GPU."""
    return launcher.model_copy(update={"nodes": 1, "gpus_per_node": min(launcher.gpus_per_node, 1)})


def sbatch_script(launcher: Launcher, out: Path, array: int | None) -> str:
    """The sbatch script submitit writes for a job of `launcher` (an array of `array` tasks
    where given), without submitting it: what `--dry-run` shows."""
    from submitit.slurm.slurm import _make_sbatch_string  # what SlurmExecutor writes

    params = launcher.submitit_parameters()
    command = f"{shlex.quote(sys.executable)} -u -m submitit.core._submit {out / JOBS}/%j"
    return _make_sbatch_string(
        command=command, folder=out / JOBS / "%j", job_name=f"hlm-{out.name}",
        map_count=array, **params,
    )  # fmt: skip


def follow(sub: Submitted, wanted: list[Cell], progress: bool) -> list[str]:
    """Wait for the jobs, a bar of the cells done and running; the failed cells, each with
    its job's log, once all have ended."""
    from tqdm import tqdm

    ids = {c.cell_id for c in wanted}
    bar = tqdm(total=len(ids), unit="cell", desc=f"{sub.out.name}: cells", disable=not progress)
    try:
        while not all(j.done() for _, j in sub.jobs):
            _update(bar, sub.out, ids)
            time.sleep(POLL_S)
        _update(bar, sub.out, ids)
    finally:
        bar.close()
    return failures(sub)


def _update(bar: Any, out: Path, ids: set[str]) -> None:
    done = len(ids & done_cells(out))
    running = sum((out / CLAIMS / i).exists() for i in ids)
    bar.n = done
    bar.set_postfix_str(f"running {running}")
    bar.refresh()


def failures(sub: Submitted) -> list[str]:
    """A line per failed cell (or per job that failed as a whole), with its job's log."""
    lines = []
    for job, sj in sub.jobs:
        log = sj.paths.stdout
        error = sj.exception()
        if error is not None:
            lines.append(
                f"{job.describe()}: job {sj.job_id} failed ({_last_line(error)}); log {log}"
            )
            continue
        lines += [f"{failed}; log {log}" for failed in sj.result().failed]
    return lines


def _last_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[-1] if text else type(error).__name__
