"""`hlm run SUITE`: a suite's cells (model x sweep point x seed x task) computed into its
leaderboard, pretraining what is missing (`harness.run.runner.run_suite`).

    hlm run suites/quickstart.yaml
    hlm run paper-cpu-encoder --seed 0 --skip-task throughput
    hlm run paper-cpu-encoder --dry-run          # the plan: cells to compute, runs to train
    hlm run cpu-ladder --model pythia-tiny-ce --seed 0 --reached   # checkpoints so far
    hlm run paper-gpu-encoder --executor slurm --partition gpu --gpus-per-node 1 --wait
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from harness.cli.flags import add_leaderboards, add_max_cells, add_trust
from harness.cli.parsing import verbosity

if TYPE_CHECKING:
    from harness.run.cells import Selection


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Validate the suite, expand it into cells (model x sweep point x seed x task), skip "
        "cells already in leaderboards/<suite>/, compute the rest. Pretrained checkpoints are "
        "cached in $HLM_RUNS_DIR (default runs/) by configuration hash."
    )
    p.add_argument("suite", help="suite YAML path or name under suites/")
    add_trust(p)
    add_max_cells(p)
    p.add_argument(
        "--force", action="store_true", help="recompute cells already in the leaderboard"
    )
    p.add_argument("--model", help="run only the cells of this model label")
    p.add_argument(
        "--task",
        help="run only the cells of this task label (its `name:`, else its type); with "
        "--force, re-measure them, e.g. `--task throughput --force` on a quiet machine",
    )
    p.add_argument(
        "--skip-task",
        action="append",
        default=[],
        metavar="TASK",
        help="leave out the cells of this task label (repeatable): `--skip-task throughput` "
        "while other work shares the machine, then `--task throughput` once it is quiet",
    )
    p.add_argument(
        "--seed",
        type=int,
        help="run only the cells of this seed, for every model: `--seed 0`, then `--seed 1`, "
        "so that each stretch of work leaves whole seeds, each a paired comparison (two runs "
        "with the same --seed share its cells)",
    )
    p.add_argument(
        "--publish", action="store_true", help="run the suite's `publish:` step at the end"
    )
    add_leaderboards(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--skip-busy",
        action="store_true",
        help="leave the cells whose pretraining another run is training now to that run, "
        "instead of waiting for it (that run evaluates them): a second lane moves on",
    )
    p.add_argument(
        "--reached",
        action="store_true",
        help="evaluate only the intermediate checkpoints that pretraining runs have written "
        "so far (the selected cells' `every:`/`at:` points), beside a run that still trains "
        "them; never trains, and leaves final checkpoints to `hlm run`",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the plan (cells to compute and done, pretraining runs cached or to train; "
        "with --executor slurm, the jobs and the sbatch script) and write nothing",
    )
    _add_executor(p)


def _add_executor(p: argparse.ArgumentParser) -> None:
    from harness.cli.config_flags import add_config_flags
    from harness.suite.launcher import Launcher

    group = p.add_argument_group(
        "Slurm (--executor slurm)",
        "where the jobs run: over the suite's `launcher:` section and a --launcher file; "
        "no cell's key reads them",
    )
    group.add_argument(
        "--executor",
        choices=("local", "slurm"),
        default="local",
        help="local: compute here (default); slurm: submit a job per pretraining and a job "
        "array for the other cells through submitit (pip install 'headless-zoo[slurm]')",
    )
    group.add_argument(
        "--wait",
        action="store_true",
        help="follow the jobs to the end (a bar of cells done and running), then name "
        "failed cells with their logs; without it, print the job ids and return",
    )
    group.add_argument("--launcher", metavar="FILE", help="a YAML file of launcher settings")
    lines = {
        "sbatch": "an extra sbatch option (repeatable): --sbatch=--constraint=h100",
        "setup": "a shell line run before each job (repeatable): --setup='module load cuda'",
    }
    add_config_flags(group, Launcher, skip=set(lines), dest_prefix=LAUNCHER)
    for name, said in lines.items():
        group.add_argument(f"--{name}", action="append", metavar="LINE", dest=LAUNCHER + name,
                           help=said)  # fmt: skip


LAUNCHER = "launcher__"  # argparse dest prefix of the launcher flags


def _selection(args: argparse.Namespace) -> Selection:
    from harness.run.cells import Selection

    return Selection(
        model=args.model, task=args.task, seed=args.seed, skip_tasks=tuple(args.skip_task)
    )


def run(args: argparse.Namespace) -> int:
    from harness.suite import resolve_suite_path
    from zoo.errors import UserError
    from zoo.registry import trusting

    with trusting(args.trust_plugins):
        path = resolve_suite_path(args.suite)
        if args.reached and args.executor == "slurm":
            raise UserError("--reached: evaluates here, not with --executor slurm")
        if args.executor == "slurm":
            from harness.cli.run_slurm import run_on_slurm

            return run_on_slurm(args, path, _selection(args), _launcher_flags(args))
        given = [k for k, v in _launcher_flags(args).items() if v is not None]
        if args.wait or args.launcher or given:
            flag = "--wait" if args.wait else "--launcher" if args.launcher else f"--{given[0]}"
            raise UserError(f"{flag.replace('_', '-')}: only with --executor slurm")
        if args.reached:
            return _reached(args, path)
        if args.dry_run:
            return _plan(args, path)
        return _compute(args, path)


def _launcher_flags(args: argparse.Namespace) -> dict[str, object]:
    """The launcher flags given (None: unset), by setting name."""
    return {k.removeprefix(LAUNCHER): v for k, v in vars(args).items() if k.startswith(LAUNCHER)}


def _plan(args: argparse.Namespace, path: Path) -> int:
    from harness.run.runner import plan_suite

    plan = plan_suite(path, Path(args.leaderboards), args.force, _selection(args), args.max_cells)
    print(plan.table())
    return 0


def _reached(args: argparse.Namespace, path: Path) -> int:
    from harness.run.reached import run_reached
    from zoo.errors import UserError

    given = [f for f in ("force", "publish", "dry_run", "skip_busy") if getattr(args, f)]
    if given:
        raise UserError(f"--reached: not with --{given[0].replace('_', '-')}")
    progress = not args.no_progress and verbosity(args) >= 0
    summary = run_reached(path, Path(args.leaderboards), _selection(args), progress, args.max_cells)
    print(summary.line())
    for f in summary.failed:
        print(f"failed: {f}", file=sys.stderr)
    return 1 if summary.failed else 0


def _compute(args: argparse.Namespace, path: Path) -> int:
    from harness.run.runner import run_suite

    summary = run_suite(
        path,
        force=args.force,
        root=Path(args.leaderboards),
        progress=not args.no_progress and verbosity(args) >= 0,
        select=_selection(args),
        publish=args.publish,
        max_cells=args.max_cells,
        wait=not args.skip_busy,
    )
    print(
        f"{summary.total} cells: {summary.skipped} already done, {summary.computed} computed, "
        f"{len(summary.failed)} failed"
        + (f", {summary.elsewhere} by another run" if summary.elsewhere else "")
        + f" -> {summary.leaderboard}"
    )
    for f in summary.failed:
        print(f"failed: {f}", file=sys.stderr)
    for repo in summary.published:
        print(f"published: {repo}")
    return 1 if summary.failed else 0
