"""A suite's cells shaped into cluster jobs, and what one job runs once it starts.

The work decides the jobs (`shape_jobs`): one job per pretraining, holding its checkpoint
and every cell that reads it, in the order the local runner takes them; one job array for
the cells that read no pretraining (one task a cell). A job runs `hlm run`'s own runner on
its cells alone (`run_job`), so it shares the runner's guarantees: a cell is claimed under
`_claims/` before it is computed and its row file is written whole, a pretraining is
trained under its run's lock and resumed from its newest checkpoint. A resubmitted or
requeued job, a second submission, or a local `hlm run` beside the jobs therefore never
computes a cell twice, and a pretraining two jobs share is trained once.

With more than one GPU a node, a job trains its checkpoint under torchrun (one process a
GPU, across the job's nodes), then evaluates its cells in the job's first process.

    jobs = shape_jobs(cells)                 # [Job("pretrain 24dbf9dbe2748f95", ...), ...]
    run_job(JobSpec(suite, root, cell_ids, force, trust, launcher))   # inside the job
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.run.cells import Cell, Selection
from harness.run.points import ensure_pretrained, reads_pretraining, resumable
from harness.run.runner import RunSummary, run_suite
from harness.suite.launcher import Launcher
from zoo.errors import UserError
from zoo.train.config import PretrainConfig
from zoo.writer import write_text

log = logging.getLogger(__name__)
JOBS = "_jobs"  # beside the leaderboard's row files: submitit's folder, job logs, run configs


@dataclass(frozen=True)
class Job:
    """One job of a submission: its name, its cells (ids, in run order) and the pretraining
    it trains (None: an array task's single cell, which reads no checkpoint)."""

    name: str
    cells: tuple[Cell, ...]
    pretrain_key: str | None

    @property
    def cell_ids(self) -> tuple[str, ...]:
        return tuple(c.cell_id for c in self.cells)

    def describe(self) -> str:
        """One line: the job, its cells' models and tasks."""
        what = ", ".join(f"{c.label}/{c.task.label()} (seed {c.seed})" for c in self.cells)
        return f"{self.name}: {len(self.cells)} cell{'s' * (len(self.cells) != 1)}: {what}"


def shape_jobs(cells: list[Cell]) -> tuple[list[Job], list[Job]]:
    """(one job per pretraining, the array's tasks): a pretraining's job holds every cell
    reading its checkpoint, ordered as the local runner orders them (by task type)."""
    by_key: dict[str, list[Cell]] = {}
    alone: list[Cell] = []
    for cell in cells:
        if cell.pretrain_key and reads_pretraining(cell):
            by_key.setdefault(cell.pretrain_key, []).append(cell)
        else:
            alone.append(cell)
    pretraining = [
        Job(f"pretrain {key}", tuple(sorted(group, key=lambda c: c.task.type)), key)
        for key, group in sorted(by_key.items())
    ]
    array = [Job(f"cell {c.cell_id}", (c,), None) for c in alone]
    return pretraining, array


@dataclass(frozen=True)
class JobSpec:
    """What a job needs to run (pickled by submitit): the suite, the leaderboard root, its
    cells, and how to run them."""

    suite: str
    root: str
    cell_ids: tuple[str, ...]
    force: bool
    trust: bool
    launcher: Launcher


def torchrun_command(cfg_file: Path, resume: bool, launcher: Launcher, head: str) -> list[str]:
    """The torchrun command that trains the run `cfg_file` describes: one process a GPU of
    this node; across nodes, rendezvous at the job's first node `head` (Slurm's node id
    gives this node's rank)."""
    dist = [f"--nproc_per_node={launcher.gpus_per_node}"]
    if launcher.nodes > 1:
        dist += [
            f"--nnodes={launcher.nodes}",
            f"--node_rank={os.environ.get('SLURM_NODEID', '0')}",
            "--rdzv_backend=c10d",
            f"--rdzv_endpoint={head}:29500",
            f"--rdzv_id={os.environ.get('SLURM_JOB_ID', 'hlm')}",
        ]
    else:
        dist.append("--standalone")
    flag = "--resume" if resume else "--overwrite"
    return [
        *(sys.executable, "-m", "torch.distributed.run", *dist),
        *("-m", "harness.cli", "pretrain", "--config", str(cfg_file), flag),
    ]


def _head_node() -> str:
    """The job's first node (the rendezvous of a multi-node torchrun)."""
    import submitit

    try:
        return str(submitit.JobEnvironment().hostnames[0])
    except RuntimeError:  # not inside a submitit job (a test calling it directly)
        return "localhost"


def _torchrun(launcher: Launcher, folder: Path) -> Callable[[PretrainConfig, bool], None]:
    """A trainer for `ensure_pretrained` that runs the pretraining under torchrun."""

    def train(cfg: PretrainConfig, resume: bool) -> None:
        cfg_file = folder / f"{Path(cfg.output_dir).name}.yaml"
        write_text(cfg_file, yaml.safe_dump(cfg.as_given(), sort_keys=True))
        cmd = torchrun_command(cfg_file, resume, launcher, _head_node())
        log.info("pretraining under torchrun: %s", " ".join(cmd))
        subprocess.run(cmd, check=True)

    return train


def _pretrain_under_torchrun(spec: JobSpec, cells: list[Cell]) -> None:
    """The job's checkpoint, trained under torchrun: by the first node under the run's lock
    (a second job of the same pretraining waits, then finds it cached); the other nodes
    join its rendezvous while the checkpoint is not there yet."""
    folder = Path(spec.root) / JOBS
    folder.mkdir(parents=True, exist_ok=True)
    train = _torchrun(spec.launcher, folder)
    for cell in cells:
        if cell.pretrain is None or not reads_pretraining(cell):
            continue
        if _node() == 0:
            ensure_pretrained(cell, train)
        elif not (out := Path(cell.pretrain.output_dir)).joinpath("final").is_dir():
            train(cell.pretrain, resumable(out))
        return  # a job holds one pretraining


def _node() -> int:
    return int(os.environ.get("SLURM_NODEID", "0"))


def run_job(spec: JobSpec) -> RunSummary:
    """Inside a job: its pretraining first (under torchrun with several GPUs), then its
    cells through the local runner, which skips what is done and claims what it computes."""
    from harness.run.cells import expand
    from harness.suite import load_suite
    from zoo.registry import trusting

    with trusting(spec.trust):
        wanted = Selection(cell_ids=frozenset(spec.cell_ids))
        cells = wanted.apply(expand(load_suite(spec.suite)))
        gone = sorted(set(spec.cell_ids) - {c.cell_id for c in cells})
        if gone:
            raise UserError(
                f"{spec.suite}: the suite changed since this job was submitted: it no longer "
                f"has cells {', '.join(gone)}; submit it again"
            )
        if spec.launcher.gpus_per_node > 1:
            _pretrain_under_torchrun(spec, cells)
        if _node() != 0:
            return RunSummary(0, 0, 0, [], Path(spec.root))  # the first node evaluates
        return run_suite(spec.suite, spec.force, Path(spec.root), progress=False, select=wanted)
