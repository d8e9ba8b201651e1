"""`hlm run SUITE --executor slurm`: the suite's cells still to compute, submitted as Slurm
jobs (`harness.run.slurm`); `--dry-run` prints the jobs and the sbatch script instead.

    hlm run paper-gpu-encoder --executor slurm --partition gpu --gpus-per-node 1 --time-min 720
    hlm run paper-gpu-encoder --executor slurm --dry-run      # the jobs; nothing submitted
    hlm run paper-gpu-encoder --executor slurm --wait         # follow them to the end
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from harness.cli.parsing import verbosity
from harness.run.cells import Selection


def run_on_slurm(
    args: argparse.Namespace, path: Path, select: Selection, flags: dict[str, Any]
) -> int:
    from harness.run.runner import leaderboard_dir, plan_suite
    from harness.suite.launcher import launcher_from

    root = Path(args.leaderboards).resolve()
    plan = plan_suite(path, root, args.force, select, args.max_cells)
    launcher = launcher_from(plan.suite.launcher, args.launcher, flags)
    out = leaderboard_dir(plan.suite.name, root)
    if args.dry_run:
        print(_dry_run(plan.todo, launcher, out, len(plan.done)))
        return 0
    if not plan.todo:
        print(f"{plan.suite.name}: all {len(plan.done)} cells done -> {out}")
        return 0
    return _submit(args, path, plan.todo, launcher, out, flags)


def _dry_run(todo: list, launcher: Any, out: Path, done: int) -> str:
    from harness.run.jobs import shape_jobs
    from harness.run.slurm import array_launcher, sbatch_script

    pretraining, array = shape_jobs(todo)
    lines = [
        f"{out.name}: {len(todo)} cells to compute ({done} done): {len(pretraining)} "
        f"pretraining jobs and a job array of {len(array)} tasks; nothing submitted",
        "",
        *(job.describe() for job in pretraining),
        *(f"array task {i}: {job.describe()}" for i, job in enumerate(array)),
    ]
    if pretraining:
        lines += [
            "",
            "# the sbatch script of a pretraining job",
            sbatch_script(launcher, out, None),
        ]
    if array:
        script = sbatch_script(array_launcher(launcher), out, len(array))
        lines += ["", "# the sbatch script of the job array", script]
    return "\n".join(lines)


def retry_command(args: argparse.Namespace, launcher_flags: dict[str, Any]) -> str:
    """The command that submits this selection again: the cells it finished are skipped."""
    words = ["hlm", "run", args.suite, "--executor", "slurm", "--wait"]
    words += ["--leaderboards", args.leaderboards]
    for flag, value in (("--model", args.model), ("--task", args.task), ("--seed", args.seed)):
        words += [flag, str(value)] if value is not None else []
    for task in args.skip_task:
        words += ["--skip-task", task]
    if args.launcher is not None:
        words += ["--launcher", args.launcher]
    for name, value in launcher_flags.items():
        if value is not None:
            flag = "--" + name.replace("_", "-")
            words += (
                [f"{flag}={v}" for v in value] if isinstance(value, list) else [flag, str(value)]
            )
    if args.trust_plugins:
        words.append("--trust-plugins")
    return shlex.join(words)


def _submit(
    args: argparse.Namespace,
    path: Path,
    todo: list,
    launcher: Any,
    out: Path,
    launcher_flags: dict[str, Any],
) -> int:
    from harness.run.slurm import follow, submit

    shared = {"root": str(out.parent), "force": args.force, "trust": args.trust_plugins}
    sub = submit(str(path.resolve()), todo, out, launcher, shared)
    print(f"{out.name}: {len(todo)} cells in {len(sub.jobs)} jobs: {' '.join(sub.ids())}")
    print(f"logs: {out / '_jobs'}")
    if not args.wait:
        return 0
    failed = follow(sub, todo, not args.no_progress and verbosity(args) >= 0)
    for line in failed:
        print(f"failed: {line}", file=sys.stderr)
    if failed:
        retry = retry_command(args, launcher_flags)
        print(f"retry the failed cells (finished ones are skipped): {retry}", file=sys.stderr)
        return 1
    print(f"{len(todo)} cells computed -> {out}")
    return 0
